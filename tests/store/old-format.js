// Shared by format2.test.js and format3.test.js: a segment of an older format on a user's disk opens and searches
// as it is (its values as that format stored them, the scores their dot products), and a merge rewrites it in the
// current format (format 4's 11-bit codes of those stored values). The fixture folder
// (tests/store/fixtures/format<N>, made by its make.js with that format's store) is copied, never opened in place.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../pipeline/store/index.js';
import { loadAddon } from '../../pipeline/store/native.js';
import { dot, storedValues, tempDir } from './helpers.js';

const NO_BG = { autoFlush: false, autoMerge: false, maintenanceMs: 0 };
const CURRENT = 4;

/** @param {{indices: ArrayLike<number>, values: ArrayLike<number>}} v */
const asVector = (v) => ({ indices: Uint32Array.from(v.indices), values: Float32Array.from(v.values) });
/** @param {Float32Array} a */
const bits = (a) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

/**
 * @param {object} o
 * @param {number} o.version the fixture's segment format
 * @param {(values: number[]) => Float32Array} o.storedAsWritten the values that format keeps for the values given
 * @param {(c: any, segmentInfo: (p: string) => any) => void} [o.inspect] more checks of the opened fixture
 */
export async function checkOldFormatFixture({ version, storedAsWritten, inspect }) {
  const addon = loadAddon();
  /** The format versions of the collection's segments, sorted. @param {any} c */
  const versions = (c) => c.stats().segmentDetails.map((/** @type {{path: string}} */ s) => addon.segmentInfo(s.path).version).sort();
  const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', `format${version}`);
  /** @type {{width: number, docs: {id: string, vector: {indices: number[], values: number[]}}[]}} */
  const given = JSON.parse(fs.readFileSync(path.join(fixture, 'vectors.json'), 'utf8'));
  const dir = tempDir(`format${version}`);
  fs.cpSync(path.join(fixture, 'store'), dir, { recursive: true });
  let store = openStore(dir, NO_BG);
  try {
    let c = store.collection('c');
    assert.deepEqual(versions(c), [version], `the fixture holds one format-${version} segment`);
    inspect?.(c, (p) => addon.segmentInfo(p));
    const old = new Map(given.docs.map((d) => [d.id, storedAsWritten(d.vector.values)]));
    for (const d of given.docs) {
      const got = /** @type {any} */ (c.get(d.id)).vector;
      assert.deepEqual(Array.from(got.indices), d.vector.indices, `${d.id}: indices`);
      assert.deepEqual(bits(got.values), bits(/** @type {Float32Array} */ (old.get(d.id))), `${d.id}: the values as format ${version} stored them`);
    }
    // Every document as a query: exact and fast scores are the dot products of the stored values.
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
    checkScores((id) => /** @type {Float32Array} */ (old.get(id)), `format ${version}`);

    // A new document in a new (current-format) segment, then the merge of both.
    await c.upsert([{ id: 'new', vector: asVector(given.docs[0].vector) }]);
    await c.flush();
    assert.deepEqual(versions(c), [version, CURRENT], 'old and new segments side by side');
    await c.merge();
    assert.deepEqual(versions(c), [CURRENT], `the merge wrote format ${CURRENT}`);
    await c.delete(['new']);
    await store.close();
    store = openStore(dir, NO_BG);
    c = store.collection('c');
    // Merged values: the current codes of the old stored values (what the old segment held), not of the values given.
    const merged = new Map(given.docs.map((d) => [d.id, storedValues(/** @type {Float32Array} */ (old.get(d.id)))]));
    for (const d of given.docs) {
      assert.deepEqual(bits(/** @type {any} */ (c.get(d.id)).vector.values), bits(/** @type {Float32Array} */ (merged.get(d.id))), `${d.id}: merged values`);
    }
    checkScores((id) => /** @type {Float32Array} */ (merged.get(id)), 'after the merge');
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
