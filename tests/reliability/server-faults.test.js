// Faults of the REST server: the server process killed with SIGKILL during ingestion (live writes and a bulk
// job), Redis down while the server answers, a model activated (and a refused activation) under load, a
// collection deleted while PUTs to it arrive.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { restartableRedis, report, sleep, waitFor, childPids } from './lib.js';
import { serveProcess } from './serve.js';

const h = await import('../server/helpers.js');
const { startServer } = await import('../../server/start.js');
const { default: autocannon } = await import('autocannon');

const KEY = { authorization: `Bearer ${h.API_KEY}` };
const docs = h.sampleDocs();

before(async () => { await h.setup(); });
after(async () => { await h.teardown(); });

/** A fresh article text per write: sample sentences recombined. @param {number} i */
function article(i) {
  const a = docs[i % docs.length];
  const b = docs[(i * 7 + 3) % docs.length];
  return { title: `${a.title} ${i}`, body: `${a.body.slice(0, 300)}\n${b.body.slice(0, 300)}`, category: a.category, site: 'reliability.example' };
}

/** @param {string} url @param {RequestInit} [init] */
async function json(url, init) {
  const r = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  return { status: r.status, body: /** @type {any} */ (await r.json().catch(() => null)) };
}

test('server SIGKILLed during ingestion: after a restart every acknowledged write is there and searchable, the accepted bulk job completes', async (t) => {
  // Redis with its data kept (AOF), as in production: the bulk job accepted before the kill is still queued.
  const redis = await restartableRedis({ persist: true });
  const base = h.testConfig({ indexWorkers: 1 });
  // Fast stall detection: the shard a killed worker held is taken over within seconds.
  const config = { ...base, queue: { ...base.queue, lockDurationMs: 2000, stalledIntervalMs: 1000, backoffMs: 200 } };
  let srv = await serveProcess({ config, model: h.MODEL_A, redisUrl: redis.url, dir: h.tmp, indexWorkers: 1 });
  /** @type {Set<string>} */
  const acked = new Set();
  let attempted = 0;
  let refusedOrCut = 0;
  let stop = false;
  try {
    // The bulk job: 120 new documents as a JSON Lines upload, acknowledged with 202.
    const bulkDocs = Array.from({ length: 120 }, (_, i) => ({ id: `bulk-${i}`, ...article(1000 + i) }));
    const bulk = await json(`${srv.url}/v1/collections/ingest/documents:bulk`, {
      method: 'POST', headers: { ...KEY, 'content-type': 'application/x-ndjson' }, body: bulkDocs.map((d) => JSON.stringify(d)).join('\n') + '\n',
    });
    assert.equal(bulk.status, 202, JSON.stringify(bulk.body));
    const indexWorkers = childPids(srv.pid);

    // Live writes from 6 clients; the server is killed after 1.5 s.
    const writer = async (/** @type {number} */ c) => {
      for (let i = c; !stop; i += 6) {
        const id = `live-${i}`;
        attempted++;
        try {
          const r = await fetch(`${srv.url}/v1/collections/ingest/documents/${id}`, {
            method: 'PUT', headers: { ...KEY, 'content-type': 'application/json' }, body: JSON.stringify(article(i)),
          });
          if (r.status === 200) acked.add(id);
          await r.arrayBuffer();
        } catch {
          refusedOrCut++;
          if (stop) return;
          await sleep(20);
        }
      }
    };
    const writers = Array.from({ length: 6 }, (_, c) => writer(c));
    await waitFor(() => acked.size >= 30, { timeoutMs: 30_000, what: '30 acknowledged writes' });
    await sleep(500);
    await srv.stop('SIGKILL');
    await sleep(300);
    stop = true;
    await Promise.all(writers);
    await sleep(500);
    const orphans = indexWorkers.filter((p) => { try { return !/\) Z /.test(fs.readFileSync(`/proc/${p}/stat`, 'utf8')); } catch { return false; } });

    srv = await serveProcess({ config, model: h.MODEL_A, redisUrl: redis.url, dir: h.tmp, indexWorkers: 1 });
    for (const id of acked) {
      const d = await json(`${srv.url}/v1/collections/ingest/documents/${id}`);
      assert.equal(d.status, 200, `acknowledged ${id} is stored`);
      const rel = await json(`${srv.url}/v1/collections/ingest/documents/${id}/related?k=3`);
      assert.equal(rel.status, 200, `acknowledged ${id} is searchable`);
    }
    const status = /** @type {{status: number, body: any}} */ (await waitFor(async () => {
      const s = await json(`${srv.url}/v1/jobs/${bulk.body.job}`);
      return ['completed', 'failed'].includes(s.body?.state) ? s : null;
    }, { timeoutMs: 60_000, what: 'the bulk job to finish after the restart' }));
    assert.equal(status.body.state, 'completed', JSON.stringify(status.body));
    for (const d of bulkDocs) assert.equal((await json(`${srv.url}/v1/collections/ingest/documents/${d.id}`)).status, 200, `bulk ${d.id} stored`);
    assert.deepEqual(orphans, [], 'the killed server\'s embed workers did not outlive it');
    report(t, 'server-sigkill-ingestion', { writesAttempted: attempted, writesAcknowledged: acked.size, refusedOrCut, bulkDocs: bulkDocs.length, bulkState: status.body.state, orphanedWorkers: orphans.length });
  } finally {
    stop = true;
    await srv.stop('SIGTERM');
    await redis.close();
  }
});

test('Redis down while serving: reads keep answering, queue routes answer 503 in the error shape, both recover', async (t) => {
  const redis = await restartableRedis({ persist: false });
  const srv = await startServer({ config: h.testConfig(), model: h.MODEL_A, redisUrl: redis.url, host: '127.0.0.1', port: 0, indexWorkers: 1 });
  try {
    const id = docs[3].id;
    const reads = [
      () => json(`${srv.url}/v1/collections/articles/documents/${id}/related?k=5`),
      () => json(`${srv.url}/v1/collections/articles/related`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'サッカーの試合', k: 5 }) }),
      () => json(`${srv.url}/v1/match?collection=ads&for=${id}&k=3`),
      () => json(`${srv.url}/v1/collections/articles/documents/${id}`),
      () => json(`${srv.url}/v1/models`),
    ];
    const bulk = () => json(`${srv.url}/v1/collections/articles/documents:bulk`, {
      method: 'POST', headers: { ...KEY, 'content-type': 'application/x-ndjson' }, body: JSON.stringify({ id: 'outage-bulk', body: 'テニスの試合で選手が優勝した。' }) + '\n',
    });
    for (const r of reads) assert.equal((await r()).status, 200);

    await redis.stop('SIGKILL');
    await sleep(300);
    let served = 0;
    /** @type {number[]} */
    const latencies = [];
    const until = Date.now() + 3000;
    while (Date.now() < until) {
      for (const r of reads) {
        const t0 = Date.now();
        const res = await r();
        latencies.push(Date.now() - t0);
        assert.equal(res.status, 200, `a read during the outage: ${JSON.stringify(res.body)}`);
        served++;
      }
    }
    const ready = await json(`${srv.url}/readyz`);
    assert.equal(ready.status, 200);
    assert.equal(ready.body.redis, 'down');
    const q = await bulk();
    assert.equal(q.status, 503);
    assert.equal(q.body.error, 'SCDV_QUEUE_UNAVAILABLE');
    assert.deepEqual(Object.keys(q.body).sort(), ['error', 'message']);
    // A live write does not need Redis (cache invalidation is best effort) — or says 503 clearly.
    const put = await json(`${srv.url}/v1/collections/articles/documents/outage-live`, { method: 'PUT', headers: { ...KEY, 'content-type': 'application/json' }, body: JSON.stringify(article(5)) });
    assert.ok(put.status === 200 || (put.status === 503 && put.body.error === 'SCDV_QUEUE_UNAVAILABLE'), `live write during the outage: ${put.status} ${JSON.stringify(put.body)}`);
    const board = await json(`${srv.url}/admin/queues/api/queues`, { headers: KEY });
    assert.equal(board.status, 503, 'Bull Board\'s API answers at once during the outage');
    assert.equal(board.body.error, 'SCDV_QUEUE_UNAVAILABLE');
    const job = await json(`${srv.url}/v1/jobs/bulk-00000000-0000-0000-0000-000000000000`);
    assert.ok([404, 503].includes(job.status), `job status during the outage: ${job.status}`);
    assert.match(job.body.error, /^SCDV_/);

    await redis.start();
    const back = /** @type {{status: number, body: any}} */ (await waitFor(async () => { const r = await bulk(); return r.status === 202 ? r : null; }, { timeoutMs: 15_000, what: 'queue routes to recover' }));
    const done = /** @type {{status: number, body: any}} */ (await waitFor(async () => {
      const s = await json(`${srv.url}/v1/jobs/${back.body.job}`);
      return ['completed', 'failed'].includes(s.body?.state) ? s : null;
    }, { timeoutMs: 30_000, what: 'the bulk job after the outage' }));
    assert.equal(done.body.state, 'completed');
    assert.equal((await json(`${srv.url}/readyz`)).body.redis, 'up');
    assert.equal((await json(`${srv.url}/admin/queues/api/queues`, { headers: KEY })).status, 200);
    latencies.sort((a, b) => a - b);
    report(t, 'redis-outage-server', { readsDuringOutage: served, readErrors: 0, readP99Ms: latencies[Math.floor(latencies.length * 0.99)], queueRouteStatus: q.status, livePutStatus: put.status });
  } finally {
    await srv.close();
    await redis.close();
  }
});

test('model activation under load (50 connections): zero failed requests; a refused activation changes nothing', async (t) => {
  const srv = await startServer({ config: h.testConfig(), model: h.MODEL_A, redisUrl: (await h.setup()).redis.url, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  try {
    const ids = docs.slice(0, 100).map((d) => d.id);
    // Activation needs every served collection in the target's store: give both models those the other
    // tests created.
    for (const m of [h.MODEL_A, h.MODEL_B]) await h.indexDocs(m, 'ingest', docs.slice(0, 5), h.testConfig());
    let n = 0;
    /** @type {number[]} */
    const activations = [];
    const run = autocannon({
      url: srv.url, connections: 50, duration: 6,
      requests: [{ setupRequest: (/** @type {any} */ req) => ({ ...req, path: `/v1/collections/articles/documents/${ids[n++ % ids.length]}/related?k=5` }) }],
    });
    const switching = (async () => {
      await sleep(500);
      for (const m of [h.MODEL_B, h.MODEL_A, h.MODEL_B, h.MODEL_A]) {
        const r = await json(`${srv.url}/v1/models/${m}/activate`, { method: 'POST', headers: KEY });
        activations.push(r.status);
        await sleep(800);
      }
      // A model whose store lacks the served collections is refused (409), and serving goes on.
      const stub = path.join(process.env.SCDV_MODELS_DIR ?? '', 'unbuilt');
      fs.cpSync(path.join(process.env.SCDV_MODELS_DIR ?? '', h.MODEL_A), stub, { recursive: true });
      const refused = await json(`${srv.url}/v1/models/unbuilt/activate`, { method: 'POST', headers: KEY });
      activations.push(refused.status);
      assert.equal(refused.body.error, 'SCDV_MODEL_NOT_BUILT');
    })();
    const [res] = await Promise.all([run, switching]);
    assert.deepEqual(activations, [200, 200, 200, 200, 409]);
    assert.equal(res.errors, 0, 'no connection error');
    assert.equal(res.non2xx, 0, 'no failed request');
    assert.equal((await json(`${srv.url}/readyz`)).body.model, h.MODEL_A);
    report(t, 'activation-under-load', { requests: res.requests.total, errors: res.errors, non2xx: res.non2xx, p99Ms: res.latency.p99, activations: activations.length });
  } finally {
    await srv.close();
  }
});

test('a collection deleted while 30 PUTs to it arrive, 7 times: the server keeps answering, SIGTERM stops it', async (t) => {
  const redis = await restartableRedis({ persist: false });
  const srv = await serveProcess({ config: h.testConfig(), model: h.MODEL_A, redisUrl: redis.url, dir: h.tmp });
  const put = (/** @type {string} */ id, /** @type {number} */ i) => json(`${srv.url}/v1/collections/race-x/documents/${id}`, {
    method: 'PUT', headers: { ...KEY, 'content-type': 'application/json' }, body: JSON.stringify(article(i)),
  }).catch((err) => ({ status: 0, body: String(err) }));
  /** @type {Record<string, number>} */
  const statuses = {};
  let duringDelete = 0;
  let healthMaxMs = 0;
  try {
    for (let run = 0; run < 7; run++) {
      assert.equal((await put('seed', 0)).status, 200);
      /** @type {Promise<{status: number, body: any}>[]} */
      const puts = [];
      /** @type {Promise<{status: number, body: any}> | null} */
      let del = null;
      let deleting = false;
      /** ids whose PUT was sent after the DELETE was answered: they must be in the collection made anew */
      const afterDelete = [];
      let deleteAnswered = false;
      for (let i = 0; i < 30; i++) {
        if (i === 10) {
          deleting = true;
          del = json(`${srv.url}/v1/collections/race-x`, { method: 'DELETE', headers: KEY }).catch((err) => ({ status: 0, body: String(err) })).finally(() => { deleting = false; deleteAnswered = true; });
        }
        if (deleteAnswered) afterDelete.push(`d${i}`);
        puts.push(put(`d${i}`, i + 1).then((r) => { if (deleting) duringDelete++; return r; }));
        await sleep(5);
      }
      const d = await /** @type {Promise<{status: number, body: any}>} */ (del);
      assert.equal(d.status, 200, `run ${run}: DELETE ${JSON.stringify(d.body)}`);
      for (const r of await Promise.all(puts)) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      const t0 = Date.now();
      const health = await fetch(`${srv.url}/healthz`, { signal: AbortSignal.timeout(3000) }).then((r) => r.status, () => 0);
      healthMaxMs = Math.max(healthMaxMs, Date.now() - t0);
      assert.equal(health, 200, `run ${run}: /healthz answers after the race`);
      assert.equal((await json(`${srv.url}/v1/collections/race-x/documents/seed`)).status, 404, `run ${run}: the deleted document is gone`);
      for (const id of afterDelete) assert.equal((await json(`${srv.url}/v1/collections/race-x/documents/${id}`)).status, 200, `run ${run}: ${id}, sent after the DELETE answered`);
    }
    assert.deepEqual(Object.keys(statuses), ['200'], `every PUT is answered 200 (statuses ${JSON.stringify(statuses)})`);
    const t0 = Date.now();
    const exited = await Promise.race([srv.stop('SIGTERM').then(() => true), sleep(15_000).then(() => false)]);
    assert.ok(exited, 'SIGTERM stops the server within 15 s');
    report(t, 'delete-racing-puts', { runs: 7, puts: 7 * 30, statuses, putsAnsweredDuringDelete: duringDelete, healthMaxMs, sigtermExitMs: Date.now() - t0 });
  } finally {
    await srv.stop('SIGKILL');
    await redis.close();
  }
});
