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
