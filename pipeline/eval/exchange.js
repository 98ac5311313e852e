// The folder `scdv eval` hands to the Python side (workers/scdv/eval_baselines.py documents the format):
// tokens.txt (one document per row), meta.json (labels, n, width), and the document vectors as CSR.
import fs from 'node:fs';
import path from 'node:path';

/**
 * @param {string} dir created if needed
 * @param {{tokens: string[][], labels: string[], vectors?: {indices: Uint32Array, values: Float32Array}[], width?: number}} data
 */
export function writeExchange(dir, data) {
  fs.mkdirSync(dir, { recursive: true });
  const n = data.tokens.length;
  if (data.labels.length !== n) throw new Error(`${data.labels.length} labels for ${n} documents`);
  fs.writeFileSync(path.join(dir, 'tokens.txt'), data.tokens.map((t) => t.join(' ')).join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'meta.json'), JSON.stringify({ n, labels: data.labels, width: data.width ?? 0 }));
  if (!data.vectors) return;
  if (data.vectors.length !== n) throw new Error(`${data.vectors.length} vectors for ${n} documents`);
  const indptr = new BigUint64Array(n + 1);
  let nnz = 0;
  data.vectors.forEach((v, i) => { nnz += v.indices.length; indptr[i + 1] = BigInt(nnz); });
  const indices = new Uint32Array(nnz);
  const values = new Float32Array(nnz);
  let p = 0;
  for (const v of data.vectors) { indices.set(v.indices, p); values.set(v.values, p); p += v.indices.length; }
  const le = (/** @type {ArrayBufferView} */ a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength); // x86/arm: little-endian
  fs.writeFileSync(path.join(dir, 'scdv.indptr'), le(indptr));
  fs.writeFileSync(path.join(dir, 'scdv.indices'), le(indices));
  fs.writeFileSync(path.join(dir, 'scdv.values'), le(values));
}
