// `scdv index` end to end: a small real model, real Redis and index workers, the real store.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { storedValues } from '../store/helpers.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-index-'));
process.env.SCDV_MODELS_DIR = path.join(tmp, 'models');
process.env.SCDV_DATA_DIR = path.join(tmp, 'data');
const { loadConfig } = await import('../../pipeline/config.js');
const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { runIndex } = await import('../../pipeline/stages/indexing.js');
const { storeDirFor } = await import('../../pipeline/paths.js');
const { createEmbedder } = await import('../../pipeline/embed/index.js');
const { openStore } = await import('../../pipeline/store/index.js');
const { ensureSampleModels } = await import('../lib/tiny-model.js');

const SAMPLE = 'tests/fixtures/livedoor/sample.jsonl';
const lines = fs.readFileSync(SAMPLE, 'utf8').trim().split('\n');
const config = (/** @type {Record<string, any>} */ index = {}) => loadConfig({
  overrides: {
    index: { shardSize: 60, ...index },
    queue: { lockDurationMs: 2000, stalledIntervalMs: 1000, backoffMs: 200 },
  },
});

/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redis;
before(async () => {
  redis = await startPrivateRedis();
  await ensureSampleModels({ names: ['small'], redisUrl: redis.url }); // sampleTrain(1) on the sample, shared with other files
});
after(async () => {
  await redis.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** @param {string} collection */
function openCollection(collection) {
  const store = openStore(storeDirFor('small'));
  return { store, c: store.collection(collection) }; // created by runIndex (width K·d, plus the vocabulary when hybrid)
}

test('index: every good document stored once; empty and bad lines reported; batch and request vectors agree', async () => {
  const corpus = path.join(tmp, 'with-bad.jsonl');
  fs.writeFileSync(corpus, [
    ...lines.slice(0, 100),
    '{"id": "broken"',
    JSON.stringify({ id: 'unknown-words', title: 'Zyxqv', body: 'Wqplkz zzvtq xqvvz qqzzx.' }), // no word of it is in the model
  ].join('\n') + '\n');
  const s = await runIndex({ corpus, model: 'small', collection: 'articles', config: config(), redisUrl: redis.url, quiet: true, log: () => {} });
  assert.equal(s.documents, 100);
  assert.equal(s.empty, 1);
  assert.deepEqual(s.rejectedByCode, { INVALID_JSON: 1 });
  const report = fs.readFileSync(s.reportFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(report.map((r) => [r.line, r.code]), [[101, 'INVALID_JSON'], [102, 'NO_KNOWN_WORDS']]);

  const { store, c } = openCollection('articles');
  assert.equal(c.count(), 100);
  const doc = JSON.parse(lines[7]);
  const stored = c.get(doc.id);
  assert.ok(stored);
  assert.equal(stored.meta.title, doc.title);
  assert.equal(stored.meta.category, doc.category);
  // The request path (one text) gives the vector the batch path stored.
  const embedder = await createEmbedder('small', config());
  const live = embedder.embedText(`${doc.title}\n${doc.body}`);
  assert.deepEqual([...live.indices], [...stored.vector.indices]);
  // Stored as 12-bit codes x a power-of-two unit (pipeline/store/README.md, "Stored values"): the same bits as the live vector's stored form.
  assert.deepEqual([...storedValues(live.values)], [...stored.vector.values]);
  const related = c.search(stored.vector, { k: 5, excludeIds: [doc.id] });
  assert.equal(related.length, 5);
  assert.ok(!related.some((r) => r.id === doc.id));
  assert.ok(related[0].score <= 1 + 1e-6 && related[0].score >= related[4].score);
  store.close();
  // The corpus is recorded, so that a refused activation can name the command that indexes it into another model.
  const indexed = JSON.parse(fs.readFileSync(path.join(process.env.SCDV_MODELS_DIR ?? '', 'small', 'indexed.json'), 'utf8'));
  assert.equal(indexed.articles.corpus, path.resolve(corpus));
  // And the digest of the model files it embedded with: a server with other files refuses the collection.
  const { modelFilesDigest } = await import('../../pipeline/model/files-digest.js');
  assert.equal(indexed.articles.model_files_sha256, await modelFilesDigest('small'));

  const again = await runIndex({ corpus, model: 'small', collection: 'articles', config: config(), redisUrl: redis.url, quiet: true, log: () => {} });
  assert.equal(again.reusedShards, again.shards, 'a re-run skips finished shards');
});

test('write batch sizes 1, 10 and 1000 give the same collection', async () => {
  const corpus = path.join(tmp, 'forty.jsonl');
  fs.writeFileSync(corpus, lines.slice(0, 40).join('\n') + '\n');
  /** @type {Map<string, number[]>[]} */
  const snapshots = [];
  for (const writeBatchSize of [1, 10, 1000]) {
    const name = `batch-${writeBatchSize}`;
    const s = await runIndex({ corpus, model: 'small', collection: name, config: config({ writeBatchSize }), redisUrl: redis.url, quiet: true, log: () => {} });
    assert.equal(s.writes, writeBatchSize === 1 ? 40 : writeBatchSize === 10 ? 4 : 1);
    const { store, c } = openCollection(name);
    const snap = new Map(lines.slice(0, 40).map((l) => { const id = JSON.parse(l).id; return [id, [.../** @type {any} */ (c.get(id)).vector.indices]]; }));
    snapshots.push(snap);
    store.close();
  }
  assert.deepEqual(snapshots[1], snapshots[0]);
  assert.deepEqual(snapshots[2], snapshots[0]);
});

test('an index worker killed mid-shard: the shard is redone, every document present exactly once', async () => {
  process.env.SCDV_FAULT_BATCH_DELAY_MS = '100';
  let killed = 0;
  try {
    const s = await runIndex({
      corpus: SAMPLE, model: 'small', collection: 'killed', config: config({ writeBatchSize: 10 }), redisUrl: redis.url,
      quiet: true, log: () => {},
      onWorkersStarted: (pool) => {
        // Kill the first worker once the store has received some of its writes.
        const timer = setInterval(() => {
          const dir = path.join(storeDirFor('small'), 'killed');
          if (!killed && fs.existsSync(dir) && pool.pids.length) {
            killed = pool.pids[0];
            setTimeout(() => process.kill(killed, 'SIGKILL'), 150);
            clearInterval(timer);
          }
        }, 20);
      },
    });
    assert.equal(s.documents, lines.length);
  } finally {
    delete process.env.SCDV_FAULT_BATCH_DELAY_MS;
  }
  assert.ok(killed > 0, 'a worker was killed');
  const { store, c } = openCollection('killed');
  assert.equal(c.count(), lines.length, 'no document lost, none duplicated');
  for (const l of lines) assert.ok(c.get(JSON.parse(l).id), 'every document is there');
  store.close();
});

test('a deleted store is filled again: finished shards count only for the collection they were written to', async () => {
  const corpus = path.join(tmp, 'ten.jsonl');
  fs.writeFileSync(corpus, lines.slice(0, 10).join('\n') + '\n');
  const run = () => runIndex({ corpus, model: 'small', collection: 'recreated', config: config(), redisUrl: redis.url, quiet: true, log: () => {} });
  await run();
  fs.rmSync(path.join(storeDirFor('small'), 'recreated'), { recursive: true, force: true });
  await new Promise((r) => setTimeout(r, 5)); // a new created_at
  const again = await run();
  assert.equal(again.reusedShards, 0);
  const { store, c } = openCollection('recreated');
  assert.equal(c.count(), 10);
  store.close();
});

test('index: a corpus with nothing usable fails with its likely cause, and the collection is not recorded as indexed', async () => {
  const run = (/** @type {string} */ corpus, /** @type {string} */ collection) =>
    runIndex({ corpus, model: 'small', collection, config: config(), redisUrl: redis.url, quiet: true, log: () => {} });
  const gz = path.join(tmp, 'sample.jsonl.gz');
  fs.writeFileSync(gz, zlib.gzipSync(fs.readFileSync(SAMPLE)));
  await assert.rejects(run(gz, 'gz'), (err) => /** @type {any} */ (err).code === 'SCDV_CORPUS_UNUSABLE' &&
    /it looks like a gzip file; decompress it first/.test(/** @type {Error} */ (err).message));
  const binary = path.join(tmp, 'binary.jsonl');
  fs.writeFileSync(binary, Buffer.from(Array.from({ length: 1200 }, (_, i) => (i % 40 === 39 ? 10 : 0xc0 + (i % 50)))));
  await assert.rejects(run(binary, 'binary'), /has no usable document: 30 of 30 lines rejected \(INVALID_UTF8 30\); the file is not UTF-8 text/);
  const unknown = path.join(tmp, 'unknown-words.jsonl');
  fs.writeFileSync(unknown, [1, 2, 3].map((i) => JSON.stringify({ id: `u${i}`, body: 'Wqplkz zzvtq xqvvz qqzzx.' })).join('\n') + '\n');
  await assert.rejects(run(unknown, 'unknown'), /has no usable document: none of its 3 documents has a word the model knows/);
  const indexed = JSON.parse(fs.readFileSync(path.join(process.env.SCDV_MODELS_DIR ?? '', 'small', 'indexed.json'), 'utf8'));
  for (const c of ['gz', 'binary', 'unknown']) assert.ok(!(c in indexed), `${c} is not recorded as indexed`);
});

test('a collection dropped through the store is filled again by the same run', async () => {
  const corpus = path.join(tmp, 'ten-dropped.jsonl');
  fs.writeFileSync(corpus, lines.slice(0, 10).join('\n') + '\n');
  const run = () => runIndex({ corpus, model: 'small', collection: 'dropped', config: config(), redisUrl: redis.url, quiet: true, log: () => {} });
  await run();
  const store = openStore(storeDirFor('small'));
  await store.dropCollection('dropped');
  await store.close();
  const again = await run();
  assert.equal(again.reusedShards, 0);
  const { store: s2, c } = openCollection('dropped');
  assert.equal(c.count(), 10);
  await s2.close();
});

test('indexing a file whose every line is rejected creates no collection and records no layout', async () => {
  const corpus = path.join(tmp, 'all-bad.jsonl');
  fs.writeFileSync(corpus, ['{"id": "broken"', '{"id": "x"}', JSON.stringify({ id: 'unknown-words', body: 'Wqplkz zzvtq xqvvz.' })].join('\n') + '\n');
  // (whether runIndex reports this as a failure is the CLI's business; only the store state is checked here)
  await runIndex({ corpus, model: 'small', collection: 'rejected-all', config: config(), redisUrl: redis.url, quiet: true, log: () => {} }).catch(() => {});
  assert.ok(!fs.existsSync(path.join(storeDirFor('small'), 'rejected-all')), 'no folder in the store');
  const store = openStore(storeDirFor('small'));
  try {
    assert.ok(!store.listCollections().some((c) => c.name === 'rejected-all'));
  } finally {
    await store.close();
  }
  const indexed = JSON.parse(fs.readFileSync(path.join(process.env.SCDV_MODELS_DIR ?? '', 'small', 'indexed.json'), 'utf8'));
  assert.ok(!('rejected-all' in indexed));
});

test('a collection of another width is refused before any worker starts, and keeps its documents', async () => {
  const store = openStore(storeDirFor('small'));
  await store.collection('narrow', { width: 5 }).upsert([{ id: 'n1', vector: { indices: [1], values: [1] } }]);
  await store.close();
  const corpus = path.join(tmp, 'ten-narrow.jsonl');
  fs.writeFileSync(corpus, lines.slice(0, 10).join('\n') + '\n');
  let started = false;
  await assert.rejects(runIndex({
    corpus, model: 'small', collection: 'narrow', config: config(), redisUrl: redis.url, quiet: true, log: () => {},
    onWorkersStarted: () => { started = true; },
  }), (err) => /** @type {any} */ (err).code === 'SCDV_STORE_WIDTH_MISMATCH' && /collection "narrow" has width 5/.test(/** @type {Error} */ (err).message));
  assert.equal(started, false, 'no worker started');
  const after = openStore(storeDirFor('small'));
  try {
    assert.equal(after.collectionInfo('narrow')?.count, 1);
  } finally {
    await after.close();
  }
});
