// Async searches run on the store's own threads (native/src/search_queue.h), not libuv's pool: a write made while
// a queue of searches waits is not put behind them, at most searchThreads() run at once, and the threads are
// SCHED_BATCH (they never preempt the event loop on wakeup). The write is measured by order (how many of the
// searches started before it had answered when it was acknowledged), not by time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { openStore } from '../../pipeline/store/index.js';
import { loadAddon } from '../../pipeline/store/native.js';
import { searchesInFlight, searchThreads } from '../../pipeline/store/search-threads.js';
import { randomVector, rng, tempDir } from './helpers.js';

const WIDTH = 400;
const DOCS = 12_000;
const SEARCHES = 80;

test('a write is acknowledged before a queue of earlier searches has run; searches answer as synchronous ones', async () => {
  const dir = tempDir('search-threads');
  try {
    const store = openStore(dir, { maintenanceMs: 0, autoFlush: false, autoMerge: false });
    const c = store.collection('c', { width: WIDTH });
    const r = rng(7);
    for (let i = 0; i < DOCS; i += 2000) {
      await c.upsert(Array.from({ length: 2000 }, (_, j) => ({ id: `d${i + j}`, vector: randomVector(r, WIDTH, 200) })));
    }
    await c.flush();
    // Dense queries in exact mode: each reads every posting of the collection (~2.4M), far longer than a WAL append.
    const queries = Array.from({ length: SEARCHES }, () => randomVector(r, WIDTH, WIDTH));
    const want = queries.map((q) => c.search(q, { k: 5, mode: 'exact' }));
    const addon = loadAddon();

    let answered = 0;
    let pendingAtStart = 0;
    const searches = queries.map((q) => c.searchAsync(q, { k: 5, mode: 'exact' }).then((hits) => {
      answered++;
      return hits;
    }));
    // Pending right after they were made: queued or running (a thread may have finished one while the rest were made).
    const pending = addon.searchThreadUse();
    pendingAtStart = pending.queued + pending.running;
    await c.upsert([{ id: 'written', vector: randomVector(r, WIDTH, 50) }]);
    const answeredAtWrite = answered;
    const got = await Promise.all(searches);
    const use = addon.searchThreadUse();

    assert.equal(use.limit, searchThreads());
    assert.ok(pendingAtStart >= SEARCHES - use.limit, `${pendingAtStart} searches queued or running right after ${SEARCHES} were made`);
    assert.ok(use.mostRunning >= 1 && use.mostRunning <= use.limit, `${use.mostRunning} searches ran at once, ${use.limit} threads`);
    assert.ok(use.threads <= use.limit, `${use.threads} search threads started, ${use.limit} allowed`);
    // Were the searches on the libuv pool, the WAL append and its fdatasync would queue behind every one there. 80 of
    // them make the queue long enough that an fdatasync slowed by a busy disk stays well inside half of it.
    assert.ok(answeredAtWrite < SEARCHES / 2, `${answeredAtWrite} of ${SEARCHES} earlier searches answered before the write was acknowledged`);
    assert.deepEqual(got.map((h) => h.map((x) => x.id)), want.map((h) => h.map((x) => x.id)));
    assert.deepEqual(got.map((h) => h.map((x) => x.score)), want.map((h) => h.map((x) => x.score)));
    assert.equal(c.get('written')?.id, 'written');
    assert.equal(addon.searchThreadUse().running, 0);
    assert.equal(addon.searchThreadUse().queued, 0);
    await store.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the search threads are named scdv-search, scheduled SCHED_BATCH and niced below the event loop (Linux)', { skip: process.platform !== 'linux' && 'Linux only' }, async () => {
  const dir = tempDir('search-threads-policy');
  try {
    const store = openStore(dir, { maintenanceMs: 0, autoFlush: false, autoMerge: false });
    const c = store.collection('c', { width: WIDTH });
    const r = rng(11);
    await c.upsert(Array.from({ length: 500 }, (_, i) => ({ id: `d${i}`, vector: randomVector(r, WIDTH, 50) })));
    await c.flush();
    await Promise.all(Array.from({ length: 8 }, () => c.searchAsync(randomVector(r, WIDTH, 50), { k: 3 })));
    // /proc/self/task/<tid>/stat: field 19 is the niceness, field 41 the scheduling policy (SCHED_BATCH = 3).
    const fields = (/** @type {string} */ t) => {
      const stat = fs.readFileSync(`/proc/self/task/${t}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    };
    const searchThreads = fs.readdirSync('/proc/self/task').filter((t) => fs.readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim() === 'scdv-search');
    assert.ok(searchThreads.length >= 1, 'no thread named scdv-search');
    assert.deepEqual([...new Set(searchThreads.map((t) => Number(fields(t)[38])))], [3]);
    const loopNice = Number(fields(String(process.pid))[16]);
    for (const t of searchThreads) assert.ok(Number(fields(t)[16]) > loopNice, `search thread ${t} at niceness ${fields(t)[16]}, the event loop at ${loopNice}`);
    await store.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('searchesInFlight counts the async searches queued or running, and goes back to 0 after answers and failures', async () => {
  const dir = tempDir('search-in-flight');
  try {
    const store = openStore(dir, { maintenanceMs: 0, autoFlush: false, autoMerge: false });
    const c = store.collection('c', { width: WIDTH });
    const r = rng(11);
    await c.upsert(Array.from({ length: 500 }, (_, j) => ({ id: `d${j}`, vector: randomVector(r, WIDTH, 50) })));
    const start = Atomics.load(searchesInFlight, 0);
    const searches = Array.from({ length: 6 }, () => c.searchAsync(randomVector(r, WIDTH, 40), { k: 3 }));
    assert.equal(Atomics.load(searchesInFlight, 0), start + 6, 'six in flight');
    await Promise.all(searches);
    assert.equal(Atomics.load(searchesInFlight, 0), start);
    // A search the native side refuses (k 0) leaves no count behind.
    await assert.rejects(c.searchAsync(randomVector(r, WIDTH, 40), { k: 0 }));
    assert.equal(Atomics.load(searchesInFlight, 0), start);
    await store.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
