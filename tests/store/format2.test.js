// Segments of format 2 (float16 forward values, written before format 3's 12-bit codes) on users' disks: they
// open and search as they are, with the scores of their float16 values, and a merge rewrites them as format 4.
// The fixture (tests/store/fixtures/format2, made by its make.js with the format-2 store) is copied, never
// opened in place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../pipeline/store/index.js';
import { loadAddon } from '../../pipeline/store/native.js';
import { dot, storedValues, storedValuesFormat2, tempDir } from './helpers.js';

const NO_BG = { autoFlush: false, autoMerge: false, maintenanceMs: 0 };
const addon = loadAddon();
/** The format versions of the collection's segments, sorted. @param {any} c */
const versions = (c) => c.stats().segmentDetails.map((/** @type {{path: string}} */ s) => addon.segmentInfo(s.path).version).sort();
const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'format2');
/** @type {{width: number, docs: {id: string, vector: {indices: number[], values: number[]}}[]}} */
const given = JSON.parse(fs.readFileSync(path.join(fixture, 'vectors.json'), 'utf8'));

/** @param {{indices: ArrayLike<number>, values: ArrayLike<number>}} v */
const asVector = (v) => ({ indices: Uint32Array.from(v.indices), values: Float32Array.from(v.values) });
/** @param {Float32Array} a */
const bits = (a) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

test('a format-2 segment opens, returns its float16 values and scores with them; a merge rewrites it as format 4 (11-bit codes of those values)', async () => {
  const dir = tempDir('format2');
  fs.cpSync(path.join(fixture, 'store'), dir, { recursive: true });
  let store = openStore(dir, NO_BG);
  try {
    let c = store.collection('c');
    assert.deepEqual(versions(c), [2], 'the fixture holds one format-2 segment');
    const stored2 = new Map(given.docs.map((d) => [d.id, storedValuesFormat2(d.vector.values)]));
    for (const d of given.docs) {
      const got = /** @type {any} */ (c.get(d.id)).vector;
      assert.deepEqual(Array.from(got.indices), d.vector.indices, `${d.id}: indices`);
      assert.deepEqual(bits(got.values), bits(/** @type {Float32Array} */ (stored2.get(d.id))), `${d.id}: the float16 values as stored`);
    }
    // Every document as a query: exact and fast scores are the dot products of the float16 values.
    const checkScores = (/** @type {(id: string) => Float32Array} */ valuesOf, /** @type {string} */ when) => {
      for (const d of given.docs) {
        const q = asVector(d.vector);
        const exact = c.search(q, { k: 10, mode: 'exact' });
        assert.ok(exact.length > 0, `${d.id} ${when}: hits`);
        for (const mode of /** @type {const} */ (['exact', 'fast'])) {
          const hits = mode === 'exact' ? exact : c.search(q, { k: 10, mode });
          assert.deepEqual(hits.map((h) => h.id), exact.map((h) => h.id), `${d.id} ${when} ${mode}: the exact top 10`);
          for (const h of hits) {
            const v = /** @type {any} */ (given.docs.find((x) => x.id === h.id)).vector;
            const want = dot(q, { indices: Uint32Array.from(v.indices), values: valuesOf(h.id) });
            assert.ok(Math.abs(h.score - want) < 1e-9, `${d.id} ${when} ${mode} ${h.id}: ${h.score} vs ${want}`);
          }
        }
      }
    };
    checkScores((id) => /** @type {Float32Array} */ (stored2.get(id)), 'format 2');

    // A new document in a new (format-4) segment, then the merge of both.
    const extra = { id: 'new', vector: asVector(given.docs[0].vector) };
    await c.upsert([extra]);
    await c.flush();
    assert.deepEqual(versions(c), [2, 4], 'old and new segments side by side');
    await c.merge();
    assert.deepEqual(versions(c), [4], 'the merge wrote format 4');
    await c.delete(['new']);
    await store.close();
    store = openStore(dir, NO_BG);
    c = store.collection('c');
    // Merged values: the 11-bit codes of the float16 values (what the old segment held), not of the values given.
    const stored3 = new Map(given.docs.map((d) => [d.id, storedValues(/** @type {Float32Array} */ (stored2.get(d.id)))]));
    for (const d of given.docs) {
      assert.deepEqual(bits(/** @type {any} */ (c.get(d.id)).vector.values), bits(/** @type {Float32Array} */ (stored3.get(d.id))), `${d.id}: merged values`);
    }
    checkScores((id) => /** @type {Float32Array} */ (stored3.get(id)), 'after the merge');
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
