// Faults of queued bulk jobs: the server SIGKILLed in the middle of a bulk job with the private Redis it starts
// itself (REDIS_URL unset: every queued and active job is gone with it), and a collection deleted while a bulk job
// writes to it. Must hold: the accepted job completes after a restart with every document stored and its upload
// removed; a job whose collection is deleted ends failed with the reason, and writes nothing after the delete.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { report, sleep, waitFor } from './lib.js';
import { serveProcess } from './serve.js';

const h = await import('../server/helpers.js');
const { dataDir } = await import('../../pipeline/paths.js');

const KEY = { authorization: `Bearer ${h.API_KEY}` };
const docs = h.sampleDocs();
const uploads = () => path.join(dataDir(), 'server', 'uploads');
const jobDir = (/** @type {string} */ id) => path.join(dataDir(), 'server', 'jobs', id);
/** Shard markers a job has so far. @param {string} id */
const markers = (id) => { try { return fs.readdirSync(path.join(jobDir(id), 'shards')).filter((f) => /^\d+\.json$/.test(f)).length; } catch { return 0; } };

before(async () => { await h.setup(); });
after(async () => { await h.teardown(); });

/** @param {string} url @param {RequestInit} [init] */
async function json(url, init) {
  const r = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  return { status: r.status, body: /** @type {any} */ (await r.json().catch(() => null)) };
}

/** `n` JSON Lines of sample articles under new ids. @param {string} prefix @param {number} n */
function bulkBody(prefix, n) {
  const lines = Array.from({ length: n }, (_, i) => {
    const d = docs[i % docs.length];
    return JSON.stringify({ id: `${prefix}-${i}`, title: `${d.title} ${i}`, body: d.body, category: d.category });
  });
  return { ids: lines.map((_, i) => `${prefix}-${i}`), body: lines.join('\n') + '\n' };
}

/** Small shards, slowed down per batch, so that a job is mid-way for seconds. */
function slowBulkConfig() {
  const base = h.testConfig({ indexWorkers: 1 });
  return { ...base, index: { ...base.index, shardSize: 40, writeBatchSize: 10 }, queue: { ...base.queue, backoffMs: 200 } };
}

/** @param {string} url @param {string} id @param {number} [timeoutMs] */
const finalState = (url, id, timeoutMs = 90_000) => waitFor(async () => {
  const s = await json(`${url}/v1/jobs/${id}`, { headers: KEY });
  return ['completed', 'failed'].includes(s.body?.state) ? s.body : null;
}, { timeoutMs, everyMs: 200, what: `bulk job ${id} to finish` });

test('server SIGKILLed mid-bulk with its private Redis: after a restart the accepted job completes, every document stored, the upload removed', async (t) => {
  const config = slowBulkConfig();
  const env = { SCDV_FAULT_BATCH_DELAY_MS: '60' };
  // No REDIS_URL: `scdv serve` starts its own Redis, which dies with it.
  let srv = await serveProcess({ config, model: h.MODEL_A, redisUrl: /** @type {any} */ (undefined), dir: h.tmp, indexWorkers: 1, env });
  const { ids, body } = bulkBody('crash', 240);
  const t0 = Date.now();
  try {
    const bulk = await json(`${srv.url}/v1/collections/crash/documents:bulk`, {
      method: 'POST', headers: { ...KEY, 'content-type': 'application/x-ndjson' }, body,
    });
    assert.equal(bulk.status, 202, JSON.stringify(bulk.body));
    const id = bulk.body.job;
    await waitFor(() => markers(id) >= 1, { timeoutMs: 60_000, what: 'a first shard done' });
    const doneAtKill = markers(id);
    await srv.stop('SIGKILL');
    const killedAtMs = Date.now() - t0;
    assert.ok(doneAtKill < bulk.body.shards, `killed mid-job (${doneAtKill} of ${bulk.body.shards} shards done)`);
    assert.equal(fs.readdirSync(uploads()).length, 1, 'the upload is kept while its job is not done');
    await sleep(500);

    srv = await serveProcess({ config, model: h.MODEL_A, redisUrl: /** @type {any} */ (undefined), dir: h.tmp, indexWorkers: 1 });
    const restartedAtMs = Date.now() - t0;
    const status = await finalState(srv.url, id);
    assert.equal(status.state, 'completed', JSON.stringify(status));
    assert.equal(status.documents, ids.length, JSON.stringify(status));
    const missing = [];
    for (const d of ids) if ((await json(`${srv.url}/v1/collections/crash/documents/${d}`)).status !== 200) missing.push(d);
    assert.deepEqual(missing, [], 'every document of the accepted job is stored');
    // Removed when the job completes, without anyone asking for its status.
    await waitFor(() => fs.readdirSync(uploads()).length === 0, { timeoutMs: 5000, what: 'the upload to be removed' });
    report(t, 'server-sigkill-bulk-private-redis', {
      lines: ids.length, shards: bulk.body.shards, shardsDoneAtKill: doneAtKill, killedAtMs, restartedAtMs,
      completedAtMs: Date.now() - t0, stored: ids.length - missing.length, uploadsLeft: fs.readdirSync(uploads()).length,
    });
  } finally {
    await srv.stop('SIGTERM');
  }
});

test('collection deleted while a bulk job writes to it: the job ends failed with the reason, nothing re-creates the collection', async (t) => {
  const config = slowBulkConfig();
  await h.indexDocs(h.MODEL_A, 'race', docs.slice(0, 20), config);
  const srv = await serveProcess({ config, model: h.MODEL_A, redisUrl: /** @type {any} */ (undefined), dir: h.tmp, indexWorkers: 1, env: { SCDV_FAULT_BATCH_DELAY_MS: '60' } });
  const { body } = bulkBody('race', 240);
  const collections = async () => (await json(`${srv.url}/v1/collections`)).body.collections.map((/** @type {{name: string}} */ c) => c.name);
  try {
    const bulk = await json(`${srv.url}/v1/collections/race/documents:bulk`, {
      method: 'POST', headers: { ...KEY, 'content-type': 'application/x-ndjson' }, body,
    });
    assert.equal(bulk.status, 202, JSON.stringify(bulk.body));
    const id = bulk.body.job;
    await waitFor(() => markers(id) >= 1, { timeoutMs: 60_000, what: 'a first shard done' });
    const del = await json(`${srv.url}/v1/collections/race`, { method: 'DELETE', headers: KEY });
    assert.equal(del.status, 200, JSON.stringify(del.body));
    const status = await finalState(srv.url, id);
    assert.equal(status.state, 'failed', JSON.stringify(status));
    assert.match(String(status.reason), /collection "race" .*was deleted/);
    assert.ok(status.documents < 240, `not every document is reported written: ${status.documents}`);
    // Shards that were waiting or retrying would have written by now.
    await sleep(1500);
    assert.ok(!(await collections()).includes('race'), 'the deleted collection was not created again');
    assert.equal((await json(`${srv.url}/v1/jobs/${id}`)).body.state, 'failed');
    assert.ok(!fs.existsSync(path.join(uploads(), `${id}.jsonl`)), 'the failed job\'s upload is removed');
    report(t, 'bulk-racing-collection-delete', { lines: 240, shards: bulk.body.shards, shardsDoneAtDelete: status.shards.done, state: status.state, documentsReported: status.documents });
  } finally {
    await srv.stop('SIGTERM');
  }
});

test('finished bulk jobs are removed server.bulkJobRetentionHours after they ended; unfinished and recent ones stay, and a removed id answers 404', async () => {
  const { sweepFinishedBulkJobs } = await import('../../pipeline/queue/bulk-jobs.js');
  const ids = { old: 'bulk-00000000-0000-0000-0000-0000000000a1', recent: 'bulk-00000000-0000-0000-0000-0000000000a2', open: 'bulk-00000000-0000-0000-0000-0000000000a3' };
  for (const id of Object.values(ids)) {
    fs.mkdirSync(path.join(jobDir(id), 'shards'), { recursive: true });
    fs.writeFileSync(path.join(jobDir(id), 'job.json'), JSON.stringify({ id, kind: 'bulk', model: h.MODEL_A, collection: 'articles', corpus: '/nonexistent', uploaded: false, lines: 0, shards: [], created_at: new Date().toISOString() }));
  }
  const ended = (/** @type {string} */ id, /** @type {number} */ agoMs) => {
    const mark = path.join(jobDir(id), 'finished');
    fs.writeFileSync(mark, 'x\n');
    const t = new Date(Date.now() - agoMs);
    fs.utimesSync(mark, t, t);
  };
  ended(ids.old, 3 * 3_600_000);
  ended(ids.recent, 10 * 60_000);
  // The record's time does not count, only the end: a job that ran for days is kept as long after it ended.
  const long = new Date(Date.now() - 30 * 86_400_000);
  fs.utimesSync(path.join(jobDir(ids.recent), 'job.json'), long, long);
  assert.deepEqual(sweepFinishedBulkJobs(0), { removed: 0 }, '0 keeps every job');
  assert.deepEqual(sweepFinishedBulkJobs(2 * 3_600_000), { removed: 1 });
  assert.ok(!fs.existsSync(jobDir(ids.old)), 'the job that ended 3 h ago is gone');
  assert.ok(fs.existsSync(jobDir(ids.recent)) && fs.existsSync(jobDir(ids.open)), 'the recent and the unfinished jobs stay');
  // Through a server started with a retention of 1 h: the recent job (ended 10 min ago) stays, and is answered.
  const srv = await serveProcess({ config: h.testConfig({ bulkJobRetentionHours: 1 }), model: h.MODEL_A, redisUrl: /** @type {any} */ (undefined), dir: h.tmp });
  try {
    const kept = await json(`${srv.url}/v1/jobs/${ids.recent}`, { headers: KEY });
    assert.equal(kept.status, 200, JSON.stringify(kept.body));
    assert.equal((await json(`${srv.url}/v1/jobs/${ids.old}`, { headers: KEY })).status, 404);
  } finally {
    await srv.stop();
  }
  ended(ids.recent, 2 * 3_600_000);
  const again = await serveProcess({ config: h.testConfig({ bulkJobRetentionHours: 1 }), model: h.MODEL_A, redisUrl: /** @type {any} */ (undefined), dir: h.tmp });
  try {
    await waitFor(() => !fs.existsSync(jobDir(ids.recent)), { what: 'the job ended 2 h ago removed on start' });
    assert.equal((await json(`${again.url}/v1/jobs/${ids.recent}`, { headers: KEY })).status, 404);
  } finally {
    await again.stop();
  }
  assert.ok(fs.existsSync(jobDir(ids.open)), 'an unfinished job is never removed');
  fs.rmSync(jobDir(ids.open), { recursive: true, force: true });
});

test('orphan uploads (no job) are removed on start; a recent one after server.requestTimeoutMs', async () => {
  const { sweepUploads } = await import('../../server/bulk-uploads.js');
  fs.mkdirSync(uploads(), { recursive: true });
  const old = path.join(uploads(), 'bulk-00000000-0000-0000-0000-000000000001.jsonl');
  const recent = path.join(uploads(), 'bulk-00000000-0000-0000-0000-000000000002.jsonl');
  fs.writeFileSync(old, '{"id":"a","body":"x"}\n');
  fs.writeFileSync(recent, '{"id":"b","body":"y"}\n');
  const past = new Date(Date.now() - 120_000);
  fs.utimesSync(old, past, past);
  const r = sweepUploads(60_000);
  assert.equal(r.removed, 1);
  assert.ok(!fs.existsSync(old) && fs.existsSync(recent), 'the old orphan is gone, the recent one waits');
  assert.ok(r.recheckInMs !== null && r.recheckInMs > 59_000 && r.recheckInMs <= 60_200, `looked at again after the grace: ${r.recheckInMs}`);
  assert.equal(sweepUploads(0).removed, 1);
  assert.ok(!fs.existsSync(recent));
});
