// Ads as ad servers know them: an ad's advertiser, landing URL, keywords and deal id are stored as its metadata
// (pipeline/corpus/document.js, pipeline/embed/meta.js) and returned in match answers (live, precomputed) and with
// the document; bad values are refused with the field named. The bundled sample (tests/fixtures/ads) carries them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const h = await import('./helpers.js');
const { startServer } = await import('../../server/start.js');
const { runPrecompute } = await import('../../pipeline/stages/precompute.js');
const { localPrecompute } = await import('../../workers/precompute.js');
const { parseDocument } = await import('../../pipeline/corpus/document.js');
const { REPO_ROOT } = await import('../../pipeline/paths.js');

/** @type {import('../../server/start.js').RunningServer} */
let srv;
/** @type {string} */
let redisUrl;
const KEY = { authorization: `Bearer ${h.API_KEY}` };
const SAMPLE = path.join(REPO_ROOT, 'tests', 'fixtures', 'ads', 'sample.jsonl');
const AD = {
  title: '格闘技の大会をライブ配信で', body: '総合格闘技とキックボクシングの試合をライブ配信。引退試合も見逃さない。',
  category: 'sports-watch', site: 'fight-channel.example', advertiser: 'ファイトチャンネル', landing_url: 'https://www.fight-channel.example/ppv',
  keywords: ['格闘技', 'ライブ配信'], deal_id: 'deal-sports-0002',
};
const FIELDS = { advertiser: AD.advertiser, landing_url: AD.landing_url, keywords: AD.keywords, deal_id: AD.deal_id };

before(async () => {
  ({ redis: { url: redisUrl } } = await h.setup());
  srv = await startServer({ config: h.testConfig(), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
});
after(async () => {
  await srv?.close();
  await h.teardown();
});

/** @param {import('light-my-request').InjectOptions | string} opts */
const call = (opts) => h.inject(srv.app, opts);

test('the bundled ads: at least 100, each of the sample\'s 9 categories, every one with advertiser, landing URL and keywords', () => {
  const lines = fs.readFileSync(SAMPLE, 'utf8').trim().split('\n');
  const docs = lines.map((l, i) => {
    const r = parseDocument(Buffer.from(l), i + 1);
    assert.ok('doc' in r, `line ${i + 1}: ${JSON.stringify(r)}`);
    return r.doc;
  });
  assert.ok(docs.length >= 100, `${docs.length} ads`);
  assert.equal(new Set(docs.map((d) => d.id)).size, docs.length, 'ids are unique');
  const articles = new Set(h.sampleDocs().map((d) => d.category));
  /** @type {Map<string | undefined, typeof docs>} */
  const byCategory = new Map();
  for (const d of docs) byCategory.set(d.category, [...(byCategory.get(d.category) ?? []), d]);
  assert.deepEqual([...byCategory.keys()].sort(), [...articles].sort());
  for (const [c, ads] of byCategory) assert.ok(ads.length >= 10, `${c}: ${ads.length} ads`);
  for (const d of docs) {
    assert.ok(d.ad?.advertiser && d.ad.landing_url?.startsWith('https://') && (d.ad.keywords?.length ?? 0) >= 1, JSON.stringify(d));
  }
  assert.ok(docs.some((d) => d.ad?.deal_id) && docs.some((d) => !d.ad?.deal_id), 'the deal id is optional');
});

test('an ad written through the API keeps its fields: returned with the document and in live and precomputed matches', async () => {
  const put = await call({ method: 'PUT', url: '/v1/collections/ads/documents/ad-fight-ppv', headers: KEY, payload: AD });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  const doc = await call('/v1/collections/ads/documents/ad-fight-ppv');
  assert.deepEqual(doc.body.ad, FIELDS);

  const text = await call({ method: 'POST', url: '/v1/match', payload: { collection: 'ads', text: AD.body, k: 3, min_score: -1 } });
  const hit = text.body.results.find((/** @type {any} */ r) => r.id === 'ad-fight-ppv');
  assert.ok(hit, JSON.stringify(text.body));
  assert.deepEqual(hit.ad, FIELDS);
  // An ad without the fields has none in its result.
  assert.ok(text.body.results.filter((/** @type {any} */ r) => r.id !== 'ad-fight-ppv').every((/** @type {any} */ r) => r.ad === undefined));

  const k = 6; // every ad of the collection (the 5 of ./helpers.js and this one)
  const live = await call(`/v1/match?collection=ads&for=sports-watch-4597641&k=${k}&min_score=-1`);
  assert.equal(live.body.served_from, 'live');
  await runPrecompute({ model: h.MODEL_A, source: 'articles', target: 'ads', k, redisUrl, config: h.testConfig(), processor: localPrecompute });
  const pre = await call(`/v1/match?collection=ads&for=sports-watch-4597641&k=${k}&min_score=-1`);
  assert.equal(pre.body.served_from, 'precomputed');
  for (const body of [live.body, pre.body]) {
    assert.deepEqual(body.results.find((/** @type {any} */ r) => r.id === 'ad-fight-ppv')?.ad, FIELDS, JSON.stringify(body));
  }
  // Related lists of an ads collection return them too: the store's fast path (default options) leaves such metadata
  // to the parser (pipeline/store/native/src/result_fields.cc).
  const related = await call('/v1/collections/ads/documents/ad-phone/related?k=5');
  assert.equal(related.status, 200, JSON.stringify(related.body));
  assert.deepEqual(related.body.results.find((/** @type {any} */ r) => r.id === 'ad-fight-ppv')?.ad, FIELDS);
});

test('bad ad fields are refused with the field named, in a PUT and in a corpus line', async () => {
  const cases = /** @type {[Record<string, unknown>, RegExp][]} */ ([
    [{ landing_url: 'javascript:alert(1)' }, /field "landing_url" must be an http or https URL/],
    [{ landing_url: 'x'.repeat(3000) }, /field "landing_url" must be a string of 1 to 2048 characters/],
    [{ advertiser: '' }, /field "advertiser" must be a string of 1 to 200 characters/],
    [{ keywords: 'サッカー' }, /field "keywords" must be a list of at most 50 strings of 1 to 100 characters/],
    [{ keywords: Array.from({ length: 51 }, (_, i) => `w${i}`) }, /field "keywords" must be a list of at most 50 strings/],
    [{ deal_id: 12 }, /field "deal_id" must be a string/],
  ]);
  for (const [bad, message] of cases) {
    const r = parseDocument(Buffer.from(JSON.stringify({ id: 'ad-x', body: 'サッカー', ...bad })), 1);
    assert.ok('error' in r && message.test(r.error.reason), `${JSON.stringify(bad)}: ${JSON.stringify(r)}`);
    const put = await call({ method: 'PUT', url: '/v1/collections/ads/documents/ad-x', headers: KEY, payload: { body: 'サッカーの試合', ...bad } });
    assert.equal(put.status, 400, JSON.stringify(bad));
    assert.match(JSON.stringify(put.body), /landing_url|advertiser|keywords|deal_id/, JSON.stringify(put.body));
  }
  assert.equal((await call('/v1/collections/ads/documents/ad-x')).status, 404, 'nothing was written');
});
