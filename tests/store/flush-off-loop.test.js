// A flush and a merge sync the disk and remove the files they replaced on the libuv thread pool, never on the event
// loop: a serving process keeps answering while a flush's fsyncs (deletion bitmaps, the new WAL, the manifest,
// CURRENT, the folder) wait on the disk and while a merge's inputs are unlinked. And what they published is all
// there after reopening, and nothing else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { openStore } from '../../pipeline/store/index.js';
import { loadAddon } from '../../pipeline/store/native.js';
import { tempDir } from './helpers.js';

const WIDTH = 64;
const doc = (/** @type {number} */ i, /** @type {number} */ v) => ({ id: `d${i}`, vector: { indices: [i % WIDTH, (i + 7) % WIDTH], values: [0.6, v] } });

/**
 * Runs fn while counting the synchronous fsync and fdatasync calls, and the synchronous file removals, of this process.
 * @param {() => Promise<void>} fn
 */
async function countSyncCalls(fn) {
  const { fsyncSync, fdatasyncSync, rmSync, unlinkSync } = fs;
  const calls = { syncs: 0, removals: 0 };
  fs.fsyncSync = (fd) => { calls.syncs++; fsyncSync(fd); };
  fs.fdatasyncSync = (fd) => { calls.syncs++; fdatasyncSync(fd); };
  fs.rmSync = (p, o) => { calls.removals++; rmSync(p, o); };
  fs.unlinkSync = (p) => { calls.removals++; unlinkSync(p); };
  try {
    await fn();
  } finally {
    Object.assign(fs, { fsyncSync, fdatasyncSync, rmSync, unlinkSync });
  }
  return calls;
}

test('flush and merge make no synchronous fsync or file removal, and what they published survives reopening', async () => {
  const dir = tempDir('flush-off-loop');
  try {
    const store = openStore(dir, { maintenanceMs: 0, autoFlush: false, autoMerge: false });
    const c = store.collection('c', { width: WIDTH });
    await c.upsert(Array.from({ length: 40 }, (_, i) => doc(i, 0.8)));
    await c.flush(); // the first segment (creating the collection fsyncs synchronously, once: not measured)
    // Rewrite half of them: the second flush marks their old copies deleted in the first segment's bitmap.
    await c.upsert(Array.from({ length: 20 }, (_, i) => doc(i, -0.8)));
    const before = fs.readdirSync(`${dir}/c`);
    const flushCalls = await countSyncCalls(() => c.flush());
    assert.equal(c.stats().segments, 2);
    assert.ok(fs.readdirSync(`${dir}/c`).some((f) => /\.del-\d+$/.test(f)), 'a deletion bitmap was written');
    assert.deepEqual(flushCalls, { syncs: 0, removals: 0 }, 'synchronous fsyncs and removals during a flush');
    const replaced = before.filter((f) => /^(wal-|MANIFEST-)/.test(f));
    assert.equal(replaced.length, 2, 'the first flush left one WAL and one manifest');
    for (const f of replaced) assert.ok(!fs.existsSync(`${dir}/c/${f}`), `the flush removed ${f}, which it replaced`);
    const segsBefore = fs.readdirSync(`${dir}/c`).filter((f) => /^seg-/.test(f));
    const mergeCalls = await countSyncCalls(() => c.merge());
    assert.deepEqual(mergeCalls, { syncs: 0, removals: 0 }, 'synchronous fsyncs and removals during a merge');
    assert.equal(c.stats().segments, 1);
    const left = fs.readdirSync(`${dir}/c`);
    for (const f of segsBefore) assert.ok(!left.includes(f), `the merge removed its input ${f}`);
    assert.equal(left.filter((f) => /^seg-/.test(f)).length, 1, `one segment file is left: ${left.join(', ')}`);
    await store.close();

    const again = openStore(dir, { maintenanceMs: 0, autoFlush: false, autoMerge: false }).collection('c');
    assert.equal(again.count(), 40);
    for (const i of [0, 19, 20, 39]) {
      const got = again.get(`d${i}`);
      assert.ok(got, `d${i} is there`);
      assert.deepEqual([...got.vector.values].map((v) => Math.round(v * 10) / 10), [0.6, i < 20 ? -0.8 : 0.8]);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a flush builds its segment beside its other files, not after them, and publishes them all', async () => {
  const dir = tempDir('flush-overlap');
  const addon = loadAddon();
  const { buildSegmentAsync } = addon;
  /** @type {string[][]} the flush's other new files already in place when each build started */
  const inPlace = [];
  try {
    const store = openStore(dir, { maintenanceMs: 0, autoFlush: false, autoMerge: false });
    const c = store.collection('c', { width: WIDTH });
    await c.upsert(Array.from({ length: 40 }, (_, i) => doc(i, 0.8)));
    await c.flush();
    await c.upsert(Array.from({ length: 20 }, (_, i) => doc(i, -0.8)));
    const before = new Set(fs.readdirSync(`${dir}/c`));
    addon.buildSegmentAsync = (...args) => {
      inPlace.push(fs.readdirSync(`${dir}/c`).filter((f) => !before.has(f) && /\.del-\d+$|^wal-\d+\.log$/.test(f)));
      return buildSegmentAsync(...args);
    };
    await c.flush();
    addon.buildSegmentAsync = buildSegmentAsync;
    // Before, the build waited for the deletion bitmap and the new WAL: one more round trip of the thread pool
    // per flush, during which this process's writes wait.
    assert.deepEqual(inPlace, [[]]);
    const added = fs.readdirSync(`${dir}/c`).filter((f) => !before.has(f));
    assert.ok(added.some((f) => /\.del-\d+$/.test(f)) && added.some((f) => /^wal-\d+\.log$/.test(f)) && added.some((f) => /\.seg$/.test(f)), added.join(' '));
    assert.equal(c.stats().segments, 2);
    await store.close();
    const again = openStore(dir, { maintenanceMs: 0, autoFlush: false, autoMerge: false }).collection('c');
    assert.equal(again.count(), 40);
    assert.deepEqual([...(again.get('d3')?.vector.values ?? [])].map((v) => Math.round(v * 10) / 10), [0.6, -0.8]);
  } finally {
    addon.buildSegmentAsync = buildSegmentAsync;
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
