// The hybrid layout (embed.hybrid.alpha < 1): SCDV block + lexical TF-IDF block in one vector, worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DocumentVectorizer, sparseDot } from '../../pipeline/embed/vectorizer.js';
import { vectorLayout, layoutDifference } from '../../pipeline/embed/layout.js';
import { loadConfig } from '../../pipeline/config.js';

/** Width 4 (2 clusters x 2 dims); vocabulary rows: seiko 0, watch 1, clock 2. */
/** @type {Record<string, [number[], number[]]>} */
const ROWS = { seiko: [[0, 1], [3, 4]], watch: [[0, 2], [1, 1]], clock: [[2, 3], [1, -2]] };
const ORDER = ['seiko', 'watch', 'clock'];
const wordTopics = {
  width: 4,
  lookup: (/** @type {string} */ w) => (ROWS[w] ? { indices: Uint32Array.from(ROWS[w][0]), values: Float32Array.from(ROWS[w][1]) } : null),
};
const lexicon = { indexOf: (/** @type {string} */ w) => ORDER.indexOf(w), idf: Float32Array.from([3, 1, 2]) };
const cfg = (/** @type {Record<string, any>} */ hybrid, o = {}) => loadConfig({ overrides: { embed: { keepCount: 4, hybrid, ...o } } }).embed;
const near = (/** @type {number} */ a, /** @type {number} */ b) => assert.ok(Math.abs(a - b) < 1e-6, `${a} vs ${b}`);

test('hybrid vector: √α·SCDV block, then √(1−α)·L2-normalised (1 + ln tf)·idf over the vocabulary, dims above K·d', () => {
  const v = new DocumentVectorizer(wordTopics, cfg({ alpha: 0.64, damping: 'log', idfPower: 1 }), lexicon);
  assert.equal(v.width, 4 + 3);
  const e = v.embed(['seiko', 'seiko', 'watch', 'unknown']);
  // SCDV (binary): seiko + watch = [3, 4, 1, 0] -> [4, 4, 1] at dims 0, 1, 2 / norm √33
  // lexical: seiko (1 + ln 2)·3, watch 1·1 at dims 4 + 0, 4 + 1
  assert.deepEqual([...e.indices], [0, 1, 2, 4, 5]);
  const s = Math.sqrt(33);
  const l0 = (1 + Math.log(2)) * 3;
  const ln = Math.hypot(l0, 1);
  [4 / s * 0.8, 4 / s * 0.8, 1 / s * 0.8, l0 / ln * 0.6, 1 / ln * 0.6].forEach((x, i) => near(e.values[i], x));
  near(Math.hypot(...e.values), 1);
});

test('the lexical block counts each distinct word once by default (embed.hybrid.damping binary); a layout recorded without the option keeps 1 + ln tf', () => {
  const v = new DocumentVectorizer(wordTopics, cfg({ alpha: 0.64, idfPower: 1 }), lexicon);
  const e = v.embed(['seiko', 'seiko', 'seiko', 'watch']);
  // lexical: seiko 1·3, watch 1·1 (the repeats of seiko do not count)
  const ln = Math.hypot(3, 1);
  near(e.values[e.values.length - 2], 3 / ln * 0.6);
  near(e.values[e.values.length - 1], 1 / ln * 0.6);
  const old = cfg({ alpha: 0.64 });
  // the embed settings of a collection indexed before the options (damping; stopwords and idfPower came later)
  for (const k of ['damping', 'stopwords', 'idfPower']) delete (/** @type {Record<string, any>} */ (old.hybrid))[k];
  const o = new DocumentVectorizer(wordTopics, old, lexicon).embed(['seiko', 'seiko', 'seiko', 'watch']);
  const l0 = (1 + Math.log(3)) * 3;
  near(o.values[o.values.length - 2], l0 / Math.hypot(l0, 1) * 0.6);
  assert.match(layoutDifference(vectorLayout(old, 4, 3), vectorLayout(cfg({ alpha: 0.64 }), 4, 3)), /embed.hybrid.damping - vs "binary"/);
  assert.throws(() => cfg({ damping: 'sqrt' }), /embed\.hybrid\.damping must be one of binary, log, raw, saturate, got "sqrt"/);
});

test('the dot product of two hybrid vectors is α·cos(SCDV) + (1−α)·cos(TF-IDF)', () => {
  const docs = [['seiko', 'watch', 'watch'], ['clock', 'watch', 'seiko', 'seiko']];
  const pure = new DocumentVectorizer(wordTopics, cfg({ alpha: 1 }), lexicon);
  const lex = new DocumentVectorizer(wordTopics, cfg({ alpha: 0 }), lexicon);
  const mixed = new DocumentVectorizer(wordTopics, cfg({ alpha: 0.3 }), lexicon);
  const [p, l, m] = [pure, lex, mixed].map((v) => docs.map((d) => v.embed(d)));
  near(sparseDot(m[0], m[1]), 0.3 * sparseDot(p[0], p[1]) + 0.7 * sparseDot(l[0], l[1]));
  // alpha 0 is the lexical block alone (no SCDV dims stored), alpha 1 the plain SCDV vector (width K·d)
  assert.ok([...l[0].indices].every((i) => i >= 4));
  assert.equal(pure.width, 4);
});

test('maxTerms keeps the heaviest words of the lexical block; layouts describe and compare vectors', () => {
  const v = new DocumentVectorizer(wordTopics, cfg({ alpha: 0.5, maxTerms: 1 }), lexicon);
  const e = v.embed(['watch', 'clock']); // idf watch 1 < clock 2: only clock kept
  assert.deepEqual([...e.indices].filter((i) => i >= 4), [4 + 2]);
  // without the vocabulary: the SCDV block alone, as alpha 1
  const alone = new DocumentVectorizer(wordTopics, cfg({ alpha: 0.5 }));
  assert.equal(alone.width, 4);
  assert.ok([...alone.embed(['watch', 'clock']).indices].every((i) => i < 4));
  const a = vectorLayout(cfg({ alpha: 0.5 }), 4, 3);
  assert.equal(a.kind, 'hybrid');
  assert.equal(a.width, 7);
  assert.equal(vectorLayout(cfg({ alpha: 1 }), 4, 3).width, 4);
  assert.equal(layoutDifference(a, vectorLayout(cfg({ alpha: 0.5 }), 4, 3)), '');
  assert.match(layoutDifference(a, vectorLayout(cfg({ alpha: 0.5 }, { damping: 'log' }), 4, 3)), /embed.damping "binary" vs "log"/);
  assert.throws(() => cfg({ alpha: 1.5 }), /embed\.hybrid\.alpha must be a number from 0 to 1, got 1\.5/);
  assert.throws(() => cfg({ maxTerms: 0 }), /embed\.hybrid\.maxTerms must be a positive integer, or null, got 0/);
});

test('the lexical block weighs damp(tf) · idf^idfPower (0.25 by default)', () => {
  const e = new DocumentVectorizer(wordTopics, cfg({ alpha: 0.64 }), lexicon).embed(['seiko', 'clock']);
  // lexical: seiko 3^0.25, clock 2^0.25 (binary), L2-normalised, times 0.6
  const n = Math.hypot(3 ** 0.25, 2 ** 0.25);
  near(e.values[e.values.length - 2], 3 ** 0.25 / n * 0.6);
  near(e.values[e.values.length - 1], 2 ** 0.25 / n * 0.6);
  const squared = new DocumentVectorizer(wordTopics, cfg({ alpha: 0.64, idfPower: 2 }), lexicon).embed(['seiko', 'clock']);
  near(squared.values[squared.values.length - 2], 9 / Math.hypot(9, 4) * 0.6);
});
