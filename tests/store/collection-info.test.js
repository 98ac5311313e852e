// store.collectionInfo(name): what callers outside the store may know of a collection without reading its files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../../pipeline/store/index.js';

const NO_BG = { maintenanceMs: 0, autoMerge: false };

test('collectionInfo: null until the first document, then name, width, created_at and count; null again once dropped', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-collection-info-'));
  const store = openStore(dir, NO_BG);
  try {
    assert.equal(store.collectionInfo('news'), null);
    assert.deepEqual(fs.readdirSync(dir), [], 'asking creates nothing');
    const c = store.collection('news', { width: 32 });
    assert.equal(store.collectionInfo('news'), null, 'a writer handle alone does not create it');
    await c.upsert([{ id: 'a', vector: { indices: [1, 5], values: [0.6, 0.8] } }, { id: 'b', vector: { indices: [2], values: [1] } }]);
    const info = store.collectionInfo('news');
    assert.ok(info && typeof info.createdAt === 'string' && !Number.isNaN(Date.parse(info.createdAt)), JSON.stringify(info));
    assert.deepEqual(info, { name: 'news', width: 32, createdAt: c.createdAt, count: 2 });
    // Another process's view (a second store on the folder) sees the same.
    const other = openStore(dir, NO_BG);
    try {
      assert.deepEqual(other.collectionInfo('news'), info);
    } finally {
      await other.close();
    }
    await c.delete(['a']);
    assert.equal(store.collectionInfo('news')?.count, 1);
    await store.dropCollection('news');
    assert.equal(store.collectionInfo('news'), null);
    assert.throws(() => store.collectionInfo('Bad Name'), { code: 'SCDV_STORE_NAME_INVALID' });
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('collectionInfo keeps no collection open that the store did not have open: its files are closed after the answer', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-collection-info-'));
  const writer = openStore(dir, NO_BG);
  const store = openStore(dir); // background work on, as the index stage opens it
  const openFiles = () => fs.readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(path.join(dir, 'news'));
    } catch {
      return false; // the listing's own descriptor, closed meanwhile
    }
  }).length;
  try {
    await writer.collection('news', { width: 8 }).upsert([{ id: 'a', vector: { indices: [1], values: [1] } }]);
    await writer.close();
    assert.equal(openFiles(), 0);
    assert.equal(store.collectionInfo('news')?.count, 1);
    await new Promise((r) => setImmediate(r));
    assert.equal(openFiles(), 0, 'nothing of the collection is left open by asking');
    // A collection the store has open stays open (and is answered from it).
    const c = store.collection('news');
    assert.ok(openFiles() > 0);
    assert.equal(store.collectionInfo('news')?.count, 1);
    assert.ok(openFiles() > 0, 'a handle\'s collection stays open');
    assert.equal(c.count(), 1);
    assert.equal(store.collection('news'), c, 'the same handle as before');
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
