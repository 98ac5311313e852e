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
