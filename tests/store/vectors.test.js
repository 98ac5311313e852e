// Collection.vectors(ids): many stored vectors from one snapshot in one native call (the re-ranking's collapse),
// searchAsyncIds + metas(ids): the candidate pool without metadata, the kept hits' fetched after; the re-ranked lists
// through them answering exactly as through searchAsync and get() per id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NO_OPTIONAL_CALLS, openStore } from '../../pipeline/store/index.js';
import { loadAddon } from '../../pipeline/store/native.js';
import { searchCollection } from '../../pipeline/match/rerank.js';
import { resultItem } from '../../pipeline/match/index.js';
import { randomVector, rng, tempDir } from './helpers.js';

const NO_BG = { autoFlush: false, autoMerge: false, maintenanceMs: 0 };
const WIDTH = 400;

/** @param {{indices: Iterable<number>, values: Iterable<number>} | null | undefined} v */
const plain = (v) => (v ? { indices: [...v.indices], values: [...v.values] } : null);

test('vectors(ids) gives what get(id) gives, in order, from segments and the write buffer; null when gone', async () => {
  const store = openStore(tempDir('vectors'), NO_BG);
  try {
    const c = store.collection('articles', { width: WIDTH });
    const r = rng(5);
    const docs = Array.from({ length: 60 }, (_, i) => ({ id: `d${i}`, vector: randomVector(r, WIDTH, 5 + (i % 13)), meta: { title: `T${i}` } }));
    await c.upsert(docs.slice(0, 40));
    await c.flush(); // d0-d39 in a segment
    await c.upsert(docs.slice(40)); // d40-d59 in memory
    await c.upsert([{ id: 'd3', vector: randomVector(r, WIDTH, 7) }]); // replaced: the memory copy wins
    await c.delete(['d5', 'd45']);
    const ids = ['d45', 'd3', 'nope', 'd0', 'd59', 'd5', 'd0', 'd39', 'd40'];
    const got = c.vectors(ids);
    assert.equal(got.length, ids.length);
    ids.forEach((id, i) => assert.deepEqual(plain(got[i]), plain(c.get(id)?.vector), id));
    assert.equal(got[0], null, 'deleted in memory');
    assert.equal(got[5], null, 'deleted from a segment');
    assert.equal(got[2], null, 'never stored');
    assert.deepEqual(c.vectors([]), []);
    assert.deepEqual(store.collection('empty', { width: WIDTH }).vectors(['a']), [null], 'a collection without documents');
  } finally {
    await store.close();
  }
});

test('vectors(ids): bad input is a clear error, not a crash', async () => {
  const store = openStore(tempDir('vectors-bad'), NO_BG);
  try {
    const c = store.collection('articles', { width: WIDTH });
    await c.upsert([{ id: 'a', vector: randomVector(rng(1), WIDTH, 5) }]);
    assert.throws(() => c.vectors(/** @type {any} */ ('a')), /SCDV_STORE_DOC_INVALID|array of ids/);
    assert.throws(() => c.vectors(/** @type {any} */ (['a', ''])), /id must be a non-empty string/);
    assert.throws(() => c.vectors(/** @type {any} */ (['a', { id: 'b' }])), /id must be a non-empty string/);
    // The native call checks its own arguments too (the engine passes ids through unchanged).
    const view = /** @type {any} */ (new (loadAddon().View)(WIDTH));
    assert.throws(() => view.vectors('a'), /vectors\(ids\): ids must be an array of strings/);
    assert.throws(() => view.vectors(['a', 7]), /vectors\(ids\): ids\[1\] is not a string/);
    assert.deepEqual([...view.vectors(['a']).found], [0]);
  } finally {
    await store.close();
  }
});

test('the lean pool (ids and scores, the kept hits\' metadata after; vectors in one call a batch) answers byte for byte as with metadata on every hit and get() per id', async () => {
  const store = openStore(tempDir('vectors-collapse'), NO_BG);
  try {
    const c = store.collection('articles', { width: WIDTH });
    const r = rng(11);
    /** @type {{id: string, vector: {indices: Uint32Array, values: Float32Array}, meta: Record<string, string>}[]} */
    const docs = [];
    for (let i = 0; i < 150; i++) {
      const base = randomVector(r, WIDTH, 12, { blocks: 2 });
      docs.push({ id: `b${i}`, vector: base, meta: { title: `本文${i}`, url: `https://x/${i}`, site: `s${i % 3}` } });
      // Near-copies of every third document: the collapse has something to drop.
      if (i % 3 === 0) docs.push({ id: `c${i}`, vector: base, meta: { title: `copy ${i}`, category: 'c' } });
    }
    await c.upsert(docs.slice(0, 120));
    await c.flush();
    await c.upsert(docs.slice(120));
    const server = { maxK: 100, rerank: { poolFactor: 2, poolMin: 20 } };
    /** @type {import('../../pipeline/match/rerank.js').RerankOptions} */
    const collapse = { duplicateThreshold: 0.8, halfLifeMs: null, recencyWeight: 0.3, maxPerSite: null, now: 0, feedback: null };
    let batched = 0;
    let single = 0;
    let lean = 0;
    let metaCalls = 0;
    // As the server's arms hand the native collection to searchCollection: the pool without metadata, vectors in one call.
    const native = {
      capabilities: { ...c.capabilities, scores: false, fusedRerank: false, fusedRerankById: false },
      searchAsync: (/** @type {any} */ v, /** @type {any} */ o) => c.searchAsync(v, o),
      searchAsyncIds: (/** @type {any} */ v, /** @type {any} */ o) => { lean++; return c.searchAsyncIds(v, o); },
      metas: (/** @type {string[]} */ ids) => { metaCalls++; return c.metas(ids); },
      get: (/** @type {string} */ id) => { single++; return c.get(id); },
      vectors: (/** @type {string[]} */ ids) => { batched++; return c.vectors(ids); },
    };
    const withGet = { capabilities: NO_OPTIONAL_CALLS, searchAsync: native.searchAsync, get: (/** @type {string} */ id) => c.get(id) };
    let dropped = 0;
    for (const options of [collapse, { ...collapse, feedback: { docs: 3, weight: 1, pool: 20 } }, { ...collapse, duplicateThreshold: null, feedback: { docs: 3, weight: 1, pool: 20 } }]) {
      for (const d of docs.slice(0, 40)) {
        const a = await searchCollection(native, d.vector, { mode: 'exact', excludeIds: [d.id] }, 10, options, server);
        const b = await searchCollection(withGet, d.vector, { mode: 'exact', excludeIds: [d.id] }, 10, options, server);
        const answer = (/** @type {typeof a} */ x) => JSON.stringify({ dropped: x.dropped, results: x.hits.map(resultItem) });
        assert.equal(answer(a), answer(b), d.id);
        assert.equal(a.hits.length, 10);
        if (!options.feedback) assert.equal(a.fetched, b.fetched);
        assert.ok(a.hits.every((x) => typeof x.meta === 'string'), 'metadata passed through as stored, unparsed');
        dropped += a.dropped.length;
      }
    }
    assert.ok(dropped > 0, 'some near-duplicates were dropped');
    assert.equal(single, 0, 'no get() per id');
    assert.ok(batched >= 40, `one vectors() call per batch (${batched})`);
    assert.equal(lean, 120, 'every pool searched without metadata');
    assert.equal(metaCalls, 120, 'one metas() call per list');
    // Recency reads every candidate's metadata: then the pool is searched with it (no metas call).
    lean = 0;
    metaCalls = 0;
    const recency = { ...collapse, halfLifeMs: 86_400_000, now: Date.parse('2024-01-01') };
    const a = await searchCollection(native, docs[0].vector, { mode: 'exact', excludeIds: [docs[0].id] }, 10, recency, server);
    const b = await searchCollection(withGet, docs[0].vector, { mode: 'exact', excludeIds: [docs[0].id] }, 10, recency, server);
    assert.deepEqual(a.hits.map(resultItem), b.hits.map(resultItem));
    assert.deepEqual([lean, metaCalls], [0, 0]);
  } finally {
    await store.close();
  }
});

test('searchAsyncIds: the ids and scores of searchAsync; metas(ids): the stored JSON text from segments and the write buffer, null when gone', async () => {
  const store = openStore(tempDir('vectors-ids'), NO_BG);
  try {
    const c = store.collection('articles', { width: WIDTH });
    const r = rng(9);
    const docs = Array.from({ length: 40 }, (_, i) => ({ id: `t${i}`, vector: randomVector(r, WIDTH, 9, { blocks: 1 }), meta: { title: `題 "${i}"`, site: 's', n: i } }));
    await c.upsert(docs.slice(0, 25));
    await c.flush(); // t0-t24 in a segment
    await c.upsert(docs.slice(25)); // t25-t39 in the write buffer
    await c.upsert([{ id: 't3', vector: docs[3].vector, meta: { title: 'replaced' } }]); // the buffer's copy wins
    await c.delete(['t7', 't30']);
    const q = randomVector(r, WIDTH, 40, { blocks: 1 });
    const full = await c.searchAsync(q, { k: 30, mode: 'exact' });
    const ids = await c.searchAsyncIds(q, { k: 30, mode: 'exact' });
    assert.ok(full.length > 10);
    assert.deepEqual(ids, full.map((h) => ({ id: h.id, score: h.score })));
    const asked = ['t30', 't3', 'nope', 't0', 't39', 't7', 't0', 't24', 't25'];
    const metas = c.metas(asked);
    asked.forEach((id, i) => assert.deepEqual(metas[i] === null ? null : JSON.parse(/** @type {string} */ (metas[i])), c.get(id)?.meta ?? null, id));
    assert.equal(metas[0], null, 'deleted in the write buffer');
    assert.equal(metas[5], null, 'deleted from a segment');
    assert.equal(metas[2], null, 'never stored');
    assert.deepEqual(JSON.parse(/** @type {string} */ (metas[1])), { title: 'replaced' });
    assert.equal(typeof metas[3], 'string');
    assert.deepEqual(c.metas([]), []);
    const none = store.collection('none', { width: WIDTH });
    assert.deepEqual(await none.searchAsyncIds(q), []);
    assert.deepEqual(none.metas(['a']), [null], 'a collection without documents');
    // Bad input: the store's clear errors, not a crash.
    await assert.rejects(c.searchAsyncIds({ indices: [WIDTH + 5], values: [1] }), /SCDV_STORE_QUERY_INVALID|width/);
    assert.throws(() => c.metas(/** @type {any} */ ('t1')), /SCDV_STORE_DOC_INVALID|array of ids/);
    assert.throws(() => c.metas(/** @type {any} */ (['t1', ''])), /id must be a non-empty string/);
    const view = /** @type {any} */ (new (loadAddon().View)(WIDTH));
    assert.throws(() => view.metas('a'), /metas\(ids\): ids must be an array of strings/);
    assert.throws(() => view.metas(['a', 7]), /metas\(ids\): ids\[1\] is not a string/);
  } finally {
    await store.close();
  }
});

test('a served arm hands searchCollection the native collection with the lean pool search, metas and vectors in one call', async () => {
  const { serveArm } = await import('../../server/arm-serving.js');
  const { loadConfig } = await import('../../pipeline/config.js');
  const store = openStore(tempDir('vectors-arm'), NO_BG);
  try {
    const c = store.collection('articles', { width: WIDTH });
    const r = rng(21);
    await c.upsert(Array.from({ length: 20 }, (_, i) => ({ id: `a${i}`, vector: randomVector(r, WIDTH, 9, { blocks: 1 }), meta: { title: `A${i}` } })));
    const ctx = /** @type {any} */ ({ config: loadConfig(), metrics: { armAnswers: { inc() {} } } });
    const sm = /** @type {any} */ ({ embedder: { layout: { kind: 'scdv', scdvWidth: WIDTH, width: WIDTH } } });
    const on = serveArm(ctx, sm, 'reader').on(/** @type {any} */ (c));
    const q = randomVector(r, WIDTH, 30, { blocks: 1 });
    const hits = await on.searchAsync(q, { k: 5, mode: 'exact' });
    assert.equal(hits.length, 5);
    assert.deepEqual(await on.searchAsyncIds?.(q, { k: 5, mode: 'exact' }), hits.map((h) => ({ id: h.id, score: h.score })));
    assert.deepEqual(await on.metas?.([hits[0].id, 'zz']), [JSON.stringify(hits[0].meta), null]);
    const got = await /** @type {any} */ (on).vectors(['a1', 'zz']);
    assert.deepEqual(plain(got[0]), plain(c.get('a1')?.vector));
    assert.equal(got[1], null);
  } finally {
    await store.close();
  }
});

test('scores(ids, q) equals the dot products with the stored vectors, call after call (the view reuses one dense row)', async () => {
  const { dotsWith } = await import('../../pipeline/embed/vectorizer.js');
  const store = openStore(tempDir('vectors-scores'), NO_BG);
  try {
    const c = store.collection('articles', { width: WIDTH });
    const r = rng(17);
    const docs = Array.from({ length: 50 }, (_, i) => ({ id: `s${i}`, vector: randomVector(r, WIDTH, 6 + (i % 11)) }));
    await c.upsert(docs.slice(0, 30));
    await c.flush();
    await c.upsert(docs.slice(30));
    await c.delete(['s4', 's33']);
    const ids = [...docs.map((d) => d.id), 'nope'];
    for (let round = 0; round < 30; round++) {
      // Queries of different supports one after the other: an entry left over from an earlier call would show.
      const q = randomVector(r, WIDTH, 1 + Math.floor(r() * 120));
      const got = c.scores(ids, q);
      const want = dotsWith(q, c.vectors(ids));
      ids.forEach((id, i) => {
        if (Number.isNaN(want[i])) assert.ok(Number.isNaN(got[i]), `${id} is gone`);
        else assert.ok(Math.abs(got[i] - want[i]) < 1e-5, `round ${round} ${id}: ${got[i]} vs ${want[i]}`);
      });
    }
  } finally {
    await store.close();
  }
});
