// ids(), exists(), version() and the segment format version check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openStore } from '../../pipeline/store/index.js';
import { tempDir } from './helpers.js';

/**
 * @param {number[]} indices
 * @param {number[]} values
 */
const vec = (indices, values) => ({ indices: Uint32Array.from(indices), values: Float32Array.from(values) });
const NO_BG = { autoFlush: false, autoMerge: false, maintenanceMs: 0 };
/** @param {number} i */
const doc = (i) => ({ id: `d${i}`, vector: vec([i % 50, 50 + (i % 7)], [0.6, 0.8]) });

test('ids() lists every live id once, across segments and the WAL tail, as a snapshot', async () => {
  const dir = tempDir('ids');
  const store = openStore(dir, NO_BG);
  try {
    const c = store.collection('c', { width: 64 });
    assert.deepEqual([...await c.ids()], []);
    // 9,000 documents in two segments (more than one page of ids), then the WAL tail
    await c.upsert(Array.from({ length: 5000 }, (_, i) => doc(i)));
    await c.flush();
    await c.upsert(Array.from({ length: 4000 }, (_, i) => doc(5000 + i)));
    await c.flush();
    await c.upsert([doc(3), doc(9000), doc(9001)]); // a replaced segment document, two new ones
    await c.delete(['d4', 'd5001', 'd9001']); // deleted in a segment's bitmap, in the WAL tail
    const want = new Set(Array.from({ length: 9001 }, (_, i) => `d${i}`));
    for (const id of ['d4', 'd5001']) want.delete(id);
    const snap = await c.ids();
    const got = [...snap];
    assert.equal(got.length, want.size, 'each id once');
    assert.deepEqual(new Set(got), want);
    // later writes, flushes and merges do not change an iterable already returned; it can be iterated again
    await c.upsert([doc(20000)]);
    await c.delete(['d0']);
    await c.flush();
    await c.merge();
    assert.deepEqual(new Set(snap), want);
    const now = new Set(await c.ids());
    assert.equal(now.size, want.size);
    assert.ok(now.has('d20000') && !now.has('d0'));
    assert.equal(now.size, c.count());
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('exists() follows upserts, deletes and flushes', async () => {
  const dir = tempDir('exists');
  const store = openStore(dir, NO_BG);
  try {
    const c = store.collection('c', { width: 64 });
    assert.equal(c.exists('a'), false);
    await c.upsert([{ id: 'a', vector: vec([1], [1]) }, { id: 7, vector: vec([2], [1]) }]);
    assert.equal(c.exists('a'), true);
    assert.equal(c.exists(7), true, 'numeric ids are ids too');
    assert.equal(c.exists('7'), true);
    await c.flush();
    assert.equal(c.exists('a'), true);
    await c.delete(['a']);
    assert.equal(c.exists('a'), false, 'deleted in the WAL tail, live in a segment');
    await c.flush();
    assert.equal(c.exists('a'), false);
    assert.throws(() => c.exists(''), { code: 'SCDV_STORE_DOC_INVALID' });
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('version() changes on every write, by this process or another, and not otherwise', async () => {
  const dir = tempDir('version');
  const store = openStore(dir, { ...NO_BG, refreshMs: 0 });
  const other = openStore(dir, { ...NO_BG, refreshMs: 0 }); // a second engine on the folder, as another process
  try {
    const c = store.collection('c', { width: 64 });
    const o = other.collection('c', { width: 64 }); // nothing on disk yet: it reads as empty until written
    const v0 = c.version();
    assert.equal(c.version(), v0, 'reading does not change it');
    c.search(vec([1], [1]));
    c.get('x');
    assert.equal(c.version(), v0);
    await c.upsert([{ id: 'a', vector: vec([1], [1]) }]);
    const v1 = c.version();
    assert.ok(v1 > v0);
    assert.equal(c.version(), v1);
    await o.upsert([{ id: 'b', vector: vec([1], [1]) }]);
    const v2 = c.version();
    assert.ok(v2 > v1, "the other engine's write is seen");
    await o.delete(['nope']); // a write, even one that changes nothing live, may bump it (never the reverse)
    const v3 = c.version();
    assert.ok(v3 >= v2);
    await o.flush();
    const v4 = c.version();
    assert.ok(v4 > v3, "the other engine's flush is seen");
    assert.equal(c.version(), v4);
    assert.deepEqual(c.search(vec([1], [1])).map((h) => h.id), ['a', 'b']);
  } finally {
    await store.close();
    await other.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

for (const found of [1, 5]) {
  test(`a segment of format version ${found} (${found === 1 ? 'f32 forward index' : 'a future one'}) is reported as SCDV_STORE_FORMAT_UNSUPPORTED, not as damage`, async () => {
    const dir = tempDir('format');
    let store = openStore(dir, NO_BG);
    const c = store.collection('c', { width: 5 });
    await c.upsert([{ id: 'a', vector: vec([1], [1]) }]);
    await c.flush();
    const seg = /** @type {string} */ (fs.readdirSync(path.join(dir, 'c')).find((f) => f.endsWith('.seg')));
    await store.close();
    const file = path.join(dir, 'c', seg);
    const b = fs.readFileSync(file);
    assert.equal(b.toString('latin1', 0, 8), 'SCDVSEG1');
    assert.equal(b.readUInt32LE(8), 4, 'the header says format version 4');
    b.writeUInt32LE(found, 8); // what another format writes (its header checksum and layout differ too)
    fs.writeFileSync(file, b);
    store = openStore(dir, NO_BG);
    try {
      assert.throws(() => store.collection('c'), (/** @type {any} */ err) => {
        assert.equal(err.code, 'SCDV_STORE_FORMAT_UNSUPPORTED');
        assert.match(err.message, new RegExp(`has format ${found}; this version reads format 2 to 4`));
        assert.ok(err.message.includes(seg), err.message);
        return true;
      });
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}
