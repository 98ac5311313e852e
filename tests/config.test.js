import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, DEFAULT_CONFIG, hashOf } from '../pipeline/config.js';

test('defaults load and overrides merge deeply', () => {
  const c = loadConfig({ overrides: { tokenize: { shardSize: 7 }, tokenizer: { stopwords: { extra: ['foo'] } } } });
  assert.equal(c.tokenize.shardSize, 7);
  assert.equal(c.tokenize.workers, DEFAULT_CONFIG.tokenize.workers);
  assert.deepEqual(c.tokenizer.stopwords.extra, ['foo']);
  assert.equal(c.tokenizer.stopwords.families, null);
});

test('unknown keys and wrong types are named in the error', () => {
  assert.throws(() => loadConfig({ overrides: { tokenize: { shardsize: 7 } } }), /unknown key tokenize\.shardsize/);
  assert.throws(() => loadConfig({ overrides: { tokenize: { shardSize: 'big' } } }), /tokenize\.shardSize must be a positive integer, got "big"/);
  assert.throws(() => loadConfig({ overrides: { tokenize: { shardSize: 0 } } }), /tokenize\.shardSize must be a positive integer/);
  assert.throws(() => loadConfig({ overrides: { tokenizer: { singleChar: 'some' } } }), /tokenizer\.singleChar/);
});

test('a config file is read, and a broken one is reported with its path', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-cfg-'));
  const good = path.join(dir, 'good.json');
  fs.writeFileSync(good, JSON.stringify({ corpus: { maxDocumentBytes: 1234 } }));
  assert.equal(loadConfig({ file: good }).corpus.maxDocumentBytes, 1234);
  const bad = path.join(dir, 'bad.json');
  fs.writeFileSync(bad, '{"corpus": ');
  assert.throws(() => loadConfig({ file: bad }), (err) => /** @type {any} */ (err).code === 'SCDV_CONFIG_FILE_UNREADABLE' && /bad\.json/.test(/** @type {Error} */ (err).message));
  // The parser's error is kept as the cause.
  assert.throws(() => loadConfig({ file: bad }), (err) => /** @type {any} */ (err).cause instanceof SyntaxError);
});

test('hashOf ignores key order and sees every value', () => {
  assert.equal(hashOf({ a: 1, b: [1, 2] }), hashOf({ b: [1, 2], a: 1 }));
  assert.notEqual(hashOf({ a: 1, b: [1, 2] }), hashOf({ a: 1, b: [2, 1] }));
});

test('every training parameter is checked against its range when the config loads, not after tokenising', () => {
  const bad = /** @type {[string, string, unknown, RegExp][]} */ ([
    ['gmm', 'n_components', 0, /train\.gmm\.n_components must be a whole number from 1 to 1000, or null \(null: √\(N\/2\) .*\), got 0/],
    ['word2vec', 'vector_size', -5, /train\.word2vec\.vector_size must be a whole number from 1 to 1000, got -5/],
    ['word2vec', 'window', 2.5, /train\.word2vec\.window must be a whole number from 1 to 100, got 2\.5/],
    ['word2vec', 'epochs', 0, /train\.word2vec\.epochs/],
    ['word2vec', 'min_count', 0, /train\.word2vec\.min_count must be a positive integer, got 0/],
    ['word2vec', 'sg', 2, /train\.word2vec\.sg must be a whole number from 0 to 1/],
    ['gmm', 'tol', 0, /train\.gmm\.tol must be a number above 0/],
    ['gmm', 'covariance_type', 'spherical', /train\.gmm\.covariance_type must be one of tied, diag, full/],
    ['topics', 'keep_fraction', 0, /train\.topics\.keep_fraction must be a number above 0 and at most 1, or null/],
    ['topics', 'keep_count', 0, /train\.topics\.keep_count/],
  ]);
  for (const [section, key, value, message] of bad) {
    assert.throws(() => loadConfig({ overrides: { train: { [section]: { [key]: value } } } }),
      (err) => /** @type {any} */ (err).code === 'SCDV_CONFIG_INVALID' && message.test(/** @type {Error} */ (err).message), `${section}.${key} = ${value}`);
  }
  assert.equal(loadConfig({ overrides: { train: { topics: { keep_fraction: null, keep_count: 40 } } } }).train.topics.keep_count, 40);
  assert.equal(loadConfig({ overrides: { train: { gmm: { n_components: 12 } } } }).train.gmm.n_components, 12);
  assert.throws(() => loadConfig({ overrides: { corpus: { warnRejectedFraction: 1.5 } } }), /corpus\.warnRejectedFraction must be a number from 0 to 1, got 1\.5/);
  assert.throws(() => loadConfig({ overrides: { workerProcesses: { maxPerCore: 0 } } }), /workerProcesses\.maxPerCore must be a positive integer/);
});

test('server time limits, the connection cap, the write-embedding threads and the wrong-key limits are checked', () => {
  const server = (/** @type {object} */ s) => () => loadConfig({ overrides: { server: s } });
  assert.throws(server({ requestTimeoutMs: 0 }), /server\.requestTimeoutMs must be a positive integer/);
  assert.throws(server({ requestTimeoutMs: 1000, headersTimeoutMs: 2000 }), /server\.headersTimeoutMs \(2000\) must not exceed server\.requestTimeoutMs/);
  assert.throws(server({ maxConnections: -1 }), /server\.maxConnections must be a whole number of at least 0 \(0: no limit\), got -1/);
  assert.throws(server({ idleTimeoutMs: 1.5 }), /server\.idleTimeoutMs must be a whole number of at least 0 \(0: no limit\), got 1\.5/);
  assert.equal(loadConfig({ overrides: { server: { maxConnections: 0, idleTimeoutMs: 0 } } }).server.maxConnections, 0);
  assert.throws(server({ writeEmbedThreads: -1 }), /server\.writeEmbedThreads must be a whole number from 0 to 64, or null \(null: as many as embedThreads; 0: .*\), got -1/);
  assert.throws(server({ writeEmbedThreads: 1.5 }), /server\.writeEmbedThreads/);
  assert.throws(server({ writeEmbedNice: 20 }), /server\.writeEmbedNice must be a whole number from 0 to 19, got 20/);
  assert.throws(server({ writePace: { share: 0 } }), /server\.writePace\.share must be a number above 0 and at most 1, got 0/);
  assert.throws(server({ writePace: { sliceUs: 10 } }), /server\.writePace\.sliceUs must be a number from 50 to 1000000 \(microseconds\), got 10/);
  assert.throws(server({ writePace: { budgetMs: -1 } }), /server\.writePace\.budgetMs must be a number from 0 to 100000/);
  assert.deepEqual(loadConfig({ overrides: { server: { writePace: { budgetMs: 0 } } } }).server.writePace, { sliceUs: 250, share: 0.25, budgetMs: 0 });
  assert.equal(loadConfig({ overrides: { server: { writeEmbedThreads: 0 } } }).server.writeEmbedThreads, 0);
  assert.equal(loadConfig({ overrides: { server: { writeEmbedThreads: null } } }).server.writeEmbedThreads, null);
  assert.deepEqual(loadConfig().server.keyFailures, { perAddress: 10, perKey: 10, total: 100, windowS: 900 });
  assert.throws(server({ keyFailures: { perAddress: -1 } }), /server\.keyFailures\.perAddress must be a whole number from 0 to 1000000000 \(0: no limit\), got -1/);
  assert.throws(server({ keyFailures: { total: 1.5 } }), /server\.keyFailures\.total must be a whole number/);
  assert.throws(server({ keyFailures: { windowS: 0 } }), /server\.keyFailures\.windowS must be a whole number from 1 to 1000000000 \(seconds\), got 0/);
  assert.equal(loadConfig({ overrides: { server: { keyFailures: { perKey: 0 } } } }).server.keyFailures.perKey, 0);
});

test('server.model is checked as a model name (a folder name: no path tricks)', () => {
  for (const bad of ['../etc', 'a/b', '.hidden', 'a..b', '']) {
    assert.throws(() => loadConfig({ overrides: { server: { model: bad } } }), { code: 'SCDV_MODEL_NAME_INVALID' }, bad);
  }
  assert.equal(loadConfig({ overrides: { server: { model: 'news-v2.1' } } }).server.model, 'news-v2.1');
});

test('store: native by default; the backend and the cluster come from the file, the environment or flags, checked', () => {
  assert.equal(loadConfig().store.backend, 'native');
  const keys = ['SCDV_STORE_BACKEND', 'SCDV_OPENSEARCH_NODES', 'SCDV_OPENSEARCH_USERNAME', 'SCDV_OPENSEARCH_PASSWORD', 'SCDV_OPENSEARCH_INDEX_PREFIX'];
  const saved = Object.fromEntries(keys.map((k) => [k, process.env[k]]));
  try {
    Object.assign(process.env, {
      SCDV_STORE_BACKEND: 'opensearch', SCDV_OPENSEARCH_NODES: 'http://a:9200, http://b:9200', SCDV_OPENSEARCH_USERNAME: 'scdv',
      SCDV_OPENSEARCH_PASSWORD: 's3cret', SCDV_OPENSEARCH_INDEX_PREFIX: 'prod-',
    });
    const c = loadConfig();
    assert.equal(c.store.backend, 'opensearch');
    assert.deepEqual(c.store.opensearch.nodes, ['http://a:9200', 'http://b:9200']);
    assert.equal(c.store.opensearch.password, 's3cret');
    assert.equal(c.store.opensearch.indexPrefix, 'prod-');
    // flags (overrides) win over the environment
    assert.equal(loadConfig({ overrides: { store: { backend: 'native' } } }).store.backend, 'native');
    process.env.SCDV_STORE_BACKEND = 'faiss';
    assert.throws(() => loadConfig(), /store\.backend must be native or opensearch, got "faiss"/);
  } finally {
    for (const k of keys) if (saved[k] === undefined) delete process.env[k]; else process.env[k] = saved[k];
  }
  const os = (/** @type {object} */ o) => () => loadConfig({ overrides: { store: { opensearch: o } } });
  assert.throws(os({ nodes: [] }), /store\.opensearch\.nodes must be a list of at least 1 item, each a URL such as http:\/\/127\.0\.0\.1:9200, got \[\]/);
  assert.throws(os({ nodes: ['127.0.0.1:9200'] }), /store\.opensearch\.nodes\[0\] must be a URL/);
  assert.throws(os({ indexPrefix: 'Big' }), /store\.opensearch\.indexPrefix/);
  assert.throws(os({ indexPrefix: 'a--b' }), /no "--"/);
  assert.throws(os({ shards: 0 }), /store\.opensearch\.shards must be a positive integer, got 0/);
  assert.throws(os({ replicas: -1 }), /store\.opensearch\.replicas/);
  assert.throws(os({ username: 'u' }), /without a password/);
  assert.throws(os({ postingsBudget: { min: 0, fraction: 0.001 } }), /store\.opensearch\.postingsBudget\.min must be a positive integer, got 0/);
  assert.throws(os({ postingsBudget: { min: 10, fraction: 2 } }), /store\.opensearch\.postingsBudget\.fraction must be a number from 0 to 1/);
  assert.deepEqual(loadConfig().store.opensearch.postingsBudget, { min: 20_000, fraction: 0.0009 });
  assert.throws(os({ compression: 'yes' }), /store\.opensearch\.compression must be a boolean/);
  assert.equal(loadConfig().store.opensearch.compression, false);
  assert.equal(loadConfig({ overrides: { store: { opensearch: { replicas: 0 } } } }).store.opensearch.replicas, 0);
});

test('finished jobs kept per queue: bounded by age and count, with defaults, checked', async () => {
  const c = loadConfig({});
  assert.deepEqual(c.queue.keepCompleted, { ageS: 86_400, count: 1000 });
  assert.deepEqual(c.queue.keepFailed, { ageS: 30 * 86_400, count: 10_000 });
  for (const [key, part] of [['keepCompleted', 'ageS'], ['keepCompleted', 'count'], ['keepFailed', 'ageS'], ['keepFailed', 'count']]) {
    for (const v of [0, -1, 1.5]) {
      assert.throws(() => loadConfig({ overrides: { queue: { [key]: { [part]: v } } } }), new RegExp(`queue\\.${key}\\.${part} must be a positive integer`));
    }
  }
  // The queues are opened with them: Bull removes beyond these bounds.
  const { openQueue } = await import('../pipeline/queue/queues.js');
  const q = openQueue('index', 'redis://127.0.0.1:1', { ...c.queue, keepCompleted: { ageS: 60, count: 5 } });
  try {
    assert.deepEqual(/** @type {any} */ (q).defaultJobOptions.removeOnComplete, { age: 60, count: 5 });
    assert.deepEqual(/** @type {any} */ (q).defaultJobOptions.removeOnFail, { age: 30 * 86_400, count: 10_000 });
  } finally {
    /** @type {any} */ (q).clients?.forEach((/** @type {any} */ cl) => cl.disconnect());
    await q.close().catch(() => {});
  }
});

test('adEmbed: the ads\' α and keepFraction are checked, and an ad collection gets them over the pages\' settings (pure SCDV pages: pure SCDV ads)', async () => {
  const { adEmbedSettings, newCollectionEmbed } = await import('../pipeline/embed/layout.js');
  assert.throws(() => loadConfig({ overrides: { adEmbed: { alpha: 1 } } }), /adEmbed\.alpha must be a number from 0 up to, not including, 1/);
  assert.throws(() => loadConfig({ overrides: { adEmbed: { keepFraction: 0 } } }), /adEmbed\.keepFraction must be a number above 0 and at most 1/);
  assert.throws(() => loadConfig({ overrides: { adEmbed: { collections: ['Ads!'] } } }), /adEmbed\.collections\[0\] must be a collection name/);
  const c = loadConfig({ overrides: { embed: { keepCount: 36 } } });
  const ads = newCollectionEmbed(c.embed, c.adEmbed, 'ads');
  assert.deepEqual([ads.hybrid.alpha, ads.keepFraction, ads.keepCount, ads.damping], [0.5, 0.1, null, c.embed.damping]);
  assert.equal(newCollectionEmbed(c.embed, c.adEmbed, 'articles'), c.embed);
  assert.equal(adEmbedSettings({ ...c.embed, hybrid: { ...c.embed.hybrid, alpha: 1 } }, c.adEmbed).hybrid.alpha, 1);
});
