// The paired bootstrap behind the report's verdict, and the per-query figures eval.json keeps for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedBootstrap, rankingMetrics } from '../../pipeline/eval/relevance-metrics.js';
import { compareWithBaselines, renderVerdictSummary, verdictJson, verdictLines } from '../../pipeline/report/verdict.js';
import { evalFileText } from '../../pipeline/eval/evaluate.js';

test('rankingMetrics keeps each scored query\'s hits among the first 10, and P@10 is their mean / 10', () => {
  const labels = ['a', 'a', 'a', 'b', 'b', 'c'];
  const m = rankingMetrics(labels, [[1, 3, 2], [3, 4, 0], [], [4, 0], [0, 1, 2, 5, 3], [0, 1]]);
  assert.deepEqual(m.hits_at_10, [2, 1, 0, 1, 1], 'the query alone with its label (c) is skipped');
  assert.ok(Math.abs(m.p_at_10 - m.hits_at_10.reduce((a, b) => a + b, 0) / 10 / m.queries) < 1e-12);
});

test('pairedBootstrap: the mean difference, an interval around it, reproducible; identical methods give [0, 0]', () => {
  // b is a plus noise that is mostly positive: a is clearly worse
  const a = Array.from({ length: 200 }, (_, i) => (i % 7) / 10);
  const b = a.map((x, i) => x + (i % 5 === 0 ? -0.1 : 0.2));
  const r = pairedBootstrap(a, b);
  assert.ok(Math.abs(r.diff - (-(0.2 * 160 - 0.1 * 40) / 200)) < 1e-12, `diff ${r.diff}`);
  assert.ok(r.low < r.diff && r.diff < r.high && r.high < 0, JSON.stringify(r));
  assert.deepEqual(pairedBootstrap(a, b), r, 'seeded: the same interval every time');
  const same = pairedBootstrap(a, a);
  assert.deepEqual([same.diff, same.low, same.high], [0, 0, 0]);
  assert.throws(() => pairedBootstrap([1, 2], [1]), /must pair up query by query/);
});

test('the verdict: better / tied / worse from the interval, "not judged" without per-query figures', () => {
  const n = 120;
  const base = Array.from({ length: n }, (_, i) => (i * 7) % 11 % 10);
  const up = base.map((h) => Math.min(10, h + 2));
  // a mix of +1 and -1 around the same mean: the interval contains 0
  const noisy = base.map((h, i) => Math.max(0, Math.min(10, h + (i % 2 ? 1 : -1))));
  const mean = (/** @type {number[]} */ xs) => xs.reduce((a, b) => a + b, 0) / xs.length / 10;
  const result = {
    scdv: { p_at_10: mean(base) }, tfidf: { p_at_10: mean(up) }, mlt: { p_at_10: mean(noisy) },
    per_query: { hits_at_10: { scdv: base, tfidf: up, mlt: noisy } },
  };
  const words = Object.fromEntries(compareWithBaselines(result).map((c) => [c.baseline, c.word]));
  assert.deepEqual(words, { tfidf: 'worse', mlt: 'tied' });
  result.per_query.hits_at_10 = { scdv: up, tfidf: base, mlt: noisy };
  result.scdv.p_at_10 = mean(up);
  result.tfidf.p_at_10 = mean(base);
  const better = compareWithBaselines(result);
  assert.equal(better[0].word, 'better');
  assert.ok(better[0].interval && better[0].interval.low > 0);
  const old = compareWithBaselines({ scdv: { p_at_10: 0.5 }, tfidf: { p_at_10: 0.4 } });
  assert.deepEqual(old.map((c) => [c.word, c.interval, Math.round(c.diff * 100)]), [['not judged', null, 10]]);
});

test('the verdict in words for the terminal, in JSON, and first in the report, with what was scored', () => {
  const n = 120;
  const base = Array.from({ length: n }, (_, i) => (i * 7) % 11 % 10);
  const up = base.map((h) => Math.min(10, h + 2));
  const mean = (/** @type {number[]} */ xs) => xs.reduce((a, b) => a + b, 0) / xs.length / 10;
  const result = { scdv: { p_at_10: mean(up) }, tfidf: { p_at_10: mean(base) }, per_query: { hits_at_10: { scdv: up, tfidf: base } },
    corpus: { documents: n, training: true } };
  const lines = verdictLines(result);
  assert.equal(lines[0], 'verdict: Yes: better than TF-IDF on P@10.');
  assert.match(lines[1], /^ {2}better +vs TF-IDF: P@10 \d+\.\d vs \d+\.\d %, \+\d+\.\d points \(95 % interval \+\d+\.\d to \+\d+\.\d\)$/);
  assert.match(lines[2], /scored the 120 documents the model was trained on/);
  const j = /** @type {any} */ (verdictJson(result));
  assert.equal(j.answer, 'better');
  assert.equal(j.scored_on, 'training');
  assert.ok(j.comparisons[0].low > 0 && j.comparisons[0].low <= j.comparisons[0].diff);
  assert.match(verdictLines({ ...result, holdout: { model: 'm-holdout', train_documents: 90, test_documents: 30 } }).at(-1) ?? '', /scored 30 held-out documents, which model m-holdout .* never saw/);
  assert.deepEqual(verdictLines({ scdv: { p_at_10: 0.5 } }), [], 'nothing to judge without baselines');
  // the report: the answer first; a "no better than random" coherence explained beside it
  const top = renderVerdictSummary(result, 'no better than random');
  assert.match(top, /^<section id="answer"><h2>Is this model good\?<\/h2><p class="headline">Yes: <b>better<\/b> than TF-IDF/);
  assert.match(top, /coherence is no better than random .* It does not decide whether the vectors find related documents/);
  assert.doesNotMatch(renderVerdictSummary(result, 'better than random'), /coherence/);
});

test('eval.json keeps each per-query array on one line', () => {
  const text = evalFileText({ scdv: { p_at_10: 0.5 }, per_query: { hits_at_10: { scdv: [3, 10, 0] } }, load_average: [0.5, 1] });
  assert.match(text, /"scdv": \[3,10,0\]\n/);
  assert.deepEqual(JSON.parse(text).per_query.hits_at_10.scdv, [3, 10, 0]);
});

test('--classify: each accuracy gets a bootstrap interval over the test documents, SCDV − TF-IDF a paired one and its word', async () => {
  const { withIntervals } = await import('../../pipeline/eval/classify.js');
  const n = 400;
  // TF-IDF right on 3 documents in 4, SCDV on those and on 40 more: SCDV is better by 10 points
  const tfidf = Array.from({ length: n }, (_, i) => (i % 4 ? 1 : 0));
  const scdv = tfidf.map((c, i) => (c || i < 160 ? 1 : 0));
  const mean = (/** @type {number[]} */ xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const r = withIntervals({ scdv: { accuracy: mean(scdv), C: 1, correct: scdv }, tfidf: { accuracy: mean(tfidf), C: 10, correct: tfidf } });
  for (const m of /** @type {const} */ (['scdv', 'tfidf'])) {
    const { low, high, confidence } = r[m].interval;
    assert.ok(low < r[m].accuracy && r[m].accuracy < high && high - low < 0.15, `${m} ${JSON.stringify(r[m])}`);
    assert.equal(confidence, 0.95);
    assert.equal(r[m].correct, undefined, 'the per-document figures are not repeated in the summary');
  }
  assert.equal(r.tfidf.C, 10);
  assert.ok(Math.abs(r.scdv_vs_tfidf.diff - 0.1) < 1e-12 && r.scdv_vs_tfidf.low > 0, JSON.stringify(r.scdv_vs_tfidf));
  assert.equal(r.scdv_vs_tfidf.word, 'better');
  assert.deepEqual(r.per_document, { scdv, tfidf });
  const tied = withIntervals({ scdv: { accuracy: mean(tfidf), correct: tfidf }, tfidf: { accuracy: mean(tfidf), correct: tfidf } });
  assert.deepEqual([tied.scdv_vs_tfidf.diff, tied.scdv_vs_tfidf.word], [0, 'tied']);
});
