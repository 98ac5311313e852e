import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DocumentVectorizer, damp, kthLargest, sparseDot } from '../../pipeline/embed/vectorizer.js';
import { WordTopics } from '../../pipeline/model/word-topics.js';
import { loadModel } from '../../pipeline/model/load.js';
import { MODEL_FORMAT } from '../../pipeline/model/format.js';
import { loadConfig } from '../../pipeline/config.js';
import { REPO_ROOT, VENV_PYTHON } from '../../pipeline/paths.js';

/**
 * A tiny model by hand: width 6 (2 clusters x 3 dims).
 * @type {Record<string, [number[], number[]]>}
 */
const ROWS = {
  seiko: [[0, 3, 4], [1, 3, 4]], // [1, 0, 0, 3, 4, 0]: a rare brand, heavy (high idf)
  watch: [[0, 2, 3], [1, 1, 1]], // [1, 0, 1, 1, 0, 0]
  clock: [[0, 2, 4], [1, 1, -2]], // [1, 0, 1, 0, -2, 0]
};
const tiny = {
  width: 6,
  lookup: (/** @type {string} */ w) => (ROWS[w] ? { indices: Uint32Array.from(ROWS[w][0]), values: Float32Array.from(ROWS[w][1]) } : null),
};
const cfg = (/** @type {Record<string, any>} */ o = {}) => loadConfig({ overrides: { embed: { keepCount: 6, ...o } } }).embed;

/** @param {number[]} v */
const unit = (v) => { const n = Math.hypot(...v); return v.map((x) => x / n); };

/** @param {import('../../pipeline/embed/vectorizer.js').Embedding} e */
const dense = (e) => { const d = new Array(6).fill(0); e.indices.forEach((i, j) => { d[i] = e.values[j]; }); return d; };

/** @param {number[]} a @param {number[]} b */
const close = (a, b) => a.forEach((x, i) => assert.ok(Math.abs(x - b[i]) < 1e-6, `${a} vs ${b}`));

test('a document vector is the damped sum of its word-topic vectors, L2-normalised (worked by hand)', () => {
  const tokens = ['seiko', 'seiko', 'seiko', 'watch', 'unknown'];
  // binary: seiko + watch = [1+1, 0, 1, 3+1, 4, 0]
  const bin = new DocumentVectorizer(tiny, cfg()).embed(tokens);
  close(dense(bin), unit([2, 0, 1, 4, 4, 0]));
  assert.equal(bin.knownWords, 2);
  assert.equal(bin.unknownWords, 1);
  // raw: 3·seiko + watch = [4, 0, 1, 10, 12, 0]: the repeated brand dominates
  close(dense(new DocumentVectorizer(tiny, cfg({ damping: 'raw' })).embed(tokens)), unit([4, 0, 1, 10, 12, 0]));
  // log: (1 + ln 3)·seiko + watch
  const l = 1 + Math.log(3);
  close(dense(new DocumentVectorizer(tiny, cfg({ damping: 'log' })).embed(tokens)), unit([l + 1, 0, 1, 3 * l + 1, 4 * l, 0]));
  // saturate, k = 1: 3·2/(3+1) = 1.5
  close(dense(new DocumentVectorizer(tiny, cfg({ damping: 'saturate', saturationK: 1 })).embed(tokens)), unit([2.5, 0, 1, 5.5, 6, 0]));
});

test('damping functions', () => {
  const c = cfg();
  assert.equal(damp(7, { ...c, damping: 'binary' }), 1);
  assert.equal(damp(7, { ...c, damping: 'raw' }), 7);
  assert.ok(Math.abs(damp(Math.E, { ...c, damping: 'log' }) - 2) < 1e-12);
  assert.equal(damp(1, { ...c, damping: 'saturate' }), 1, 'one occurrence counts 1 whatever k');
  assert.ok(damp(1000, { ...c, damping: 'saturate', saturationK: 1.2 }) < 2.2);
});

test('sparsification keeps the largest magnitudes (ties to the lower index) and cancellation is exact', () => {
  // watch + clock = [2, 0, 2, 1, -2, 0] -> keep 2 of the three tied at magnitude 2: the lower dims 0 and 2
  const v = new DocumentVectorizer(tiny, cfg({ keepCount: 2 })).embed(['watch', 'clock']);
  assert.deepEqual([...v.indices], [0, 2]);
  close([...v.values], unit([2, 2]));
  // keepFraction: ceil(0.5 * 6) = 3 -> dims 0, 2, 4 (dim 3, magnitude 1, goes)
  const f = new DocumentVectorizer(tiny, cfg({ keepCount: null, keepFraction: 0.5 })).embed(['watch', 'clock']);
  assert.deepEqual([...f.indices], [0, 2, 4]);
  close([...f.values], unit([2, 2, -2]));
  assert.ok(Math.abs(sparseDot(f, f) - 1) < 1e-6);
});

test('a document with no known word gets an empty vector, reported as such', () => {
  const e = new DocumentVectorizer(tiny, cfg()).embed(['nothing', 'known']);
  assert.equal(e.indices.length, 0);
  assert.equal(e.knownWords, 0);
  assert.equal(e.unknownWords, 2);
});

test('the vectorizer state is reset between documents', () => {
  const vz = new DocumentVectorizer(tiny, cfg());
  const first = vz.embed(['clock']);
  vz.embed(['seiko', 'watch']);
  assert.deepEqual(dense(vz.embed(['clock'])), dense(first));
});

test('kthLargest agrees with sorting', () => {
  for (let t = 0; t < 300; t++) {
    const n = 1 + (t % 97);
    const a = Float64Array.from({ length: n }, (_, i) => ((i * 7919 + t * 31) % 23) / 3);
    const k = 1 + (t % n);
    const want = [...a].sort((x, y) => y - x)[k - 1];
    assert.equal(kthLargest(a, k), want);
  }
});

test('Node reads word_topics.bin exactly as the Python writer wrote it', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-wtv-'));
  const file = path.join(dir, 'word_topics.bin');
  const script = `
import numpy as np, sys
from scdv.wtv_format import write_word_topics
from scdv.topics import WordTopicVectorizer
rng = np.random.default_rng(5)
words = ["猫", "café", "ｶﾀｶﾅ", "x", "🍣寿司"] + [f"w{i}" for i in range(59)]
K, d = 3, 4
vec = rng.normal(size=(len(words), d)).astype(np.float32)
post = rng.dirichlet(np.ones(K), size=len(words)).astype(np.float32)
idf = rng.uniform(1, 3, size=len(words))
WordTopicVectorizer(keep_fraction=0.5).write(sys.argv[1], words, vec, post, idf)
`;
  const res = spawnSync(VENV_PYTHON, ['-c', script, file], { env: { ...process.env, PYTHONPATH: path.join(REPO_ROOT, 'workers') }, encoding: 'utf8' });
  assert.equal(res.status, 0, res.stderr);
  const dump = spawnSync(VENV_PYTHON, ['-c', `
import json, sys
from scdv.wtv_format import WordTopicFile
f = WordTopicFile(sys.argv[1])
out = {}
for w in ["猫", "café", "ｶﾀｶﾅ", "x", "🍣寿司", "w7", "w58"]:
    cols, vals = f.row(f.lookup(w))
    out[w] = [list(map(int, cols)), [float(v) for v in vals]]
print(json.dumps(out))
`, file], { env: { ...process.env, PYTHONPATH: path.join(REPO_ROOT, 'workers') }, encoding: 'utf8' });
  assert.equal(dump.status, 0, dump.stderr);
  const want = JSON.parse(dump.stdout);
  for (const wt of [WordTopics.open(file), WordTopics.fromBytes(fs.readFileSync(file)), WordTopics.map(file)]) {
    assert.equal(wt.nWords, 64);
    assert.equal(wt.width, 12);
    for (const [w, [cols, vals]] of Object.entries(want)) {
      const row = wt.lookup(w);
      assert.ok(row, w);
      assert.deepEqual([...row.indices], cols, w);
      row.values.forEach((v, i) => assert.ok(Math.abs(v - vals[i]) < 1e-6));
    }
    assert.equal(wt.lookup('not-a-word'), null);
    assert.equal(wt.word(wt.indexOf('café')), 'café');
    wt.close();
  }
  // A mapped file is read through whole-section views (its own UTF-8 encoding of the word): the same rows as
  // positional reads, for every word and for strings that are not words (a lone surrogate is U+FFFD's bytes).
  const [byReads, byViews] = [WordTopics.open(file), WordTopics.map(file)];
  assert.ok(byViews.sections, 'a mapped file is read through section views');
  assert.equal(byReads.sections, null);
  const probes = [...Array.from({ length: 64 }, (_, i) => byReads.word(i)), '', '🍣', '寿司', '\ud83c寿司', '\udf63', 'w' + 'x'.repeat(300), 'CAFÉ', 'cafe\u0301'];
  for (const w of probes) {
    assert.equal(byViews.indexOf(w), byReads.indexOf(w), JSON.stringify(w));
    assert.deepEqual(byViews.lookup(w), byReads.lookup(w), JSON.stringify(w));
  }
  assert.equal(byViews.indexOf('🍣寿司'), byReads.indexOf('🍣寿司'));
  assert.ok(byViews.indexOf('🍣寿司') >= 0);
  // The mapping is copy-on-write: a write through a row stays in this process, the file is unchanged.
  const before = fs.readFileSync(file);
  const mapped = WordTopics.map(file);
  assert.equal(mapped.src.kind, 'memory');
  /** @type {import('../../pipeline/model/word-topics.js').SparseRow} */ (mapped.lookup('猫')).values.fill(7);
  assert.ok(/** @type {import('../../pipeline/model/word-topics.js').SparseRow} */ (mapped.lookup('猫')).values.every((v) => v === 7));
  assert.deepEqual(fs.readFileSync(file), before);
  assert.notEqual(WordTopics.map(file).lookup('猫')?.values[0], 7);
  // A model loaded for the server (not inMemory) is mapped: lookups are memory reads, not system calls.
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ format: MODEL_FORMAT }));
  assert.equal(loadModel(path.basename(dir), { modelsDir: path.dirname(dir) }).wordTopics.src.kind, 'memory');
  assert.throws(() => WordTopics.map(path.join(dir, 'missing.bin')), (/** @type {any} */ e) => e.code === 'SCDV_MODEL_CORRUPT' && /missing\.bin/.test(e.message));
  fs.rmSync(dir, { recursive: true, force: true });
});

test('the vectorizer equals a plain reference bit for bit (random words, cancellations, ties, hybrid with and without maxTerms)', () => {
  // Reference: each dim summed in the document's first-occurrence word order, the kept dims chosen by a full sort
  // (|value| descending, the lower index first), the norms summed in index order.
  let seed = 7;
  const rand = () => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed / 2 ** 32; };
  const width = 40;
  const vocab = Array.from({ length: 30 }, (_, i) => `w${i}`);
  /** @type {Map<string, {indices: Uint32Array, values: Float32Array}>} */
  const rows = new Map();
  for (const w of vocab) {
    const dims = [...new Set(Array.from({ length: 1 + Math.floor(rand() * 12) }, () => Math.floor(rand() * width)))].sort((a, b) => a - b);
    // Values from a small set: exact cancellations and magnitude ties happen.
    rows.set(w, { indices: Uint32Array.from(dims), values: Float32Array.from(dims, () => [-2, -1, -0.5, 0.5, 1, 1.5, 2][Math.floor(rand() * 7)]) });
  }
  const wt = { width, lookup: (/** @type {string} */ w) => rows.get(w) ?? null };
  const idf = Float32Array.from(vocab, () => 0.5 + Math.floor(rand() * 4) / 2);
  const lexicon = { indexOf: (/** @type {string} */ w) => vocab.indexOf(w), idf };
  /** @param {any} c @param {string[]} tokens @param {boolean} hybrid */
  const reference = (c, tokens, hybrid) => {
    const tf = new Map();
    for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
    const acc = new Float64Array(width);
    let known = 0;
    for (const [w, n] of tf) {
      const r = rows.get(w);
      if (!r) continue;
      known++;
      r.indices.forEach((d, i) => { acc[d] += damp(n, c) * r.values[i]; });
    }
    const keep = Math.max(1, c.keepCount ?? Math.ceil(c.keepFraction * width));
    const dims = [...acc.keys()].filter((d) => acc[d] !== 0).sort((a, b) => Math.abs(acc[b]) - Math.abs(acc[a]) || a - b).slice(0, keep).sort((a, b) => a - b);
    let norm = 0;
    for (const d of dims) norm += acc[d] * acc[d];
    norm = Math.sqrt(norm);
    const scdv = { indices: Uint32Array.from(dims), values: Float32Array.from(dims, (d) => acc[d] / norm) };
    if (!hybrid || !dims.length) return { ...scdv, knownWords: known, unknownWords: tf.size - known };
    const p = c.hybrid.idfPower;
    const weights = p === 1 ? idf : idf.map((x) => x ** p); // idf^p kept as float32, as the model's idf is
    let terms = [...tf].filter(([w]) => vocab.includes(w)).map(([w, n]) => [vocab.indexOf(w), damp(n, { ...c, damping: c.hybrid.damping }) * weights[vocab.indexOf(w)]]);
    if (c.hybrid.maxTerms !== null && terms.length > c.hybrid.maxTerms) terms = terms.sort((x, y) => y[1] - x[1] || x[0] - y[0]).slice(0, c.hybrid.maxTerms);
    terms.sort((x, y) => x[0] - y[0]);
    let ln = 0;
    for (const [, w] of terms) ln += w * w;
    ln = Math.sqrt(ln);
    const a = Math.sqrt(c.hybrid.alpha);
    const b = ln > 0 ? Math.sqrt(1 - c.hybrid.alpha) / ln : 0;
    const n = c.hybrid.alpha > 0 ? dims.length : 0;
    return {
      indices: Uint32Array.from([...scdv.indices.subarray(0, n), ...terms.map(([r]) => width + r)]),
      values: Float32Array.from([...Array.from(scdv.values.subarray(0, n), (x) => a * x), ...terms.map(([, w]) => b * w)]),
      knownWords: known, unknownWords: tf.size - known,
    };
  };
  /** @type {[ReturnType<typeof cfg>, boolean][]} */
  const settings = [
    [cfg({ keepCount: 5 }), false], [cfg({ keepCount: 40, damping: 'log' }), false],
    [cfg({ keepCount: 6, hybrid: { alpha: 0.3, damping: 'log', idfPower: 0.5, maxTerms: null } }), true],
    [cfg({ keepCount: 3, damping: 'raw', hybrid: { alpha: 0.5, damping: 'binary', idfPower: 1, maxTerms: 4 } }), true],
    [cfg({ keepCount: 8, hybrid: { alpha: 0, damping: 'saturate', idfPower: 0.25, maxTerms: 2 } }), true],
  ];
  for (const [c, hybrid] of settings) {
    const v = new DocumentVectorizer(wt, c, hybrid ? lexicon : undefined);
    for (let doc = 0; doc < 300; doc++) {
      const tokens = Array.from({ length: Math.floor(rand() * 25) }, () => (rand() < 0.1 ? `unknown${doc % 3}` : vocab[Math.floor(rand() * (doc % 2 ? 8 : 30))]));
      const got = v.embed(tokens);
      const want = reference(c, tokens, hybrid);
      assert.deepEqual(got, want, `${JSON.stringify(c.hybrid)} ${tokens}`);
    }
  }
});
