// Writes made while this process flushes are appended beside the flush and acknowledged without waiting for it
// (engine-writes.js appendBesideFlush); the flush carries them into its new WAL before publishing. Held flushes
// (their segment build waits on a gate) make the order deterministic: no timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { openStore } from '../../pipeline/store/index.js';
import { loadAddon } from '../../pipeline/store/native.js';
import { tempDir } from './helpers.js';

const WIDTH = 64;
const OPTS = { maintenanceMs: 0, autoFlush: false, autoMerge: false };
const doc = (/** @type {number} */ i, /** @type {number} */ v) => ({ id: `d${i}`, vector: { indices: [i % WIDTH, (i + 7) % WIDTH], values: [0.6, v] } });
const second = (/** @type {any} */ c, /** @type {string} */ id) => {
  const got = c.get(id);
  return got ? Math.round(got.vector.values[1] * 10) / 10 : null;
};

/**
 * 'acknowledged' once `write` resolves, or 'still waiting' after 10 s (a write held behind the flush: without this
 * the test would wait for ever, the flush being held until the write answers).
 * @param {Promise<unknown>} write
 */
async function acknowledged(write) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  try {
    return await Promise.race([
      write.then(() => 'acknowledged'),
      new Promise((r) => { timer = setTimeout(() => r('still waiting'), 10_000); }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Holds every segment build until `release` (or fails it with `fail`); `started` resolves when one is waiting.
 */
function holdBuilds() {
  const addon = loadAddon();
  const original = addon.buildSegmentAsync;
  /** @type {() => void} */ let onStarted = () => {};
  const started = new Promise((/** @type {(v?: unknown) => void} */ r) => { onStarted = r; });
  /** @type {(err?: Error) => void} */ let open = () => {};
  const gate = new Promise((/** @type {(v?: unknown) => void} */ r) => { open = (err) => r(err); });
  addon.buildSegmentAsync = async (...args) => {
    onStarted();
    const err = await gate;
    if (err) throw err;
    return original(...args);
  };
  return {
    started,
    release: () => open(),
    fail: (/** @type {Error} */ err) => open(err),
    restore: () => { addon.buildSegmentAsync = original; },
  };
}

test('writes during a flush are acknowledged before it ends, searchable at once, and carried into the new WAL', async () => {
  const dir = tempDir('flush-beside');
  const hold = holdBuilds();
  try {
    const store = openStore(dir, OPTS);
    const c = store.collection('c', { width: WIDTH });
    await c.upsert(Array.from({ length: 20 }, (_, i) => doc(i, 0.8)));
    let flushed = false;
    const flushing = c.flush().then(() => { flushed = true; });
    await hold.started;
    // The flush is held in its segment build: these writes are acknowledged (durable) meanwhile.
    const written = c.upsert([doc(30, 0.5), doc(3, -0.5)]);
    const state = await acknowledged(written);
    if (state !== 'acknowledged') hold.release();
    assert.equal(state, 'acknowledged', 'a write during the flush');
    const deleted = await c.delete(['d4', 'd30']);
    assert.equal(flushed, false, 'the writes did not wait for the flush');
    assert.equal(deleted, 2);
    assert.equal(second(c, 'd3'), -0.5);
    assert.equal(c.get('d4'), null);
    assert.equal(c.get('d30'), null);
    assert.equal(c.search({ indices: [3, 10], values: [0.6, -0.5] }, { k: 1, mode: 'exact' })[0].id, 'd3');
    hold.release();
    await flushing;
    // The segment holds what was written before the flush; the writes made during it are in the new WAL.
    assert.equal(c.stats().segments, 1);
    assert.equal(c.count(), 19);
    assert.equal(second(c, 'd3'), -0.5);
    assert.equal(c.get('d4'), null);
    assert.equal(second(c, 'd5'), 0.8);
    await c.upsert([doc(31, 0.7)]);
    await store.close();

    const again = openStore(dir, OPTS).collection('c');
    assert.equal(again.count(), 20);
    assert.equal(second(again, 'd3'), -0.5);
    assert.equal(again.get('d4'), null);
    assert.equal(again.get('d30'), null);
    assert.equal(second(again, 'd31'), 0.7);
    await again.flush();
    assert.equal(again.count(), 20);
    assert.equal(second(again, 'd3'), -0.5);
  } finally {
    hold.restore();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a flush that fails keeps the writes acknowledged during it (they stay in the WAL the manifest names)', async () => {
  const dir = tempDir('flush-beside-fail');
  const hold = holdBuilds();
  try {
    const store = openStore(dir, OPTS);
    const c = store.collection('c', { width: WIDTH });
    await c.upsert(Array.from({ length: 10 }, (_, i) => doc(i, 0.8)));
    const flushing = c.flush();
    flushing.catch(() => {});
    await hold.started;
    const written = c.upsert([doc(2, -0.5), doc(11, 0.3)]);
    const state = await acknowledged(written);
    hold.fail(new Error('disk gone'));
    await written;
    assert.equal(state, 'acknowledged', 'a write during the flush');
    await assert.rejects(flushing, /disk gone/);
    hold.restore();
    assert.equal(c.count(), 11);
    await c.upsert([doc(12, 0.4)]);
    await store.close();

    const again = openStore(dir, OPTS).collection('c');
    assert.equal(again.count(), 12);
    assert.equal(second(again, 'd2'), -0.5);
    assert.equal(second(again, 'd11'), 0.3);
    await again.flush();
    assert.equal(again.stats().segments, 1);
    assert.equal(again.count(), 12);
    assert.equal(second(again, 'd12'), 0.4);
  } finally {
    hold.restore();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
