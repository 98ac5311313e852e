// Pseudo-relevance feedback on related lists (pipeline/match/rerank.js, config server.rerank.relatedFeedback):
// the first search's pool is re-scored against q + weight · mean of its first `docs` hits. Checked against the
// formula computed here independently (dense arithmetic on the stored vectors, read from the store), on the default
// hybrid layout; tests/match/feedback-pool.test.js checks the pool on a larger collection.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

const h = await import('./helpers.js');
const { startServer } = await import('../../server/start.js');
const { loadConfig } = await import('../../pipeline/config.js');
const { keyDigest } = await import('../../pipeline/api-keys.js');
const { NO_OPTIONAL_CALLS, openStore } = await import('../../pipeline/store/index.js');
const { storeDirFor } = await import('../../pipeline/paths.js');
const { runEval } = await import('../../pipeline/eval/evaluate.js');

/** @type {import('../../server/start.js').RunningServer} */
let srv;
const KEY = { authorization: `Bearer ${h.API_KEY}` };
const DOC = 'sports-watch-4597641';
const FEEDBACK = { enabled: true, docs: 3, weight: 1, pool: 25 };
const config = loadConfig({
  overrides: {
    ...h.trainOverrides(1),
    embed: { keepCount: 36 }, // hybrid layout, as the defaults
    server: { apiKeyHashes: [keyDigest(h.API_KEY)], indexWorkers: 0, logLevel: 'silent', modelPollMs: 100, rerank: { relatedFeedback: FEEDBACK } },
  },
});
const docs = h.sampleDocs();

before(async () => {
  const { redis } = await h.setup();
  await h.indexDocs(h.MODEL_A, 'fbnews', docs, config);
  srv = await startServer({ config, model: h.MODEL_A, redisUrl: redis.url, host: '127.0.0.1', port: 0, indexWorkers: 0 });
});
after(async () => {
  await srv?.close();
  await h.teardown();
});

/** @param {import('light-my-request').InjectOptions | string} opts */
async function call(opts) {
  const res = await srv.app.inject(opts);
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}
const ids = (/** @type {any} */ body) => body.results.map((/** @type {any} */ x) => x.id);

/** Every stored vector of the collection as a dense array (read through a second handle on the store). */
async function denseVectors() {
  const store = openStore(storeDirFor(h.MODEL_A));
  try {
    const coll = store.collection('fbnews');
    /** @type {Map<string, Float64Array>} */
    const out = new Map();
    for (const d of docs) {
      const got = await coll.get(d.id);
      if (!got) continue;
      const v = new Float64Array(coll.width);
      got.vector.indices.forEach((i, j) => { v[i] = got.vector.values[j]; });
      out.set(d.id, v);
    }
    return out;
  } finally {
    store.close();
  }
}
const dot = (/** @type {Float64Array} */ a, /** @type {Float64Array} */ b) => a.reduce((s, x, i) => s + x * b[i], 0);

test('related lists re-score their pool against q + weight · mean of the first hits, by default; feedback=false is the plain search', async () => {
  const vectors = await denseVectors();
  const q = /** @type {Float64Array} */ (vectors.get(DOC));
  const plain = await call(`/v1/collections/fbnews/documents/${DOC}/related?k=10&feedback=false&collapse=false`);
  // The plain list is the exact ranking by cosine to q.
  const byPlain = [...vectors.keys()].filter((id) => id !== DOC).sort((a, b) => dot(q, /** @type {any} */ (vectors.get(b))) - dot(q, /** @type {any} */ (vectors.get(a))));
  assert.deepEqual(ids(plain), byPlain.slice(0, 10));

  // The pool: the first search's top candidates (feedback.pool, or the collapsing's pool if larger).
  const pool = byPlain.slice(0, Math.max(config.server.rerank.poolMin, 10 * config.server.rerank.poolFactor, FEEDBACK.pool));
  const expanded = Float64Array.from(q);
  for (const id of byPlain.slice(0, FEEDBACK.docs)) {
    const v = /** @type {Float64Array} */ (vectors.get(id));
    for (let i = 0; i < v.length; i++) expanded[i] += (FEEDBACK.weight / FEEDBACK.docs) * v[i];
  }
  // Cut to the 2·nnz(q) largest magnitudes.
  const nnz = q.filter((x) => x !== 0).length;
  const order = [...expanded.keys()].filter((i) => expanded[i] !== 0).sort((a, b) => Math.abs(expanded[b]) - Math.abs(expanded[a]) || a - b);
  for (const i of order.slice(2 * nnz)) expanded[i] = 0;
  // (tests/embed/expand-query.test.js exercises the cut; this tiny model's lists rarely reach it)
  const norm = Math.sqrt(dot(expanded, expanded));
  const score = (/** @type {string} */ id) => dot(expanded, /** @type {any} */ (vectors.get(id))) / norm;
  const byExpanded = pool.slice().sort((a, b) => score(b) - score(a));
  assert.notDeepEqual(byExpanded.slice(0, 10), byPlain.slice(0, 10), 'the sample must be one where feedback changes the list');

  const fb = await call(`/v1/collections/fbnews/documents/${DOC}/related?k=10&collapse=false`);
  assert.deepEqual(ids(fb), byExpanded.slice(0, 10), 'the default list is the expanded query\'s');
  fb.results.forEach((/** @type {any} */ r) => assert.ok(Math.abs(r.score - score(r.id)) < 1e-4, `${r.id}: ${r.score} vs ${score(r.id)}`));
  // POST related with the document's own text: the same expansion (the page is indexed, so it is its own first hit).
  const body = await call({ method: 'POST', url: '/v1/collections/fbnews/related', payload: { text: 'サッカー日本代表の試合', k: 5, collapse: false, feedback: false } });
  assert.equal(body.results.length, 5);
});

test('with feedback, a copy of the query document is still judged by its similarity to the query itself', async () => {
  const src = /** @type {any} */ (docs.find((d) => d.id === DOC));
  await call({ method: 'PUT', url: `/v1/collections/fbnews/documents/fb-copy`, headers: KEY, payload: { title: '別の見出し', body: src.body } });
  const copy = await call({ method: 'POST', url: '/v1/similarity', payload: { collection: 'fbnews', a: { id: DOC }, b: { id: 'fb-copy' } } });
  assert.ok(copy.similarity > config.server.rerank.duplicateThreshold);
  const collapsed = await call(`/v1/collections/fbnews/documents/${DOC}/related?k=10`);
  assert.ok(!ids(collapsed).includes('fb-copy'));
  const d = collapsed.dropped.find((/** @type {any} */ x) => x.id === 'fb-copy');
  assert.ok(d && d.duplicate_of === undefined && Math.abs(d.similarity - copy.similarity) < 1e-5, JSON.stringify(collapsed.dropped));
  assert.equal(collapsed.results.length, 10);
  await call({ method: 'DELETE', url: `/v1/collections/fbnews/documents/fb-copy`, headers: KEY });
});

test('related answers from the lean candidate pool (ids and scores, the kept hits\' metadata after) are byte for byte those from full hits', async () => {
  const { searchCollection } = await import('../../pipeline/match/rerank.js');
  const { resultItem } = await import('../../pipeline/match/index.js');
  const store = openStore(storeDirFor(h.MODEL_A));
  try {
    const coll = store.collection('fbnews');
    // The collection as a backend without the native calls sees it: metadata with every hit, get() per id.
    const plain = { capabilities: NO_OPTIONAL_CALLS, searchAsync: (/** @type {any} */ v, /** @type {any} */ o) => coll.searchAsync(v, o), get: (/** @type {string} */ id) => coll.get(id) };
    const options = { duplicateThreshold: config.server.rerank.duplicateThreshold, halfLifeMs: null, recencyWeight: 0, maxPerSite: null, now: 0, feedback: FEEDBACK };
    let compared = 0;
    for (const d of docs.slice(0, 12)) {
      const res = await srv.app.inject(`/v1/collections/fbnews/documents/${d.id}/related?k=10`);
      assert.equal(res.statusCode, 200, res.body);
      const doc = /** @type {NonNullable<ReturnType<typeof coll.get>>} */ (coll.get(d.id));
      const want = await searchCollection(plain, doc.vector, { mode: config.server.searchMode, excludeIds: [d.id] }, 10, options, config.server);
      const body = res.json();
      assert.equal(JSON.stringify(body.results), JSON.stringify(want.hits.map(resultItem)), d.id);
      assert.ok(body.results.length > 0 && body.results.every((/** @type {any} */ x) => typeof x.title === 'string'), 'metadata fetched for the kept hits');
      assert.ok(res.body.includes(`"results":${JSON.stringify(want.hits.map(resultItem))}`), 'the same bytes in the answer');
      // A backend with vectors(ids) but no in-place scores (OpenSearch): the same list, the pool's vectors read in one
      // call per search round (not the feedback documents' first and then the rest), never a get() per id.
      const calls = { searches: 0, vectors: 0, gets: 0 };
      const networked = {
        capabilities: { ...NO_OPTIONAL_CALLS, vectors: true },
        searchAsync: (/** @type {any} */ v, /** @type {any} */ o) => { calls.searches++; return coll.searchAsync(v, o); },
        get: (/** @type {string} */ id) => { calls.gets++; return coll.get(id); },
        vectors: (/** @type {string[]} */ ids) => { calls.vectors++; return ids.map((id) => coll.get(id)?.vector ?? null); },
      };
      const viaVectors = await searchCollection(networked, doc.vector, { mode: config.server.searchMode, excludeIds: [d.id] }, 10, options, config.server);
      assert.equal(JSON.stringify(viaVectors.hits.map(resultItem)), JSON.stringify(want.hits.map(resultItem)), d.id);
      assert.deepEqual(calls, { searches: calls.searches, vectors: calls.searches, gets: 0 }, d.id);
      compared++;
    }
    assert.equal(compared, 12);
  } finally {
    await store.close();
  }
});

test('related answers from the store\'s fused re-ranking (one native call, by vector or by id) are byte for byte those of the JS path', async () => {
  const { Collection } = await import('../../pipeline/store/collection.js');
  const names = /** @type {const} */ (['searchRerankedAsync', 'searchRerankedByIdAsync']);
  const real = { searchRerankedAsync: Collection.prototype.searchRerankedAsync, searchRerankedByIdAsync: Collection.prototype.searchRerankedByIdAsync };
  const calls = { searchRerankedAsync: 0, searchRerankedByIdAsync: 0 };
  const capabilities = /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(Collection.prototype, 'capabilities'));
  const all = capabilities.get?.call(null);
  /**
   * The route's answer with these fused calls on (the others removed; the reply cache emptied first; request_id set
   * aside) and its status.
   * @param {string[]} on
   * @param {import('light-my-request').InjectOptions | string} opts
   */
  const reply = async (on, opts) => {
    srv.ctx.relatedCache.forgetCollection(`${h.MODEL_A}\0fbnews`);
    for (const name of names) {
      const fn = /** @type {Function} */ (real[name]);
      Object.defineProperty(Collection.prototype, name, {
        value: on.includes(name) ? /** @this {any} */ function (/** @type {any[]} */ ...a) { calls[name]++; return fn.apply(this, /** @type {any} */ (a)); } : undefined,
        configurable: true, writable: true,
      });
    }
    // The collection declares the calls it has (the contract's capabilities).
    const declared = { ...all, fusedRerank: on.includes('searchRerankedAsync'), fusedRerankById: on.includes('searchRerankedByIdAsync') };
    Object.defineProperty(Collection.prototype, 'capabilities', { get: () => declared, configurable: true });
    try {
      const res = await srv.app.inject(opts);
      return { status: res.statusCode, body: res.body.replace(/"request_id":"[^"]*"/, '') };
    } finally {
      for (const name of names) Object.defineProperty(Collection.prototype, name, { value: real[name], configurable: true, writable: true });
      Object.defineProperty(Collection.prototype, 'capabilities', capabilities);
    }
  };
  const answer = async (/** @type {string[]} */ on, /** @type {import('light-my-request').InjectOptions | string} */ opts) => {
    const r = await reply(on, opts);
    assert.equal(r.status, 200, r.body);
    return r.body;
  };
  let compared = 0;
  let withDropped = 0;
  for (const d of docs) {
    for (const q of ['k=10', 'k=10&collapse=false', 'k=10&feedback=false', 'k=4&from=3&duplicate_threshold=0.3', `k=10&exclude_site=${encodeURIComponent(String(d.site ?? 'x'))}`]) {
      const url = `/v1/collections/fbnews/documents/${encodeURIComponent(d.id)}/related?${q}`;
      const before = { ...calls };
      const js = await answer([], url);
      assert.deepEqual(calls, before, 'the JS path ran');
      const fused = await answer(['searchRerankedAsync'], url);
      assert.equal(calls.searchRerankedAsync, before.searchRerankedAsync + 1, 'the fused call ran');
      const byId = await answer([...names], url);
      assert.equal(calls.searchRerankedByIdAsync, before.searchRerankedByIdAsync + 1, 'the by-id fused call ran');
      assert.equal(calls.searchRerankedAsync, before.searchRerankedAsync + 1, 'and not the one by vector');
      assert.equal(fused, js, url);
      assert.equal(byId, js, url);
      if (js.includes('"duplicate_of"')) withDropped++;
      compared++;
    }
  }
  const text = { method: 'POST', url: '/v1/collections/fbnews/related', payload: { text: 'サッカー日本代表の試合', k: 5, duplicate_threshold: 0.3 } };
  assert.equal(await answer([...names], text), await answer([], text));
  assert.ok(compared >= 50 && withDropped > 0, `${compared} answers, ${withDropped} with a duplicate of a kept result`);
  // A document that is not there: the same 404 body either way (the by-id call looked for it and found nothing).
  const missing = '/v1/collections/fbnews/documents/no-such-doc/related?k=10';
  const before = calls.searchRerankedByIdAsync;
  const gone = await reply([...names], missing);
  assert.equal(calls.searchRerankedByIdAsync, before + 1);
  assert.deepEqual(gone, await reply([], missing));
  assert.equal(gone.status, 404);
  assert.equal(JSON.parse(gone.body).error, 'SCDV_DOCUMENT_NOT_FOUND');
});

test('the option is in the related routes\' OpenAPI schema, not in match', async () => {
  const doc = await call('/docs/json');
  const related = doc.paths['/v1/collections/{collection}/documents/{id}/related'].get.parameters.find((/** @type {any} */ p) => p.name === 'feedback');
  assert.equal(related?.schema?.default, true, 'this server enables it');
  assert.ok(doc.paths['/v1/match'].get.parameters.every((/** @type {any} */ p) => p.name !== 'feedback'));
});

test('feedback is on by default: with the default configuration the related routes\' option defaults to true', async () => {
  const { openapiDocument } = await import('../../server/openapi-document.js');
  const doc = /** @type {any} */ (await openapiDocument());
  const related = doc.paths['/v1/collections/{collection}/documents/{id}/related'].get.parameters.find((/** @type {any} */ p) => p.name === 'feedback');
  assert.equal(related?.schema?.default, true);
  assert.match(related?.description ?? related?.schema?.description, /the 20 best candidates of the search are re-ranked/);
  assert.deepEqual(loadConfig().server.rerank.relatedFeedback, { enabled: true, docs: 3, weight: 1, pool: 20 });
});

test('config: relatedFeedback is checked with a message naming the field', () => {
  assert.throws(() => loadConfig({ overrides: { server: { rerank: { relatedFeedback: { docs: -1 } } } } }), /server\.rerank\.relatedFeedback\.docs must be a whole number from 0 to 100 \(0: off\), got -1/);
  assert.throws(() => loadConfig({ overrides: { server: { rerank: { relatedFeedback: { weight: 'x' } } } } }), /server\.rerank\.relatedFeedback\.weight must be a number/);
  assert.throws(() => loadConfig({ overrides: { server: { rerank: { relatedFeedback: { enabled: 'yes' } } } } }), /server\.rerank\.relatedFeedback\.enabled must be a boolean, got "yes"/);
  assert.throws(() => loadConfig({ overrides: { server: { rerank: { relatedFeedback: { depth: 2 } } } } }), /unknown key server\.rerank\.relatedFeedback\.depth/);
  assert.throws(() => loadConfig({ overrides: { server: { rerank: { relatedFeedback: { pool: 0 } } } } }), /server\.rerank\.relatedFeedback\.pool must be a whole number from 1 to 1000, got 0/);
});

test('scdv eval computes related lists as the route does: feedback changes its neighbours, enabled false turns it off', async () => {
  const fs = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'fb-eval-')), 'corpus.jsonl');
  fs.writeFileSync(file, docs.map((d) => JSON.stringify({ id: d.id, title: d.title, body: d.body, category: d.category })).join('\n') + '\n');
  const evalWith = (/** @type {{enabled: boolean, docs: number, weight: number}} */ f) => runEval({
    model: h.MODEL_A, corpus: file, labelField: 'category', folds: 0, baselines: false, write: false, log: () => {},
    config: loadConfig({ overrides: { ...h.trainOverrides(1), embed: { keepCount: 36 }, server: { rerank: { relatedFeedback: f, collapseRelated: false } } } }),
  });
  const on = await evalWith(FEEDBACK);
  const off = await evalWith({ ...FEEDBACK, enabled: false });
  assert.deepEqual(on.settings.related.feedback, { docs: FEEDBACK.docs, weight: FEEDBACK.weight, pool: FEEDBACK.pool });
  assert.equal(off.settings.related.feedback, null);
  assert.notDeepEqual(on.per_query.hits_at_10.scdv, off.per_query.hits_at_10.scdv);
});
