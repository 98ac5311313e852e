// Posting traversal (pipeline/store/native/src/search_decode.cc): the AVX2 block decoder against the baseline
// (SSE4.1) one, bit for bit, on every posting of a query's dims summed into a per-document accumulator
// (`segmentPostingSums`), and both against the exact dot product of the stored values within the int8 bound.
// Segments span two windows of 65,536 documents and hold blocks of every gap width in use: consecutive
// documents (no gap bytes, a dim in every document and a single tier), u8 gaps and u16 gaps (rare dims, and
// the top tiers of split lists).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { openStore } from '../../pipeline/store/index.js';
import { loadAddon } from '../../pipeline/store/native.js';
import { gauss, randomVector, rng, storedValues, tempDir } from './helpers.js';

const NO_BG = { autoFlush: false, autoMerge: false, maintenanceMs: 0 };
const addon = /** @type {any} */ (loadAddon());
const WIDTH = 3000;
const DOCS = 70000;

/** @param {Float32Array} a */
const bits = (a) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

/**
 * Real-shaped documents (clustered dims, signed values, L2-normalised) plus three planted dims: 0 in every
 * document, 1 in every 300th (gaps of 299: u16), 2 in a random ~3 % (mostly u8 gaps, some wider).
 * @param {() => number} r
 */
function makeDocs(r) {
  /** @type {{indices: Uint32Array, values: Float32Array}[]} */
  const docs = [];
  for (let i = 0; i < DOCS; i++) {
    const v = randomVector(r, WIDTH - 3, 8 + Math.floor(r() * 24), { blocks: 3, blockSize: 40 });
    /** @type {[number, number][]} */
    const pairs = Array.from(v.indices, (x, j) => [x + 3, v.values[j]]);
    if (i % 300 === 0) pairs.unshift([1, gauss(r) * 0.3]);
    if (r() < 0.03) pairs.splice(i % 300 === 0 ? 1 : 0, 0, [2, gauss(r) * 0.3]);
    pairs.unshift([0, 0.05 + r() * 0.2]);
    docs.push({ indices: Uint32Array.from(pairs, (p) => p[0]), values: Float32Array.from(pairs, (p) => p[1]) });
  }
  return docs;
}

/**
 * Queries: documents' own vectors, random vectors, and ones on the planted dims.
 * @param {() => number} r @param {{indices: Uint32Array, values: Float32Array}[]} docs
 */
function makeQueries(r, docs) {
  const qs = [];
  for (let i = 0; i < 6; i++) qs.push(docs[Math.floor(r() * docs.length)]);
  for (let i = 0; i < 4; i++) qs.push(randomVector(r, WIDTH, 50 + Math.floor(r() * 200)));
  qs.push({ indices: Uint32Array.of(0, 1, 2), values: Float32Array.of(0.5, -0.7, 0.5) });
  qs.push({ indices: Uint32Array.of(0, 1, 2, 500, 1500), values: Float32Array.of(-0.2, 0.3, 0.9, -0.1, 0.2) });
  return qs;
}

/**
 * Exact dot products of the stored values with q, per local document, and the bound on the accumulator's
 * error: per dim |q_i| * (list scale = largest |value| / 127) / 2, plus float rounding of the sums.
 * @param {{indices: Uint32Array, values: Float32Array}[]} stored by local number
 * @param {{indices: Uint32Array, values: Float32Array}} q
 */
function exactAndBound(stored, q) {
  const qd = new Map(Array.from(q.indices, (x, j) => [x, q.values[j]]));
  const maxAbs = new Map();
  for (const d of stored) for (let j = 0; j < d.indices.length; j++) {
    if (qd.has(d.indices[j])) maxAbs.set(d.indices[j], Math.max(maxAbs.get(d.indices[j]) ?? 0, Math.abs(d.values[j])));
  }
  let bound = 0, slack = 0;
  for (const [i, m] of maxAbs) {
    bound += Math.abs(/** @type {number} */ (qd.get(i))) * m / 127 / 2;
    slack += Math.abs(/** @type {number} */ (qd.get(i))) * m;
  }
  bound = bound * (1 + 1e-5) + slack * 1.2e-7 * (q.indices.length + 4) + 1e-12;
  const exact = stored.map((d) => {
    let s = 0;
    for (let j = 0; j < d.indices.length; j++) s += (qd.get(d.indices[j]) ?? 0) * d.values[j];
    return s;
  });
  return { exact, bound };
}

for (const [name, tiers] of /** @type {[string, number[] | undefined][]} */ ([['one tier', [1]], ['default tiers', undefined]])) {
  test(`posting traversal (${name}): the AVX2 path equals the baseline bit for bit, and both are within the int8 bound of the exact scores`, async (t) => {
    const simdOn = addon.setSimd(true);
    if (!simdOn) t.diagnostic('this CPU has no AVX2: both runs use the baseline path');
    const dir = tempDir('posting-simd');
    const store = openStore(dir, { ...NO_BG, ...(tiers ? { tiers } : {}) });
    try {
      const r = rng(tiers ? 21 : 22);
      const docs = makeDocs(r);
      const c = store.collection('c', { width: WIDTH });
      for (let i = 0; i < DOCS; i += 10000) {
        await c.upsert(docs.slice(i, i + 10000).map((vector, j) => ({ id: `d${i + j}`, vector })));
      }
      await c.flush();
      const seg = c.stats().segmentDetails;
      assert.equal(seg.length, 1);
      const path = seg[0].path;
      // Local numbers are in (published_at, id) order: map them back to the documents.
      const ids = addon.segmentIds(path, Uint32Array.from({ length: DOCS }, (_, i) => i));
      const stored = ids.map((/** @type {string} */ id) => {
        const v = docs[Number(id.slice(1))];
        return { indices: v.indices, values: storedValues(v.values) };
      });
      for (const [qi, q] of makeQueries(r, docs).entries()) {
        addon.setSimd(true);
        const fast = addon.segmentPostingSums(path, q.indices, q.values);
        assert.equal(addon.setSimd(false), false);
        const base = addon.segmentPostingSums(path, q.indices, q.values);
        addon.setSimd(true);
        assert.equal(fast.length, DOCS);
        assert.deepEqual(bits(fast), bits(base), `query ${qi}: AVX2 and baseline sums differ`);
        const { exact, bound } = exactAndBound(stored, q);
        let worst = 0, worstDoc = -1;
        for (let d = 0; d < DOCS; d++) {
          const err = Math.abs(base[d] - exact[d]);
          if (err > worst) { worst = err; worstDoc = d; }
        }
        assert.ok(worst <= bound, `query ${qi}: document ${worstDoc} (${ids[worstDoc]}) sums to ${base[worstDoc]}, exact ${exact[worstDoc]}, bound ${bound}`);
      }
      assert.throws(() => addon.segmentPostingSums(path, Uint32Array.of(WIDTH), Float32Array.of(1)), /not below the width/);
    } finally {
      addon.setSimd(true);
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}
