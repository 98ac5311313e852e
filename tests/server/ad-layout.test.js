// Ad collections have a vector layout of their own (adEmbed: α 0.5, a tenth of the SCDV entries kept) while pages keep `embed`'s:
// a document written through the API into an ad collection is embedded with it (on the server's write threads), as
// `scdv embed` with those settings and `scdv index` embed it; the layout is recorded; pages' texts sent to /v1/match
// are embedded as their collection's pages; a collection whose vectors cannot be compared with the ads' is refused.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

const h = await import('./helpers.js');
const { startServer } = await import('../../server/start.js');
const { runIndex } = await import('../../pipeline/stages/indexing.js');
const { readIndexed, recordIndexed } = await import('../../pipeline/serving/index.js');
const { modelLayout } = await import('../../pipeline/embed/index.js');
const { loadModel } = await import('../../pipeline/model/load.js');
const { openStore } = await import('../../pipeline/store/index.js');
const { REPO_ROOT, storeDirFor } = await import('../../pipeline/paths.js');
const { loadConfig } = await import('../../pipeline/config.js');

const CLI = path.join(REPO_ROOT, 'pipeline', 'cli.js');
const KEY = { authorization: `Bearer ${h.API_KEY}` };
const AD = { title: '格闘技の大会をライブ配信', body: 'サッカーと野球の試合をライブ配信。選手と監督のインタビューも見逃さない。' };
const PAGE = { title: '代表戦', body: 'サッカー日本代表は予選で勝利し、監督は選手たちの粘り強さを称えた。スタジアムに多くのサポーターが集まった。' };

/** @type {import('../../server/start.js').RunningServer | undefined} */
let srv;
/** @type {string} */
let redisUrl;
// Ads' own layout without expansion (tests/server/ad-expansion.test.js tests it): the stored ad is the embedded one.
const withExpand = h.testConfig();
const config = { ...withExpand, adEmbed: { ...withExpand.adEmbed, expand: { ...withExpand.adEmbed.expand, weight: 0 } } };

before(async () => {
  ({ redis: { url: redisUrl } } = await h.setup());
});
after(async () => {
  await srv?.close();
  await h.teardown();
});

/**
 * `scdv embed` of texts with a config file's settings (nothing recorded for pages yet: the config's apply).
 * @param {Record<string, any>} overrides
 * @param {{title: string, body: string}[]} docs
 */
function scdvEmbed(overrides, docs) {
  const file = path.join(h.tmp, `embed-${Math.random().toString(36).slice(2)}.json`);
  fs.writeFileSync(file, JSON.stringify(overrides));
  const r = spawnSync(process.execPath, [CLI, 'embed', '--model', h.MODEL_A, '--config', file], { encoding: 'utf8', input: docs.map((d) => JSON.stringify(d)).join('\n') + '\n' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim().split('\n').map((l) => JSON.parse(l));
}

/**
 * Stored vectors of a collection of MODEL_A (the server closed: the store is this process's to open).
 * @param {string} collection
 * @param {string[]} ids
 */
async function storedVectors(collection, ids) {
  const store = openStore(storeDirFor(h.MODEL_A));
  try {
    const c = store.collection(collection);
    return Promise.all(ids.map(async (id) => (await c.get(id))?.vector));
  } finally {
    store.close();
  }
}

/**
 * Stored values are 11-bit codes (pipeline/store/README.md): the same entries, values within 1e-3.
 * @param {{indices: ArrayLike<number>, values: ArrayLike<number>} | undefined} got
 * @param {{indices: ArrayLike<number>, values: ArrayLike<number>}} want
 * @param {string} what
 */
function assertSameVector(got, want, what) {
  assert.ok(got, `${what}: stored`);
  assert.deepEqual(Array.from(got.indices), Array.from(want.indices), `${what}: the same entries`);
  Array.from(want.values).forEach((v, i) => assert.ok(Math.abs(got.values[i] - v) < 1e-3, `${what}: entry ${i} ${got.values[i]} vs ${v}`));
}

test('an ad written through the API gets the ads\' layout (as scdv embed with those settings, and scdv index), pages keep theirs', async () => {
  assert.deepEqual(withExpand.adEmbed, { collections: ['ads'], alpha: 0.5, keepFraction: 0.1, expand: { from: 'articles', neighbours: 10, weight: 1 } });
  const adSettings = { embed: { keepCount: null, keepFraction: 0.1, hybrid: { alpha: 0.5 } } };
  const [cliAd] = scdvEmbed(adSettings, [AD]);
  const [cliAsPage] = scdvEmbed({ embed: { keepCount: config.embed.keepCount } }, [AD]);
  assert.notDeepEqual(cliAd.indices, cliAsPage.indices, 'the two layouts give this ad different vectors');

  srv = await startServer({ config, model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  const call = (/** @type {import('light-my-request').InjectOptions} */ o) => h.inject(/** @type {any} */ (srv).app, o);
  // The set-up's `ads` predates any record (written straight to the store): it keeps the layout it holds. A new one gets the ads'.
  assert.equal((await call({ method: 'DELETE', url: '/v1/collections/ads', headers: KEY })).status, 200);
  const put = await call({ method: 'PUT', url: '/v1/collections/ads/documents/ad-live', headers: KEY, payload: AD });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  assert.equal(put.body.nnz, cliAd.indices.length);
  const page = await call({ method: 'PUT', url: '/v1/collections/articles/documents/page-live', headers: KEY, payload: AD });
  assert.equal(page.body.nnz, cliAsPage.indices.length, 'a page keeps the pages\' layout');
  const rec = readIndexed(h.MODEL_A);
  assert.deepEqual([rec.ads.layout.embed.hybrid.alpha, rec.ads.layout.embed.keepFraction, rec.ads.layout.embed.keepCount], [0.5, 0.1, null], 'the ads\' layout is recorded');
  assert.equal(rec.articles.layout.embed.hybrid.alpha, config.embed.hybrid.alpha);

  // A page's text sent to /v1/match is embedded as the articles are: its best ad scores as the stored article does.
  const text = await call({ method: 'POST', url: '/v1/match', payload: { collection: 'ads', title: AD.title, text: AD.body, k: 1, min_score: -1 } });
  const byId = await call({ method: 'GET', url: '/v1/match?collection=ads&for=page-live&k=1&min_score=-1' });
  assert.equal(text.status, 200, JSON.stringify(text.body));
  assert.equal(text.body.results[0].id, 'ad-live');
  assert.ok(Math.abs(text.body.results[0].score - byId.body.results[0].score) < 2e-3, `${text.body.results[0].score} vs ${byId.body.results[0].score}`);
  await srv.close();
  srv = undefined;

  // The batch index of the same text into the same collection: the recorded layout agrees, and so does the vector.
  const corpus = path.join(h.tmp, 'ad-batch.jsonl');
  fs.writeFileSync(corpus, `${JSON.stringify({ id: 'ad-batch', ...AD })}\n`);
  const summary = await runIndex({ corpus, model: h.MODEL_A, collection: 'ads', config, redisUrl, workers: 1, log: () => {} });
  assert.equal(summary.documents, 1);
  const [live, batch, asPage] = [...await storedVectors('ads', ['ad-live', 'ad-batch']), ...await storedVectors('articles', ['page-live'])];
  assertSameVector(live, cliAd, 'the API\'s ad vs scdv embed with the ads\' settings');
  assertSameVector(batch, cliAd, 'scdv index\'s ad vs scdv embed with the ads\' settings');
  assertSameVector(asPage, cliAsPage, 'the API\'s page vs scdv embed with the pages\' settings');
});

test('an ad collection indexed with other settings, or pages of a layout the ads\' cannot be compared with, are refused by name', async () => {
  // `scdv index` into the recorded ads with another adEmbed.alpha: the layouts differ, and the error says where the settings come from.
  const corpus = path.join(h.tmp, 'ad-other.jsonl');
  fs.writeFileSync(corpus, `${JSON.stringify({ id: 'ad-other', ...AD })}\n`);
  const other = loadConfig({ overrides: { ...h.trainOverrides(1), embed: { keepCount: 36 }, adEmbed: { alpha: 0.3 } } });
  await assert.rejects(runIndex({ corpus, model: h.MODEL_A, collection: 'ads', config: other, redisUrl, workers: 1, log: () => {} }),
    (/** @type {any} */ e) => e.code === 'SCDV_EMBED_LAYOUT_MISMATCH' && /hybrid\.alpha 0\.5 vs 0\.3/.test(e.message) && /adEmbed/.test(e.message));

  // Pages of pure SCDV vectors (α 1) against hybrid ads: no score between them means anything.
  const pure = { ...config.embed, hybrid: { ...config.embed.hybrid, alpha: 1 } };
  await h.indexDocs(h.MODEL_A, 'pure-pages', [{ id: 'p1', ...PAGE }], { ...config, embed: pure });
  const model = loadModel(h.MODEL_A);
  recordIndexed(h.MODEL_A, 'pure-pages', modelLayout(model, pure));
  model.wordTopics.close();
  srv = await startServer({ config, model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  const call = (/** @type {import('light-my-request').InjectOptions} */ o) => h.inject(/** @type {any} */ (srv).app, o);
  for (const r of [
    await call({ method: 'POST', url: '/v1/match', payload: { collection: 'ads', source: 'pure-pages', text: PAGE.body, k: 3 } }),
    await call({ method: 'GET', url: '/v1/match?collection=ads&source=pure-pages&for=p1&k=3' }),
  ]) {
    assert.equal(r.status, 409, JSON.stringify(r.body));
    assert.equal(r.body.error, 'SCDV_LAYOUTS_INCOMPARABLE');
    assert.match(r.body.message, /"pure-pages" \(scdv vectors\) cannot be matched with collection "ads" \(hybrid vectors\)/);
  }
  // A text for related articles of the pure collection is embedded in its layout (not the model's default): it finds p1.
  const rel = await call({ method: 'POST', url: '/v1/collections/pure-pages/related', payload: { title: PAGE.title, text: PAGE.body, k: 1, collapse: false, feedback: false } });
  assert.equal(rel.status, 200, JSON.stringify(rel.body));
  assert.equal(rel.body.results[0]?.id, 'p1');
  assert.ok(rel.body.results[0].score > 0.99, `the same text in the same layout scores ~1, got ${rel.body.results[0].score}`);
});
