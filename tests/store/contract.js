// The store's backend contract (pipeline/store/contract.js, README "Backend contract"), as one suite that every
// backend runs: tests/store/contract-native.test.js (npm test) and tests/opensearch/contract.test.js
// (npm run test:opensearch). Every call is awaited, as the callers do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bruteForce, dot, randomVector, rng, sameTopK } from './helpers.js';
import { layoutRecords } from '../../pipeline/serving/index.js';
import { CAPABILITY_METHODS } from '../../pipeline/store/index.js';

/**
 * @typedef {object} Backend
 * @property {string} name
 * @property {(model: string) => Promise<import('../../pipeline/store/index.js').StoreBackend>} open the store of a model
 * @property {() => Promise<void>} stop removes everything the backend made
 */

const WIDTH = 2000;
/** The live map already holds the stored values. */
const AS_STORED = (/** @type {Float32Array} */ v) => v;

/**
 * @param {() => number} r
 * @param {number} n
 * @param {string} [prefix]
 */
function makeDocs(r, n, prefix = 'd') {
  const sites = ['a.example', 'b.example', 'c.example'];
  const cats = ['news', 'sports', 'it'];
  return Array.from({ length: n }, (_, i) => {
    /** @type {Record<string, any>} */
    const meta = { title: `doc ${i}` };
    if (i % 7 !== 0) meta.site = sites[i % 3];
    if (i % 5 !== 0) meta.category = cats[i % 3];
    if (i % 4 !== 0) meta.published_at = Date.UTC(2024, 0, 1) + i * 3_600_000;
    return { id: `${prefix}${i}`, vector: randomVector(r, WIDTH, 20 + (i % 20), { blocks: 3, blockSize: 40 }), meta };
  });
}

/**
 * @param {() => Promise<Backend>} makeBackend
 */
export function contractTests(makeBackend) {
  /** @type {Backend} */
  let be;
  test.before(async () => { be = await makeBackend(); });
  test.after(async () => { await be?.stop(); });

  test('contract: upsert, get (values as stored: float32, or float16 with a per-document scale), exists, count, version, delete', async () => {
    const store = await be.open('m-crud');
    try {
      assert.equal(store.backend, be.name);
      assert.deepEqual(await store.health(), { ...(await store.health()), ok: true, backend: be.name });
      const c = await store.collection('docs', { width: WIDTH });
      assert.equal(c.createdAt, null, 'a writer\'s handle creates nothing before its first document');
      assert.equal(await c.count(), 0);
      assert.equal(await c.get('x'), null);
      assert.deepEqual(await store.listCollections(), []);
      assert.equal(await store.collectionInfo('docs'), null);
      const v0 = await c.version();
      await c.upsert([
        { id: 'x', vector: { indices: [3, 10, 1999], values: [0.1, -0.2, 1 / 3] }, meta: { title: 'first', site: 's' } },
        { id: 'y', vector: { indices: [3], values: [1] }, meta: {} },
        { id: 'x', vector: { indices: [4, 11], values: [0.6, -0.8] }, meta: { title: 'second' } }, // a later copy wins
        { id: 7, vector: { indices: [5], values: [0.5] } }, // a safe integer id is its string
      ]);
      assert.ok(typeof c.createdAt === 'string' && !Number.isNaN(Date.parse(c.createdAt)));
      assert.equal(await c.count(), 3, 'visible at once in the writing process');
      const x = await c.get('x');
      assert.deepEqual(x?.meta, { title: 'second' });
      assert.deepEqual([...(x?.vector.indices ?? [])], [4, 11]);
      // A backend may round the values it stores (native: float16 with a per-document scale, within 2^-11 of the
      // largest value); scores are then the dot product of what get() returns (the search test checks that).
      [0.6, -0.8].forEach((v, i) => assert.ok(Math.abs((x?.vector.values[i] ?? NaN) - v) <= 0.8 * 2 ** -11, `stored value ${i}`));
      assert.ok(x?.vector.values instanceof Float32Array && x.vector.indices instanceof Uint32Array);
      assert.equal((await c.get(/** @type {any} */ (7)))?.id, '7');
      assert.equal(await c.exists('y'), true);
      assert.equal(await c.exists('nope'), false);
      const v1 = await c.version();
      assert.ok(v1 > v0, `version grows with a write (${v0} -> ${v1})`);
      assert.equal(await c.delete(['y', 'y', 'nope']), 1, 'only live ids count, each once');
      assert.equal(await c.get('y'), null);
      assert.equal(await c.count(), 2);
      assert.ok((await c.version()) > v1);
      assert.equal(await c.delete([]), 0);
      await c.upsert([]); // nothing to write
      const info = await store.collectionInfo('docs');
      assert.deepEqual(info, { name: 'docs', width: WIDTH, createdAt: c.createdAt, count: 2 });
      assert.deepEqual(await store.listCollections(), [{ name: 'docs', width: WIDTH, count: 2 }]);
      assert.equal(await store.collection('docs'), c, 'the same handle for the same name');
      const stats = await c.stats();
      assert.equal(stats.name, 'docs');
      assert.equal(stats.width, WIDTH);
      assert.equal(stats.docs, 2);
      await c.flush();
    } finally {
      await store.close();
    }
  });

  test('contract: a collection declares its optional calls (capabilities): each declared one is there, each other one absent', async () => {
    const store = await be.open('m-caps');
    try {
      const writer = await store.collection('caps', { width: WIDTH });
      const caps = writer.capabilities;
      assert.deepEqual(Object.keys(caps).sort(), Object.keys(CAPABILITY_METHODS).sort(), 'every capability, and no other, is declared');
      for (const [name, methods] of Object.entries(CAPABILITY_METHODS)) {
        const has = /** @type {Record<string, unknown>} */ (caps)[name];
        assert.equal(typeof has, 'boolean', `capabilities.${name} is a boolean`);
        for (const m of methods) assert.equal(typeof (/** @type {any} */ (writer))[m] === 'function', has, `${m} is there exactly when capabilities.${name}`);
      }
      if (caps.fusedRerankById) assert.ok(caps.fusedRerank, 'the by-id fused call only with the one by vector');
      await writer.upsert([{ id: 'a', vector: { indices: [1], values: [1] } }]);
      const reader = await store.collection('caps');
      assert.deepEqual(reader.capabilities, caps, 'every handle of the backend declares the same');
      const v = { indices: [1], values: [1] };
      // Each declared call answers as the contract says.
      if (caps.vectors) assert.deepEqual([...(/** @type {any} */ (await reader.vectors?.(['a', 'nope', 'a'])))].map((x) => x && [...x.indices]), [[1], null, [1]]);
      if (caps.getMany) {
        const many = /** @type {any[]} */ (await reader.getMany?.(['a', 'nope', 'a']));
        assert.deepEqual(many.map((d) => d && [d.id, [...d.vector.indices], d.meta]), [['a', [1], {}], null, ['a', [1], {}]], 'getMany: get() of each id, in order');
        assert.deepEqual(await reader.getMany?.([]), []);
        await assert.rejects(async () => reader.getMany?.(/** @type {any} */ ('a')), { code: 'SCDV_STORE_DOC_INVALID' }, 'getMany takes an array');
      }
      if (caps.scores) assert.deepEqual([...(await reader.scores?.(['a', 'nope'], v) ?? [])].map((x) => (Number.isNaN(x) ? 'NaN' : Math.round(x * 1000) / 1000)), [1, 'NaN']);
      if (caps.leanSearch) {
        assert.deepEqual((await reader.searchAsyncIds?.(v, { k: 5 }))?.map((h) => h.id), ['a']);
        assert.deepEqual(await reader.metas?.(['a', 'nope']), ['{}', null]);
      }
      const spec = { want: 1, maxK: 10, head: 1, threshold: null, feedback: null };
      if (caps.fusedRerank) assert.deepEqual((await reader.searchRerankedAsync?.(v, { k: 5 }, spec))?.hits.map((h) => h.id), ['a']);
      if (caps.fusedRerankById) assert.equal(await reader.searchRerankedByIdAsync?.('nope', { k: 5 }, spec), null);
    } finally {
      await store.close();
    }
  });

  test('contract: ids() yields every live id once, as of the call', async () => {
    const store = await be.open('m-ids');
    try {
      const c = await store.collection('many', { width: WIDTH });
      const docs = makeDocs(rng(3), 1200);
      for (let i = 0; i < docs.length; i += 400) await c.upsert(docs.slice(i, i + 400));
      await c.delete(['d0', 'd1']);
      const ids = await c.ids();
      await c.upsert([{ id: 'late', vector: { indices: [1], values: [1] } }]);
      const list = [...ids];
      assert.equal(list.length, 1198);
      assert.equal(new Set(list).size, 1198);
      assert.ok(!list.includes('d0') && !list.includes('late'));
      assert.deepEqual([...ids].sort(), [...list].sort(), 'iterable again');
    } finally {
      await store.close();
    }
  });

  test('contract: search is exact (scores within 1e-5 of the double dot product), filters inside, k up to 1,000', async () => {
    const store = await be.open('m-search');
    try {
      const c = await store.collection('s', { width: WIDTH });
      const r = rng(11);
      const docs = makeDocs(r, 1500);
      for (let i = 0; i < docs.length; i += 500) await c.upsert(docs.slice(i, i + 500));
      // The reference scores the values each backend stored (what get() returns), so rounding at storage
      // (native: float16 with a per-document scale) is not mistaken for an inexact score.
      /** @type {Map<string, any>} */
      const live = new Map();
      for (const d of docs) live.set(d.id, { ...d, vector: (await c.get(d.id))?.vector });
      const day = 86_400_000;
      const t0 = Date.UTC(2024, 0, 1);
      const filterSets = [
        {},
        { since: t0 + 10 * day, until: new Date(t0 + 30 * day).toISOString() },
        { sites: ['a.example', 'c.example'] },
        { excludeSites: ['a.example'] },
        { categories: ['it'] },
        { excludeIds: ['d3', 'd8', 'd13'] },
        { since: t0 + 5 * day, excludeSites: ['b.example'], categories: ['news', 'sports'] },
      ];
      for (let qn = 0; qn < 6; qn++) {
        const q = randomVector(r, WIDTH, 40, { blocks: 3, blockSize: 40 });
        // The query's own best three excluded, alone and beside other filters: an exclusion that is not applied fails.
        const best = (/** @type {object} */ f) => bruteForce(live, q, { k: 3, ...f }, AS_STORED).map((h) => h.id);
        const excluding = [{ excludeIds: best({}) }, { categories: ['it'], excludeSites: ['b.example'], excludeIds: best({ categories: ['it'], excludeSites: ['b.example'] }) }];
        for (const f of [...filterSets, ...excluding]) {
          for (const mode of /** @type {const} */ (['exact', 'fast'])) {
            const want = bruteForce(live, q, { k: 10, ...f }, AS_STORED);
            const got = await c.search(q, { k: 10, mode, ...f });
            for (const h of got) {
              const d = live.get(h.id);
              assert.ok(d, `hit ${h.id} exists`);
              assert.ok(Math.abs(h.score - dot(q, d.vector)) <= 1e-5, `exact score of ${h.id}`);
              assert.deepEqual(h.meta, d.meta);
            }
            if (mode === 'exact') assert.equal(sameTopK(got, want, 1e-5), null, `query ${qn}, ${JSON.stringify(f)}`);
            else assert.ok(got.filter((g) => want.some((w) => w.id === g.id)).length >= 9, `fast recall@10 on ${JSON.stringify(f)}`);
            const async = await c.searchAsync(q, { k: 10, mode, ...f });
            assert.deepEqual(async.map((h) => h.id), got.map((h) => h.id));
          }
        }
      }
      const q = randomVector(r, WIDTH, 40, { blocks: 3, blockSize: 40 });
      const big = await c.search(q, { k: 1000, mode: 'exact' });
      assert.equal(big.length, 1000);
      assert.equal(sameTopK(big, bruteForce(live, q, { k: 1000 }, AS_STORED), 1e-5), null, 'k = 1,000');
      for (let i = 1; i < big.length; i++) assert.ok(big[i - 1].score >= big[i].score, 'best first');
      const fast = await c.search(q, { k: 1000 });
      assert.equal(fast.length, 1000, 'fast mode fills k too');
    } finally {
      await store.close();
    }
  });

  test('contract: one store per model, drop and re-create', async () => {
    const a = await be.open('m-one');
    const b = await be.open('m-two');
    try {
      const ca = await a.collection('shared', { width: WIDTH });
      const cb = await b.collection('shared', { width: WIDTH });
      await ca.upsert([{ id: 'only-a', vector: { indices: [1], values: [1] } }]);
      await cb.upsert([{ id: 'only-b', vector: { indices: [1], values: [1] } }, { id: 'b2', vector: { indices: [2], values: [1] } }]);
      assert.equal(await cb.get('only-a'), null, 'models never share documents');
      assert.deepEqual((await a.listCollections()).map((x) => [x.name, x.count]), [['shared', 1]]);
      assert.deepEqual((await b.listCollections()).map((x) => [x.name, x.count]), [['shared', 2]]);
      const created = ca.createdAt;
      await a.dropCollection('shared');
      await assert.rejects(async () => ca.count(), { code: 'SCDV_COLLECTION_NOT_FOUND' });
      await assert.rejects(async () => a.collection('shared'), { code: 'SCDV_COLLECTION_NOT_FOUND' });
      await assert.rejects(async () => a.dropCollection('shared'), { code: 'SCDV_COLLECTION_NOT_FOUND' });
      assert.equal(await a.collectionInfo('shared'), null);
      assert.equal(await cb.count(), 2, 'the other model keeps its collection');
      const again = await a.collection('shared', { width: WIDTH });
      assert.notEqual(again, ca);
      assert.equal(again.createdAt, null);
      await new Promise((res) => setTimeout(res, 5));
      await again.upsert([{ id: 'new', vector: { indices: [1], values: [1] } }]);
      assert.ok(again.createdAt !== null && again.createdAt !== created, 'a re-created collection has a new createdAt');
      assert.equal(await again.get('only-a'), null);
      assert.equal(await again.count(), 1);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('contract: layouts are recorded per collection and forgotten', async () => {
    const store = await be.open('m-layout');
    try {
      const c = await store.collection('l', { width: WIDTH });
      await c.upsert([{ id: 'a', vector: { indices: [1], values: [1] } }]);
      const rec = layoutRecords(store);
      const entry = { layout: { kind: 'scdv', width: WIDTH }, indexed_at: '2026-11-24T00:00:00.000Z', corpus_sha256: 'ab', model_files_sha256: 'cd' };
      await rec.record('l', entry);
      assert.deepEqual(await rec.read(), { l: entry });
      assert.deepEqual(await layoutRecords(await be.open('m-layout')).read(), { l: entry }, 'another opener sees it');
      await rec.record('l', null);
      assert.deepEqual(await rec.read(), {});
    } finally {
      await store.close();
    }
  });

  test('contract: bad input gets the catalogue errors, and writes nothing', async () => {
    const store = await be.open('m-bad');
    try {
      await assert.rejects(async () => store.collection('Bad Name'), { code: 'SCDV_STORE_NAME_INVALID' });
      await assert.rejects(async () => store.collection('absent'), { code: 'SCDV_COLLECTION_NOT_FOUND' });
      const c = await store.collection('b', { width: 100 });
      const good = { id: 'ok', vector: { indices: [1], values: [1] } };
      for (const [bad, what] of /** @type {[any, RegExp][]} */ ([
        [{ id: 'w', vector: { indices: [100], values: [1] } }, /below the collection's width 100/],
        [{ id: 'u', vector: { indices: [5, 2], values: [1, 1] } }, /strictly increasing/],
        [{ id: 'n', vector: { indices: [1], values: [NaN] } }, /not a finite number/],
        [{ id: '', vector: { indices: [1], values: [1] } }, /non-empty string/],
        [{ id: 'e', vector: { indices: [], values: [] } }, /empty/],
        [{ id: 'x'.repeat(513), vector: { indices: [1], values: [1] } }, /longer than 512/],
        [{ id: 'm', vector: { indices: [1], values: [1] }, meta: { site: 3 } }, /meta\.site must be a string/],
      ])) {
        await assert.rejects(async () => c.upsert([good, bad]), (err) => {
          assert.equal(/** @type {any} */ (err).code, 'SCDV_STORE_DOC_INVALID');
          assert.match(/** @type {Error} */ (err).message, what);
          return true;
        });
      }
      assert.equal(c.createdAt, null, 'a refused batch creates nothing');
      assert.equal(await store.collectionInfo('b'), null);
      await c.upsert([good, { id: 'é'.repeat(512), vector: { indices: [2], values: [1] } }]);
      assert.equal((await c.get('é'.repeat(512)))?.id, 'é'.repeat(512), 'a 512-character id of 1,024 bytes');
      await assert.rejects(async () => store.collection('b', { width: 99 }), { code: 'SCDV_STORE_WIDTH_MISMATCH' });
      await assert.rejects(async () => c.search({ indices: [1], values: [1] }, { k: 0 }), { code: 'SCDV_STORE_QUERY_INVALID' });
      await assert.rejects(async () => c.search({ indices: [1], values: [1] }, { k: 1001 }), { code: 'SCDV_STORE_QUERY_INVALID' });
      await assert.rejects(async () => c.search({ indices: [1], values: [1] }, /** @type {any} */ ({ color: 'red' })), { code: 'SCDV_STORE_QUERY_INVALID' });
      await assert.rejects(async () => c.search({ indices: [200], values: [1] }), { code: 'SCDV_STORE_QUERY_INVALID' });
      await assert.rejects(async () => c.get(''), { code: 'SCDV_STORE_DOC_INVALID' });
    } finally {
      await store.close();
    }
    await assert.rejects(async () => store.collection('b'), { code: 'SCDV_STORE_CLOSED' });
    await store.close(); // idempotent
  });
}
