// Upsert / delete / get / count semantics in one process, validation errors, reopening.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openStore, validateCollectionName } from '../../pipeline/store/index.js';
import { tempDir } from './helpers.js';

/**
 * @param {number[]} indices
 * @param {number[]} values
 */
const vec = (indices, values) => ({ indices: Uint32Array.from(indices), values: Float32Array.from(values) });
const NO_BG = { autoFlush: false, autoMerge: false, maintenanceMs: 0 };

test('upsert is visible at once, replaces, delete hides, count follows', async () => {
  const dir = tempDir('crud');
  const store = openStore(dir, NO_BG);
  try {
    const c = store.collection('articles', { width: 10 });
    assert.equal(c.count(), 0);
    assert.deepEqual(c.search(vec([1], [1])), []);
    await c.upsert([
      { id: 'a', vector: vec([1, 2], [0.6, 0.8]), meta: { title: 'A', site: 'x' } },
      { id: 'b', vector: vec([1, 3], [0.8, -0.6]), meta: { title: 'B' } },
    ]);
    assert.equal(c.count(), 2);
    assert.deepEqual(c.search(vec([1], [1])).map((h) => h.id), ['b', 'a']);
    const got = /** @type {import('../../pipeline/store/index.js').StoredDoc} */ (c.get('a'));
    assert.deepEqual(got.meta, { title: 'A', site: 'x' });
    assert.deepEqual([...got.vector.indices], [1, 2]);
    assert.equal(c.get('nope'), null);
    // replace: new vector and meta, still one document
    await c.upsert([{ id: 'a', vector: vec([1], [1]), meta: { title: 'A2' } }]);
    assert.equal(c.count(), 2);
    assert.deepEqual(c.search(vec([1], [1]), { k: 5 }).map((h) => [h.id, h.meta.title]), [['a', 'A2'], ['b', 'B']]);
    await c.flush();
    // replace a flushed document: the segment copy must disappear at once
    await c.upsert([{ id: 'b', vector: vec([4], [1]), meta: { title: 'B2' } }]);
    assert.deepEqual(c.search(vec([1], [1]), { k: 5, mode: 'exact' }).map((h) => h.id), ['a', 'b']);
    assert.equal(c.search(vec([1], [1]), { k: 5, mode: 'exact' })[1].score, 0, 'b no longer has dim 1');
    assert.equal(c.count(), 2);
    assert.equal(await c.delete(['a', 'a', 'zzz']), 1);
    assert.equal(c.count(), 1);
    assert.equal(c.get('a'), null);
    assert.deepEqual(c.search(vec([1, 4], [1, 1]), { k: 5 }).map((h) => h.id), ['b']);
    assert.equal(await c.delete(['a']), 0, 'deleting twice counts nothing');
    await c.flush();
    assert.equal(c.count(), 1);
    assert.equal(c.get('a'), null);
    // delete then re-insert
    await c.upsert([{ id: 'a', vector: vec([2], [1]) }]);
    assert.equal(c.count(), 2);
    assert.deepEqual(/** @type {any} */ (c.get('a')).meta, {});
    // numeric ids become strings
    await c.upsert([{ id: 7, vector: vec([5], [1]) }]);
    assert.ok(c.get('7'));
    assert.equal(c.count(), 3);
    const st = c.stats();
    assert.equal(st.docs, 3);
    assert.ok(st.segments >= 1);
    assert.deepEqual(store.listCollections(), [{ name: 'articles', width: 10, count: 3 }]);
  } finally {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('data survives reopening; width is fixed at creation', async () => {
  const dir = tempDir('reopen');
  let store = openStore(dir, NO_BG);
  let c = store.collection('news', { width: 100 });
  await c.upsert([{ id: 'x', vector: vec([10], [1]), meta: { published_at: '2024-05-01T00:00:00Z' } }]);
  await c.flush();
  await c.upsert([{ id: 'y', vector: vec([10, 20], [0.6, 0.8]) }]); // stays in the WAL
  store.close();
  assert.throws(() => c.count(), { code: 'SCDV_STORE_CLOSED' });
  store = openStore(dir, NO_BG);
  try {
    assert.throws(() => store.collection('news', { width: 99 }), { code: 'SCDV_STORE_WIDTH_MISMATCH' });
    c = store.collection('news');
    assert.equal(c.width, 100);
    assert.equal(c.count(), 2);
    assert.deepEqual(c.search(vec([10], [1])).map((h) => h.id), ['x', 'y']);
    assert.throws(() => store.collection('news', { width: 50 }), { code: 'SCDV_STORE_WIDTH_MISMATCH' });
    assert.throws(() => store.collection('other'), { code: 'SCDV_COLLECTION_NOT_FOUND' });
    assert.ok(!fs.existsSync(path.join(dir, 'other')), 'opening a missing collection creates nothing');
  } finally {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('validation errors name the problem and write nothing', async () => {
  const dir = tempDir('valid');
  const store = openStore(dir, NO_BG);
  try {
    for (const bad of ['../x', 'A', '', '-x', 'a/b', 'a'.repeat(65), '..', 'x y', 'x.y']) {
      assert.throws(() => store.collection(bad, { width: 5 }), { code: 'SCDV_STORE_NAME_INVALID' }, bad);
      assert.throws(() => validateCollectionName(bad), { code: 'SCDV_STORE_NAME_INVALID' });
    }
    assert.equal(fs.readdirSync(dir).length, 0, 'no folder was created for a bad name');
    assert.throws(() => store.collection('c', { width: 0 }), { code: 'SCDV_STORE_OPTION_INVALID' });
    assert.throws(() => store.collection('c', /** @type {any} */ ({ width: 5, bogus: 1 })), { code: 'SCDV_STORE_OPTION_INVALID' });
    const c = store.collection('c', { width: 5 });
    /** @type {[unknown, RegExp][]} */
    const cases = [
      [{ id: 'u', vector: vec([2, 1], [1, 1]) }, /"u".*strictly increasing/],
      [{ id: 'd', vector: vec([1, 1], [1, 1]) }, /"d".*strictly increasing/],
      [{ id: 'e', vector: vec([], []) }, /"e".*empty/],
      [{ id: 'w', vector: vec([5], [1]) }, /"w".*width 5/],
      [{ id: 'n', vector: vec([1], [NaN]) }, /"n".*finite/],
      [{ id: 'l', vector: { indices: [1, 2], values: [1] } }, /"l".*2 entries/],
      [{ id: 'f', vector: { indices: [1.5], values: [1] } }, /"f".*integer/],
      [{ id: '', vector: vec([1], [1]) }, /id must be/],
      [{ id: 't\ud800', vector: vec([1], [1]) }, /lone surrogate/],
      [{ id: 'm', vector: vec([1], [1]), meta: { site: 3 } }, /"m".*meta.site/],
      [{ id: 't', vector: vec([1], [1]), meta: { published_at: 'yesterday' } }, /"t".*published_at/],
      [{ id: 'v' }, /"v".*vector/],
    ];
    for (const [doc, re] of cases) {
      await assert.rejects(c.upsert([{ id: 'ok', vector: vec([1], [1]) }, /** @type {any} */ (doc)]), (err) => {
        assert.equal(/** @type {any} */ (err).code, 'SCDV_STORE_DOC_INVALID');
        assert.match(/** @type {Error} */ (err).message, re);
        return true;
      });
    }
    assert.equal(c.count(), 0, 'a batch with a bad document writes nothing');
    assert.throws(() => c.search(vec([], [])), { code: 'SCDV_STORE_QUERY_INVALID' });
    assert.throws(() => c.search(vec([3, 2], [1, 1])), { code: 'SCDV_STORE_QUERY_INVALID' });
    assert.throws(() => c.search(vec([1], [1]), { k: 0 }), { code: 'SCDV_STORE_QUERY_INVALID' });
    assert.throws(() => c.search(vec([1], [1]), { k: 1001 }), { code: 'SCDV_STORE_QUERY_INVALID' });
    assert.throws(() => c.search(vec([1], [1]), { mode: /** @type {any} */ ('slow') }), { code: 'SCDV_STORE_QUERY_INVALID' });
    assert.throws(() => c.search(vec([1], [1]), /** @type {any} */ ({ kk: 3 })), { code: 'SCDV_STORE_QUERY_INVALID' });
    assert.throws(() => c.search(vec([1], [1]), { since: 'soon' }), { code: 'SCDV_STORE_QUERY_INVALID' });
    assert.throws(() => c.search(vec([1], [1]), /** @type {any} */ ({ sites: 'a' })), { code: 'SCDV_STORE_QUERY_INVALID' });
    await assert.rejects(c.searchAsync(vec([9], [1])), { code: 'SCDV_STORE_QUERY_INVALID' });
  } finally {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a damaged segment is reported as SCDV_STORE_CORRUPT', async () => {
  const dir = tempDir('corrupt');
  let store = openStore(dir, NO_BG);
  const c = store.collection('c', { width: 5 });
  await c.upsert([{ id: 'a', vector: vec([1], [1]) }]);
  await c.flush();
  const seg = /** @type {string} */ (fs.readdirSync(path.join(dir, 'c')).find((f) => f.endsWith('.seg')));
  store.close();
  const file = path.join(dir, 'c', seg);
  const b = fs.readFileSync(file);
  b[20] ^= 0xff; // inside the CRC-protected header
  fs.writeFileSync(file, b);
  store = openStore(dir, NO_BG);
  try {
    assert.throws(() => store.collection('c'), { code: 'SCDV_STORE_CORRUPT' });
  } finally {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
