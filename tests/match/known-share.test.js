// The known-word rule's parts (pipeline/match/threshold.js deriveKnownShare, pipeline/match/safety.js pageBlock and
// storedPage, pipeline/embed/meta.js storeRows): the minimum is ratio × the median known share of the pages that carry
// word counts, the counts are kept by every write's rows, and a page is judged only when it has them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deriveKnownShare, MIN_COUNTED } from '../../pipeline/match/threshold.js';
import { knownShare, pageBlock, storedPage } from '../../pipeline/match/safety.js';
import { storeRows } from '../../pipeline/embed/meta.js';
import { seededRandom } from '../../pipeline/random.js';

/**
 * A collection of documents whose metadata is given: with metas() as the native store has it, or without it and
 * with getMany() as the OpenSearch store (whose get() the derivation must not call a page at a time: it throws).
 * @param {Record<string, unknown>[]} metas
 * @param {boolean} batch
 */
function collectionOf(metas, batch) {
  const byId = new Map(metas.map((m, i) => [`p${String(i).padStart(4, '0')}`, JSON.stringify(m)]));
  const doc = (/** @type {string} */ id) => (byId.has(id) ? { id, meta: JSON.parse(/** @type {string} */ (byId.get(id))), vector: { indices: new Uint32Array(0), values: new Float32Array(0) } } : null);
  const calls = { getMany: 0 };
  return {
    calls,
    ids: async () => [...byId.keys()],
    get: async (/** @type {string} */ id) => { if (!batch) throw new Error(`get(${id}) a page at a time`); return doc(id); },
    ...(batch
      ? { capabilities: { getMany: false }, metas: async (/** @type {string[]} */ ids) => ids.map((id) => byId.get(id) ?? null) }
      : { capabilities: { getMany: true }, getMany: async (/** @type {string[]} */ ids) => { calls.getMany++; return ids.map(doc); } }),
  };
}

test('the minimum is ratio × the median share of the pages with counts, rounded down; pages without counts are left out', async () => {
  // 201 pages knowing 20 %, 21 %, … of their words (median 0.3), and 50 written before the counts were kept.
  const metas = [
    ...Array.from({ length: 201 }, (_, i) => ({ title: 't', known_words: 200 + i, unknown_words: 1000 - (200 + i) })),
    ...Array.from({ length: 50 }, () => ({ title: 'old' })),
  ];
  for (const batch of [true, false]) {
    const pages = collectionOf(metas, batch);
    const d = await deriveKnownShare(/** @type {any} */ (pages), 0.5, seededRandom(2));
    assert.deepEqual(d, { value: 0.15, ratio: 0.5, median: 0.3, pages: 201 }, `metas() ${batch}`);
    assert.equal(pages.calls.getMany, batch ? 0 : 1, 'without metas(), the 251 pages are read in one getMany');
  }
  const few = metas.slice(0, MIN_COUNTED - 1).concat(metas.slice(201));
  assert.equal(await deriveKnownShare(/** @type {any} */ (collectionOf(few, true)), 0.5, seededRandom(2)), null);
});

test('a page below the minimum is blocked and the rule names its counts; without counts, or with the rule at 0, it is not', () => {
  const words = { known: 3, unknown: 12 };
  assert.equal(knownShare(words), 0.2);
  assert.deepEqual(pageBlock({ words }, {}, null, null, 0.216),
    { rule: 'unknown_words', known_share: 0.2, known_words: 3, unknown_words: 12, min_known_share: 0.216 });
  assert.equal(pageBlock({ words }, {}, null, null, 0.2), null, 'at the minimum: ads');
  assert.equal(pageBlock({ words }, {}, null, null, 0), null);
  assert.equal(pageBlock({ words }, {}, null, null), null);
  assert.equal(pageBlock({}, {}, null, null, 0.9), null, 'no counts: not judged');
  assert.equal(knownShare({ known: 0, unknown: 0 }), null);
  // The request's own rules come first.
  assert.equal(pageBlock({ words, category: 'c' }, { block_category: ['c'] }, null, null, 0.9)?.rule, 'block_category');
});

test('a write\'s rows keep the embedder\'s counts in the metadata, and a stored page is judged by them', () => {
  const doc = { id: 'a', title: 'T', body: 'b' };
  const { rows } = storeRows([doc], [{ indices: [1], values: [1], knownWords: 3, unknownWords: 12 }]);
  assert.deepEqual(rows[0].meta, { title: 'T', known_words: 3, unknown_words: 12 });
  assert.deepEqual(storedPage(JSON.stringify(rows[0].meta)).words, { known: 3, unknown: 12 });
  // A vector without counts (a row made elsewhere) and a document stored before them: no counts.
  assert.deepEqual(storeRows([doc], [{ indices: [1], values: [1] }]).rows[0].meta, { title: 'T' });
  assert.equal(storedPage({ title: 'T' }).words, undefined);
});
