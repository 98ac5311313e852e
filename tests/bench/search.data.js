// Vector files for the search benchmark, and a generator of SCDV-like synthetic vectors.
//
// File format (".csr", little-endian), a compressed-sparse-row matrix of float32 document vectors:
//   0   8 bytes  magic "SCDVCSR1"
//   8   u32      version (1)
//   12  u32      width (number of columns)
//   16  f64      rows
//   24  f64      nnz
//   32  32 bytes zero
//   64  u64[rows + 1]  row offsets (indptr)
//   ... u32[nnz]       column indices, strictly increasing within a row
//   ... f32[nnz]       values
// Document ids are the row numbers ("0", "1", ...) unless a sidecar "<file>.ids" holds one id per line.
// `python tests/bench/search.baselines.py convert in.npz out.csr` converts a scipy.sparse .npz.
import fs from 'node:fs';
import { rng } from '../lib/random.js';

export { rng };

const MAGIC = 'SCDVCSR1';

/**
 * @typedef {object} Csr
 * @property {number} rows
 * @property {number} width
 * @property {Float64Array} offsets rows + 1
 * @property {Uint32Array} indices
 * @property {Float32Array} values
 * @property {string[] | null} ids
 */

/**
 * @param {string} file
 * @param {Csr} m
 */
export function writeCsr(file, m) {
  const fd = fs.openSync(file, 'w');
  try {
    const head = Buffer.alloc(64);
    head.write(MAGIC, 0, 'latin1');
    head.writeUInt32LE(1, 8);
    head.writeUInt32LE(m.width, 12);
    head.writeDoubleLE(m.rows, 16);
    head.writeDoubleLE(m.indices.length, 24);
    fs.writeSync(fd, head);
    const off = new BigUint64Array(m.rows + 1);
    for (let i = 0; i <= m.rows; i++) off[i] = BigInt(m.offsets[i]);
    writeAll(fd, new Uint8Array(off.buffer));
    writeAll(fd, new Uint8Array(m.indices.buffer, m.indices.byteOffset, m.indices.byteLength));
    writeAll(fd, new Uint8Array(m.values.buffer, m.values.byteOffset, m.values.byteLength));
  } finally {
    fs.closeSync(fd);
  }
  if (m.ids) fs.writeFileSync(`${file}.ids`, m.ids.join('\n') + '\n');
}

/**
 * @param {number} fd
 * @param {Uint8Array} bytes
 */
function writeAll(fd, bytes) {
  const CHUNK = 1 << 28;
  for (let o = 0; o < bytes.length; o += CHUNK) {
    const part = bytes.subarray(o, Math.min(bytes.length, o + CHUNK));
    let w = 0;
    while (w < part.length) w += fs.writeSync(fd, part, w, part.length - w);
  }
}

/**
 * @param {number} fd
 * @param {Uint8Array} into
 * @param {number} pos
 */
function readAll(fd, into, pos) {
  const CHUNK = 1 << 28;
  let o = 0;
  while (o < into.length) {
    const r = fs.readSync(fd, into, o, Math.min(CHUNK, into.length - o), pos + o);
    if (r === 0) throw new Error('file ends early');
    o += r;
  }
}

/**
 * @param {string} file
 * @returns {Csr}
 */
export function readCsr(file) {
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(64);
    readAll(fd, head, 0);
    if (head.toString('latin1', 0, 8) !== MAGIC || head.readUInt32LE(8) !== 1) throw new Error(`${file} is not a ${MAGIC} file`);
    const width = head.readUInt32LE(12);
    const rows = head.readDoubleLE(16);
    const nnz = head.readDoubleLE(24);
    const off = new BigUint64Array(rows + 1);
    readAll(fd, new Uint8Array(off.buffer), 64);
    const offsets = new Float64Array(rows + 1);
    for (let i = 0; i <= rows; i++) offsets[i] = Number(off[i]);
    const indices = new Uint32Array(nnz);
    const values = new Float32Array(nnz);
    const p = 64 + 8 * (rows + 1);
    readAll(fd, new Uint8Array(indices.buffer), p);
    readAll(fd, new Uint8Array(values.buffer), p + 4 * nnz);
    const ids = fs.existsSync(`${file}.ids`) ? fs.readFileSync(`${file}.ids`, 'utf8').split('\n').slice(0, rows) : null;
    return { rows, width, offsets, indices, values, ids };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * @typedef {object} GenOptions
 * @property {number} docs
 * @property {number} [clusters] K (default 60)
 * @property {number} [dims] d, dims per cluster block (default 200): width = K * d
 * @property {number} [nnz] mean non-zeros per document (default 240; each document draws from 0.6x..1.4x)
 * @property {number} [zipf] exponent of the cluster popularity (default 1)
 * @property {number} [coherence] 0: values are independent Gaussians at random positions of the chosen blocks
 *   (the plain recipe). c > 0: each cluster has `subtopics` prototype vectors; a document's block is
 *   sqrt(c) * prototype + sqrt(1 - c) * noise, and it keeps the entries of largest magnitude (like SCDV's
 *   hard thresholding), so documents on the same sub-topic are really similar. Default 0.5.
 * @property {number} [subtopics] prototypes per cluster (default 50), drawn Zipf-like too
 * @property {number} [seed]
 */

/**
 * SCDV-like synthetic vectors: each document draws 2-6 topic clusters (Zipf-like popularity), puts its
 * non-zeros (signed Gaussian values) inside those clusters' blocks, and is L2-normalised.
 * @param {GenOptions} o
 * @returns {Csr}
 */
export function generate(o) {
  const K = o.clusters ?? 60, D = o.dims ?? 200, mean = o.nnz ?? 240, s = o.zipf ?? 1;
  const coh = o.coherence ?? 0.5, S = o.subtopics ?? 50;
  const r = rng(o.seed ?? 42);
  const gauss = () => {
    let u = 0;
    while (u === 0) u = r();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
  };
  const cdf = (/** @type {number} */ n, /** @type {number} */ e) => {
    const w = Array.from({ length: n }, (_, i) => 1 / Math.pow(i + 1, e));
    const tot = w.reduce((a, b) => a + b, 0);
    let acc = 0;
    return Float64Array.from(w.map((x) => (acc += x / tot)));
  };
  const pick = (/** @type {Float64Array} */ c) => {
    const x = r();
    let lo = 0, hi = c.length - 1;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (c[m] < x) lo = m + 1; else hi = m;
    }
    return lo;
  };
  const clusterCdf = cdf(K, s), subCdf = cdf(S, 1);
  const protos = new Float32Array(coh > 0 ? K * S * D : 0);
  {
    const pr = rng(12345);
    for (let i = 0; i < protos.length; i++) {
      let u = 0;
      while (u === 0) u = pr();
      protos[i] = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * pr());
    }
  }
  const n = o.docs;
  const cap = Math.ceil(n * mean * 1.45) + 1024;
  let indices = new Uint32Array(cap);
  let values = new Float32Array(cap);
  const offsets = new Float64Array(n + 1);
  const blk = new Float64Array(D);
  const ord = new Int32Array(D);
  const mags = new Float64Array(D);
  let p = 0;
  for (let doc = 0; doc < n; doc++) {
    const nc = 2 + Math.floor(r() * 5);
    /** @type {number[]} */
    const cs = [];
    while (cs.length < nc) {
      const c = pick(clusterCdf);
      if (!cs.includes(c)) cs.push(c);
    }
    cs.sort((a, b) => a - b);
    const want = Math.round(mean * (0.6 + 0.8 * r()));
    const w = cs.map(() => 0.5 + r());
    const tw = w.reduce((a, b) => a + b, 0);
    const start = p;
    for (let j = 0; j < nc; j++) {
      const c = cs[j];
      const take = Math.min(D, Math.max(1, Math.round((want * w[j]) / tw)));
      for (let t = 0; t < D; t++) ord[t] = t;
      if (coh > 0) {
        const sub = pick(subCdf);
        const base = (c * S + sub) * D;
        const a = Math.sqrt(coh), b = Math.sqrt(1 - coh);
        for (let t = 0; t < D; t++) {
          blk[t] = a * protos[base + t] + b * gauss();
          mags[t] = Math.abs(blk[t]);
        }
        // the `take` entries of largest magnitude (quickselect), then back in index order
        let lo = 0, hi = D - 1;
        const k = take - 1;
        while (lo < hi) {
          const pivot = mags[ord[(lo + hi) >> 1]];
          let i = lo, jj = hi;
          while (i <= jj) {
            while (mags[ord[i]] > pivot) i++;
            while (mags[ord[jj]] < pivot) jj--;
            if (i <= jj) { const tmp = ord[i]; ord[i] = ord[jj]; ord[jj] = tmp; i++; jj--; }
          }
          if (k <= jj) hi = jj; else if (k >= i) lo = i; else break;
        }
      } else {
        for (let t = 0; t < take; t++) {
          const u = t + Math.floor(r() * (D - t));
          const tmp = ord[t]; ord[t] = ord[u]; ord[u] = tmp;
        }
      }
      const sel = Array.from(ord.subarray(0, take)).sort((x, y) => x - y);
      for (const t of sel) {
        indices[p] = c * D + t;
        values[p] = coh > 0 ? blk[t] : gauss();
        p++;
      }
    }
    let norm = 0;
    for (let i = start; i < p; i++) norm += values[i] * values[i];
    norm = Math.sqrt(norm);
    for (let i = start; i < p; i++) values[i] /= norm;
    offsets[doc + 1] = p;
    if (p + D * 6 > indices.length) {
      const ni = new Uint32Array(Math.ceil(indices.length * 1.25)); ni.set(indices); indices = ni;
      const nv = new Float32Array(indices.length); nv.set(values); values = nv;
    }
  }
  return { rows: n, width: K * D, offsets, indices: indices.subarray(0, p), values: values.subarray(0, p), ids: null };
}

/**
 * Row i as a sparse vector (views, no copy).
 * @param {Csr} m
 * @param {number} i
 */
export function row(m, i) {
  const a = m.offsets[i], b = m.offsets[i + 1];
  return { indices: m.indices.subarray(a, b), values: m.values.subarray(a, b) };
}

/**
 * Upsert the first `n` rows (ids "0".."n-1") into a collection of a store opened without background work, flushing
 * every 40,000 documents as the write path would, and once at the end (the caller merges if it wants one segment).
 * @param {{upsert: (docs: {id: string, vector: {indices: ArrayLike<number>, values: ArrayLike<number>}}[]) => Promise<unknown>, flush: () => Promise<unknown>}} c
 * @param {Csr} m
 * @param {number} n
 */
export async function fillCollection(c, m, n) {
  for (let i = 0; i < n; i += 10000) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + 10000); j++) batch.push({ id: String(j), vector: row(m, j) });
    await c.upsert(batch);
    if ((i / 10000) % 4 === 3) await c.flush();
  }
  await c.flush();
}

/**
 * The same documents at a higher sparsity: each row keeps its `keep` entries of largest magnitude (ties: lower
 * index first, as the embedder's sparsify does), in index order, L2-normalised again. Applied to vectors
 * embedded with a larger keepFraction, this gives what the embedder gives with the smaller one (up to float
 * rounding): it keeps the top entries of the same accumulator.
 * @param {Csr} m
 * @param {number} keep
 * @returns {Csr}
 */
export function truncateRows(m, keep) {
  const offsets = new Float64Array(m.rows + 1);
  let total = 0;
  for (let i = 0; i < m.rows; i++) total += Math.min(keep, m.offsets[i + 1] - m.offsets[i]);
  const indices = new Uint32Array(total);
  const values = new Float32Array(total);
  let p = 0;
  for (let i = 0; i < m.rows; i++) {
    const a = m.offsets[i], b = m.offsets[i + 1];
    const ord = Array.from({ length: b - a }, (_, j) => a + j);
    if (ord.length > keep) {
      ord.sort((x, y) => Math.abs(m.values[y]) - Math.abs(m.values[x]) || m.indices[x] - m.indices[y]);
      ord.length = keep;
      ord.sort((x, y) => m.indices[x] - m.indices[y]);
    }
    let norm = 0;
    for (const j of ord) norm += m.values[j] * m.values[j];
    norm = Math.sqrt(norm) || 1;
    for (const j of ord) {
      indices[p] = m.indices[j];
      values[p] = m.values[j] / norm;
      p++;
    }
    offsets[i + 1] = p;
  }
  return { rows: m.rows, width: m.width, offsets, indices, values, ids: m.ids };
}
