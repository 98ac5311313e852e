// DenseScratch (the near-duplicate collapse's dot products): equal to sparseDot bit for bit, and all zeros again
// after release (a stale entry would leak one candidate's values into the next one's similarities).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DenseScratch, sparseDot } from '../../pipeline/embed/vectorizer.js';
import { randomVector, rng } from '../store/helpers.js';

test('DenseScratch.dot equals sparseDot bit for bit, across holds of different vectors and widths', () => {
  const r = rng(3);
  const s = new DenseScratch();
  const widths = [50, 3000, 27000, 400];
  let compared = 0;
  for (let round = 0; round < 200; round++) {
    const w = widths[round % widths.length];
    const a = randomVector(r, w, 1 + Math.floor(r() * 300 % w), { blocks: 3 });
    s.hold(a);
    for (let k = 0; k < 5; k++) {
      // b may be wider than anything held so far (indices past the scratch count zero)
      const b = randomVector(r, widths[(round + k) % widths.length], 1 + Math.floor(r() * 40), { blocks: 3 });
      assert.ok(Object.is(s.dot(b), sparseDot(a, b)), `round ${round}`);
      compared++;
    }
    s.release();
    assert.ok(s.dense.every((x) => x === 0), 'released to zeros');
  }
  assert.equal(compared, 1000);
  // the same vector against itself: |a|² (≈ 1 for a normalised vector), exactly as the merge sums it
  const a = randomVector(r, 500, 60);
  s.hold(a);
  assert.ok(Object.is(s.dot(a), sparseDot(a, a)));
  s.release();
});
