// Collection lifecycle: reads never create a collection, it appears with its first written document, and
// dropCollection() removes it for this process and for others that have it open.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { openStore } from '../../pipeline/store/index.js';
import { tempDir } from './helpers.js';

const NO_BG = { maintenanceMs: 0, autoMerge: false };
const WIDTH = 64;
/**
 * @param {number[]} indices
 * @param {number[]} values
 */
const vec = (indices, values) => ({ indices, values });
const doc = (/** @type {string} */ id) => ({ id, vector: vec([1, 5], [0.6, 0.8]) });
/** @param {string} dir */
const entries = (dir) => fs.readdirSync(dir).sort();

test('opening a collection that does not exist throws SCDV_COLLECTION_NOT_FOUND and creates nothing', () => {
  const dir = tempDir('open-existing');
  const store = openStore(dir, NO_BG);
  try {
    for (let i = 0; i < 20; i++) {
      assert.throws(() => store.collection(`absent-${i % 4}`), (err) => {
        assert.equal(/** @type {any} */ (err).code, 'SCDV_COLLECTION_NOT_FOUND');
        assert.match(/** @type {Error} */ (err).message, new RegExp(`"absent-${i % 4}" not found`));
        return true;
      });
    }
    assert.deepEqual(entries(dir), [], 'no folder, no lock file');
    assert.deepEqual(store.listCollections(), []);
  } finally {
    void store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a collection opened for writing appears on disk with its first written document, not before', async () => {
  const dir = tempDir('lazy-create');
  const store = openStore(dir, NO_BG);
  try {
    let c = store.collection('news', { width: WIDTH });
    // Reads of a collection not written yet answer "empty" and create nothing.
    assert.equal(c.count(), 0);
    assert.equal(c.get('a'), null);
    assert.equal(c.exists('a'), false);
    assert.deepEqual(c.search(vec([1], [1])), []);
    assert.deepEqual(await c.searchAsync(vec([1], [1])), []);
    assert.equal(await c.related('a'), null);
    assert.deepEqual([...await c.ids()], []);
    assert.equal(c.stats().docs, 0);
    assert.equal(c.createdAt, null);
    assert.equal(await c.delete(['a']), 0);
    await c.flush();
    await c.merge();
    // Refused and empty writes create nothing either.
    await c.upsert([]);
    await assert.rejects(c.upsert([{ id: 'bad', vector: vec([WIDTH + 1], [1]) }]), { code: 'SCDV_STORE_DOC_INVALID' });
    await assert.rejects(c.upsert([{ id: 'bad', vector: vec([], []) }]), { code: 'SCDV_STORE_DOC_INVALID' });
    assert.deepEqual(entries(dir), []);
    assert.deepEqual(store.listCollections(), []);
    assert.throws(() => store.collection('news'), { code: 'SCDV_COLLECTION_NOT_FOUND' }, 'still not an existing collection');
    // Never written, so no width is bound yet: another writer may ask for another one.
    assert.equal(store.collection('news', { width: WIDTH + 1 }).width, WIDTH + 1);
    assert.deepEqual(entries(dir), []);
    c = store.collection('news', { width: WIDTH });

    await c.upsert([doc('a')]);
    assert.ok(fs.existsSync(path.join(dir, 'news', 'collection.json')));
    assert.equal(typeof c.createdAt, 'string');
    assert.equal(c.count(), 1);
    assert.deepEqual(store.listCollections(), [{ name: 'news', width: WIDTH, count: 1 }]);
    assert.equal(store.collection('news'), c, 'the same object, now as an existing collection');
    assert.throws(() => store.collection('news', { width: WIDTH + 1 }), { code: 'SCDV_STORE_WIDTH_MISMATCH' });

    // Another handle (as another process) finds it once written.
    const other = openStore(dir, NO_BG);
    try {
      assert.equal(other.collection('news').get('a')?.id, 'a');
    } finally {
      await other.close();
    }
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('dropCollection removes the collection; other handles see it gone; the name can be created again', async () => {
  const dir = tempDir('drop');
  const store = openStore(dir, { ...NO_BG, refreshMs: 0 });
  const other = openStore(dir, { ...NO_BG, refreshMs: 0 }); // a second engine on the folder, as another process
  try {
    await assert.rejects(store.dropCollection('absent'), { code: 'SCDV_COLLECTION_NOT_FOUND' });
    await assert.rejects(store.dropCollection('Bad Name'), { code: 'SCDV_STORE_NAME_INVALID' });
    let c = store.collection('news', { width: WIDTH });
    await c.upsert([doc('a'), doc('b')]);
    await c.flush();
    await c.upsert([doc('c')]); // in the WAL
    await store.collection('keep', { width: WIDTH }).upsert([doc('k')]);
    const o = other.collection('news');
    assert.equal(o.count(), 3);

    await store.dropCollection('news');
    assert.deepEqual(entries(dir), ['keep'], 'the folder is gone, no tombstone is left');
    assert.deepEqual(store.listCollections().map((x) => x.name), ['keep']);
    assert.deepEqual(other.listCollections().map((x) => x.name), ['keep']);
    assert.throws(() => store.collection('news'), { code: 'SCDV_COLLECTION_NOT_FOUND' });
    assert.throws(() => c.count(), { code: 'SCDV_COLLECTION_NOT_FOUND' }, "this process's old handle");
    assert.throws(() => o.get('a'), { code: 'SCDV_COLLECTION_NOT_FOUND' }, "the other engine's handle");
    await assert.rejects(o.upsert([doc('z')]), { code: 'SCDV_COLLECTION_NOT_FOUND' }, 'a write through it is refused');
    assert.ok(!fs.existsSync(path.join(dir, 'news')), 'and recreates nothing');
    await assert.rejects(store.dropCollection('news'), { code: 'SCDV_COLLECTION_NOT_FOUND' });

    // Created again (through the other store): a new, empty collection.
    const again = other.collection('news', { width: WIDTH });
    assert.notEqual(again, o);
    await again.upsert([doc('n')]);
    assert.deepEqual([...await store.collection('news').ids()], ['n']);
    assert.equal(store.collection('keep').count(), 1, 'other collections are untouched');
  } finally {
    await store.close();
    await other.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a drop while another process writes to the collection: its writes are refused, nothing is recreated', async () => {
  const dir = tempDir('drop-proc');
  const store = openStore(dir, NO_BG);
  await store.collection('live', { width: WIDTH }).upsert([doc('seed')]);
  const storeUrl = new URL('../../pipeline/store/index.js', import.meta.url).href;
  // The child opens the existing collection and writes to it in a loop until a write fails.
  const child = spawn(process.execPath, ['--input-type=module', '-e', `
    import { openStore } from ${JSON.stringify(storeUrl)};
    const c = openStore(${JSON.stringify(dir)}, { refreshMs: 0 }).collection('live');
    console.log('ready');
    for (let i = 0; ; i++) {
      try {
        await c.upsert([{ id: 'w' + i, vector: { indices: [1], values: [1] } }]);
        if (i === 20) console.log('writing');
      } catch (err) {
        console.log('refused ' + err.code);
        break;
      }
    }
  `], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: /** @type {import('node:stream').Readable} */ (child.stdout) })[Symbol.asyncIterator]();
  try {
    assert.equal((await lines.next()).value, 'ready');
    assert.equal((await lines.next()).value, 'writing');
    await store.dropCollection('live');
    assert.equal((await lines.next()).value, 'refused SCDV_COLLECTION_NOT_FOUND');
    await new Promise((res) => child.once('exit', res));
    assert.deepEqual(entries(dir), [], 'the writer did not recreate the folder');
  } finally {
    child.kill();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a tombstone left by a drop that did not finish is removed when the store is next opened', async () => {
  const dir = tempDir('tombstone');
  fs.mkdirSync(path.join(dir, '.dropped-x-1-abcd', 'sub'), { recursive: true });
  fs.writeFileSync(path.join(dir, '.dropped-x-1-abcd', 'sub', 'seg'), 'x');
  const store = openStore(dir, NO_BG);
  try {
    assert.deepEqual(entries(dir), []);
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
