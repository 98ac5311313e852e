// Ad expansion (adEmbed.expand): an ad collection's stored vector is the ad's own vector plus weight/m × the sum of
// its m nearest articles' vectors (pipeline/match/expand.js). Checked against a brute-force computation over the
// stored articles, through the API (PUT), `scdv index` (the index workers), the re-expansion when the articles are
// re-indexed, the stale mark of an API write to the articles and its re-expansion by `scdv precompute`, the off
// switch and an empty source.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const h = await import('./helpers.js');
const { startServer } = await import('../../server/start.js');
const { runIndex } = await import('../../pipeline/stages/indexing.js');
const { runPrecompute } = await import('../../pipeline/stages/precompute.js');
const { localPrecompute } = await import('../../workers/precompute.js');
const { readIndexed } = await import('../../pipeline/serving/index.js');
const { openStore } = await import('../../pipeline/store/index.js');
const { storeDirFor } = await import('../../pipeline/paths.js');
const { loadConfig } = await import('../../pipeline/config.js');
const { sparseDot } = await import('../../pipeline/embed/vectorizer.js');

const KEY = { authorization: `Bearer ${h.API_KEY}` };
const AD = { title: 'サッカー観戦ツアー', body: 'サッカー日本代表の試合をスタジアムで観戦。選手と監督に会えるチケット。' };
const base = h.testConfig();
const M = base.adEmbed.expand.neighbours;
const W = /** @type {number} */ (base.adEmbed.expand.weight);

/** @type {import('../../server/start.js').RunningServer | undefined} */
let srv;
/** @type {string} */
let redisUrl;

before(async () => {
  ({ redis: { url: redisUrl } } = await h.setup());
});
after(async () => {
  await srv?.close();
  await h.teardown();
});

/** @param {string} collection @param {string[]} [ids] all when absent */
async function stored(collection, ids) {
  const store = openStore(storeDirFor(h.MODEL_A));
  try {
    const c = store.collection(collection);
    const want = ids ?? [...(await c.ids())];
    return new Map(await Promise.all(want.map(async (id) => /** @type {[string, any]} */ ([id, (await c.get(id))?.vector]))));
  } finally {
    store.close();
  }
}

/** Scores closer than this may rank either way: the stored values are 11-bit codes, the expansion ran on its own floats. */
const TIE = 1e-4;

/**
 * own + W/M × the sum of the M articles scoring highest with own, by brute force over every stored article. When
 * articles tie (within TIE) across the Mth place, each way of filling the last places is a correct answer.
 * @param {{indices: ArrayLike<number>, values: ArrayLike<number>}} own
 * @param {Map<string, {indices: ArrayLike<number>, values: ArrayLike<number>}>} articles
 * @returns {Map<number, number>[]}
 */
function bruteForce(own, articles) {
  const ranked = [...articles.values()].map((v) => ({ v, s: sparseDot(own, v) })).sort((a, b) => b.s - a.s);
  const edge = ranked[Math.min(M, ranked.length) - 1].s;
  const sure = ranked.filter((r) => r.s > edge + TIE);
  const tied = ranked.filter((r) => Math.abs(r.s - edge) <= TIE);
  assert.ok(tied.length <= 12, `at most 12 articles tie at the ${M}th place (${tied.length})`);
  /** @type {Map<number, number>[]} */
  const answers = [];
  /** @param {number} from @param {typeof ranked} chosen */
  const fill = (from, chosen) => {
    if (sure.length + chosen.length === Math.min(M, ranked.length)) {
      const sum = new Map();
      for (let i = 0; i < own.indices.length; i++) sum.set(own.indices[i], own.values[i]);
      for (const { v } of [...sure, ...chosen]) for (let i = 0; i < v.indices.length; i++) sum.set(v.indices[i], (sum.get(v.indices[i]) ?? 0) + (W / M) * v.values[i]);
      answers.push(sum);
      return;
    }
    for (let i = from; i < tied.length; i++) fill(i + 1, [...chosen, tied[i]]);
  };
  fill(0, []);
  return answers;
}

/**
 * The stored expanded vector is the brute-force one (stored values are 11-bit codes: within 0.2 % or 1e-3).
 * @param {any} got
 * @param {any} own
 * @param {Map<string, any>} articles
 * @param {string} what
 */
function assertExpanded(got, own, articles, what) {
  assert.ok(got, `${what}: stored`);
  const g = new Map(Array.from(got.indices, (ix, i) => [ix, got.values[i]]));
  /** @param {Map<number, number>} sum @returns {string | null} the first entry that differs */
  const differs = (sum) => {
    for (const [ix, v] of sum) if (Math.abs(v) > 1e-3 && Math.abs((g.get(ix) ?? 0) - v) > Math.max(1e-3, 2e-3 * Math.abs(v))) return `entry ${ix} ${g.get(ix)} vs ${v}`;
    return null;
  };
  const answers = bruteForce(own, articles);
  const misses = answers.map(differs);
  assert.ok(misses.includes(null), `${what}: the sum of its ${M} nearest articles (${answers.length} way(s) to break ties; ${misses[0]})`);
  assert.ok(got.indices.length > own.indices.length, `${what}: wider than the ad's own vector (${got.indices.length} vs ${own.indices.length})`);
}

test('an ad written through the API is stored expanded from the articles; a write to the articles marks it stale; precompute re-expands', async () => {
  srv = await startServer({ config: base, model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  const call = (/** @type {import('light-my-request').InjectOptions} */ o) => h.inject(/** @type {any} */ (srv).app, o);
  assert.equal((await call({ method: 'DELETE', url: '/v1/collections/ads', headers: KEY })).status, 200);
  const put = await call({ method: 'PUT', url: '/v1/collections/ads/documents/ad-live', headers: KEY, payload: AD });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  const AD2 = { id: 'ad-bulk', title: '映画の試写会', body: '話題の映画の試写会に招待。監督と俳優の舞台挨拶。' };
  const bulk = await call({ method: 'POST', url: '/v1/collections/ads/documents:bulk?sync=true', headers: { ...KEY, 'content-type': 'application/x-ndjson' }, payload: `${JSON.stringify(AD2)}\n` });
  assert.equal(bulk.status, 200, JSON.stringify(bulk.body));
  assert.equal(bulk.body.errors, false, JSON.stringify(bulk.body));
  let listing = (await call({ method: 'GET', url: '/v1/collections' })).body.collections;
  const ads = listing.find((/** @type {any} */ c) => c.name === 'ads');
  const articleCount = listing.find((/** @type {any} */ c) => c.name === 'articles').count;
  assert.deepEqual([ads.expansion.from, ads.expansion.neighbours, ads.expansion.weight, ads.expansion.expanded, ads.expansion.stale, ads.expansion.from_count],
    ['articles', M, W, true, false, articleCount], JSON.stringify(ads.expansion));
  assert.equal(listing.find((/** @type {any} */ c) => c.name === 'ads__own')?.count, 2, 'the own vectors are kept');
  const model = (await call({ method: 'GET', url: '/v1/models' })).body.models.find((/** @type {any} */ m) => m.name === h.MODEL_A);
  assert.deepEqual(model.collections.find((/** @type {any} */ c) => c.name === 'ads').expansion, ads.expansion, '/v1/models shows it too');

  // A write to the articles: the ads no longer reflect them.
  const page = await call({ method: 'PUT', url: '/v1/collections/articles/documents/page-new', headers: KEY, payload: { title: '観戦記', body: 'サッカーの試合を観戦した。' } });
  assert.equal(page.status, 200);
  listing = (await call({ method: 'GET', url: '/v1/collections' })).body.collections;
  assert.equal(listing.find((/** @type {any} */ c) => c.name === 'ads').expansion.stale, true);
  await srv.close();
  srv = undefined;

  const owns = await stored('ads__own', ['ad-live', 'ad-bulk']);
  const own = owns.get('ad-live');
  // Before precompute, the stored vectors are the expansion against the articles without page-new.
  const before = await stored('articles');
  before.delete('page-new');
  const written = await stored('ads', ['ad-live', 'ad-bulk']);
  assertExpanded(written.get('ad-live'), own, before, 'the API\'s ad (PUT)');
  assertExpanded(written.get('ad-bulk'), owns.get('ad-bulk'), before, 'the API\'s ad (synchronous bulk)');

  const pre = await runPrecompute({ model: h.MODEL_A, source: 'articles', target: 'ads', k: 3, redisUrl, config: base, processor: localPrecompute });
  assert.ok(pre.reexpanded, 'a stale expansion is redone by precompute');
  const rec = readIndexed(h.MODEL_A).ads;
  assert.equal(rec.expansion?.stale, false);
  assert.equal(rec.expansion?.from_count, articleCount + 1);
  assert.ok(rec.match_min_score, 'and the threshold derived after it');
  assertExpanded((await stored('ads', ['ad-live'])).get('ad-live'), own, await stored('articles'), 'after precompute');
  const again = await runPrecompute({ model: h.MODEL_A, source: 'articles', target: 'ads', k: 3, redisUrl, config: base, processor: localPrecompute });
  assert.equal(again.reexpanded, null, 'a fresh expansion is left alone');
});

test('scdv index expands the ads; re-indexing the articles expands them again; off and empty sources store own vectors', async () => {
  const corpus = path.join(h.tmp, 'ads-batch.jsonl');
  fs.writeFileSync(corpus, h.ADS.map((a) => JSON.stringify(a)).join('\n') + '\n');
  const summary = await runIndex({ corpus, model: h.MODEL_A, collection: 'ads', config: base, redisUrl, workers: 1, log: () => {} });
  assert.equal(summary.expansions.ads?.expanded, true);
  const ids = h.ADS.map((a) => a.id);
  let own = await stored('ads__own', ids);
  let articles = await stored('articles');
  let got = await stored('ads', ids);
  for (const id of ids) assertExpanded(got.get(id), own.get(id), articles, `scdv index's ${id}`);

  // The articles re-indexed (three new ones): every ad is expanded again from the articles as they are now.
  const more = path.join(h.tmp, 'articles-more.jsonl');
  fs.writeFileSync(more, [
    { id: 'new-1', title: 'スマホ', body: '新しいスマートフォンの画面とバッテリー。Android端末のアプリ。' },
    { id: 'new-2', title: '映画', body: '映画の公開と舞台挨拶。監督と俳優。' },
    { id: 'new-3', title: '試合', body: 'サッカー日本代表の試合。選手と監督。' },
  ].map((d) => JSON.stringify(d)).join('\n') + '\n');
  const re = await runIndex({ corpus: more, model: h.MODEL_A, collection: 'articles', config: base, redisUrl, workers: 1, log: () => {} });
  assert.equal(re.expansions.ads?.expanded, true, 'the ads were expanded again');
  assert.equal(re.expansions.ads?.from_count, articles.size + 3);
  assert.ok(re.matchThresholds.ads, 'and their threshold derived again');
  articles = await stored('articles');
  got = await stored('ads', ids);
  for (const id of ids) assertExpanded(got.get(id), own.get(id), articles, `re-expanded ${id}`);

  // Off (weight 0): the ads are stored as embedded, no companion collection.
  const off = loadConfig({ overrides: { ...h.trainOverrides(1), embed: { keepCount: 36 }, adEmbed: { collections: ['ads', 'ads-off', 'ads-nowhere'], expand: { weight: 0 } } } });
  const r = await runIndex({ corpus, model: h.MODEL_A, collection: 'ads-off', config: off, redisUrl, workers: 1, log: () => {} });
  assert.deepEqual(r.expansions, {});
  got = await stored('ads-off', ids);
  for (const id of ids) assert.deepEqual(Array.from(got.get(id).indices), Array.from(own.get(id).indices), `${id} off: its own vector`);
  assert.equal(readIndexed(h.MODEL_A)['ads-off__own'], undefined);

  // A source that does not exist: stored unexpanded, and the record says so.
  const nowhere = loadConfig({ overrides: { ...h.trainOverrides(1), embed: { keepCount: 36 }, adEmbed: { collections: ['ads-nowhere'], expand: { from: 'no-pages' } } } });
  const n = await runIndex({ corpus, model: h.MODEL_A, collection: 'ads-nowhere', config: nowhere, redisUrl, workers: 1, log: () => {} });
  assert.equal(n.expansions['ads-nowhere']?.expanded, false);
  assert.match(String(n.expansions['ads-nowhere']?.reason), /"no-pages" is empty or missing/);
  own = await stored('ads-nowhere__own', ids);
  got = await stored('ads-nowhere', ids);
  for (const id of ids) assert.deepEqual(Array.from(got.get(id).indices), Array.from(own.get(id).indices), `${id} without pages: its own vector`);
});

test('the queued bulk: ads written by the index workers are expanded; a queued bulk into the articles marks the ads stale', async () => {
  const { waitFor } = await import('../lib/wait.js');
  srv = await startServer({ config: base, model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 1 });
  const call = (/** @type {import('light-my-request').InjectOptions | string} */ o) => h.inject(/** @type {any} */ (srv).app, o);
  const bulk = async (/** @type {string} */ collection, /** @type {object} */ doc) => {
    const r = await call({ method: 'POST', url: `/v1/collections/${collection}/documents:bulk`, headers: { ...KEY, 'content-type': 'application/x-ndjson' }, payload: `${JSON.stringify(doc)}\n` });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    /** @type {any} */
    let status;
    await waitFor(async () => {
      status = (await call({ url: r.body.status_url, headers: KEY })).body;
      return status.state === 'completed' || status.state === 'failed';
    }, { timeoutMs: 90_000, everyMs: 100, what: 'the bulk job to end', last: () => status });
    assert.equal(status.state, 'completed', JSON.stringify(status));
  };
  await bulk('ads', { id: 'ad-queued', title: 'スマホ乗り換え', body: '最新のスマートフォンに乗り換え。Android端末のバッテリーと画面。' });
  const listed = async (/** @type {string} */ name) => (await call('/v1/collections')).body.collections.find((/** @type {any} */ c) => c.name === name);
  assert.equal((await listed('ads')).expansion.stale, false);
  await bulk('articles', { id: 'page-queued', title: '新機種', body: 'スマートフォンの新機種が発表された。' });
  await waitFor(async () => (await listed('ads')).expansion.stale === true, { timeoutMs: 5_000, everyMs: 100, what: 'the ads marked stale' });
  await srv.close();
  srv = undefined;
  const articles = await stored('articles');
  articles.delete('page-queued');
  assertExpanded((await stored('ads', ['ad-queued'])).get('ad-queued'), (await stored('ads__own', ['ad-queued'])).get('ad-queued'), articles, 'the queued bulk\'s ad');
});
