// searchAsync leaves libuv pool threads to the store's writes (pipeline/store/search-lanes.js): a write made while
// a queue of searches waits is not put behind them. Measured by order (how many of the searches started before
// the write had answered when the write was acknowledged), not by time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
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

test('scdv sizes the libuv pool to a search lane per core plus the reserved ones, unless the environment says', async () => {
  const { spawnSync } = await import('node:child_process');
  const os = await import('node:os');
  const { RESERVED_IO_LANES } = await import('../../pipeline/store/search-lanes.js');
  const cli = new URL('../../pipeline/cli.js', import.meta.url).pathname;
  // A preloaded hook reports the variable as the process ends (after main() has run).
  const probe = `process.on('beforeExit', () => { process.stdout.write('POOL=' + process.env.UV_THREADPOOL_SIZE); });`;
  const run = (/** @type {NodeJS.ProcessEnv} */ env) => spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(probe)}`, cli, '--version'], { env, encoding: 'utf8' });
  const { UV_THREADPOOL_SIZE: _, ...env } = process.env;
  const want = Math.max(4, os.availableParallelism() + RESERVED_IO_LANES);
  assert.match(run(env).stdout, new RegExp(`POOL=${want}$`));
  assert.match(run({ ...env, UV_THREADPOOL_SIZE: '7' }).stdout, /POOL=7$/);
});
