// The native store's fused re-ranking (Collection.searchRerankedAsync, pipeline/store/native/src/rerank.cc) against
// its definition, pipeline/match/rerank.js searchReranked run on the same store through its separate calls: the
// same kept ids, scores bit for bit, metadata text, dropped records (key order included) and pool size, over
// real-shaped and random queries, near-duplicates that make the collapse and the pool doubling fire, exact copies
// whose tied scores are ordered by id (ids whose UTF-16 order differs from their UTF-8 byte order), filters and
// excluded ids, documents in segments and in the write buffer, feedback off and on, collapsing off.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { openStore } from '../../pipeline/store/index.js';
import { searchCollection, searchCollectionById } from '../../pipeline/match/rerank.js';
import { answerBytes, resultItem } from '../../pipeline/match/index.js';
import { hybridDocs, HYBRID_WIDTH } from './shapes.js';
import { rng, tempDir } from './helpers.js';

const tmp = tempDir('rerank-native-');
const store = openStore(tmp);
const coll = store.collection('fused', { width: HYBRID_WIDTH });
const SITES = ['a.example', 'b.example', 'c.example'];
/** @type {string[]} */
const queryIds = [];

/** The same collection without the fused call: searchCollection takes the JS path (searchReranked) on it. */
const separate = {
  capabilities: { ...coll.capabilities, fusedRerank: false, fusedRerankById: false },
  searchAsync: (/** @type {any} */ v, /** @type {any} */ o) => coll.searchAsync(v, o),
  searchAsyncIds: (/** @type {any} */ v, /** @type {any} */ o) => coll.searchAsyncIds(v, o),
  metas: (/** @type {string[]} */ ids) => coll.metas(ids),
  vectors: (/** @type {string[]} */ ids) => coll.vectors(ids),
  scores: (/** @type {string[]} */ ids, /** @type {any} */ v) => coll.scores(ids, v),
  get: (/** @type {string} */ id) => coll.get(id),
};

before(async () => {
  const r = rng(11);
  const docs = [...hybridDocs(1500, 7).values()].map((d, i) => ({ ...d, meta: { title: `t${i}`, site: SITES[i % 3], published_at: 1_700_000_000_000 + i * 60_000 } }));
  // Near-copies of a few documents (values nudged by up to 3 %): groups that the collapse drops, larger than a pool.
  for (const [g, src] of [docs[0], docs[1], docs[2], docs[3]].entries()) {
    for (let c = 0; c < 45; c++) {
      docs.push({ id: `near${g}-${c}`, vector: { indices: src.vector.indices, values: src.vector.values.map((x) => x * (1 + 0.03 * r())) }, meta: { title: `near${g}`, site: SITES[c % 3], published_at: 1_700_000_000_000 } });
    }
  }
  // Exact copies of one document: equal scores, ordered by id; U+FF10 sorts above U+1F600 in JS (UTF-16), below it
  // in UTF-8 bytes.
  const twin = docs[4];
  for (const id of ['twin-\u{FF10}', 'twin-\u{1F600}', 'twin-a', 'twin-\u00E9', 'twin-\u{E000}', 'twin-\u{10000}']) {
    docs.push({ id, vector: twin.vector, meta: { title: id, site: 'a.example', published_at: 1_700_000_000_000 } });
  }
  // Segments: most documents; the write buffer (WAL tail): the rest, and updates of some segment documents.
  const cut = Math.floor(docs.length * 0.8);
  await coll.upsert(docs.slice(0, cut));
  await coll.flush();
  await coll.upsert(docs.slice(cut));
  await coll.upsert(docs.slice(100, 130).map((d) => ({ ...d, meta: { ...d.meta, title: `${d.meta.title}+` } })));
  await coll.delete(docs.slice(130, 140).map((d) => d.id));
  for (let i = 0; i < 60; i++) queryIds.push(docs[Math.floor(r() * docs.length)].id);
  // docs[cut + 3] and the updated docs[105]: in the write buffer; docs[133]: deleted.
  queryIds.push(docs[0].id, docs[1].id, docs[4].id, 'twin-a', 'near2-7', docs[cut + 3].id, docs[105].id, docs[133].id);
});
after(async () => {
  await store.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/**
 * @param {number | null} threshold
 * @param {{docs: number, weight: number, pool: number} | null} feedback
 */
const optionsOf = (threshold, feedback) => ({ duplicateThreshold: threshold, halfLifeMs: null, recencyWeight: 0.5, maxPerSite: null, now: 0, feedback });

/**
 * Both paths' answers for one query, and whether the fused one ran.
 * @param {any} vector
 * @param {Record<string, any>} storeOptions
 * @param {number} want
 * @param {ReturnType<typeof optionsOf>} options
 * @param {{maxK: number, rerank: {poolFactor: number, poolMin: number}}} server
 */
async function both(vector, storeOptions, want, options, server) {
  let fused = 0;
  const counting = { ...separate, capabilities: coll.capabilities, searchRerankedAsync: (/** @type {any[]} */ ...a) => { fused++; return coll.searchRerankedAsync(a[0], a[1], a[2]); } };
  const js = await searchCollection(separate, vector, storeOptions, want, options, server);
  const nat = await searchCollection(counting, vector, storeOptions, want, options, server);
  assert.equal(fused, 1, 'the fused call ran');
  return { js, nat };
}

/** The two answers equal: ids, score bits, metadata text, dropped records with their key order, pool size. */
function assertSame(/** @type {any} */ js, /** @type {any} */ nat, /** @type {string} */ what) {
  assert.deepEqual(nat.hits.map((/** @type {any} */ h) => h.id), js.hits.map((/** @type {any} */ h) => h.id), `${what}: ids`);
  const bits = (/** @type {any[]} */ hs) => Buffer.from(Float64Array.from(hs, (h) => h.score).buffer).toString('hex');
  assert.equal(bits(nat.hits), bits(js.hits), `${what}: score bits`);
  assert.deepEqual(nat.hits.map((/** @type {any} */ h) => h.meta), js.hits.map((/** @type {any} */ h) => h.meta), `${what}: metadata`);
  assert.equal(JSON.stringify(nat.dropped), JSON.stringify(js.dropped), `${what}: dropped`);
  const simBits = (/** @type {any[]} */ ds) => Buffer.from(Float64Array.from(ds, (d) => d.similarity).buffer).toString('hex');
  assert.equal(simBits(nat.dropped), simBits(js.dropped), `${what}: dropped similarity bits`);
  assert.equal(nat.searched, js.searched, `${what}: searched`);
  assert.equal(nat.fetched, js.fetched, `${what}: vectors fetched`);
}

const SERVER = { maxK: 1000, rerank: { poolFactor: 2, poolMin: 20 } };
const FEEDBACK = { docs: 3, weight: 1, pool: 20 };

test('related lists of stored documents: the fused call equals searchReranked (feedback on/off, collapse 0.8/0.5/off)', async () => {
  const stats = { doubled: 0, droppedOfKept: 0, droppedOfQuery: 0, ties: 0 };
  for (const id of queryIds) {
    const doc = /** @type {NonNullable<ReturnType<typeof coll.get>>} */ (coll.get(id));
    if (!doc) continue;
    for (const [threshold, feedback] of /** @type {const} */ ([[0.8, FEEDBACK], [0.8, null], [null, FEEDBACK], [0.5, FEEDBACK], [0.5, null]])) {
      const { js, nat } = await both(doc.vector, { mode: 'fast', excludeIds: [id] }, 10, optionsOf(threshold, feedback), SERVER);
      assertSame(js, nat, `${id} t=${threshold} fb=${!!feedback}`);
      if (js.searched > 20) stats.doubled++;
      for (const d of js.dropped) stats[d.duplicate_of === undefined ? 'droppedOfQuery' : 'droppedOfKept']++;
      for (let i = 1; i < js.hits.length; i++) if (js.hits[i].score === js.hits[i - 1].score) stats.ties++;
    }
  }
  // The cases the comparison must have covered.
  assert.ok(stats.doubled > 0 && stats.droppedOfKept > 0 && stats.droppedOfQuery > 0 && stats.ties > 0, JSON.stringify(stats));
});

test('filters, excluded ids, other list lengths and pool limits: still equal', async () => {
  let compared = 0;
  for (const [j, id] of queryIds.slice(0, 25).entries()) {
    const doc = coll.get(id);
    if (!doc) continue;
    const storeOptions = j % 3 === 0 ? { mode: 'fast', excludeIds: [id, 'twin-a', 'near0-3'], sites: ['a.example', 'b.example'] }
      : j % 3 === 1 ? { mode: 'exact', excludeIds: [id], excludeSites: ['c.example'] }
        : { mode: 'fast', excludeIds: [id], since: 1_700_000_000_000, until: 1_700_000_000_000 + 900 * 60_000 };
    for (const want of [1, 5, 30]) {
      const server = j % 2 ? SERVER : { maxK: 60, rerank: { poolFactor: 1.5, poolMin: 7 } };
      const { js, nat } = await both(doc.vector, storeOptions, want, optionsOf(0.6, j % 4 ? FEEDBACK : { docs: 5, weight: 0.5, pool: 40 }), server);
      assertSame(js, nat, `${id} want=${want} ${JSON.stringify(storeOptions)}`);
      compared++;
    }
  }
  assert.ok(compared >= 60);
});

test('random queries (not stored documents, signed values): still equal', async () => {
  const r = rng(5);
  for (let i = 0; i < 40; i++) {
    // A stored document's dims with fresh values, half of them negated, and a few random dims. The magnitudes span
    // 2^-40..1: stored values are 11-bit codes times a power of two, so sums of products of two stored vectors are
    // exact in any order; a query with full float values over a wide range makes the summation order matter.
    const src = /** @type {NonNullable<ReturnType<typeof coll.get>>} */ (coll.get(queryIds[i]) ?? coll.get('twin-a'));
    /** @type {Map<number, number>} */
    const v = new Map();
    src.vector.indices.forEach((d) => v.set(d, (r() < 0.5 ? -1 : 1) * (i % 2 ? r() : 2 ** (-40 * r() ** 2))));
    for (let j = 0; j < 8; j++) v.set(Math.floor(r() * HYBRID_WIDTH), r() - 0.5);
    const indices = Uint32Array.from([...v.keys()].sort((a, b) => a - b));
    const vector = { indices, values: Float32Array.from(indices, (d) => /** @type {number} */ (v.get(d))) };
    const { js, nat } = await both(vector, { mode: 'fast' }, 10, optionsOf(i % 2 ? 0.3 : 0.8, i % 3 ? FEEDBACK : null), SERVER);
    assertSame(js, nat, `random ${i}`);
  }
});

test('by id: the store looks the document\'s vector up itself (segments, write buffer, updated) and answers as by its vector', async () => {
  let byId = 0;
  const counting = { ...separate, capabilities: coll.capabilities, searchRerankedByIdAsync: (/** @type {any[]} */ ...a) => { byId++; return coll.searchRerankedByIdAsync(a[0], a[1], a[2]); } };
  let compared = 0;
  for (const [j, id] of queryIds.entries()) {
    const doc = coll.get(id);
    const storeOptions = j % 2 ? { mode: 'fast', excludeIds: [id] } : { mode: 'exact', excludeIds: [id], excludeSites: ['c.example'] };
    const options = optionsOf(j % 3 ? 0.8 : 0.5, j % 4 ? FEEDBACK : null);
    const before = byId;
    const nat = await searchCollectionById(counting, id, storeOptions, 10, options, SERVER);
    assert.equal(byId, before + 1, 'the by-id call ran');
    // Without the fused calls: the vector fetched, then searchReranked (the definition).
    const js = await searchCollectionById(separate, id, storeOptions, 10, options, SERVER);
    if (!doc) {
      assert.equal(nat, null, `${id}: deleted`);
      assert.equal(js, null, `${id}: deleted (JS path)`);
      continue;
    }
    assertSame(js, nat, `by id ${id}`);
    compared++;
  }
  assert.ok(compared >= 50, `${compared}`);
  assert.ok(queryIds.some((id) => !coll.get(id)), 'a deleted document was asked for');
  assert.equal(await coll.searchRerankedByIdAsync('no-such-doc', { k: 20 }, { want: 10, maxK: 100, head: 10, threshold: 0.8, feedback: FEEDBACK }), null);
  // Options that the fused call does not do (a per-site cap): the JS path, from the fetched vector.
  const capped = { ...optionsOf(0.8, FEEDBACK), maxPerSite: 2 };
  const viaId = await searchCollectionById(counting, queryIds[0], { mode: 'fast', excludeIds: [queryIds[0]] }, 10, capped, SERVER);
  const doc0 = /** @type {NonNullable<ReturnType<typeof coll.get>>} */ (coll.get(queryIds[0]));
  const viaVector = await searchCollection(separate, doc0.vector, { mode: 'fast', excludeIds: [queryIds[0]] }, 10, capped, SERVER);
  assert.equal(JSON.stringify(viaId), JSON.stringify(viaVector));
});

test('result item fields from the stored metadata text: answerBytes gives the UTF-8 of JSON.stringify with resultItem byte for byte', async () => {
  const r = rng(3);
  const pick = (/** @type {any[]} */ xs) => xs[Math.floor(r() * xs.length)];
  // Characters JSON.stringify escapes (quotes, backslash, every control character), non-ASCII of 2, 3 and 4 UTF-8
  // bytes, U+2028, DEL, lone surrogates (escaped as \udxxx: left to JSON.parse), and text that looks like escapes.
  const chars = ['a', 'Z', ' ', '"', '\\', '/', '\u007f', '\u2028', 'é', 'サ', '😀', '\ud800', '\udfff', '\\u0041', ...Array.from({ length: 32 }, (_, i) => String.fromCharCode(i))];
  const text = () => Array.from({ length: Math.floor(r() * 12) }, () => pick(chars)).join('');
  const value = () => pick([text, text, text, () => null, () => Math.floor(r() * 1e6), () => [text()], () => ({ [text()]: text() }), () => true]);
  const fields = ['title', 'url', 'published_at', 'category', 'site', 'body', 'x'];
  const width = 16;
  const local = store.collection('fields', { width });
  const docs = Array.from({ length: 400 }, (_, i) => {
    /** @type {Record<string, unknown>} */
    const meta = {};
    for (const f of [...fields].sort(() => r() - 0.5)) if (r() < 0.6) meta[f] = value()();
    // published_at, site and category must be strings for the store (filters read them): the others vary freely.
    for (const f of ['published_at', 'site', 'category']) if (meta[f] !== undefined && typeof meta[f] !== 'string') delete meta[f];
    if (meta.published_at !== undefined) meta.published_at = pick(['2024-05-01', '2024-05-01T09:00:00+09:00']);
    return { id: `f${i}`, vector: { indices: [i % (width - 1), width - 1], values: [1, 0.01 * (i % 7)] }, meta };
  });
  await local.upsert(docs);
  const stored = new Map(docs.map((d) => [d.id, /** @type {string} */ (local.metas([d.id])[0])]));
  let viaFields = 0;
  let viaMeta = 0;
  for (let i = 0; i < width - 1; i++) {
    const res = await local.searchRerankedByIdAsync(`f${i}`, { k: 30, mode: 'exact' }, { want: 30, maxK: 30, head: 30, threshold: 2, feedback: null, fields: true });
    const hits = /** @type {NonNullable<typeof res>} */ (res).hits;
    for (const h of hits) {
      const meta = /** @type {string} */ (stored.get(h.id));
      const one = answerBytes({}, [h]).toString('utf8');
      assert.equal(one, JSON.stringify({ results: [resultItem({ id: h.id, score: h.score, meta })] }), meta);
      if (h.fields !== undefined) viaFields++; else viaMeta++;
    }
    // A whole answer: other fields first (non-ASCII among them), then every item.
    const head = { model: 'm', collection: 'fields', id: `f${i}`, note: 'サッカー "x"', dropped: [] };
    const want = JSON.stringify({ ...head, results: hits.map((h) => resultItem({ id: h.id, score: h.score, meta: stored.get(h.id) })) });
    assert.ok(answerBytes(head, hits).equals(Buffer.from(want)), `answer ${i}`);
  }
  assert.ok(viaFields > 100 && viaMeta > 20, `${viaFields} items from the store's fields, ${viaMeta} parsed`);
});

test('the fused call checks its arguments and answers an empty collection', async () => {
  const doc = /** @type {NonNullable<ReturnType<typeof coll.get>>} */ (coll.get('twin-a'));
  const spec = { want: 10, maxK: 100, head: 10, threshold: 0.8, feedback: FEEDBACK };
  await assert.rejects(coll.searchRerankedAsync(doc.vector, { k: 20 }, { ...spec, want: 0 }), /STORE_QUERY_INVALID|want/);
  await assert.rejects(coll.searchRerankedAsync(doc.vector, { k: 200 }, spec), /maxK/);
  await assert.rejects(coll.searchRerankedAsync(doc.vector, { k: 20 }, { ...spec, threshold: /** @type {any} */ ('x') }), /threshold/);
  await assert.rejects(coll.searchRerankedAsync({ indices: [5, 3], values: [1, 1] }, { k: 20 }, spec), /increasing/);
  await assert.rejects(coll.searchRerankedByIdAsync('twin-a', { k: 20 }, { ...spec, want: 0 }), /STORE_QUERY_INVALID|want/);
  await assert.rejects(coll.searchRerankedByIdAsync('twin-a', { k: 200 }, spec), /maxK/);
  await assert.rejects(coll.searchRerankedByIdAsync('', { k: 20 }, spec), /id/);
  const empty = store.collection('fused-empty', { width: HYBRID_WIDTH });
  assert.deepEqual(await empty.searchRerankedAsync(doc.vector, { k: 20 }, spec), { hits: [], dropped: [], searched: 20, fetched: 0 });
  assert.equal(await empty.searchRerankedByIdAsync('twin-a', { k: 20 }, spec), null);
});

test('a bad re-ranking spec is refused with SCDV_STORE_QUERY_INVALID naming the call and the field', async () => {
  const [v] = coll.vectors([queryIds[0]]);
  const good = { want: 10, maxK: 100, head: 10, threshold: 0.8, feedback: { docs: 3, weight: 1 } };
  /** @type {[string, Record<string, unknown>, RegExp][]} */
  const bad = [
    ['want 0', { ...good, want: 0 }, /want and head/],
    ['maxK below k', { ...good, maxK: 10 }, /maxK at least k/],
    ['threshold NaN', { ...good, threshold: NaN }, /threshold/],
    ['feedback weight missing', { ...good, feedback: { docs: 3 } }, /feedback/],
  ];
  for (const [what, spec, field] of bad) {
    await assert.rejects(coll.searchRerankedAsync(/** @type {any} */ (v), { k: 20 }, /** @type {any} */ (spec)),
      (/** @type {any} */ e) => e.code === 'SCDV_STORE_QUERY_INVALID' && / searchRerankedAsync: /.test(e.message) && field.test(e.message), what);
    await assert.rejects(coll.searchRerankedByIdAsync(queryIds[0], { k: 20 }, /** @type {any} */ (spec)),
      (/** @type {any} */ e) => e.code === 'SCDV_STORE_QUERY_INVALID' && / searchRerankedByIdAsync: /.test(e.message) && field.test(e.message), what);
  }
});
