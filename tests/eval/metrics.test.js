// Relevance metrics on tiny hand-made neighbour lists, worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { averagePrecisionAt, crossRankingMetrics, latencySummary, precisionAt, rankingMetrics } from '../../pipeline/eval/relevance-metrics.js';

const near = (/** @type {number} */ a, /** @type {number} */ b) => assert.ok(Math.abs(a - b) < 1e-12, `${a} vs ${b}`);

test('precision@k counts hits among the first k and divides by k even when fewer came back', () => {
  near(precisionAt([true, false, true], 1), 1);
  near(precisionAt([false, true, true], 1), 0);
  near(precisionAt([true, false, true], 10), 0.2);
  near(precisionAt([], 10), 0);
  near(precisionAt([true, true, true, true, true, true, true, true, true, true, true], 10), 1);
});

test('AP@k averages precision at each hit over min(R, k)', () => {
  // hits at ranks 1 and 3: (1/1 + 2/3) / min(R = 2, 10)
  near(averagePrecisionAt([true, false, true], 10, 2), (1 + 2 / 3) / 2);
  // R = 5 but only 2 found: missing relevant documents count as zero
  near(averagePrecisionAt([true, false, true], 10, 5), (1 + 2 / 3) / 5);
  // R larger than k: divide by k
  near(averagePrecisionAt(Array(10).fill(true), 10, 50), 1);
  near(averagePrecisionAt([false, false], 10, 3), 0);
  near(averagePrecisionAt([true], 10, 0), 0);
});

test('rankingMetrics over a corpus: labels by row, queries without any other same-label document skipped', () => {
  const labels = ['a', 'a', 'a', 'b', 'b', 'c'];
  const neighbours = [
    [1, 3, 2], // a: hits at 1, 3 -> P@1 1, P@10 .2, AP (1 + 2/3) / 2
    [3, 4, 0], // a: hit at 3 -> P@1 0, P@10 .1, AP (1/3) / 2
    [], // a: nothing returned -> all zero
    [4, 0], // b: hit at 1 -> P@1 1, P@10 .1, AP 1 / 1
    [0, 1, 2, 5, 3], // b: hit at 5 -> P@1 0, P@10 .1, AP (1/5) / 1
    [0, 1], // c: alone with its label, skipped
  ];
  const m = rankingMetrics(labels, neighbours);
  assert.equal(m.queries, 5);
  near(m.p_at_1, (1 + 0 + 0 + 1 + 0) / 5);
  near(m.p_at_10, (0.2 + 0.1 + 0 + 0.1 + 0.1) / 5);
  near(m.map_at_10, ((1 + 2 / 3) / 2 + (1 / 3) / 2 + 0 + 1 + 1 / 5) / 5);
});

test('rankingMetrics refuses a query among its own neighbours and a length mismatch', () => {
  assert.throws(() => rankingMetrics(['a', 'a'], [[0], [0]]), /query 0 is among its own neighbours/);
  assert.throws(() => rankingMetrics(['a', 'a'], [[1]]), /1 neighbour lists for 2 documents/);
});

test('latency summary: mean, median (even count: middle pair), p95', () => {
  const s = latencySummary([4, 1, 3, 2]);
  near(s.mean_ms, 2.5);
  near(s.median_ms, 2.5);
  near(s.p95_ms, 4);
  assert.deepEqual(latencySummary([]), { mean_ms: 0, median_ms: 0, p95_ms: 0 });
  near(latencySummary([5, 1, 9]).median_ms, 5);
});

test('crossRankingMetrics: queries against another collection, relevant when the target has the query\'s label', () => {
  const pages = ['a', 'b', 'c'];
  const ads = ['a', 'b', 'a', 'b'];
  const m = crossRankingMetrics(pages, ads, [
    [1, 0, 2], // a: hits at 2, 3 -> P@1 0, P@10 .2, AP (1/2 + 2/3) / min(R = 2, 10)
    [1], // b: hit at 1 -> P@1 1, P@10 .1, AP 1 / 2
    [0], // c: no ad has its label (R = 0): skipped
  ]);
  assert.equal(m.queries, 2);
  near(m.p_at_1, 0.5);
  near(m.p_at_10, 0.15);
  near(m.map_at_10, ((1 / 2 + 2 / 3) / 2 + 1 / 2) / 2);
  assert.deepEqual(m.hits_at_10, [2, 1]);
  // row 0 of the targets is not the query itself: it may be returned
  assert.equal(crossRankingMetrics(['a'], ['a'], [[0]]).p_at_1, 1);
  assert.throws(() => crossRankingMetrics(pages, ads, [[0]]), /1 neighbour lists for 3 queries/);
});
