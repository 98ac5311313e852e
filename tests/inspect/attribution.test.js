// The decompositions behind `scdv inspect doc` and `scdv explain` are exact: topic masses sum to 1, word
// shares sum to 1, and a pair's score splits over topics and over each side's words without remainder.
// Vectors come from the real DocumentVectorizer (pipeline/embed/), on a small random word-topic table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DocumentVectorizer, sparseDot } from '../../pipeline/embed/vectorizer.js';
import { topicMass, dotByTopic, wordContributions, wordsOfCluster } from '../../pipeline/inspect/attribution.js';
import { rng } from '../lib/random.js';
import { loadConfig } from '../../pipeline/config.js';

/** Embed settings: the defaults with these changes. */
const embedCfg = (/** @type {Record<string, any>} */ o) => loadConfig({ overrides: { embed: o } }).embed;

const K = 6;
const DIM = 5;

/** A word-topic table: each word has a random sparse row over K·DIM dims. */
function table(seed = 3) {
  const rand = rng(seed);
  const words = Array.from({ length: 40 }, (_, i) => `w${i}`);
  /** @type {Map<string, {indices: Uint32Array, values: Float32Array}>} */
  const rows = new Map();
  for (const w of words) {
    const dims = [...new Set(Array.from({ length: 8 }, () => Math.floor(rand() * K * DIM)))].sort((a, b) => a - b);
    rows.set(w, { indices: Uint32Array.from(dims), values: Float32Array.from(dims.map(() => rand() * 2 - 0.6)) });
  }
  return { words, width: K * DIM, dim: DIM, lookup: (/** @type {string} */ w) => rows.get(w) ?? null };
}

const close = (/** @type {number} */ a, /** @type {number} */ b, eps = 1e-5) => assert.ok(Math.abs(a - b) < eps, `${a} ≈ ${b}`);

for (const damping of /** @type {const} */ (['binary', 'log', 'raw'])) {
  test(`word shares and topic masses of one document sum to 1 (${damping} damping, sparsified)`, () => {
    const wt = table();
    const cfg = embedCfg({ damping, keepFraction: 0.3 });
    const v = new DocumentVectorizer(wt, cfg);
    const tokens = ['w1', 'w2', 'w2', 'w3', 'w5', 'w8', 'w8', 'w8', 'w13', 'unknown'];
    const e = v.embed(tokens);
    assert.equal(e.indices.length, v.keep, 'the vector was sparsified: words reach it only through kept dims');
    const mass = topicMass(e, DIM);
    close(mass.reduce((s, t) => s + t.mass, 0), 1);
    const words = wordContributions(tokens, e, wt, cfg);
    close(words.total, 1);
    assert.deepEqual(words.unknown, ['unknown']);
    assert.equal(words.words.length, 6);
    // per topic: the words' parts of a topic add up to the topic's mass
    for (const t of mass) {
      const sum = words.words.reduce((s, w) => s + (w.byCluster.get(t.cluster) ?? 0), 0);
      close(sum, t.mass);
    }
  });
}

test('a pair: the score splits over shared topics and over each side\'s words', () => {
  const wt = table(11);
  const cfg = embedCfg({ damping: 'log', keepFraction: 0.4 });
  const vec = new DocumentVectorizer(wt, cfg);
  const ta = ['w1', 'w2', 'w3', 'w4', 'w4', 'w9', 'w10'];
  const tb = ['w2', 'w4', 'w11', 'w12', 'w12', 'w20'];
  const a = vec.embed(ta);
  const aCopy = { indices: Uint32Array.from(a.indices), values: Float32Array.from(a.values) }; // the vectorizer reuses buffers
  const b = vec.embed(tb);
  const score = sparseDot(aCopy, b);
  assert.ok(score > 0.05, `the documents share topics (score ${score})`);
  const { score: s2, topics } = dotByTopic(aCopy, b, DIM);
  close(s2, score, 1e-12);
  close(topics.reduce((s, t) => s + t.contribution, 0), score, 1e-12);
  for (let i = 1; i < topics.length; i++) assert.ok(topics[i - 1].contribution >= topics[i].contribution);
  const wa = wordContributions(ta, aCopy, wt, cfg, b);
  const wb = wordContributions(tb, b, wt, cfg, aCopy);
  close(wa.total, score);
  close(wb.total, score);
  for (const t of topics) {
    close(wa.words.reduce((s, w) => s + (w.byCluster.get(t.cluster) ?? 0), 0), t.contribution);
    const listed = wordsOfCluster(wa.words, t.cluster, 100);
    for (let i = 1; i < listed.length; i++) assert.ok(listed[i - 1].contribution >= listed[i].contribution);
  }
});
