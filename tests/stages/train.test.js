// `scdv train` end to end on a small synthetic corpus: real tokenizer, Redis, Bull and Python workers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-train-'));
process.env.SCDV_MODELS_DIR = path.join(tmp, 'models');
process.env.SCDV_DATA_DIR = path.join(tmp, 'data');
const { loadConfig } = await import('../../pipeline/config.js');
const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { runTrain } = await import('../../pipeline/stages/train.js');
const { WordTopics } = await import('../../pipeline/model/word-topics.js');
const { clusterAdvice } = await import('../../pipeline/inspect/advice.js');
const { ANIMALS, TWO_TOPIC_TRAIN, VEHICLES, writeTwoTopicCorpus } = await import('../lib/tiny-model.js');

/** The two-topic corpus: 240 documents, each listing ten words of one group (context separates the groups). */
const writeCorpus = () => writeTwoTopicCorpus(path.join(tmp, 'corpus.jsonl'));

/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redis;
before(async () => { redis = await startPrivateRedis(); });
after(async () => { await redis.stop(); fs.rmSync(tmp, { recursive: true, force: true }); });

const smallConfig = (/** @type {Record<string, any>} */ gmm = {}) => loadConfig({
  overrides: { train: { ...TWO_TOPIC_TRAIN, gmm: { ...TWO_TOPIC_TRAIN.gmm, ...gmm } } },
});

/**
 * Cluster of a word: the cluster block carrying most of its word-topic vector's mass (∝ P(k|w)).
 * @param {InstanceType<typeof WordTopics>} wt
 * @param {string} word
 */
function topCluster(wt, word) {
  const row = wt.lookup(word);
  assert.ok(row, `${word} is in the vocabulary`);
  const mass = new Float64Array(wt.nClusters);
  row.indices.forEach((col, i) => { mass[Math.floor(col / wt.dim)] += row.values[i] ** 2; });
  return mass.indexOf(Math.max(...mass));
}

test('scdv train builds a complete model whose clusters follow the contexts; a re-run reuses every stage', async () => {
  const corpus = writeCorpus();
  const log = () => {};
  const { modelDir, manifest } = await runTrain({ corpus, name: 'toy', config: smallConfig(), redisUrl: redis.url, quiet: true, log });
  for (const f of ['manifest.json', 'vocab.txt', 'word_vectors.npy', 'gmm.npz', 'word_topics.bin']) {
    assert.ok(fs.existsSync(path.join(modelDir, f)), `${f} exists`);
  }
  assert.deepEqual(fs.readdirSync(path.dirname(modelDir)), ['toy'], 'no temporary folder is left beside the model');
  assert.equal(manifest.format, 'scdv-model/1');
  assert.equal(manifest.counts.vocabulary, 24);
  assert.equal(manifest.counts.clusters, 2);
  assert.equal(manifest.counts.dims, 32);
  assert.equal(manifest.hyperparameters.gmm.covariance_type, 'tied');
  assert.equal(manifest.tokens.trainingDocuments, 240);
  assert.match(manifest.corpus.sha256, /^[0-9a-f]{64}$/);
  assert.ok(manifest.timings.word2vec_s > 0 && manifest.timings.gmm_s > 0);

  const wt = WordTopics.open(path.join(modelDir, 'word_topics.bin'));
  const a = ANIMALS.map((w) => topCluster(wt, w));
  const v = VEHICLES.map((w) => topCluster(wt, w));
  wt.close();
  const share = (/** @type {number[]} */ xs, /** @type {number[]} */ ys, same = xs === ys) => {
    let agree = 0; let n = 0;
    xs.forEach((x, i) => ys.forEach((y, j) => { if (!same || i < j) { agree += Number(x === y); n++; } }));
    return agree / n;
  };
  assert.ok(share(a, a) >= 0.9, `animals together: ${a}`);
  assert.ok(share(v, v) >= 0.9, `vehicles together: ${v}`);
  assert.ok(share(a, v, false) <= 0.1, `groups apart: ${a} vs ${v}`);

  const again = await runTrain({ corpus, name: 'toy', config: smallConfig(), redisUrl: redis.url, quiet: true, log, force: true });
  for (const s of ['word2vec', 'idf', 'gmm', 'topics']) assert.equal(again.manifest.stages[s].reused, true, `${s} reused`);
  const changed = await runTrain({ corpus, name: 'toy', config: smallConfig({ covariance_type: 'diag' }), redisUrl: redis.url, quiet: true, log, force: true });
  assert.equal(changed.manifest.stages.word2vec.reused, true, 'word2vec reused when only the GMM changes');
  assert.equal(changed.manifest.stages.gmm.reused, undefined, 'gmm retrained');
  assert.equal(changed.manifest.hyperparameters.gmm.covariance_type, 'diag');

  // n_components null (the default): √(N/2) clusters for N training documents, the count the advice rule gives.
  const auto = await runTrain({ corpus, name: 'toy', config: smallConfig({ n_components: null }), redisUrl: redis.url, quiet: true, log, force: true });
  assert.equal(auto.manifest.stages.word2vec.reused, true);
  assert.equal(auto.manifest.hyperparameters.gmm.n_components, null, 'the manifest keeps the setting as given');
  assert.equal(auto.manifest.counts.clusters, 11, 'round(√(240/2)) = 11');
  assert.equal(clusterAdvice({ analysis: { clusters: [], corpus: { documents: 240 } }, judged: [], manifest: auto.manifest }).ruleOfThumb, 11);
});

test('a failing Python stage fails the run with the worker\'s own message and leaves no model', async () => {
  const corpus = writeCorpus();
  await assert.rejects(
    runTrain({ corpus, name: 'too-many', config: smallConfig({ n_components: 50 }), redisUrl: redis.url, quiet: true, log: () => {} }),
    (err) => /** @type {any} */ (err).code === 'SCDV_TRAIN_FAILED' && /too small for 50 clusters/.test(/** @type {Error} */ (err).message),
  );
  assert.ok(!fs.existsSync(path.join(process.env.SCDV_MODELS_DIR ?? '', 'too-many')));
});

test('model names are validated and an existing model is not replaced without force', async () => {
  const corpus = writeCorpus();
  for (const bad of ['../x', '.hidden', 'a/b', '']) {
    await assert.rejects(runTrain({ corpus, name: bad, config: smallConfig(), redisUrl: redis.url, quiet: true }), /invalid model name/);
  }
  await assert.rejects(runTrain({ corpus, name: 'toy', config: smallConfig(), redisUrl: redis.url, quiet: true }), /already exists/);
});
