// Request-time embedding on worker threads (server.embedThreads, pipeline/embed/pool.js): a PUT stores the
// vector embedDocuments computes on the main thread (the batch path), bit for bit; a thread that dies fails the
// requests it held with SCDV_EMBED_WORKER_FAILED and the pool replaces it; the event loop stays free meanwhile.
// Written documents have threads of their own (server.writeEmbedThreads) at a lower priority (server.writeEmbedNice),
// paced while searches are in flight (server.writePace).
import fs from 'node:fs';
import os from 'node:os';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { storedValues } from '../store/helpers.js';

const h = await import('./helpers.js');
const { startServer } = await import('../../server/start.js');
const { createEmbedder } = await import('../../pipeline/embed/index.js');
const { openStore, searchesInFlight } = await import('../../pipeline/store/index.js');
const { storeDirFor } = await import('../../pipeline/paths.js');

/** @type {import('../../server/start.js').RunningServer} */
let srv;
const WRITE_NICE = 15;

/** Each thread of this process: its niceness and scheduling policy (/proc/self/task/<tid>/stat, fields 19 and 41). */
const threadScheduling = () => fs.readdirSync('/proc/self/task').map((tid) => {
  const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { tid: Number(tid), nice: Number(fields[16]), policy: Number(fields[38]) };
});
const threadNiceness = () => threadScheduling().map((t) => t.nice);
const SCHED_OTHER = 0;
const SCHED_BATCH = 3;
const KEY = { authorization: `Bearer ${h.API_KEY}` };

before(async () => {
  await h.setup();
  // Two write threads (writeEmbedThreads null: as many as embedThreads): the crash test below needs two to kill.
  // Texts up to 1M characters are small here: the crash test puts a ~0.4 MB text on each thread at once, which the
  // large-text lane (server.embedLargeTextChars, tests/server/embed-lanes.test.js) would keep to one thread.
  srv = await startServer({ config: h.testConfig({ embedThreads: 2, writeEmbedNice: WRITE_NICE, embedLargeTextChars: 1_000_000 }), model: h.MODEL_A, host: '127.0.0.1', port: 0, indexWorkers: 0 });
});
after(async () => {
  await srv?.close();
  await h.teardown();
});

test('PUT embeds on a worker thread and stores exactly the vector of embedDocuments on the main thread', async () => {
  const docs = h.sampleDocs().slice(0, 6);
  for (const d of docs) {
    const res = await srv.app.inject({ method: 'PUT', url: `/v1/collections/threads/documents/${d.id}`, headers: KEY, payload: { title: d.title, body: d.body } });
    assert.equal(res.statusCode, 200, res.body);
  }
  const config = h.testConfig();
  const embedder = await createEmbedder(h.MODEL_A, config);
  const expected = await embedder.embedDocuments(docs);
  const store = openStore(storeDirFor(h.MODEL_A));
  try {
    const coll = store.collection('threads');
    docs.forEach((d, i) => {
      const got = coll.get(d.id);
      assert.ok(got, d.id);
      assert.deepEqual([...got.vector.indices], [...expected[i].indices], `${d.id}: indices`);
      // The store keeps values as 12-bit codes x a per-document unit: compare with the main thread's vector as stored.
      assert.deepEqual([...got.vector.values], [...storedValues(expected[i].values)], `${d.id}: values`);
    });
  } finally {
    await store.close();
    embedder.model.wordTopics.close();
  }
});

test('request texts are embedded on the threads, never by the event loop\'s embedder', async () => {
  const sm = srv.ctx.models.acquire();
  const own = sm.embedder.vectorizer.embed;
  try {
    assert.ok(sm.pool, 'server.embedThreads 2 gives the model a pool');
    // The main thread's vectorizer is made unusable: every request text must go to a thread.
    sm.embedder.vectorizer.embed = () => { throw new Error('embedded on the event loop'); };
    const put = await srv.app.inject({ method: 'PUT', url: '/v1/collections/threads/documents/off-loop', headers: KEY, payload: { body: 'サッカーの試合と選手' } });
    assert.equal(put.statusCode, 200, put.body);
    const text = await srv.app.inject({ method: 'POST', url: '/v1/collections/articles/related', payload: { text: 'スマートフォンのアプリと画面', k: 3 } });
    assert.equal(text.statusCode, 200, text.body);
    const sim = await srv.app.inject({ method: 'POST', url: '/v1/similarity', payload: { a: { text: '映画の監督' }, b: { id: 'off-loop', collection: 'threads' } } });
    assert.equal(sim.statusCode, 200, sim.body);
  } finally {
    sm.embedder.vectorizer.embed = own;
    srv.ctx.models.release(sm);
  }
});

test('written documents are embedded on server.writeEmbedThreads threads of their own, at server.writeEmbedNice and SCHED_BATCH; request texts are not', async () => {
  const sm = srv.ctx.models.acquire();
  try {
    assert.ok(sm.writePool && sm.pool && sm.writePool !== sm.pool, 'two pools');
    assert.equal(sm.writePool.slots.length, 2);
    // Exactly the write pool's two threads are WRITE_NICE above the event loop (the tests may run niced), the
    // request-text threads and the event loop at the process's own.
    const base = os.getPriority(0);
    const writeNice = Math.min(19, base + WRITE_NICE);
    assert.ok(base < writeNice, `the tests run at niceness ${base}: no niceness left above it`);
    const nice = threadNiceness();
    assert.equal(nice.filter((n) => n === writeNice).length, 2, `thread niceness: ${nice.join(' ')}`);
    // ... and SCHED_BATCH (woken by the loop's message, they do not take its core), while the loop is not.
    const threads = threadScheduling();
    assert.deepEqual(threads.filter((t) => t.nice === writeNice).map((t) => t.policy), [SCHED_BATCH, SCHED_BATCH]);
    assert.equal(threads.find((t) => t.tid === process.pid)?.policy, SCHED_OTHER, 'the event loop keeps SCHED_OTHER');
    // A PUT goes to the write pool only.
    const calls = { write: 0, text: 0 };
    const spy = (/** @type {any} */ pool, /** @type {'write' | 'text'} */ kind) => {
      const own = pool.embedDocuments;
      pool.embedDocuments = (/** @type {any} */ docs) => { calls[kind]++; return own.call(pool, docs); };
      return () => { pool.embedDocuments = own; };
    };
    const undo = [spy(sm.writePool, 'write'), spy(sm.pool, 'text')];
    try {
      const put = await srv.app.inject({ method: 'PUT', url: '/v1/collections/threads/documents/nice-1', headers: KEY, payload: { body: 'サッカーの試合と選手' } });
      assert.equal(put.statusCode, 200, put.body);
      assert.deepEqual(calls, { write: 1, text: 0 });
      const text = await srv.app.inject({ method: 'POST', url: '/v1/collections/articles/related', payload: { text: 'スマートフォンのアプリと画面', k: 3 } });
      assert.equal(text.statusCode, 200, text.body);
      assert.deepEqual(calls, { write: 1, text: 1 });
    } finally {
      for (const u of undo) u();
    }
  } finally {
    srv.ctx.models.release(sm);
  }
});

test('a written document is embedded in paced sections while the store has searches in flight (server.writePace), never otherwise, to the same vector', async () => {
  // A model of its own, its write thread at the loop's niceness, paced at 10 % of a core for up to 2 s: a pause
  // is due whenever the thread got more than that. The server's write threads (niceness 15, a 20 ms budget) can, on
  // a loaded machine, get less than their share in the whole budget, and then rightly never pause.
  const { ServingModel } = await import('../../server/model-state.js');
  const sm = await ServingModel.open(h.MODEL_A, h.testConfig({ embedThreads: 1, writeEmbedThreads: 1, writeEmbedNice: 0, writePace: { sliceUs: 250, share: 0.1, budgetMs: 2000 } }));
  try {
    const pool = /** @type {import('../../pipeline/embed/pool.js').EmbedPool} */ (sm.writePool);
    // Long enough to outlast a slice (0.25 ms) many times over.
    const doc = { title: 'pace', body: h.sampleDocs().slice(0, 8).map((d) => d.body).join('\n') };
    const before = { ...pool.paced };
    const [idle] = await sm.embedWritten([doc]);
    assert.deepEqual(pool.paced, before, 'no search in flight: no pause');
    // A search in flight, as the store's searchAsync counts it.
    Atomics.add(searchesInFlight, 0, 1);
    let busy;
    try {
      [busy] = await sm.embedWritten([doc]);
    } finally {
      Atomics.sub(searchesInFlight, 0, 1);
    }
    assert.equal(pool.paced.sections, before.sections + 1, JSON.stringify(pool.paced));
    assert.ok(pool.paced.pauses > before.pauses && pool.paced.pausedMs > before.pausedMs, JSON.stringify(pool.paced));
    assert.ok(idle.indices.length > 0);
    assert.deepEqual([...busy.indices], [...idle.indices]);
    assert.deepEqual([...busy.values], [...idle.values]);
  } finally {
    await sm.close();
  }
});

test('a thread that dies fails its requests cleanly (503 SCDV_EMBED_WORKER_FAILED) and is replaced', async () => {
  const sm = srv.ctx.models.acquire();
  try {
    // The PUTs below are embedded by the write pool's threads.
    const pool = /** @type {import('../../pipeline/embed/pool.js').EmbedPool} */ (sm.writePool);
    const before = pool.restarts;
    const body = h.sampleDocs().slice(0, 120).map((d) => d.body).join('\n'); // ~0.4 MB: long enough to be caught mid-way
    // Both threads get a request; both die while embedding it.
    const puts = [1, 2].map((i) => srv.app.inject({ method: 'PUT', url: `/v1/collections/threads/documents/crash-${i}`, headers: KEY, payload: { body } }));
    const until = Date.now() + 60_000;
    while (!pool.slots.every((sl) => sl.calls.size > 0)) {
      assert.ok(Date.now() < until, 'the PUTs never reached both threads of the write pool');
      await new Promise((r) => setTimeout(r, 1));
    }
    // From here the threads' answers go unheard, as if each died before answering: otherwise a thread that finishes
    // its text between the check above and its terminate() (a loaded machine) answers 200, and the test is a race.
    for (const w of pool.workers) w.removeAllListeners('message');
    await Promise.all(pool.workers.map((w) => w.terminate()));
    for (const res of await Promise.all(puts)) {
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(res.json().error, 'SCDV_EMBED_WORKER_FAILED');
    }
    assert.equal(pool.restarts, before + 2);
    // The replacements serve the next requests, with the same vectors.
    const ok = await srv.app.inject({ method: 'PUT', url: '/v1/collections/threads/documents/after-crash', headers: KEY, payload: { body: 'サッカーの試合と選手' } });
    assert.equal(ok.statusCode, 200, ok.body);
    const text = await srv.app.inject({ method: 'POST', url: '/v1/collections/articles/related', payload: { text: 'スマートフォンのアプリと画面', k: 3 } });
    assert.equal(text.statusCode, 200, text.body);
    assert.equal(text.json().results.length, 3);
    // Nothing was stored for the failed writes.
    const gone = await srv.app.inject({ method: 'GET', url: '/v1/collections/threads/documents/crash-1' });
    assert.equal(gone.statusCode, 404);
  } finally {
    srv.ctx.models.release(sm);
  }
});

test('server.writeEmbedThreads sizes the write threads apart from embedThreads (null: as many); 0 shares the request-text threads', async () => {
  const { ServingModel } = await import('../../server/model-state.js');
  for (const writeEmbedThreads of [1, 0]) {
    const sm = await ServingModel.open(h.MODEL_A, h.testConfig({ embedThreads: 2, writeEmbedThreads }));
    try {
      assert.equal(sm.pool?.slots.length, 2);
      if (writeEmbedThreads === 0) {
        assert.equal(sm.writePool, null);
        const [v] = await sm.embedWritten([{ body: 'サッカーの試合と選手' }]);
        assert.ok(v.indices.length > 0);
      } else {
        assert.equal(sm.writePool?.slots.length, 1);
        assert.notEqual(sm.writePool, sm.pool);
      }
    } finally {
      await sm.close();
    }
  }
});
