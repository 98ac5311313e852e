// Faults of the OpenSearch backend, end to end (`scdv serve` as its own process, a real 2-node cluster, 2 shards
// with 1 replica each): a node SIGKILLed under read and write load, then OpenSearch entirely down. What must
// hold: related keeps answering (errors only within a retry window after the kill, then none), every write
// acknowledged before the kill is there once the node is back, and with the whole cluster down related answers 503
// SCDV_BACKEND_UNAVAILABLE, /readyz says so, the server stays up and serves again without a restart.
// Figures: RELIABILITY.md "OpenSearch faults" (SCDV_RELIABILITY_FIGURES collects them, as tests/reliability does).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { report, sleep, waitFor } from '../reliability/lib.js';
import { serveProcess } from '../reliability/serve.js';
import { startOpenSearch } from '../lib/opensearch.js';

const h = await import('../server/helpers.js');
const { loadConfig } = await import('../../pipeline/config.js');
const { openModelStore } = await import('../../pipeline/store/index.js');
const { createEmbedder } = await import('../../pipeline/embed/index.js');
const { documentMeta } = await import('../../pipeline/embed/meta.js');

const KEY = { authorization: `Bearer ${h.API_KEY}` };
const docs = h.sampleDocs();
/** Errors are allowed only this long after a node dies (the client's retry on the other node, shard fail-over). */
const RETRY_WINDOW_MS = 5000;

/** @type {Awaited<ReturnType<typeof startOpenSearch>>} */
let cluster;
/** @type {import('../../pipeline/config.js').Config} */
let config;
/** @type {string} */
let redisUrl;

before(async () => {
  redisUrl = (await h.setup()).redis.url;
  cluster = await startOpenSearch({ nodes: 2, name: 'scdv-faults' });
  const base = h.testConfig({ relatedCacheEntries: 0 }); // every read reaches the cluster: no cached answer hides a fault
  config = loadConfig({
    overrides: {
      ...base,
      store: { backend: 'opensearch', opensearch: { ...base.store.opensearch, nodes: cluster.urls, indexPrefix: 'flt-', shards: 2, replicas: 1 } },
    },
  });
  // The sample into the cluster, as `scdv index` would (in this process: the queued path has its own tests).
  const embedder = await createEmbedder(h.MODEL_A, config, { inMemory: true });
  const store = await openModelStore(h.MODEL_A, config);
  const coll = await store.collection('articles', { width: embedder.width });
  const vectors = await embedder.embedDocuments(docs);
  await coll.upsert(docs.map((d, i) => ({ id: d.id, vector: { indices: vectors[i].indices, values: vectors[i].values }, meta: documentMeta(d) }))
    .filter((r) => r.vector.indices.length > 0));
  await coll.flush();
  await store.close();
  embedder.model.wordTopics.close();
  await cluster.waitHealth('green');
});

after(async () => {
  await cluster?.stop();
  await h.teardown();
});

/** A fresh article per write: sample sentences recombined. @param {number} i */
function article(i) {
  const a = docs[i % docs.length];
  const b = docs[(i * 7 + 3) % docs.length];
  return { title: `${a.title} ${i}`, body: `${a.body.slice(0, 300)}\n${b.body.slice(0, 300)}`, category: a.category, site: 'faults.example' };
}

/** @param {string} url @param {RequestInit} [init] */
async function json(url, init) {
  const r = await fetch(url, { ...init, signal: AbortSignal.timeout(60_000) });
  return { status: r.status, body: /** @type {any} */ (await r.json().catch(() => null)) };
}

/**
 * Readers and a writer against the server until stop(): every answer with its time and outcome.
 * @param {string} url
 * @param {{readers: number, prefix: string}} o
 */
function load(url, o) {
  /** @type {{t: number, ok: boolean, status: number, code: string, message: string}[]} */
  const reads = [];
  /** @type {{id: string, t: number}[]} */
  const acked = [];
  let writeErrors = 0;
  let running = true;
  const reader = async (/** @type {number} */ c) => {
    for (let i = c; running; i += o.readers) {
      const id = docs[(i * 31) % docs.length].id;
      const t = Date.now();
      try {
        const r = await json(`${url}/v1/collections/articles/documents/${encodeURIComponent(id)}/related?k=10`);
        reads.push({ t, ok: r.status === 200 && r.body.results.length === 10, status: r.status, code: r.body?.error ?? '', message: r.body?.message ?? '' });
      } catch (err) {
        reads.push({ t, ok: false, status: 0, code: /** @type {Error} */ (err).name, message: /** @type {Error} */ (err).message });
      }
    }
  };
  const writer = async (/** @type {number} */ c) => {
    for (let i = c; running; i += 2) {
      const id = `${o.prefix}-${i}`;
      try {
        const r = await json(`${url}/v1/collections/articles/documents/${id}`, {
          method: 'PUT', headers: { ...KEY, 'content-type': 'application/json' }, body: JSON.stringify(article(i)),
        });
        if (r.status === 200) acked.push({ id, t: Date.now() });
        else writeErrors++;
      } catch {
        writeErrors++;
      }
    }
  };
  const all = [...Array.from({ length: o.readers }, (_, c) => reader(c)), writer(0), writer(1)];
  return {
    reads,
    acked,
    writeErrors: () => writeErrors,
    async stop() {
      running = false;
      await Promise.all(all);
    },
  };
}

/** The node that is not the elected cluster manager (a 2-node cluster cannot elect a new one without it). */
async function nonManagerNode() {
  const r = await json(`${cluster.urls[0]}/_cat/cluster_manager?format=json`);
  const manager = r.body[0].node;
  return cluster.nodes.findIndex((n) => n.name !== manager);
}

test('a node SIGKILLed under read and write load: related keeps answering, acknowledged writes survive', async (t) => {
  const srv = await serveProcess({ config, model: h.MODEL_A, redisUrl, dir: h.tmp, indexWorkers: 0 });
  t.after(() => srv.stop());
  const victim = await nonManagerNode();
  const l = load(srv.url, { readers: 4, prefix: 'kill' });
  // Measured from the moment reads flow (the server's and the nodes' first requests are slow), for 8 s.
  await waitFor(() => l.reads.length >= 20, { timeoutMs: 120_000, what: '20 reads' });
  const measuredFrom = Date.now();
  await sleep(8000);
  const killedAt = Date.now();
  await cluster.kill(victim);
  const ackedBeforeKill = l.acked.filter((a) => a.t < killedAt).map((a) => a.id);
  await sleep(15_000); // one node serving alone
  const restartAt = Date.now();
  await cluster.restart(victim);
  await cluster.waitHealth('green');
  const greenMs = Date.now() - restartAt;
  await sleep(2000);
  await l.stop();
  assert.equal(srv.child.exitCode, null, 'the server is still up');

  const before = l.reads.filter((r) => r.t >= measuredFrom && r.t < killedAt);
  const afterKill = l.reads.filter((r) => r.t >= killedAt);
  const failed = afterKill.filter((r) => !r.ok);
  const lastErrorMs = failed.length ? Math.max(...failed.map((r) => r.t)) - killedAt : 0;
  const figures = {
    reads_before: before.length, reads_after_kill: afterKill.length, read_errors: failed.length,
    error_codes: [...new Set(failed.map((r) => `${r.status} ${r.code}`))], last_error_after_kill_ms: lastErrorMs,
    errors_during_warm_up: l.reads.filter((r) => r.t < measuredFrom && !r.ok).map((r) => r.message.slice(0, 200)),
    writes_acked: l.acked.length, writes_acked_before_kill: ackedBeforeKill.length, write_errors: l.writeErrors(),
    restarted_node_green_ms: greenMs,
  };
  report(t, 'opensearch: one of 2 nodes SIGKILLed under load', figures);
  assert.ok(before.length > 20 && before.every((r) => r.ok), `reads before the kill: ${JSON.stringify(before.filter((r) => !r.ok).slice(0, 3))}`);
  assert.ok(afterKill.length > 50, `reads kept coming after the kill: ${afterKill.length}`);
  assert.ok(lastErrorMs <= RETRY_WINDOW_MS, `errors only within ${RETRY_WINDOW_MS} ms of the kill: ${JSON.stringify(figures)}`);
  for (const r of failed) assert.equal(r.code, 'SCDV_BACKEND_UNAVAILABLE', `an error names the backend: ${JSON.stringify(r)}`);
  assert.ok(ackedBeforeKill.length >= 3, `writes acknowledged before the kill: ${ackedBeforeKill.length}`);

  // Every write acknowledged before the kill (and after it) is there, read through the server.
  const missing = [];
  for (const { id } of l.acked) {
    const r = await json(`${srv.url}/v1/collections/articles/documents/${id}`);
    if (r.status !== 200) missing.push(`${id}: ${r.status}`);
  }
  assert.deepEqual(missing, []);
});

test('OpenSearch entirely down: related answers 503 SCDV_BACKEND_UNAVAILABLE, /readyz says so, service resumes without a restart', async (t) => {
  const srv = await serveProcess({ config, model: h.MODEL_A, redisUrl, dir: h.tmp, indexWorkers: 0 });
  t.after(() => srv.stop());
  const related = () => json(`${srv.url}/v1/collections/articles/documents/${encodeURIComponent(docs[5].id)}/related?k=10`);
  assert.equal((await related()).status, 200);
  assert.equal((await json(`${srv.url}/readyz`)).status, 200);

  const downAt = Date.now();
  await Promise.all([cluster.kill(0), cluster.kill(1)]);
  const down = await related();
  const answerMs = Date.now() - downAt;
  assert.equal(down.status, 503, JSON.stringify(down.body));
  assert.equal(down.body.error, 'SCDV_BACKEND_UNAVAILABLE');
  assert.match(down.body.message, new RegExp(cluster.urls[0].replace(/[.:/]/g, '\\$&')), 'the message names the nodes tried');
  const ready = await json(`${srv.url}/readyz`);
  assert.equal(ready.status, 503);
  assert.equal(ready.body.status, 'not_ready');
  assert.equal(ready.body.backend.ok, false, JSON.stringify(ready.body));
  assert.equal((await json(`${srv.url}/healthz`)).status, 200, 'the process is alive');
  // A burst of reads while it is down: each a clean 503, none hangs or crashes the server.
  const burst = await Promise.all(Array.from({ length: 20 }, () => related()));
  assert.deepEqual([...new Set(burst.map((r) => `${r.status} ${r.body?.error}`))], ['503 SCDV_BACKEND_UNAVAILABLE']);
  assert.equal(srv.child.exitCode, null);

  const backAt = Date.now();
  await Promise.all([cluster.restart(0), cluster.restart(1)]);
  await cluster.waitHealth('green');
  const greenMs = Date.now() - backAt;
  const greenAt = Date.now();
  await waitFor(async () => (await related()).status === 200, { timeoutMs: 120_000, everyMs: 250, what: 'related to answer again' });
  const resumeMs = Date.now() - greenAt;
  await waitFor(async () => (await json(`${srv.url}/readyz`)).status === 200, { timeoutMs: 30_000, everyMs: 250, what: '/readyz ready again' });
  report(t, 'opensearch: whole cluster down, then back', { first_503_ms: answerMs, cluster_green_after_restart_ms: greenMs, related_ok_after_green_ms: resumeMs });
  assert.equal(srv.child.exitCode, null, 'the same server process serves again');
});
