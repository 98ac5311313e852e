// Pseudo-relevance feedback as a re-ranking of the first search's pool (pipeline/match/rerank.js searchCollection),
// on a real native store: the list must be exactly the pool (the top candidates for q) ordered by cosine to
// Rocchio's expanded query, computed here independently with dense arithmetic on the stored vectors; and k must
// hold after near-duplicate collapsing however many of the pool are dropped.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NO_OPTIONAL_CALLS, openStore } from '../../pipeline/store/index.js';
import { searchCollection } from '../../pipeline/match/rerank.js';
import { loadConfig } from '../../pipeline/config.js';
import { rng } from '../lib/random.js';

const WIDTH = 300;
const DOCS = 400;
const FEEDBACK = { docs: 3, weight: 1, pool: 30 };
const server = loadConfig().server;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'feedback-pool-'));
const store = openStore(tmp);
const coll = store.collection('fb', { width: WIDTH });
/** @type {Map<string, Float64Array>} */
const dense = new Map();

/** A unit sparse vector: the dims of one of 8 topics (weighted) plus a few random ones. */
function makeVector(/** @type {() => number} */ r) {
  const topic = Math.floor(r() * 8);
  const v = new Float64Array(WIDTH);
  for (let j = 0; j < 12; j++) v[topic * 30 + Math.floor(r() * 30)] += 0.5 + r();
  for (let j = 0; j < 10; j++) v[Math.floor(r() * WIDTH)] += r();
  return v;
}
function toSparse(/** @type {Float64Array} */ v) {
  const n = Math.hypot(...v);
  const indices = [...v.keys()].filter((i) => v[i] !== 0);
  return { indices, values: indices.map((i) => v[i] / n) };
}
const dot = (/** @type {Float64Array} */ a, /** @type {Float64Array} */ b) => a.reduce((s, x, i) => s + x * b[i], 0);
const byScore = (/** @type {(id: string) => number} */ score) => (/** @type {string} */ a, /** @type {string} */ b) => score(b) - score(a) || (a < b ? -1 : 1);

before(async () => {
  const r = rng(16);
  const docs = [];
  for (let i = 0; i < DOCS; i++) docs.push({ id: `d${String(i).padStart(3, '0')}`, vector: toSparse(makeVector(r)), meta: {} });
  // 40 near-copies of d000 (a few values nudged): collapsing drops them all, more than the first pool holds.
  const base = docs[0].vector;
  for (let c = 0; c < 40; c++) docs.push({ id: `copy${c}`, vector: { indices: base.indices, values: base.values.map((x) => x * (1 + 0.02 * r())) }, meta: {} });
  await coll.upsert(docs);
  await coll.flush();
  for (const d of docs) {
    const got = /** @type {any} */ (coll.get(d.id));
    const v = new Float64Array(WIDTH);
    got.vector.indices.forEach((/** @type {number} */ i, /** @type {number} */ j) => { v[i] = got.vector.values[j]; });
    dense.set(d.id, v);
  }
});
after(async () => {
  await store.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/**
 * Rocchio's q' (q + weight · mean of `first`, cut to 2·nnz(q) largest magnitudes, ties lower dim), unit length.
 * nnz(q) counts the stored entries (a stored value may round to 0).
 */
function expanded(/** @type {Float64Array} */ q, /** @type {number} */ nnz, /** @type {string[]} */ first) {
  const e = Float64Array.from(q);
  for (const id of first) {
    const v = /** @type {Float64Array} */ (dense.get(id));
    for (let i = 0; i < WIDTH; i++) e[i] += (FEEDBACK.weight / first.length) * v[i];
  }
  const order = [...e.keys()].filter((i) => e[i] !== 0).sort((a, b) => Math.abs(e[b]) - Math.abs(e[a]) || a - b);
  for (const i of order.slice(2 * nnz)) e[i] = 0;
  const n = Math.hypot(...e);
  return e.map((x) => x / n);
}

/** The collection as a backend without a scores call sees it. */
const withoutScores = { capabilities: NO_OPTIONAL_CALLS, searchAsync: (/** @type {any} */ v, /** @type {any} */ o) => coll.searchAsync(v, o), get: (/** @type {string} */ id) => coll.get(id) };
const noCollapse = { duplicateThreshold: null, halfLifeMs: null, recencyWeight: 0.5, maxPerSite: null, now: Date.now() };

test('the list is the pool of the first search re-scored by cosine to the expanded query (no second search)', async () => {
  const k = 10;
  const poolSize = Math.max(server.rerank.poolMin, Math.ceil(k * server.rerank.poolFactor), FEEDBACK.pool);
  let differsFromFullSearch = 0;
  for (let i = 1; i <= 60; i++) {
    const id = `d${String(i).padStart(3, '0')}`;
    const q = /** @type {Float64Array} */ (dense.get(id));
    const others = [...dense.keys()].filter((d) => d !== id);
    const pool = others.sort(byScore((d) => dot(q, /** @type {any} */ (dense.get(d))))).slice(0, poolSize);
    const e = expanded(q, /** @type {any} */ (coll.get(id)).vector.indices.length, pool.slice(0, FEEDBACK.docs));
    const score = (/** @type {string} */ d) => dot(e, /** @type {any} */ (dense.get(d)));
    const want = pool.slice().sort(byScore(score)).slice(0, k);
    // The native store re-scores in place (Collection.scores); a backend without that call (OpenSearch) through get.
    for (const backend of [coll, withoutScores]) {
      const got = await searchCollection(backend, /** @type {any} */ (coll.get(id)).vector, { excludeIds: [id], mode: 'exact' }, k,
        { ...noCollapse, feedback: FEEDBACK }, server);
      assert.deepEqual(got.hits.map((h) => h.id), want, `query ${id}`);
      got.hits.forEach((h) => assert.ok(Math.abs(h.score - score(h.id)) < 1e-5, `${id} → ${h.id}: ${h.score} vs ${score(h.id)}`));
      assert.equal(got.searched, poolSize, 'one search, of the pool');
    }
    // What a second search with q' over the whole collection would have listed.
    if (others.slice().sort(byScore(score)).slice(0, k).join() !== want.join()) differsFromFullSearch++;
  }
  assert.ok(differsFromFullSearch > 0, 'the sample must hold queries where a second full search would list other documents');
});

test('with feedback, k is honoured after collapsing: the pool grows while near-duplicates empty it', async () => {
  const k = 10;
  const threshold = 0.8;
  const got = await searchCollection(coll, /** @type {any} */ (coll.get('d000')).vector, { excludeIds: ['d000'], mode: 'exact' }, k,
    { ...noCollapse, duplicateThreshold: threshold, feedback: FEEDBACK }, server);
  assert.equal(got.hits.length, k);
  assert.ok(got.searched > FEEDBACK.pool, `searched ${got.searched}`);
  const q = /** @type {Float64Array} */ (dense.get('d000'));
  assert.equal(got.dropped.filter((d) => d.id.startsWith('copy')).length, 40, 'every copy dropped, as a duplicate of the query document');
  for (const [j, h] of got.hits.entries()) {
    const v = /** @type {Float64Array} */ (dense.get(h.id));
    assert.ok(dot(q, v) <= threshold + 1e-6, `${h.id} is a near-duplicate of the query`);
    for (const above of got.hits.slice(0, j)) assert.ok(dot(v, /** @type {any} */ (dense.get(above.id))) <= threshold + 1e-6, `${h.id} duplicates ${above.id}`);
    if (j) assert.ok(h.score <= got.hits[j - 1].score, 'best first by the expanded query');
  }
});

test('without feedback (null or docs 0) the list is the plain search', async () => {
  const v = /** @type {any} */ (coll.get('d005')).vector;
  const plain = coll.search(v, { k: 10, excludeIds: ['d005'], mode: 'exact' }).map((h) => h.id);
  for (const feedback of [null, { ...FEEDBACK, docs: 0 }]) {
    const got = await searchCollection(coll, v, { excludeIds: ['d005'], mode: 'exact' }, 10, { ...noCollapse, feedback }, server);
    assert.deepEqual(got.hits.map((h) => h.id), plain);
  }
});

test('the pool search certifies only the ranks the list is made of: max(want, feedback docs), also while the pool doubles', async () => {
  /** @type {Record<string, any>[]} */
  const calls = [];
  const recording = {
    capabilities: { ...NO_OPTIONAL_CALLS, scores: true },
    searchAsync: (/** @type {any} */ v, /** @type {any} */ o) => { calls.push(o); return coll.searchAsync(v, o); },
    get: (/** @type {string} */ id) => coll.get(id), scores: (/** @type {string[]} */ ids, /** @type {any} */ v) => coll.scores(ids, v),
  };
  const run = async (/** @type {string} */ id, /** @type {number} */ k, /** @type {any} */ options) => {
    calls.length = 0;
    const r = await searchCollection(recording, /** @type {any} */ (coll.get(id)).vector, { excludeIds: [id] }, k, options, server);
    return { r, calls: calls.map((o) => [o.k, o.certified]) };
  };
  const pool = (/** @type {number} */ k) => Math.max(server.rerank.poolMin, Math.ceil(k * server.rerank.poolFactor), FEEDBACK.pool);
  assert.deepEqual((await run('d001', 10, { ...noCollapse, feedback: FEEDBACK })).calls, [[pool(10), 10]]);
  assert.deepEqual((await run('d001', 2, { ...noCollapse, feedback: { ...FEEDBACK, docs: 5 } })).calls, [[pool(2), 5]], 'feedback reads its first 5');
  // Collapsing the 40 copies of d000 empties the pool: it doubles, the head certified stays the list's 10.
  const { r, calls: grown } = await run('d000', 10, { ...noCollapse, duplicateThreshold: 0.8, feedback: FEEDBACK });
  assert.equal(r.hits.length, 10);
  assert.ok(grown.length > 1, 'the pool did not grow');
  grown.forEach(([k, certified], j) => assert.deepEqual([k, certified], [pool(10) * 2 ** j, 10], `search ${j}`));
  // A plain list (no option on) is one search of k, all certified.
  assert.deepEqual((await run('d001', 10, { ...noCollapse, feedback: null })).calls, [[10, undefined]]);
});

test('Collection.scores: each stored vector dotted with the query in place, NaN for ids not stored (segment, WAL tail, deleted)', async () => {
  const q = /** @type {any} */ (coll.get('d010')).vector;
  await coll.upsert([{ id: 'fresh', vector: /** @type {any} */ (coll.get('d011')).vector, meta: {} }]); // in the WAL tail, not flushed
  await coll.delete(['d012']);
  const ids = ['d013', 'fresh', 'd012', 'nope', 'd010'];
  const got = coll.scores(ids, q);
  const qd = /** @type {Float64Array} */ (dense.get('d010'));
  assert.ok(Math.abs(got[0] - dot(qd, /** @type {any} */ (dense.get('d013')))) < 1e-6);
  assert.ok(Math.abs(got[1] - dot(qd, /** @type {any} */ (dense.get('d011')))) < 1e-6);
  assert.ok(Number.isNaN(got[2]) && Number.isNaN(got[3]));
  assert.ok(Math.abs(got[4] - dot(qd, qd)) < 1e-6);
  // The same bits as the search gives each document (one exact score, dotDense's lanes), in the WAL tail too: copies
  // of 40 documents written now, and their originals in a segment.
  const originals = Array.from({ length: 40 }, (_, i) => `d${String(100 + i).padStart(3, '0')}`);
  await coll.upsert(originals.map((id) => ({ id: `w-${id}`, vector: /** @type {any} */ (coll.get(id)).vector, meta: {} })));
  const searched = coll.search(q, { k: DOCS + 50, mode: 'exact' }).filter((h) => h.id.startsWith('w-') || originals.includes(h.id));
  assert.ok(searched.filter((h) => h.id.startsWith('w-')).length >= 10, `${searched.length} of the copies and originals found`);
  const again = coll.scores(searched.map((h) => h.id), q);
  searched.forEach((h, j) => assert.ok(Object.is(again[j], h.score), `${h.id}: scores ${again[j]} vs search ${h.score}`));
  assert.throws(() => coll.scores(['d013'], { indices: [WIDTH], values: [1] }), /width|index/i);
});
