// searchAsync leaves libuv pool threads to the store's writes (pipeline/store/search-lanes.js): a write made while
// a queue of searches waits is not put behind them. Measured by order (how many of the searches started before
// the write had answered when the write was acknowledged), not by time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openStore } from '../../pipeline/store/index.js';
import { poolSize, searchLaneUse, searchLanes } from '../../pipeline/store/search-lanes.js';
import { randomVector, rng, tempDir } from './helpers.js';

const WIDTH = 400;
const DOCS = 12_000;
const SEARCHES = 40;

test('a write is acknowledged before a queue of earlier searches has run; searches answer as without the lanes', async () => {
  const dir = tempDir('search-lanes');
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

    let answered = 0;
    let mostRunning = 0;
    const searches = queries.map((q) => c.searchAsync(q, { k: 5, mode: 'exact' }).then((hits) => {
      mostRunning = Math.max(mostRunning, searchLaneUse().running);
      answered++;
      return hits;
    }));
    mostRunning = Math.max(mostRunning, searchLaneUse().running);
    await c.upsert([{ id: 'written', vector: randomVector(r, WIDTH, 50) }]);
    const answeredAtWrite = answered;
    const got = await Promise.all(searches);

    assert.equal(searchLanes(), Math.max(1, poolSize() - 2));
    assert.ok(mostRunning <= searchLanes(), `${mostRunning} searches on the pool at once, ${searchLanes()} lanes`);
    // Without the lanes the WAL append and its fdatasync queue behind every search already on the pool: at least
    // SEARCHES - poolSize() have answered by then. With them, a few (those on the pool while the write ran).
    assert.ok(answeredAtWrite < SEARCHES / 2, `${answeredAtWrite} of ${SEARCHES} earlier searches answered before the write was acknowledged`);
    assert.deepEqual(got.map((h) => h.map((x) => x.id)), want.map((h) => h.map((x) => x.id)));
    assert.equal(c.get('written')?.id, 'written');
    assert.deepEqual(searchLaneUse(), { running: 0, waiting: 0, lanes: searchLanes() });
    await store.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('scdv sizes the libuv pool to a search lane per core, one more, and the reserved ones, unless the environment says', async () => {
  const { spawnSync } = await import('node:child_process');
  const os = await import('node:os');
  const { default: threadPool } = await import('../../pipeline/store/thread-pool.cjs');
  const scdv = new URL('../../pipeline/scdv.cjs', import.meta.url).pathname;
  // A preloaded hook counts the process's threads as it ends (the ES modules loaded: the pool has started), and
  // reports the variable: the threads, not the variable, show the size libuv took.
  const probe = path.join(os.tmpdir(), `scdv-pool-probe-${process.pid}.cjs`);
  fs.writeFileSync(probe, "process.on('beforeExit', () => { process.stdout.write(`\\nPOOL=${process.env.UV_THREADPOOL_SIZE} THREADS=${require('fs').readdirSync('/proc/self/task').length}`); });");
  try {
    const run = (/** @type {NodeJS.ProcessEnv} */ env) => {
      const r = spawnSync(process.execPath, ['--require', probe, scdv, '--version'], { env, encoding: 'utf8' });
      const m = /POOL=(\S+) THREADS=(\d+)$/.exec(r.stdout);
      assert.ok(m, `no probe output: ${r.stdout} ${r.stderr}`);
      return { pool: m[1], threads: Number(m[2]) };
    };
    const { UV_THREADPOOL_SIZE: _, ...env } = process.env;
    const want = threadPool.threadPoolSize(os.availableParallelism());
    assert.equal(want, Math.max(4, os.availableParallelism() + threadPool.EXTRA_SEARCH_LANES + threadPool.RESERVED_IO_LANES));
    const sized = run(env);
    const four = run({ ...env, UV_THREADPOOL_SIZE: '4' });
    const seven = run({ ...env, UV_THREADPOOL_SIZE: '7' });
    assert.equal(sized.pool, String(want));
    assert.equal(seven.pool, '7');
    // libuv took the size: the thread counts differ by the pools' difference.
    assert.equal(seven.threads - four.threads, 3);
    assert.equal(sized.threads - four.threads, want - 4);
  } finally {
    fs.rmSync(probe, { force: true });
  }
});
