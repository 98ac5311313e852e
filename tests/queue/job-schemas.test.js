// Jobs are not trusted: each queue's payload is checked against its schema, its paths confined to the folders the
// worker may use (links resolved, ".." refused), and the settings it may carry leave where files go and which hosts
// are contacted to the worker's own configuration. A job copied from a real bulk job with `corpus: "/etc/passwd"` or
// `outDir: "/some/where"` is refused before any file is touched, with a reason that names the field.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-job-schemas-'));
process.env.SCDV_DATA_DIR = path.join(tmp, 'data');
const { checkJob, jobSettings } = await import('../../pipeline/queue/job-schemas.js');
const { indexShardJob } = await import('../../pipeline/queue/index-job.js');
const { loadConfig } = await import('../../pipeline/config.js');
const { dataDir } = await import('../../pipeline/paths.js');

after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const config = loadConfig({});
const upload = path.join(dataDir(), 'server', 'uploads', 'bulk-x.jsonl');
fs.mkdirSync(path.dirname(upload), { recursive: true });
fs.writeFileSync(upload, '{"id":"a","body":"本文"}\n');
const outside = path.join(tmp, 'outside');
fs.mkdirSync(outside);
const secret = path.join(outside, 'secret.txt');
fs.writeFileSync(secret, 'root:x:0:0:root:/root:/bin/bash\n');

/** A job as the server's bulk route queues it (the one builder). */
const bulkJob = () => indexShardJob({
  runKey: 'bulk-0f6c1a52-9d1e-4b7a-8f0e-2c5d7a9b1e34', corpus: upload, outDir: path.join(dataDir(), 'server', 'jobs', 'bulk-x'),
  model: 'm1', collection: 'ads', config, duplicates: new Map(),
}, { index: 0, start: 0, end: 26, firstLine: 1, lines: 1 });

/** @param {() => unknown} fn @param {RegExp} field */
const refused = (fn, field) => assert.throws(fn, (/** @type {any} */ err) => {
  assert.equal(err.code, 'SCDV_JOB_REFUSED');
  assert.match(err.message, field);
  assert.ok(!err.message.includes('root:x'), 'no file content in the reason');
  return true;
});

test('a job built by the bulk route passes, and gets the worker\'s own store, queue and server settings', () => {
  const job = checkJob('index', JSON.parse(JSON.stringify(bulkJob())), { config }, 'j');
  assert.equal(job.corpus, fs.realpathSync(upload));
  assert.deepEqual(job.config.store, config.store);
  assert.deepEqual(job.config.server, config.server);
  assert.equal(job.config.tokenizer.dictionary, config.tokenizer.dictionary);
  assert.deepEqual(job.config.embed, config.embed);
});

test('a corpus or run folder outside the data folder is refused (/etc/passwd, /some/where, "..", a link out)', () => {
  refused(() => checkJob('index', { ...bulkJob(), corpus: '/etc/passwd' }, { config }, 'j'), /^index job j refused before any work: corpus is outside/);
  refused(() => checkJob('index', { ...bulkJob(), corpus: secret }, { config }), /corpus is outside/);
  refused(() => checkJob('index', { ...bulkJob(), outDir: '/some/where' }, { config }), /outDir is outside/);
  refused(() => checkJob('index', { ...bulkJob(), corpus: `${dataDir()}/../outside/secret.txt` }, { config }), /corpus has a "\.\." segment/);
  refused(() => checkJob('index', { ...bulkJob(), corpus: 'secret.txt' }, { config }), /corpus is not an absolute path/);
  const link = path.join(dataDir(), 'imports', 'looks-inside.jsonl');
  fs.mkdirSync(path.dirname(link), { recursive: true });
  fs.symlinkSync(secret, link);
  refused(() => checkJob('index', { ...bulkJob(), corpus: link }, { config }), /corpus is outside/);
  const linkedDir = path.join(dataDir(), 'runs-link');
  fs.symlinkSync(outside, linkedDir);
  const { model: _m, backend: _b, collection: _c, duplicates: _d, ...tokenizeJob } = bulkJob();
  refused(() => checkJob('tokenize', { ...tokenizeJob, outDir: path.join(linkedDir, 'not-yet', 'made') }, { config }), /outDir is outside/);
  assert.ok(!fs.existsSync(path.join(outside, 'not-yet')), 'nothing created');
});

test('paths the worker\'s owner allowed, and server.bulkFileRoots for corpora, are accepted', () => {
  const roots = loadConfig({ overrides: { server: { bulkFileRoots: [outside] } } });
  assert.equal(checkJob('index', { ...bulkJob(), corpus: secret }, { config: roots }).corpus, fs.realpathSync(secret));
  refused(() => checkJob('index', { ...bulkJob(), outDir: outside }, { config: roots }), /outDir is outside/); // read-only root
  const run = { ...bulkJob(), corpus: secret, outDir: path.join(outside, 'out') };
  const queued = { runKey: run.runKey, corpus: run.corpus, shard: run.shard, outDir: run.outDir, config: run.config };
  const job = checkJob('tokenize', queued, { config, allowPaths: [secret, run.outDir] });
  assert.equal(job.outDir, path.join(fs.realpathSync(outside), 'out'));
  refused(() => checkJob('tokenize', { ...queued, corpus: path.join(outside, 'other.txt') }, { config, allowPaths: [secret, run.outDir] }), /corpus is outside/);
});

test('a job that carries settings choosing paths or hosts is refused, naming the key', () => {
  const job = bulkJob();
  refused(() => checkJob('index', { ...job, config: { ...job.config, store: config.store } }, { config }), /config has the key "store"/);
  refused(() => checkJob('index', { ...job, config: { ...config } }, { config }), /config has the key "/);
  refused(() => checkJob('index', { ...job, config: { ...job.config, tokenizer: { ...job.config.tokenizer, userDictionaries: ['/etc/passwd'] } } }, { config }), /config\.tokenizer has the key "userDictionaries"/);
  refused(() => checkJob('index', { ...job, storeDir: '/tmp/x' }, { config }), /payload has the key "storeDir"/);
  refused(() => checkJob('index', { ...job, backend: 'opensearch' }, { config }), /backend is not this worker's store backend/);
  refused(() => checkJob('index', { ...job, model: '../../etc' }, { config }), /model is not a valid model name/);
  refused(() => checkJob('index', { ...job, collection: '../x' }, { config }), /collection must match pattern/);
  refused(() => checkJob('index', { ...job, shard: { ...job.shard, start: -5 } }, { config }), /shard\.start must be >= 0/);
  refused(() => checkJob('index', 'not an object', { config }), /payload must be object/);
});

test('train and precompute jobs: paths in the data folder, the worker\'s own Redis prefix and k bound', () => {
  const work = path.join(dataDir(), 'work', 'm1', 'train');
  const train = { stage: 'gmm', corpus: path.join(work, 'corpus.txt'), workDir: work, params: config.train };
  assert.equal(checkJob('train', train, { config }).workDir, work);
  const nullable = { ...train, params: { ...config.train, topics: { ...config.train.topics, keep_fraction: null, keep_count: 40 } } };
  assert.equal(checkJob('train', nullable, { config }).params.topics.keep_count, 40);
  refused(() => checkJob('train', { ...train, workDir: '/some/where' }, { config }), /workDir is outside/);
  refused(() => checkJob('train', { ...train, stage: 'shell' }, { config }), /stage must be equal to one of the allowed values/);
  refused(() => checkJob('train', { ...train, params: { ...config.train, out: '/x' } }, { config }), /params has the key "out"/);
  const pre = { run: 'r', model: 'm1', source: 'articles', target: 'ads', k: 10, ids: ['a'], ttlSeconds: 60, prefix: config.queue.prefix, mode: 'fast' };
  assert.equal(checkJob('precompute', pre, { config }).prefix, config.queue.prefix);
  refused(() => checkJob('precompute', { ...pre, prefix: 'other' }, { config }), /prefix differs/);
  refused(() => checkJob('precompute', { ...pre, k: 5000 }, { config }), /k is above server\.maxK/);
  refused(() => checkJob('precompute', { ...pre, redisUrl: 'redis://10.0.0.9' }, { config }), /payload has the key "redisUrl"/);
});

test('the settings a job carries are only how text becomes vectors', () => {
  assert.deepEqual(Object.keys(jobSettings(config)).sort(), ['corpus', 'embed', 'index', 'tokenize', 'tokenizer']);
  assert.ok(!('dictionary' in jobSettings(config).tokenizer) && !('userDictionaries' in jobSettings(config).tokenizer));
});
