// A drop racing writes in the same process: the event loop never waits for a LOCK this process holds (a
// synchronous flock while a write group or the drop held it used to stop the process for good), writes sent
// during the drop wait for it and create the collection anew, and two stores of one process on one folder do not
// wait on each other synchronously (a read of one is answered while the other holds LOCK). Each scenario runs in a child process with a time limit: a hang fails the test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { execFile } from 'node:child_process';
import { tempDir } from './helpers.js';

const STORE_URL = new URL('../../pipeline/store/index.js', import.meta.url).href;
const LOCKS_URL = new URL('../../pipeline/store/process-locks.js', import.meta.url).href;
const NATIVE_URL = new URL('../../pipeline/store/native.js', import.meta.url).href;
const LIMIT_MS = 20_000;

/**
 * Runs `body` (an async module script with `openStore`, `dir`, `doc` and `out` in scope) in a child process;
 * resolves with `out` as the child printed it, or fails when the child does not finish within LIMIT_MS.
 * @param {string} dir
 * @param {string} body
 * @returns {Promise<any>}
 */
function runChild(dir, body) {
  const script = `
    import { openStore } from ${JSON.stringify(STORE_URL)};
    const dir = ${JSON.stringify(dir)};
    const doc = (id) => ({ id, vector: { indices: [1, 5], values: [0.6, 0.8] } });
    const out = {};
    ${body}
    console.log(JSON.stringify(out));
    process.exit(0);
  `;
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    execFile(process.execPath, ['--input-type=module', '-e', script], { timeout: LIMIT_MS, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(`the child ${err.killed ? `did not finish within ${LIMIT_MS} ms (hung)` : `failed: ${err.message}`} after ${Date.now() - t0} ms\n${stderr}`));
        return;
      }
      resolve(JSON.parse(stdout.trim().split('\n').pop() ?? 'null'));
    });
  });
}

test('a drop among 30 writes to the collection, 20 times: nothing hangs, writes sent after it recreate the collection', async (t) => {
  const dir = tempDir('drop-race');
  try {
    const t0 = Date.now();
    const out = await runChild(dir, `
      const store = openStore(dir, { maintenanceMs: 0, autoMerge: false });
      out.rounds = [];
      for (let round = 0; round < 20; round++) {
        await store.collection('race-x', { width: 64 }).upsert([doc('seed')]);
        const writes = [];
        let drop;
        for (let i = 0; i < 30; i++) {
          if (i === 10) drop = store.dropCollection('race-x');
          // Like the server's PUT: a handle per request, then the write. Spread over event-loop turns.
          writes.push(store.collection('race-x', { width: 64 }).upsert([doc('d' + i)]).then(() => 'ok', (e) => e.code));
          await new Promise((r) => setImmediate(r));
        }
        const results = await Promise.all(writes);
        await drop;
        out.rounds.push({ results, ids: [...await store.collection('race-x').ids()].sort() });
        await store.dropCollection('race-x');
      }
      await store.close();
    `);
    for (const [r, { results, ids }] of out.rounds.entries()) {
      assert.deepEqual(results.filter((/** @type {string} */ x) => x !== 'ok'), [], `round ${r}: every write is acknowledged`);
      assert.ok(!ids.includes('seed'), `round ${r}: the dropped collection's document is gone`);
      for (let i = 10; i < 30; i++) assert.ok(ids.includes(`d${i}`), `round ${r}: d${i}, sent after the drop began, is in the collection made anew`);
    }
    t.diagnostic(`20 rounds of 30 writes racing a drop: ${Date.now() - t0} ms`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a handle opened for writing before a drop writes to the collection made anew', async () => {
  const dir = tempDir('drop-old-handle');
  try {
    const out = await runChild(dir, `
      const store = openStore(dir, { maintenanceMs: 0, autoMerge: false });
      const writable = store.collection('x', { width: 64 });
      await writable.upsert([doc('a')]);
      await store.dropCollection('x');
      out.write = await writable.upsert([doc('b')]).then(() => 'ok', (e) => e.code);
      out.ids = [...await store.collection('x').ids()];
      await store.close();
    `);
    assert.equal(out.write, 'ok');
    assert.deepEqual(out.ids, ['b'], 'the collection made anew holds only the write after the drop');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('two stores of one process on one folder: opening one while the other writes never waits on the event loop', async () => {
  const dir = tempDir('two-stores');
  try {
    const out = await runChild(dir, `
      const a = openStore(dir, { maintenanceMs: 0, autoMerge: false });
      const b = openStore(dir, { maintenanceMs: 0, autoMerge: false });
      await a.collection('x', { width: 64 }).upsert([doc('seed')]);
      const writes = [];
      out.busyReads = 0;
      for (let i = 0; i < 200; i++) {
        writes.push(a.collection('x', { width: 64 }).upsert([doc('a' + i)]));
        // A fresh store each time: its first open of x meets a's write group holding LOCK.
        const s = i % 2 ? b : openStore(dir, { maintenanceMs: 0, autoMerge: false });
        writes.push(s.collection('x', { width: 64 }).upsert([doc('b' + i)]).finally(() => { if (s !== b) return s.close(); }));
        try {
          s === b || s.collection('x').count();
        } catch (e) {
          if (e.code !== 'SCDV_STORE_BUSY') throw e;
          out.busyReads++;
        }
        await new Promise((r) => setImmediate(r));
      }
      await Promise.all(writes);
      // Counted by a store opened now: a's own view takes in the other stores' writes within refreshMs, as another
      // process's would.
      const check = openStore(dir);
      out.count = check.collection('x').count();
      await Promise.all([a.close(), b.close(), check.close()]);
    `);
    assert.equal(out.count, 401, 'every write of both stores is there');
    assert.equal(out.busyReads, 0, 'a read opening the collection while the other store writes is answered, not SCDV_STORE_BUSY');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a second store of the process opens a collection to read while the first holds its LOCK (a flush under way)', async () => {
  const dir = tempDir('read-under-lock');
  try {
    const out = await runChild(dir, `
      const fs = await import('node:fs');
      const path = await import('node:path');
      const { lockAsync } = await import(${JSON.stringify(LOCKS_URL)});
      const { loadAddon } = await import(${JSON.stringify(NATIVE_URL)});
      const a = openStore(dir, { maintenanceMs: 0, autoMerge: false });
      const x = a.collection('x', { width: 64 });
      await x.upsert([doc('seed')]);
      await x.flush();
      await x.upsert([doc('in-wal')]); // one document in a segment, one only in the WAL
      // This process holds x's LOCK, as a's write group or background flush does between its awaits: held here
      // through process-locks.js directly, so that the hold lasts exactly as long as the test needs.
      const fd = fs.openSync(path.join(dir, 'x', 'LOCK'), 'r+');
      const release = await lockAsync(loadAddon(), fd);
      const b = openStore(dir, { maintenanceMs: 0, autoMerge: false });
      try {
        const bx = b.collection('x');
        out.count = bx.count();
        out.ids = ['seed', 'in-wal'].filter((id) => bx.get(id) !== null);
      } catch (e) {
        out.readError = e.code ?? String(e);
      }
      // A write of b waits for the hold (asynchronously), then goes through.
      let written = false;
      const w = b.collection('x', { width: 64 }).upsert([doc('late')]).then(() => { written = true; });
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
      out.writtenWhileHeld = written;
      release();
      fs.closeSync(fd);
      await w;
      out.countAfter = b.collection('x').count();
      // And with a real flush of a in flight.
      await x.upsert([doc('more')]);
      const f = x.flush();
      const c = openStore(dir, { maintenanceMs: 0, autoMerge: false });
      out.countDuringFlush = c.collection('x').count();
      await f;
      await Promise.all([a.close(), b.close(), c.close()]);
    `);
    assert.equal(out.readError, undefined, 'opening to read while this process holds LOCK is not refused');
    assert.equal(out.count, 2);
    assert.deepEqual(out.ids, ['seed', 'in-wal'], 'the segment and the WAL are both read without the lock');
    assert.equal(out.writtenWhileHeld, false, 'a write waits for the hold');
    assert.equal(out.countAfter, 3);
    assert.equal(out.countDuringFlush, 4);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
