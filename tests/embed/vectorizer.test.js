import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DocumentVectorizer, damp, kthLargest, sparseDot } from '../../pipeline/embed/vectorizer.js';
import { WordTopics } from '../../pipeline/model/word-topics.js';
import { loadModel } from '../../pipeline/model/load.js';
import { MODEL_FORMAT } from '../../pipeline/model/names.js';
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
words = ["猫", "café", "ｶﾀｶﾅ", "x"] + [f"w{i}" for i in range(60)]
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
for w in ["猫", "café", "ｶﾀｶﾅ", "x", "w7", "w59"]:
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
