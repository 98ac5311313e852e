// Several servers, one truth: two `scdv serve` processes with their own data and models folders (two
// hosts), one OpenSearch, one Redis. `scdv index` on host A with no local worker, its shards run by a `scdv worker
// index` of host B, fills the cluster; an activation on A is followed by B within 1 s, and so is the rollback; a
// PUT through A is in B's related results within 1 s (B's cached list changes); a model whose files on B differ
// from those its collections were indexed with is refused by B with SCDV_MODEL_FILES_MISMATCH. The servers poll
// the record only every 10 s here: following within 1 s is the pub/sub's doing.
// Against a node started by the harness, or SCDV_TEST_OPENSEARCH_URL.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-multi-'));
fs.chmodSync(tmp, 0o755);
const host = (/** @type {string} */ name) => ({ data: path.join(tmp, name, 'data'), models: path.join(tmp, name, 'models') });
const A = host('a');
const B = host('b');
// This process is host A when it trains the models and reads the cluster.
process.env.SCDV_MODELS_DIR = A.models;
process.env.SCDV_DATA_DIR = A.data;
const { loadConfig } = await import('../../pipeline/config.js');
const { REPO_ROOT } = await import('../../pipeline/paths.js');
const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { openModelStore } = await import('../../pipeline/store/index.js');
const { keyDigest } = await import('../../pipeline/api-keys.js');
const { ensureModels, sampleTrain } = await import('../lib/tiny-model.js');
const { testOpenSearch } = await import('../lib/opensearch.js');

const SAMPLE = path.join(REPO_ROOT, 'tests/fixtures/livedoor/sample.jsonl');
const lines = fs.readFileSync(SAMPLE, 'utf8').trim().split('\n');
const API_KEY = 'multi-key-0123456789';
const KEY = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
const MODELS = ['ms-a', 'ms-b', 'ms-c'];

/** @type {Awaited<ReturnType<typeof testOpenSearch>> | undefined} */
let node;
let url = '';
let prefix = '';
/** @type {Awaited<ReturnType<typeof startPrivateRedis>>} */
let redis;
const configFile = path.join(tmp, 'config.json');
/** @type {import('../../pipeline/config.js').Config} */
let config;
/** @type {{stop: () => Promise<void>, out: () => string}[]} */
const running = [];
/** @type {{a?: {url: string, out: () => string}, b?: {url: string, out: () => string}}} the servers of hosts A and B */
const servers = {};

before(async () => {
  node = await testOpenSearch('ms');
  ({ url, prefix } = node);
  redis = await startPrivateRedis();
  const overrides = {
    store: { backend: 'opensearch', opensearch: { nodes: [url], indexPrefix: prefix, replicas: 0 } },
    embed: { keepCount: 36, hybrid: { alpha: 1 } }, // the 144-wide test models
    index: { shardSize: 40 },
    server: { apiKeyHashes: [keyDigest(API_KEY)], indexWorkers: 0, modelPollMs: 10_000, logLevel: 'warn' },
  };
  fs.writeFileSync(configFile, JSON.stringify(overrides));
  config = loadConfig({ overrides });
  fs.mkdirSync(A.models, { recursive: true });
  await ensureModels({ corpus: SAMPLE, models: MODELS.map((name, i) => ({ name, overrides: { train: sampleTrain(i + 1) } })), redisUrl: redis.url });
  fs.cpSync(A.models, B.models, { recursive: true }); // host B's copy of models/<name>/
});
after(async () => {
  for (const p of running.reverse()) await p.stop();
  await node?.stop();
  await redis?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/**
 * `scdv <args>` as on one host: its folders, the shared Redis, the cluster (through the config file).
 * @param {{data: string, models: string}} h
 * @param {string[]} args
 */
function scdv(h, args) {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'pipeline/cli.js'), ...args, '--config', configFile], {
    env: { ...process.env, REDIS_URL: redis.url, SCDV_DATA_DIR: h.data, SCDV_MODELS_DIR: h.models },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  return {
    child, exited, out: () => out,
    stop: async () => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM'); await exited; },
  };
}

/**
 * @param {{data: string, models: string}} h
 * @param {string[]} args
 * @returns {Promise<{url: string, stop: () => Promise<void>, out: () => string}>}
 */
async function serve(h, args = []) {
  const p = scdv(h, ['serve', '--port', '0', ...args]);
  running.push(p);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const m = /scdv serve: model \S+, (http:\/\/[^\s]+) /.exec(p.out());
    if (m) return { url: m[1], stop: p.stop, out: p.out };
    if (p.child.exitCode !== null) throw new Error(`scdv serve exited: ${p.out()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`scdv serve did not start: ${p.out()}`);
}

/**
 * Polls `fn` every 10 ms until it returns true; the time it took, ms.
 * @param {() => Promise<boolean>} fn
 * @param {number} [limitMs]
 */
async function within(fn, limitMs = 5000) {
  const t0 = Date.now();
  while (Date.now() - t0 < limitMs) {
    if (await fn()) return Date.now() - t0;
    await new Promise((r) => setTimeout(r, 10));
  }
  return Infinity;
}

/** @param {string} base */
const activeOf = async (base) => /** @type {any} */ (await (await fetch(`${base}/v1/models`)).json()).active;

test('distributed batch: scdv index on host A without local workers, its shards run by a worker of host B', { timeout: 300_000 }, async () => {
  const worker = scdv(B, ['worker', 'index']);
  running.push(worker);
  for (const model of MODELS) {
    const run = scdv(A, ['index', '--model', model, '--corpus', SAMPLE, '--collection', 'articles', '--workers', '0']);
    assert.equal(await run.exited, 0, run.out());
    assert.match(run.out(), new RegExp(`indexed ${lines.length} documents into ${model}/articles`), run.out());
  }
  await worker.stop();
  assert.match(worker.out(), /index queue/, 'the worker of host B ran');
  assert.ok(!fs.existsSync(path.join(B.data, 'runs')), 'host B kept no run folder: the markers are host A\'s');
  assert.ok(fs.readdirSync(path.join(A.data, 'runs', 'index')).length >= MODELS.length);
  for (const model of MODELS) {
    const store = await openModelStore(model, config);
    try {
      const c = await store.collection('articles');
      assert.equal(await c.count(), lines.length, `${model}: every document in the cluster`);
      const layouts = await store.readLayouts?.();
      assert.match(String(layouts?.articles?.model_files_sha256), /^[0-9a-f]{64}$/, 'the layout records the model files\' digest');
    } finally {
      await store.close();
    }
  }
});

test('two servers: activation, rollback and writes through A are followed by B within 1 s', { timeout: 300_000 }, async (t) => {
  const a = servers.a = await serve(A, ['--model', 'ms-a']);
  const b = servers.b = await serve(B);
  assert.equal(await activeOf(b.url), 'ms-a', 'B serves the active model of the shared record');

  let res = await fetch(`${a.url}/v1/models/ms-b/activate`, { method: 'POST', headers: KEY, body: '{}' });
  assert.equal(res.status, 200, await res.text());
  const followed = await within(async () => (await activeOf(b.url)) === 'ms-b');
  assert.ok(followed <= 1000, `B followed the activation after ${followed} ms`);

  res = await fetch(`${a.url}/v1/models/ms-a/activate`, { method: 'POST', headers: KEY, body: '{}' });
  const rollback = await res.text();
  assert.equal(res.status, 200, rollback);
  assert.equal(JSON.parse(rollback).previous, 'ms-b');
  const rolledBack = await within(async () => (await activeOf(b.url)) === 'ms-a');
  assert.ok(rolledBack <= 1000, `B followed the rollback after ${rolledBack} ms`);

  // B's related list of a document, cached by B; then a near copy of it written through A (collapsing off: the
  // copy is a near-duplicate of the query document, which related lists drop by default).
  const source = JSON.parse(lines[3]);
  const relatedOnB = async () => /** @type {any} */ (await (await fetch(`${b.url}/v1/collections/articles/documents/${encodeURIComponent(source.id)}/related?k=5&collapse=false`)).json()).results.map((/** @type {any} */ r) => /** @type {string} */ (r.id));
  const before = await relatedOnB();
  assert.deepEqual(await relatedOnB(), before, 'a repeated request (B\'s cache) answers the same');
  assert.ok(!before.includes('fresh-copy'));
  res = await fetch(`${a.url}/v1/collections/articles/documents/fresh-copy`, {
    method: 'PUT', headers: KEY, body: JSON.stringify({ title: source.title, body: source.body }),
  });
  assert.equal(res.status, 200, await res.text());
  const seen = await within(async () => (await relatedOnB()).includes('fresh-copy'));
  assert.ok(seen <= 1000, `the write through A was in B's related results after ${seen} ms`);
  assert.equal((await relatedOnB())[0], 'fresh-copy', 'the copy is the most related document');
  t.diagnostic(`B followed: activation ${followed} ms, rollback ${rolledBack} ms; a write through A in B's related results after ${seen} ms`);
});

test('a model whose files on B differ from those it was indexed with is refused by B, clearly', { timeout: 120_000 }, async () => {
  const a = servers.a ?? await serve(A, ['--model', 'ms-a']);
  const b = servers.b ?? await serve(B);
  // Host B's copy of ms-c is not the one the cluster's vectors were embedded with.
  fs.appendFileSync(path.join(B.models, 'ms-c', 'manifest.json'), '\n');
  // Asked directly: 409 with both digests and the folder to copy.
  let res = await fetch(`${b.url}/v1/models/ms-c/activate`, { method: 'POST', headers: KEY, body: '{}' });
  assert.equal(res.status, 409);
  const body = /** @type {any} */ (await res.json());
  assert.equal(body.error, 'SCDV_MODEL_FILES_MISMATCH', JSON.stringify(body));
  assert.equal(body.details.folder, path.join(B.models, 'ms-c'));
  assert.match(body.message, /copy models\/ms-c\//);
  assert.notEqual(body.details.local_sha256, body.details.indexed_sha256);
  // Activated on A (whose files match): B does not follow, says why, and keeps serving its model.
  res = await fetch(`${a.url}/v1/models/ms-c/activate`, { method: 'POST', headers: KEY, body: '{}' });
  assert.equal(res.status, 200, await res.text());
  const logged = await within(async () => b.out().includes('SCDV_MODEL_FILES_MISMATCH'), 3000);
  assert.ok(logged < Infinity, `B logged the refusal: ${b.out().slice(-2000)}`);
  assert.equal(await activeOf(a.url), 'ms-c');
  assert.equal(await activeOf(b.url), 'ms-a');
  // And a server of host B cannot start with it.
  const refused = scdv(B, ['serve', '--port', '0', '--model', 'ms-c']);
  running.push(refused);
  assert.notEqual(await refused.exited, 0);
  assert.match(refused.out(), /SCDV_MODEL_FILES_MISMATCH|differ from those collection "articles" was indexed with/);
});
