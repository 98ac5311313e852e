// The Python SCDVVectorizer (workers/scdv/vectorizer.py) runs the product's own embedder (`scdv embed`): its rows
// equal the vectors `scdv index` stored and the server's embedder computes for the same texts; it trains a model
// from fit() and works in a scikit-learn Pipeline with a classifier. Real model, Redis, Node CLI and Python.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { docUnit } from '../store/helpers.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-pyvec-'));
process.env.SCDV_MODELS_DIR = path.join(tmp, 'models');
process.env.SCDV_DATA_DIR = path.join(tmp, 'data');
process.env.SCDV_STORE_DIR = path.join(tmp, 'store');
const { REPO_ROOT, VENV_PYTHON: PYTHON, storeDirFor } = await import('../../pipeline/paths.js');
const { loadConfig } = await import('../../pipeline/config.js');
const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { openStore } = await import('../../pipeline/store/index.js');
const { createEmbedder } = await import('../../pipeline/embed/index.js');
const { collectionEmbedConfig } = await import('../../pipeline/serving/index.js');
const { ensureModels, writeTwoTopicCorpus, TWO_TOPIC_TRAIN, ANIMALS } = await import('../lib/tiny-model.js');

const CLI = path.join(REPO_ROOT, 'pipeline', 'cli.js');
const MODEL = 'pyvec';
const corpus = path.join(tmp, 'corpus.jsonl');
/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redis;

before(async () => {
  redis = await startPrivateRedis();
  await ensureModels({ corpus: writeTwoTopicCorpus(corpus), models: [{ name: MODEL, overrides: { train: TWO_TOPIC_TRAIN } }], redisUrl: redis.url });
  const r = spawnSync(process.execPath, [CLI, 'index', '--model', MODEL, '--corpus', corpus, '--workers', '1'],
    { encoding: 'utf8', env: { ...process.env, REDIS_URL: redis.url } });
  assert.equal(r.status, 0, r.stderr);
});
after(async () => {
  await redis?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/**
 * Run Python code with the project's .venv and `scdv` importable; its last stdout line is JSON.
 * @param {string} code
 */
function python(code) {
  const r = spawnSync(PYTHON, ['-c', code], {
    encoding: 'utf8', cwd: REPO_ROOT, env: { ...process.env, PYTHONPATH: path.join(REPO_ROOT, 'workers'), REDIS_URL: redis.url },
  });
  assert.equal(r.status, 0, `${r.stderr}\n${r.stdout}`);
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '');
}

const docs = () => fs.readFileSync(corpus, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

test('transform gives the vectors scdv index stored and the server embeds, as a CSR matrix', async () => {
  const sample = docs().slice(0, 20);
  const texts = [...sample.map((d) => d.body), '未知の語だけ']; // the last: no known word, an all-zero row
  const got = python(`
import json
from scdv.vectorizer import SCDVVectorizer
v = SCDVVectorizer(model=${JSON.stringify(MODEL)}, models_dir=${JSON.stringify(path.join(tmp, 'models'))}, fit_mode="load", collection="articles")
X = v.fit([]).transform(${JSON.stringify(texts)})
rows = [{"indices": X[i].indices.tolist(), "values": X[i].data.tolist()} for i in range(X.shape[0])]
print(json.dumps({"format": X.format, "dtype": str(X.dtype), "shape": list(X.shape), "width": v.width_, "trained": v.trained_, "rows": rows}))
`);
  const config = loadConfig();
  const embedder = await createEmbedder(MODEL, { ...config, embed: await collectionEmbedConfig(MODEL, 'articles', config) });
  const expected = await embedder.embedDocuments(texts.map((body) => ({ body })));
  embedder.model.wordTopics.close();
  assert.deepEqual({ format: got.format, dtype: got.dtype, shape: got.shape, trained: got.trained }, { format: 'csr', dtype: 'float32', shape: [texts.length, embedder.width], trained: false });
  const store = openStore(storeDirFor(MODEL));
  const stored = store.collection('articles');
  try {
    sample.forEach((d, i) => {
      // The server's embedder, bit for bit (float32 through JSON).
      assert.deepEqual(got.rows[i].indices, Array.from(expected[i].indices), d.id);
      assert.deepEqual(got.rows[i].values, Array.from(expected[i].values), d.id);
      // What scdv index stored (values kept as 11-bit codes x the document's unit: pipeline/store/README.md).
      const s = /** @type {NonNullable<ReturnType<typeof stored.get>>} */ (stored.get(d.id));
      assert.deepEqual(got.rows[i].indices, Array.from(s.vector.indices), d.id);
      const unit = docUnit(got.rows[i].values);
      got.rows[i].values.forEach((/** @type {number} */ v, /** @type {number} */ j) => assert.ok(Math.abs(v - s.vector.values[j]) <= unit, `${d.id}[${j}]: ${v} vs ${s.vector.values[j]}`));
    });
  } finally {
    store.close();
  }
  assert.deepEqual(got.rows[texts.length - 1], { indices: [], values: [] });
});

test('fit trains a model from the texts, and the vectorizer works in a Pipeline with a classifier', () => {
  const all = docs();
  const label = (/** @type {{body: string}} */ d) => (ANIMALS.some((w) => d.body.includes(w)) ? 'animal' : 'vehicle');
  const train = all.slice(0, 160);
  const heldOut = all.slice(160);
  const configFile = path.join(tmp, 'small.json');
  fs.writeFileSync(configFile, JSON.stringify({ train: TWO_TOPIC_TRAIN }));
  const got = python(`
import json
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC
from scdv.vectorizer import SCDVVectorizer
vec = SCDVVectorizer(model="pyvec-trained", models_dir=${JSON.stringify(path.join(tmp, 'models'))}, fit_mode="train", config=${JSON.stringify(configFile)})
clf = make_pipeline(vec, LinearSVC())
clf.fit(${JSON.stringify(train.map((d) => d.body))}, ${JSON.stringify(train.map(label))})
pred = clf.predict(${JSON.stringify(heldOut.map((d) => d.body))}).tolist()
params = vec.get_params()
vec.set_params(fit_mode="load")
errors = []
for bad in ("a single string", [1, 2]):
    try:
        vec.transform(bad)
    except ValueError as e:
        errors.append(str(e))
print(json.dumps({"pred": pred, "trained": vec.trained_, "params": sorted(params), "fit_mode": vec.get_params()["fit_mode"], "errors": errors}))
`);
  assert.equal(got.trained, true);
  assert.ok(fs.existsSync(path.join(tmp, 'models', 'pyvec-trained', 'manifest.json')), 'fit trained models/pyvec-trained');
  const correct = got.pred.filter((/** @type {string} */ p, /** @type {number} */ i) => p === label(heldOut[i])).length;
  assert.ok(correct / heldOut.length >= 0.95, `${correct}/${heldOut.length} held-out documents classified right`);
  assert.deepEqual(got.params, ['clusters', 'collection', 'config', 'dims', 'epochs', 'fit_mode', 'min_count', 'model', 'models_dir', 'node', 'seed']);
  assert.equal(got.fit_mode, 'load');
  assert.match(got.errors[0], /string object received/);
  assert.match(got.errors[1], /document 0 must be a string or a dict/);
});

test('scdv embed remarks on a text with no known word (an empty vector), naming its line and id', () => {
  const r = spawnSync(process.execPath, [CLI, 'embed', '--model', MODEL], { encoding: 'utf8', input: '{"id":"a","body":"。。。"}\n{"body":"犬と猫"}\n' });
  assert.equal(r.status, 0, r.stderr);
  const [first, second] = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(first, { id: 'a', indices: [], values: [] });
  assert.ok(second.indices.length > 0);
  assert.match(r.stderr, new RegExp(`^scdv embed: line 1 \\(id "a"\\): no word of the text is in model ${MODEL}'s vocabulary: an empty vector, which matches nothing$`, 'm'));
  assert.doesNotMatch(r.stderr, /line 2/);
});

test('scdv embed names a bad input line', () => {
  const r = spawnSync(process.execPath, [CLI, 'embed', '--model', MODEL], { encoding: 'utf8', input: '{"body":"犬と猫"}\n{"text":"犬"}\n' });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /scdv embed input line 2: field body must be a string, got none/);
});
