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
