// Search against a brute-force reference on random sparse signed vectors: several seeds, several segments,
// deletions, superseded versions and a WAL tail; k in {1, 10, 100}, with and without filters.
// 'exact' must give the same ids as brute force (ties aside); 'fast' must reach recall >= 0.99.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { openStore } from '../../pipeline/store/index.js';
import { bruteForce, randomVector, recall, rng, sameTopK, tempDir } from './helpers.js';

const WIDTH = 3000;
const SITES = ['asahi', 'nikkei', 'yomiuri', 'livedoor', 'itmedia'];
const CATS = ['news', 'sports', 'tech', 'life'];
const T0 = Date.parse('2024-01-01T00:00:00Z');
const DAY = 86400000;

/**
 * @param {() => number} r
 * @param {number} i
 * @returns {import('./helpers.js').TestDoc}
 */
function makeDoc(r, i) {
  const nnz = 20 + Math.floor(r() * 100);
  /** @type {Record<string, any>} */
  const meta = { title: `doc ${i}`, site: SITES[Math.floor(r() * SITES.length)], category: CATS[Math.floor(r() * CATS.length)] };
  if (r() < 0.9) meta.published_at = r() < 0.5 ? new Date(T0 + Math.floor(r() * 365 * DAY)).toISOString() : T0 + Math.floor(r() * 365 * DAY);
  if (r() < 0.05) delete meta.site;
  return { id: `d${i}`, vector: randomVector(r, WIDTH, nnz, { blocks: 3 }), meta };
}

/** Filter sets tried on every query. */
const FILTERS = [
  {},
  { since: '2024-03-01T00:00:00Z', until: '2024-06-30T23:59:59Z' },
  { sites: ['asahi', 'itmedia'] },
  { excludeSites: ['nikkei'], categories: ['tech', 'news'] },
  { since: T0 + 200 * DAY, sites: ['livedoor'], categories: ['sports'] },
];

for (const seed of [1, 2, 3]) {
  test(`search = brute force (seed ${seed})`, async () => {
    const r = rng(seed);
    const dir = tempDir('search');
    const store = openStore(dir, { autoFlush: false, autoMerge: false, maintenanceMs: 0, minTierList: seed === 1 ? 256 : 16 });
    try {
      const c = store.collection('docs', { width: WIDTH });
      /** @type {Map<string, import('./helpers.js').TestDoc>} */
      const live = new Map();
      let next = 0;
      // Four segments, with deletions and replacements between them, then a WAL tail.
      for (let seg = 0; seg < 5; seg++) {
        const batch = [];
        for (let i = 0; i < 700; i++) batch.push(makeDoc(r, next++));
        // replace some older documents (superseded versions must never appear)
        for (let i = 0; i < 40 && next > 800; i++) {
          const old = `d${Math.floor(r() * (next - 700))}`;
          const d = makeDoc(r, 0);
          d.id = old;
          batch.push(d);
        }
        const dedup = new Map(batch.map((d) => [d.id, d]));
        for (let i = 0; i < batch.length; i += 250) await c.upsert(batch.slice(i, i + 250));
        for (const d of dedup.values()) live.set(d.id, d);
        const dels = Array.from({ length: 30 }, () => `d${Math.floor(r() * next)}`);
        const expected = new Set(dels.filter((id) => live.has(id))).size;
        assert.equal(await c.delete(dels), expected);
        for (const id of dels) live.delete(id);
        if (seg < 4) await c.flush();
      }
      assert.equal(c.count(), live.size);
      const st = c.stats();
      assert.equal(st.segments, 4);
      assert.ok(st.wal.docs > 0, 'a WAL tail remains');

      const ids = [...live.keys()];
      let hits = 0, wanted = 0, hitsB = 0;
      for (let qi = 0; qi < 12; qi++) {
        const self = qi < 9 ? /** @type {import('./helpers.js').TestDoc} */ (live.get(ids[Math.floor(r() * ids.length)])) : null;
        const q = self ? self.vector : randomVector(r, WIDTH, 60, { blocks: 2 });
        for (const k of [1, 10, 100]) {
          for (const f of FILTERS) {
            const o = { ...f, k, ...(self ? { excludeIds: [self.id] } : {}) };
            const want = bruteForce(live, q, o);
            const exact = c.search(q, { ...o, mode: 'exact' });
            const why = sameTopK(exact, want);
            assert.equal(why, null, `exact, query ${qi}, k ${k}, filters ${JSON.stringify(f)}: ${why}`);
            const fast = c.search(q, o);
            for (const h of fast) assert.ok(live.has(h.id), `fast returned a dead document ${h.id}`);
            hits += recall(fast, want) * want.length;
            wanted += want.length;
            // the budget path proper (small segments are otherwise read whole and all rescored)
            const budgeted = c.search(q, { ...o, minPostings: 0, candidates: 40 });
            for (const h of budgeted) assert.ok(live.has(h.id), `fast returned a dead document ${h.id}`);
            hitsB += recall(budgeted, want) * want.length;
          }
        }
      }
      assert.ok(hits / wanted >= 0.99, `fast recall ${(hits / wanted).toFixed(4)} < 0.99`);
      process.stderr.write(`# seed ${seed}: fast recall ${(hits / wanted).toFixed(4)}, with the budget alone ${(hitsB / wanted).toFixed(4)}\n`);
      assert.ok(hitsB / wanted >= 0.97, `fast recall with the budget alone ${(hitsB / wanted).toFixed(4)} < 0.97`);
      // searchAsync gives the same answers.
      const q = /** @type {import('./helpers.js').TestDoc} */ (live.get(ids[0])).vector;
      assert.deepEqual(await c.searchAsync(q, { k: 20, mode: 'exact' }), c.search(q, { k: 20, mode: 'exact' }));
    } finally {
      store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('flush and merge keep results identical', async () => {
  const r = rng(99);
  const dir = tempDir('merge');
  const store = openStore(dir, { autoFlush: false, autoMerge: false, maintenanceMs: 0 });
  try {
    const c = store.collection('docs', { width: WIDTH });
    /** @type {import('./helpers.js').TestDoc[]} */
    const docs = Array.from({ length: 1500 }, (_, i) => makeDoc(r, i));
    const queries = Array.from({ length: 8 }, () => randomVector(r, WIDTH, 80, { blocks: 3 }));
    /** @param {'exact' | 'fast'} mode */
    const answers = (mode) => queries.map((q) => c.search(q, { k: 25, mode }).map((h) => `${h.id}:${h.score.toFixed(9)}`));
    for (let i = 0; i < docs.length; i += 300) await c.upsert(docs.slice(i, i + 300));
    await c.delete(['d5', 'd700', 'd1499']);
    const inWal = answers('exact');
    await c.flush();
    assert.equal(c.stats().segments, 1);
    assert.deepEqual(answers('exact'), inWal, 'flush changed exact results');
    // more segments, then merge everything
    for (let i = 0; i < 300; i += 100) {
      await c.upsert(docs.slice(i, i + 100).map((d) => ({ ...d, meta: { ...d.meta, v: 2 } })));
      await c.flush();
    }
    assert.equal(c.stats().segments, 4);
    const before = answers('exact');
    const beforeFast = answers('fast');
    const countBefore = c.count();
    await c.merge();
    const st = c.stats();
    assert.equal(st.segments, 1);
    assert.equal(st.deleted, 0, 'merge drops deleted documents');
    assert.equal(c.count(), countBefore);
    assert.deepEqual(answers('exact'), before, 'merge changed exact results');
    const afterFast = answers('fast');
    let same = 0, total = 0;
    afterFast.forEach((a, i) => { total += a.length; same += a.filter((x) => beforeFast[i].includes(x)).length; });
    assert.ok(same / total >= 0.95, `fast results moved too much after merge: ${same}/${total}`);
    assert.equal(/** @type {any} */ (c.get('d10')).meta.v, 2);
  } finally {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("'exact' stops early when a few dims dominate the query, and stays exact", async () => {
  const r = rng(5);
  const dir = tempDir('early');
  const store = openStore(dir, { autoFlush: false, autoMerge: false, maintenanceMs: 0, minTierList: 16 });
  try {
    const c = store.collection('docs', { width: WIDTH });
    /** @type {Map<string, import('./helpers.js').TestDoc>} */
    const live = new Map();
    const docs = [];
    for (let i = 0; i < 3000; i++) {
      const d = makeDoc(r, i);
      // dim 0 carries most of the weight of a few documents
      if (i % 10 === 0) {
        const idx = [0, ...[...d.vector.indices].filter((x) => x !== 0)];
        const val = [0.9 * (1 + (i % 7) / 10), ...[...d.vector.values].slice(0, idx.length - 1).map((v) => v * 0.3)];
        d.vector = { indices: Uint32Array.from(idx), values: Float32Array.from(val) };
      }
      docs.push(d);
      live.set(d.id, d);
    }
    await c.upsert(docs);
    await c.flush();
    const q = { indices: Uint32Array.from([0, 5, 77, 1500]), values: Float32Array.from([0.995, 0.05, -0.05, 0.05]) };
    for (const k of [1, 10]) {
      const want = bruteForce(live, q, { k });
      const { hits, stats } = c.profile(q, { k, mode: 'exact' });
      assert.equal(sameTopK(hits, want), null);
      assert.equal(stats.earlyExits, 1, JSON.stringify(stats));
      assert.ok(stats.postings < stats.postingsTotal, JSON.stringify(stats));
    }
  } finally {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("'fast' split over threads (a segment of several windows) returns what one thread returns", async () => {
  const dir = tempDir('threads');
  const store = openStore(dir, { autoFlush: false, autoMerge: false, maintenanceMs: 0 });
  try {
    const W = 400;
    const c = store.collection('c', { width: W });
    const r = rng(7);
    // 150,000 documents: three windows of 65,536 local documents, so the search can be split in up to three
    const n = 150000;
    for (let i = 0; i < n; i += 50000) {
      const batch = [];
      for (let j = i; j < i + 50000; j++) {
        batch.push({ id: `d${j}`, vector: randomVector(r, W, 6, { blocks: 1, blockSize: 40 }), meta: { site: SITES[j % SITES.length], published_at: T0 + (j % 1000) * DAY } });
      }
      await c.upsert(batch);
    }
    await c.flush();
    assert.equal(c.stats().segments, 1);
    for (let q = 0; q < 20; q++) {
      const query = randomVector(r, W, 30, { blocks: 2, blockSize: 40 });
      for (const extra of [{}, { sites: ['asahi', 'nikkei'], since: T0 + 100 * DAY }]) {
        const opts = { k: 10, budget: 0.5, candidates: 300, minPostings: 0, ...extra };
        const one = c.profile(query, { ...opts, threads: 1 });
        assert.equal(one.stats.threads, 1);
        for (const threads of [2, 3]) {
          const split = c.profile(query, { ...opts, threads });
          assert.equal(split.stats.threads, threads);
          assert.equal(split.stats.postings, one.stats.postings);
          assert.deepEqual(split.hits.map((h) => [h.id, h.score]), one.hits.map((h) => [h.id, h.score]));
        }
        const auto = c.profile(query, { k: 10, ...extra, minPostings: 0 });
        assert.ok(auto.stats.threads >= 1);
      }
    }
    assert.throws(() => c.search(randomVector(r, W, 5), { threads: 17 }), { code: 'SCDV_STORE_QUERY_INVALID' });
    assert.throws(() => c.search(randomVector(r, W, 5), { threads: 1.5 }), { code: 'SCDV_STORE_QUERY_INVALID' });
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
