// Related-list options (pipeline/match/rerank.js) through every route that takes them: near-duplicate collapsing
// (default on for related lists), recency_half_life, max_per_site; GET/POST related, GET/POST /v1/match and
// precomputed matches. The collections here are embedded in the default hybrid layout (the other server tests use
// the pure SCDV one, in which a tiny model scores every pair of articles ~0.999), with near-copies written through
// the API: same body under another title, and a body with a paragraph changed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

const h = await import('./helpers.js');
const { startServer } = await import('../../server/start.js');
const { loadConfig } = await import('../../pipeline/config.js');
const { keyDigest } = await import('../../pipeline/api-keys.js');
const { runPrecompute } = await import('../../pipeline/stages/precompute.js');
const { localPrecompute } = await import('../../workers/precompute.js');

/** @type {import('../../server/start.js').RunningServer} */
let srv;
/** @type {string} */
let redisUrl;
const KEY = { authorization: `Bearer ${h.API_KEY}` };
const DOC = 'sports-watch-4597641';
const DAY = 86_400_000;
const config = loadConfig({
  overrides: {
    ...h.trainOverrides(1),
    embed: { keepCount: 36 }, // hybrid layout, as the defaults
    // Feedback off: these lists are checked against the plain ranking by similarity; feedback.test.js checks it.
    server: { apiKeyHashes: [keyDigest(h.API_KEY)], indexWorkers: 0, logLevel: 'silent', modelPollMs: 100, rerank: { relatedFeedback: { docs: 0, weight: 1 } } },
  },
});
const docs = h.sampleDocs();
const byId = new Map(docs.map((d) => [d.id, d]));

before(async () => {
  ({ redis: { url: redisUrl } } = await h.setup());
  await h.indexDocs(h.MODEL_A, 'news', docs, config);
  await h.indexDocs(h.MODEL_A, 'promos', h.ADS, config);
  srv = await startServer({ config, model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
});
after(async () => {
  await srv?.close();
  await h.teardown();
});

/** @param {import('light-my-request').InjectOptions | string} opts */
const call = (opts) => h.inject(srv.app, opts);

/** @param {string} collection @param {string} id @param {Record<string, any>} doc */
async function put(collection, id, doc) {
  const r = await call({ method: 'PUT', url: `/v1/collections/${collection}/documents/${id}`, headers: KEY, payload: doc });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

/** @param {string} a @param {string} b */
async function similarity(a, b) {
  return (await call({ method: 'POST', url: '/v1/similarity', payload: { collection: 'news', a: { id: a }, b: { id: b } } })).body.similarity;
}

/** @param {string} query */
const related = async (query) => {
  const r = await call(`/v1/collections/news/documents/${DOC}/related?${query}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
};
const ids = (/** @type {any} */ body) => body.results.map((/** @type {any} */ x) => x.id);

/** A body with its shortest paragraph rewritten: a copy edited by its re-poster. */
const paragraphChanged = (/** @type {string} */ body) => {
  const parts = body.split('\n').filter((p) => p.trim());
  const shortest = parts.reduce((m, p, i) => (p.length < parts[m].length ? i : m), 0);
  parts[shortest] = '（この記事は転載元の記事を一部編集して掲載しています）';
  return parts.join('\n');
};
/** The results that are sample articles (not the copies the tests add). */
const sampleResults = (/** @type {any} */ body) => body.results.filter((/** @type {any} */ x) => byId.has(x.id)).map((/** @type {any} */ x) => /** @type {any} */ (byId.get(x.id)));

test('near-duplicates are collapsed by default: a copy of the query and copies of a result are dropped, listed, k filled', async () => {
  const plain = await related('k=10&collapse=false');
  assert.equal(plain.dropped, undefined, 'nothing reported without collapsing');
  const x = plain.results[0].id;
  const src = /** @type {any} */ (byId.get(DOC));
  const other = /** @type {any} */ (byId.get(x));
  await put('news', 'copy-of-query', { title: '別の見出しで転載された記事', body: src.body, published_at: src.published_at });
  await put('news', 'copy-of-first', { title: other.title, body: paragraphChanged(other.body), published_at: other.published_at });
  const copies = await related('k=10&collapse=false');
  assert.ok(ids(copies).includes('copy-of-query') && ids(copies).includes('copy-of-first') && ids(copies).includes(x), JSON.stringify(ids(copies)));
  assert.ok(await similarity(DOC, 'copy-of-query') > config.server.rerank.duplicateThreshold);
  assert.ok(await similarity(x, 'copy-of-first') > config.server.rerank.duplicateThreshold);

  const collapsed = await related('k=10');
  assert.equal(collapsed.results.length, 10, 'k honoured after collapsing');
  assert.ok(!ids(collapsed).includes('copy-of-query'));
  assert.equal(ids(collapsed).filter((/** @type {string} */ id) => id === x || id === 'copy-of-first').length, 1, 'one of the two copies');
  const kept = ids(collapsed).includes(x) ? x : 'copy-of-first';
  const gone = kept === x ? 'copy-of-first' : x;
  assert.deepEqual(collapsed.dropped.find((/** @type {any} */ d) => d.id === 'copy-of-query'), {
    id: 'copy-of-query', similarity: copies.results.find((/** @type {any} */ r) => r.id === 'copy-of-query').score,
  }, 'a duplicate of the query document names no result');
  const dup = collapsed.dropped.find((/** @type {any} */ d) => d.id === gone);
  assert.equal(dup.duplicate_of, kept);
  assert.ok(Math.abs(dup.similarity - await similarity(x, 'copy-of-first')) < 1e-5);
  assert.equal(collapsed.duplicates_dropped, collapsed.dropped.length);
  // The remaining results are those of the uncollapsed list, in order, minus the dropped ones.
  const rest = ids(await related('k=20&collapse=false')).filter((/** @type {string} */ id) => !collapsed.dropped.some((/** @type {any} */ d) => d.id === id));
  assert.deepEqual(ids(collapsed), rest.slice(0, 10));
  // The threshold is a request option: at 1 nothing is a duplicate.
  const none = await related('k=10&duplicate_threshold=1');
  assert.equal(none.duplicates_dropped, 0);
  assert.deepEqual(ids(none), ids(copies));
  // Paging counts collapsed results: page 2 continues page 1.
  const page2 = await related('k=5&from=5');
  assert.deepEqual(ids(page2), ids(collapsed).slice(5));
});

test('k is honoured however many candidates are dropped: the pool grows (within maxK)', async () => {
  // A threshold at the 30th score drops the first 29 results as duplicates of the query: the first pool (poolMin,
  // 20) holds no result, the next ones must be searched.
  const t = (await related('k=30&collapse=false')).results[29].score;
  const r = await related(`k=5&duplicate_threshold=${t}`);
  assert.equal(r.results.length, 5, JSON.stringify(r).slice(0, 400));
  assert.ok(r.duplicates_dropped >= 29 && 29 > config.server.rerank.poolMin, `dropped ${r.duplicates_dropped}: more than one pool`);
  const got = ids(r);
  for (let i = 0; i < got.length; i++) {
    assert.ok(r.results[i].score <= t);
    for (let j = 0; j < i; j++) assert.ok(await similarity(got[i], got[j]) <= t, `${got[i]} ~ ${got[j]}`);
  }
});

test('POST related: the page itself, once indexed, is a near-duplicate of the query text', async () => {
  const src = /** @type {any} */ (byId.get(DOC));
  const body = { title: src.title, text: src.body, k: 5 };
  const plain = await call({ method: 'POST', url: '/v1/collections/news/related', payload: { ...body, collapse: false } });
  assert.equal(plain.status, 200, JSON.stringify(plain.body));
  assert.equal(plain.body.results[0].id, DOC);
  const r = await call({ method: 'POST', url: '/v1/collections/news/related', payload: body });
  assert.equal(r.body.results.length, 5);
  assert.ok(!ids(r.body).includes(DOC));
  assert.ok(r.body.dropped.some((/** @type {any} */ d) => d.id === DOC && d.duplicate_of === undefined));
  const bad = await call({ method: 'POST', url: '/v1/collections/news/related', payload: { ...body, duplicate_threshold: 2 } });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.details.field, 'body.duplicate_threshold');
});

test('recency_half_life: the score blended with the age at query time, by the documented formula', async () => {
  const sample = sampleResults(await related('k=10&collapse=false'));
  const older = sample[5];
  const weekOld = sample[3];
  const now = Date.now();
  // Re-posts dated now and a week ago: same title and body, so the same similarity as their originals.
  await put('news', 'fresh', { title: older.title, body: older.body, published_at: new Date(now).toISOString() });
  await put('news', 'week-old', { title: weekOld.title, body: weekOld.body, published_at: new Date(now - 7 * DAY).toISOString() });
  const before = ids(await related('k=20&collapse=false'));
  assert.ok(before.indexOf('fresh') > 2, `without recency the fresh copy ranks as its original: ${before}`);

  const r = await related('k=10&recency_half_life=7d'); // collapsed: copy-of-query (0.99) would lead even halved
  assert.equal(r.results[0].id, 'fresh', JSON.stringify(r.results.map((/** @type {any} */ x) => [x.id, x.score, x.ranking_score])));
  const w = config.server.rerank.recencyWeight;
  for (const x of r.results) {
    const age = Math.max(0, now - Date.parse(x.published_at));
    const expected = x.score - Math.abs(x.score) * w * (1 - 0.5 ** (age / (7 * DAY)));
    // Ages are taken per minute (the cache holds a minute's answer): allow that much.
    assert.ok(Math.abs(x.ranking_score - expected) < 1e-3 * Math.abs(x.score) + 1e-9, `${x.id}: ${x.ranking_score} vs ${expected}`);
  }
  const week = r.results.find((/** @type {any} */ x) => x.id === 'week-old');
  assert.ok(Math.abs(week.ranking_score / week.score - (1 - w / 2)) < 1e-3, 'one half-life old: loses w/2');
  for (let i = 1; i < r.results.length; i++) assert.ok(r.results[i - 1].ranking_score >= r.results[i].ranking_score, 'ordered by ranking_score');
  assert.equal((await related('k=10&collapse=false')).results[0].ranking_score, undefined, 'no ranking_score without recency');

  for (const v of ['0d', '7x', '1.5d', '07d']) {
    const bad = await call(`/v1/collections/news/documents/${DOC}/related?recency_half_life=${v}`);
    assert.equal(bad.status, 400, v);
    assert.equal(bad.body.details.field, 'querystring.recency_half_life');
  }
  const post = await call({ method: 'POST', url: '/v1/collections/news/related', payload: { text: older.body, k: 3, recency_half_life: '12h', collapse: false } });
  assert.equal(post.body.results[0].id, 'fresh');
});

test('max_per_site: at most n results per site, the list still filled', async () => {
  const sample = sampleResults(await related('k=10&collapse=false'));
  for (const i of [1, 2, 3]) {
    const d = sample[i];
    await put('news', `site-${i}`, { title: d.title, body: d.body, site: 'same.example', published_at: d.published_at });
  }
  const uncapped = await related('k=10&collapse=false');
  const onSite = (/** @type {any} */ body) => body.results.filter((/** @type {any} */ x) => x.site === 'same.example').length;
  assert.ok(onSite(uncapped) >= 2, JSON.stringify(ids(uncapped)));
  const capped = await related('k=10&collapse=false&max_per_site=1');
  assert.equal(onSite(capped), 1);
  assert.equal(capped.results.length, 10);
  const post = await call({ method: 'POST', url: '/v1/match', payload: { collection: 'news', text: sample[1].body, k: 10, max_per_site: 1 } });
  assert.equal(post.status, 200, JSON.stringify(post.body));
  assert.ok(onSite(post.body) <= 1);
  assert.equal((await call(`/v1/collections/news/documents/${DOC}/related?max_per_site=0`)).status, 400);
});

test('match: collapsing on request (off by default), live and precomputed; an entry of other options is not served', async () => {
  const phone = /** @type {any} */ (h.ADS.find((a) => a.id === 'ad-phone'));
  await put('promos', 'ad-phone-copy', { title: phone.title, body: phone.body }); // the same ad booked twice
  // An article whose best ads include both copies.
  let article = '';
  for (const d of docs.slice(0, 120)) {
    const r = await call(`/v1/match?collection=promos&source=news&for=${d.id}&k=3`);
    if (ids(r.body).includes('ad-phone') && ids(r.body).includes('ad-phone-copy')) { article = d.id; break; }
  }
  assert.ok(article, 'an article matching the phone ad');
  // min_score -1: this test is about collapsing; which scores pass the default threshold depends on the embed defaults
  const url = `/v1/match?collection=promos&source=news&for=${article}&k=3&min_score=-1`;
  const plain = await call(url);
  assert.equal(plain.body.dropped, undefined);
  const live = await call(`${url}&collapse=true`);
  assert.equal(live.body.served_from, 'live');
  assert.equal(live.body.results.length, 3);
  assert.equal(ids(live.body).filter((/** @type {string} */ id) => id.startsWith('ad-phone')).length, 1);
  assert.ok(live.body.dropped.some((/** @type {any} */ d) => d.id.startsWith('ad-phone') && d.duplicate_of?.startsWith('ad-phone')));

  const rerank = { duplicateThreshold: config.server.rerank.duplicateThreshold, halfLifeMs: null, recencyWeight: config.server.rerank.recencyWeight, maxPerSite: null };
  const pc = await runPrecompute({ model: h.MODEL_A, source: 'news', target: 'promos', k: 3, rerank, redisUrl, config, processor: localPrecompute });
  assert.ok(pc.written > 300);
  const pre = await call(`${url}&collapse=true`);
  assert.equal(pre.body.served_from, 'precomputed');
  assert.deepEqual(pre.body.results, live.body.results);
  assert.deepEqual(pre.body.dropped, live.body.dropped);
  assert.equal(pre.body.duplicates_dropped, live.body.dropped.length);
  const other = await call(url);
  assert.equal(other.body.served_from, 'live', 'entries were computed with collapsing: a request without it searches live');
  assert.deepEqual(other.body.results, plain.body.results);

  const post = await call({ method: 'POST', url: '/v1/match', payload: { collection: 'promos', text: phone.body, k: 3, collapse: true } });
  assert.ok(!ids(post.body).includes('ad-phone') && !ids(post.body).includes('ad-phone-copy'), 'both copy the page itself');
  const postPlain = await call({ method: 'POST', url: '/v1/match', payload: { collection: 'promos', text: phone.body, k: 3 } });
  assert.deepEqual(ids(postPlain.body).slice(0, 2).sort(), ['ad-phone', 'ad-phone-copy']);
});
