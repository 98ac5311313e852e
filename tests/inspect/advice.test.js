// The cluster-count advice and the coherence scale (pipeline/inspect/advice.js), on analysis figures shaped like
// analysis.json; `scdv train`'s closing lines read a model folder's analysis.json through the same function.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clusterAdvice, coherenceScale, adviceLines, ADVICE_RULES } from '../../pipeline/inspect/advice.js';
import { trainAdvice } from '../../pipeline/commands/train.js';
import { ANALYSIS_FORMAT } from '../../pipeline/inspect/analysis.js';

/**
 * An analysis of `k` clusters of 40 words each, the first `incoherent` below the incoherence threshold, the last
 * `tiny` of 2 words only.
 * @param {{k: number, incoherent: number, documents: number, tiny?: number, random?: Record<string, number>}} o
 */
function analysisOf({ k, incoherent, documents, tiny = 0, random }) {
  const clusters = Array.from({ length: k }, (_, c) => ({
    cluster: c, size: c >= k - tiny ? 2 : 40, soft_size: 40, weight: 1 / k, mean_member_posterior: 0.9,
    coherence: c < incoherent ? -0.8 : 0.1, coherence_pairs: 45, top_words: [{ word: `w${c}`, score: 1, p: 1, idf: 1, count: 5 }],
  }));
  return {
    format: ANALYSIS_FORMAT, n_words: clusters.reduce((n, c) => n + c.size, 0), n_clusters: k, top: 10, corpus: { documents },
    coherence: { mean: clusters.reduce((n, c) => n + c.coherence, 0) / k, random: random ?? null }, clusters,
  };
}

const manifest = (/** @type {number} */ documents) => ({ name: 'lit', corpus: { path: '/data/my corpus.jsonl' }, tokens: { trainingDocuments: documents } });

test('300 documents, 60 clusters, 23 flagged: over-clustered, try √(300/2) ≈ 12, with the exact command', () => {
  const a = analysisOf({ k: 60, incoherent: 23, documents: 300 });
  const advice = clusterAdvice({ analysis: a, manifest: manifest(300) });
  assert.equal(advice.flagged, 23);
  assert.equal(advice.ruleOfThumb, 12);
  assert.equal(advice.overClustered, true);
  assert.equal(advice.suggested, 12);
  assert.equal(advice.command, "scdv train --corpus '/data/my corpus.jsonl' --name lit-k12 --clusters 12");
  assert.match(advice.reason, /^60 clusters, 23 flagged \(23 incoherent, 0 empty, tiny or diffuse\), 300 training documents \(rule of thumb √\(N\/2\) ≈ 12\): over-clustered \(more than 2 × √\(N\/2\) clusters for this corpus\)\. Try about 12 clusters \(√\(N\/2\), rounded\)\.$/);
  const lines = adviceLines(advice, 'lit');
  assert.equal(lines.length, 3);
  assert.equal(lines[1].trim(), advice.command);
});

test('a cluster count the corpus supports is left alone, flags or not; large counts round to fives', () => {
  // 20,000 documents support 100 clusters: 60 with 5 flagged is fine
  const fine = clusterAdvice({ analysis: analysisOf({ k: 60, incoherent: 5, documents: 20000 }), manifest: manifest(20000) });
  assert.equal(fine.overClustered, false);
  assert.equal(fine.command, null);
  assert.deepEqual(adviceLines(fine, 'lit'), []);
  // many incoherent clusters but no more than the corpus supports: fewer clusters is not the advice
  const incoherentOnly = clusterAdvice({ analysis: analysisOf({ k: 30, incoherent: 20, documents: 20000 }), manifest: manifest(20000) });
  assert.equal(incoherentOnly.overClustered, false);
  assert.match(incoherentOnly.reason, /Fewer clusters do not cure incoherent ones/);
  // a third of the clusters tiny: over-clustered even on a large corpus; try the clusters that are not
  const wasted = clusterAdvice({ analysis: analysisOf({ k: 30, incoherent: 0, tiny: 10, documents: 20000 }), manifest: manifest(20000) });
  assert.equal(wasted.wasted, 10);
  assert.equal(wasted.overClustered, true);
  assert.equal(wasted.suggested, 20);
  assert.match(wasted.reason, /more than 25 % of the clusters empty, tiny or diffuse\)\. Try about 20 clusters \(the clusters that are not empty, tiny or diffuse\)/);
  // 2,896 documents: √1448 ≈ 38, rounded to 40; 120 clusters is over 2 × 38 even without flags
  const many = clusterAdvice({ analysis: analysisOf({ k: 120, incoherent: 0, documents: 2896 }), manifest: manifest(2896) });
  assert.equal(many.overClustered, true);
  assert.equal(many.suggested, 40);
  assert.ok(ADVICE_RULES.maxWastedShare > 0 && ADVICE_RULES.maxWastedShare < 1);
});

test('coherence scale: the model mean against random word sets of the same sizes', () => {
  const random = { mean: -0.9, p05: -1, p50: -0.92, p95: -0.7, sets: 600 };
  const good = coherenceScale(analysisOf({ k: 10, incoherent: 2, documents: 300, random }));
  assert.equal(good.word, 'better than random');
  assert.equal(good.aboveRandom, 8);
  assert.equal(good.scored, 10);
  const poor = coherenceScale(analysisOf({ k: 10, incoherent: 10, documents: 300, random }));
  assert.equal(poor.word, 'no better than random');
  assert.equal(coherenceScale(analysisOf({ k: 10, incoherent: 2, documents: 300 })).word, 'not judged');
});

test('scdv train\'s closing advice reads the model folder: lines when over-clustered, none without an analysis', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-advice-'));
  try {
    assert.deepEqual(trainAdvice(dir, manifest(300)), []);
    fs.writeFileSync(path.join(dir, 'analysis.json'), JSON.stringify(analysisOf({ k: 60, incoherent: 23, documents: 300 })));
    const lines = trainAdvice(dir, manifest(300));
    assert.match(lines[0], /^ {2}advice: 60 clusters, 23 flagged/);
    assert.equal(lines[1].trim(), "scdv train --corpus '/data/my corpus.jsonl' --name lit-k12 --clusters 12");
    assert.match(lines[2], /scdv inspect clusters --model lit --flagged/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
