// normalizeVector (pipeline/store/validate.js): typed arrays take a one-pass check, and whatever it lets through or
// sends back must be what the general loop says of the same numbers as plain arrays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeVector } from '../../pipeline/store/validate.js';

/** @param {() => unknown} f the result, or the error message */
const outcome = (f) => {
  try {
    const r = /** @type {{indices: ArrayLike<number>, values: ArrayLike<number>}} */ (f());
    return { indices: [...Array.from(r.indices)], values: [...Array.from(r.values)] };
  } catch (err) {
    return /** @type {Error} */ (err).message;
  }
};

test('typed arrays: the same vectors accepted and the same first problem named as for plain arrays', () => {
  let seed = 7;
  const rand = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  const specials = [NaN, Infinity, -Infinity, 0, -0, 1e-40, 3e38];
  let rejected = 0;
  for (let round = 0; round < 2000; round++) {
    const width = 1 + Math.floor(rand() * 50);
    const n = Math.floor(rand() * 8);
    /** @type {number[]} */
    const indices = [];
    /** @type {number[]} */
    const values = [];
    let at = Math.floor(rand() * 3);
    for (let j = 0; j < n; j++) {
      // Mostly increasing, sometimes equal or going back, sometimes at or past the width.
      const step = rand() < 0.85 ? 1 + Math.floor(rand() * 6) : -Math.floor(rand() * 3);
      at = Math.max(0, at + step);
      indices.push(at);
      values.push(rand() < 0.1 ? specials[Math.floor(rand() * specials.length)] : rand() * 2 - 1);
    }
    const fail = (/** @type {string} */ m) => new Error(m);
    const plain = outcome(() => normalizeVector({ indices, values }, width, fail));
    const typedIndices = Uint32Array.from(indices);
    const typedValues = Float32Array.from(values);
    const typed = outcome(() => normalizeVector({ indices: typedIndices, values: typedValues }, width, fail));
    // Plain numbers become float32 in the plain path too: compare with the same rounding.
    assert.deepEqual(typed, typeof plain === 'string' ? plain : { indices: plain.indices, values: plain.values.map(Math.fround) }, `round ${round}`);
    if (typeof typed === 'string') rejected++;
  }
  assert.ok(rejected > 300 && rejected < 1800, `both valid and invalid vectors were tried (${rejected} rejected)`);
});

test('typed arrays that pass are returned as they are (no copy)', () => {
  const v = { indices: Uint32Array.from([1, 4, 9]), values: Float32Array.from([0.5, -1, 2]) };
  const r = normalizeVector(v, 10, (m) => new Error(m));
  assert.equal(r.indices, v.indices);
  assert.equal(r.values, v.values);
  assert.throws(() => normalizeVector(v, 9, (m) => new Error(m)), /vector.indices\[2\] = 9 is not below the collection's width 9/);
  assert.throws(() => normalizeVector({ ...v, values: Float32Array.from([0.5, NaN, Infinity]) }, 10, (m) => new Error(m)), /vector.values\[1\] = NaN is not a finite number/);
});
