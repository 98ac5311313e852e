// Several processes on one store: visibility across processes, readers during writes, flushes and merges,
// and a writer killed with SIGKILL in the middle of a stream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../pipeline/store/index.js';
import { STREAM_OPTIONS, WIDTH, vectorFor } from './child.js';
import { tempDir } from './helpers.js';

const CHILD = fileURLToPath(new URL('./child.js', import.meta.url));

/**
 * @param {string[]} args
 * @param {(line: string) => void} [onLine]
 */
function run(args, onLine) {
  const p = spawn(process.execPath, [CHILD, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '', err = '', buf = '';
  p.stdout.setEncoding('utf8');
  p.stdout.on('data', (d) => {
    out += d;
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      onLine?.(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
  p.stderr.on('data', (d) => { err += d; });
  /** @type {Promise<{code: number | null, signal: NodeJS.Signals | null, out: string, err: string}>} */
  const done = new Promise((resolve) => p.on('close', (code, signal) => resolve({ code, signal, out, err })));
  return { proc: p, done };
}

test('a write is visible in another process within a second', async () => {
  const dir = tempDir('visible');
  const store = openStore(dir, STREAM_OPTIONS);
  try {
    const c = store.collection('stream', { width: WIDTH });
    await c.upsert([{ id: 'filler', vector: vectorFor('filler') }]);
    /** @type {(v?: unknown) => void} */
    let ready = () => {};
    const readyP = new Promise((r) => { ready = r; });
    /** @type {number[]} */
    const times = [];
    const w = run(['watch', dir, 'needle'], (line) => {
      if (line === 'ready') ready();
      else times.push(Number(line.split(' ')[1]));
    });
    await readyP;
    const t0 = Date.now();
    await c.upsert([{ id: 'needle', vector: vectorFor('needle') }]);
    const t1 = Date.now();
    while (times.length < 1 && Date.now() - t1 < 3000) await new Promise((r) => setTimeout(r, 10));
    assert.equal(times.length, 1, 'the other process never saw the write');
    assert.ok(times[0] - t1 < 1000, `seen after ${times[0] - t1} ms`);
    await c.delete(['needle']);
    const t2 = Date.now();
    const res = await w.done;
    assert.equal(res.code, 0, res.err);
    assert.ok(times[1] - t2 < 1000, `delete seen after ${times[1] - t2} ms`);
    process.stderr.write(`# visibility: upsert ${times[0] - t1} ms, delete ${times[1] - t2} ms (write took ${t1 - t0} ms)\n`);
  } finally {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('two reader processes stay correct while a third writes, flushes and merges', async () => {
  const dir = tempDir('readers');
  const store = openStore(dir, STREAM_OPTIONS);
  store.collection('stream', { width: WIDTH }); // create it before the children race to
  await store.close();
  try {
    const writer = run(['writer', dir, '4000', '40', 'w']);
    const readers = [run(['reader', dir, '2500']), run(['reader', dir, '2500'])];
    const wres = await writer.done;
    assert.equal(wres.code, 0, wres.err);
    const acked = wres.out.split('\n').filter((l) => l.startsWith('ack ')).length;
    assert.equal(acked, 4000);
    for (const r of readers) {
      const res = await r.done;
      assert.equal(res.code, 0, res.err);
      const s = JSON.parse(res.out.trim().split('\n').pop() ?? '{}');
      assert.equal(s.errors, 0, JSON.stringify(s.problems));
      assert.deepEqual(s.problems, []);
      assert.ok(s.searches > 50, `only ${s.searches} searches`);
      process.stderr.write(`# reader: ${s.searches} searches (${s.asyncSearches} async), saw up to ${s.maxCount} docs\n`);
    }
    const st = openStore(dir, { ...STREAM_OPTIONS, autoMerge: false });
    try {
      const c = st.collection('stream');
      assert.equal(c.count(), 4000);
      const stats = c.stats();
      process.stderr.write(`# after the stream: ${stats.segments} segments, WAL ${stats.wal.docs} docs\n`);
      assert.ok(stats.segments <= STREAM_OPTIONS.maxSegments + STREAM_OPTIONS.mergeFactor, `merging kept up: ${stats.segments} segments`);
    } finally {
      st.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('every acknowledged write survives kill -9 of the writer', async () => {
  const dir = tempDir('kill');
  const store0 = openStore(dir, STREAM_OPTIONS);
  store0.collection('stream', { width: WIDTH });
  store0.close();
  /** @type {Set<string>} */
  const acked = new Set();
  try {
    // Kill at different moments of the stream (writes, flushes and merges happen throughout): after a number of
    // acknowledged writes, plus a few milliseconds, so that the kill lands anywhere in the write path.
    for (const [round, killAt, extraMs] of [[0, 1, 0], [1, 400, 3], [2, 2500, 7], [3, 6000, 1]]) {
      let n = 0;
      /** @type {() => void} */
      let reached = () => {};
      const reachedP = new Promise((res) => { reached = () => res(undefined); });
      const child = run(['writer', dir, '1000000', '30', `r${round}-`], (line) => {
        if (line.startsWith('ack ')) {
          acked.add(line.slice(4));
          if (++n >= killAt) reached();
        }
      });
      const timeout = setTimeout(reached, 20000);
      await reachedP;
      clearTimeout(timeout);
      if (extraMs) await new Promise((r) => setTimeout(r, extraMs));
      child.proc.kill('SIGKILL');
      const res = await child.done;
      assert.equal(res.signal, 'SIGKILL', res.err);
      assert.ok(n >= killAt, `round ${round}: only ${n} writes acknowledged in 20 s`);
      const store = openStore(dir, { ...STREAM_OPTIONS, autoMerge: false, maintenanceMs: 0 });
      try {
        const c = store.collection('stream');
        for (const id of acked) {
          const d = c.get(id);
          assert.ok(d, `acknowledged ${id} is missing after kill -9 (round ${round})`);
          assert.deepEqual([...d.vector.indices], [...vectorFor(id).indices]);
        }
        assert.ok(c.count() >= acked.size);
        // And the store keeps working: search finds a document by its own vector.
        const some = [...acked].pop();
        if (some) assert.equal(c.search(vectorFor(some), { k: 1, mode: 'exact' })[0].id, some);
      } finally {
        store.close();
      }
    }
    process.stderr.write(`# kill -9: ${acked.size} acknowledged writes checked\n`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
