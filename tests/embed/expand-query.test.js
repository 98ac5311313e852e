// Rocchio's expanded query (pipeline/embed/vectorizer.js expandQuery), the query side of pseudo-relevance feedback.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expandQuery } from '../../pipeline/embed/vectorizer.js';

const sv = (/** @type {Record<number, number>} */ o) => {
  const dims = Object.keys(o).map(Number).sort((a, b) => a - b);
  return { indices: Uint32Array.from(dims), values: Float32Array.from(dims.map((d) => o[d])) };
};

test('q + weight · mean of the others, L2-normalised, indices increasing', () => {
  const q = sv({ 2: 0.6, 7: 0.8 });
  const e = expandQuery(q, [sv({ 2: 1 }), sv({ 5: 0.6, 7: 0.8 })], 2, 100);
  // 2: 0.6 + 1 = 1.6; 5: 0.6; 7: 0.8 + 0.8 = 1.6
  const n = Math.hypot(1.6, 0.6, 1.6);
  assert.deepEqual([...e.indices], [2, 5, 7]);
  [1.6 / n, 0.6 / n, 1.6 / n].forEach((x, i) => assert.ok(Math.abs(e.values[i] - x) < 1e-6, `${e.values[i]} vs ${x}`));
});

test('cut to the maxNnz largest magnitudes (ties: lower index), then normalised; entries summing to 0 are dropped', () => {
  const q = sv({ 1: 0.6, 3: -0.8 });
  const e = expandQuery(q, [sv({ 0: 0.1, 1: 0.2, 3: 0.8, 4: 0.9, 9: 0.9 })], 1, 2);
  // 0: 0.1, 1: 0.8, 3: 0 (dropped), 4: 0.9, 9: 0.9 -> the two largest: 4 and 9 (0.9), not 1 (0.8)
  assert.deepEqual([...e.indices], [4, 9]);
  e.values.forEach((x) => assert.ok(Math.abs(x - Math.SQRT1_2) < 1e-6));
  const all = expandQuery(q, [sv({ 0: 0.1, 1: 0.2, 3: 0.8, 4: 0.9, 9: 0.9 })], 1, 10);
  assert.deepEqual([...all.indices], [0, 1, 4, 9]);
});

/**
 * The definition, written plainly: per index the terms summed in the order q, others[0], others[1], …; entries
 * summing to exactly 0 dropped; the maxNnz largest magnitudes kept (ties: lower index); divided by the L2 norm
 * summed in increasing index order.
 * @param {{indices: Uint32Array, values: Float32Array}} q
 * @param {{indices: Uint32Array, values: Float32Array}[]} others
 * @param {number} weight
 * @param {number} maxNnz
 */
function referenceExpand(q, others, weight, maxNnz) {
  /** @type {Map<number, number>} */
  const sum = new Map();
  const add = (/** @type {{indices: Uint32Array, values: Float32Array}} */ v, /** @type {number} */ w) => {
    v.indices.forEach((d, i) => sum.set(d, (sum.get(d) ?? 0) + w * v.values[i]));
  };
  add(q, 1);
  for (const v of others) add(v, weight / others.length);
  const entries = [...sum].filter(([, x]) => x !== 0).sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]) || a[0] - b[0]);
  const kept = entries.slice(0, maxNnz).sort((a, b) => a[0] - b[0]);
  const norm = Math.sqrt(kept.reduce((s, [, x]) => s + x * x, 0));
  return { indices: kept.map(([d]) => d), values: kept.map(([, x]) => Math.fround(x / norm)) };
}

test('equals the plain definition bit for bit on random vectors (ties, cancellations, disjoint and shared indices)', () => {
  let seed = 12345;
  const rand = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  // Values from a small set, so equal magnitudes (ties at the cut) and sums of exactly 0 are common.
  const levels = [0.125, 0.25, 0.5, 0.75, 1];
  const randomVector = (/** @type {number} */ width, /** @type {number} */ nnz) => {
    /** @type {Record<number, number>} */
    const o = {};
    while (Object.keys(o).length < nnz) o[Math.floor(rand() * width)] = (rand() < 0.5 ? -1 : 1) * levels[Math.floor(rand() * levels.length)];
    return sv(o);
  };
  for (let round = 0; round < 300; round++) {
    const width = 5 + Math.floor(rand() * 400);
    const q = randomVector(width, 1 + Math.floor(rand() * Math.min(width, 60)));
    const others = Array.from({ length: 1 + Math.floor(rand() * 4) }, () => randomVector(width, 1 + Math.floor(rand() * Math.min(width, 80))));
    const weight = [0.5, 1, 2, 0.3][round % 4];
    const maxNnz = [2 * q.indices.length, 1, 3, 1000][round % 4];
    const got = expandQuery(q, others, weight, maxNnz);
    const want = referenceExpand(q, others, weight, maxNnz);
    assert.deepEqual([...got.indices], want.indices, `round ${round}: indices`);
    assert.deepEqual([...got.values], want.values, `round ${round}: values`);
    assert.ok(got.indices instanceof Uint32Array && got.values instanceof Float32Array);
  }
});
