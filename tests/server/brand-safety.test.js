// Brand-safety controls of /v1/match (pipeline/match/safety.js), each rule through the API, live and precomputed:
// a request's block_category, block_site and block_keyword; a page collection's sensitive topics (server.brandSafety:
// seed texts embedded by the model, a threshold, per-collection settings); an ad's exclude_sites and
// exclude_categories. A blocked page's answer names the rule. The small real models of ./helpers.js, a private Redis.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

const h = await import('./helpers.js');
const { startServer } = await import('../../server/start.js');
const { runPrecompute } = await import('../../pipeline/stages/precompute.js');
const { localPrecompute } = await import('../../workers/precompute.js');
const { parseDocument } = await import('../../pipeline/corpus/document.js');
const { loadConfig } = await import('../../pipeline/config.js');
const { containsKeyword, normaliseText } = await import('../../pipeline/match/safety.js');

/** @type {string} */
let redisUrl;
const KEY = { authorization: `Bearer ${h.API_KEY}` };
const SPORTS = 'sports-watch-4597641';
const PHONE = 'smax-6511908';
const SOCCER = 'サッカー日本代表はワールドカップ予選で勝利し、監督は選手たちの粘り強さを称えた。次の試合ではスタジアムに多くのサポーターが集まる予定だ。';
const PHONE_TEXT = 'NTTドコモのスマートフォンに不具合、ソフトウェア更新でAndroidの通信が正常に動作するようになった。';
/** A "sensitive topic" the small models know the words of: football (the bundled seeds' words are mostly not in their lexicon). */
const FOOTBALL = [{ topic: 'football', text: 'サッカー、日本代表、試合、監督、選手、ゴール、スタジアム' }];
const noSafety = { brandSafety: { threshold: null } }; // the default, said where a test relies on it
/** @type {import('../../server/start.js').RunningServer[]} */
const servers = [];

/** A server of MODEL_A with these server settings (the tests' defaults, sensitive topics off unless given). */
async function serve(server = {}) {
  const srv = await startServer({ config: h.testConfig({ ...noSafety, ...server }), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  servers.push(srv);
  return srv;
}

/** @type {import('../../server/start.js').RunningServer} */
let srv;
/** @type {import('../../server/start.js').RunningServer} a server whose sensitive-topic rule blocks every page (threshold -1) */
let probe;
/** @type {import('../../server/start.js').RunningServer} one whose threshold is between the football text's similarity and the phone text's */
let guarded;
/** @type {Record<string, any>} */
let guardedSettings;
/** @type {{football: any, phone: any, threshold: number}} */
let measured;
before(async () => {
  ({ redis: { url: redisUrl } } = await h.setup());
  // Pages of one short text each: their similarity to the seed is that of the text (long articles' lexical blocks are
  // diluted, so every article of the small models scores about the same).
  await h.indexDocs(h.MODEL_A, 'articles', [{ id: 'page-football', title: '', body: SOCCER }, { id: 'page-phone', title: '', body: PHONE_TEXT }], h.testConfig());
  srv = await serve();
  // The similarities first, with a threshold every page reaches; then a threshold between the football text and the phone one.
  probe = await serve({ brandSafety: { threshold: -1, seeds: FOOTBALL } });
  const football = (await matchText({ text: SOCCER }, probe)).body.blocked;
  const phone = (await matchText({ text: PHONE_TEXT }, probe)).body.blocked;
  measured = { football, phone, threshold: Math.round(((football.similarity + phone.similarity) / 2) * 1e4) / 1e4 };
  guardedSettings = { brandSafety: { threshold: measured.threshold, seeds: FOOTBALL, collections: [{ collection: 'blogs', threshold: null }] } };
  guarded = await serve(guardedSettings);
  // Every server opens the collections before any test writes through one of them (in one process, a server's write
  // holds a collection's lock, which another server's first opening would meet).
  for (const s of [srv, probe, guarded]) assert.equal((await matchFor(SPORTS, '', s)).status, 200);
});
after(async () => {
  for (const s of servers) await s.close();
  await h.teardown();
});

/** @param {import('light-my-request').InjectOptions | string} opts */
const call = (opts, s = srv) => h.inject(s.app, opts);
/** @param {string} id @param {string} [extra] query string */
const matchFor = (id, extra = '', s = srv) => call(`/v1/match?collection=ads&for=${encodeURIComponent(id)}&k=5&min_score=-1${extra}`, s);
/** @param {Record<string, unknown>} body */
const matchText = (body, s = srv) => call({ method: 'POST', url: '/v1/match', payload: { collection: 'ads', k: 5, min_score: -1, ...body } }, s);
const precompute = (/** @type {Record<string, any>} */ server = {}, k = 5) => runPrecompute({
  model: h.MODEL_A, source: 'articles', target: 'ads', k, redisUrl, config: h.testConfig({ ...noSafety, ...server }), processor: localPrecompute,
});
/** @param {string} collection @param {string} id @param {Record<string, unknown>} doc */
async function put(collection, id, doc) {
  const r = await call({ method: 'PUT', url: `/v1/collections/${collection}/documents/${id}`, headers: KEY, payload: doc });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

test('block_category: a page of a blocked category gets no ads, live and precomputed, GET and POST; the answer names the rule', async () => {
  const open = await matchFor(SPORTS);
  assert.equal(open.status, 200, JSON.stringify(open.body));
  assert.equal(open.body.results.length, 5);
  assert.equal(open.body.blocked, undefined);
  const live = await matchFor(SPORTS, '&block_category=peachy&block_category=sports-watch');
  assert.deepEqual([live.body.served_from, live.body.results, live.body.blocked], ['live', [], { rule: 'block_category', value: 'sports-watch' }]);
  assert.equal((await matchFor(PHONE, '&block_category=sports-watch')).body.results.length, 5, 'another category is not blocked');

  await precompute();
  const pre = await matchFor(SPORTS, '&block_category=sports-watch');
  assert.deepEqual([pre.body.served_from, pre.body.results, pre.body.blocked], ['precomputed', [], { rule: 'block_category', value: 'sports-watch' }]);
  const preOpen = await matchFor(SPORTS);
  assert.deepEqual([preOpen.body.served_from, preOpen.body.results.length, preOpen.body.blocked], ['precomputed', 5, undefined]);

  // A precomputed answer costs the one Redis MGET, with or without a request's rules (they read the store).
  const { Redis } = await import('ioredis');
  const { redisOptions } = await import('../../pipeline/queue/redis.js');
  const r = new Redis(redisOptions(redisUrl));
  try {
    const calls = async () => {
      const info = /** @type {string} */ (await r.info('commandstats'));
      return Object.fromEntries([...info.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)].map((m) => [m[1], Number(m[2])]));
    };
    const before = await calls();
    for (const extra of ['', '&block_category=peachy', '&block_site=example.com&block_keyword=x']) {
      assert.equal((await matchFor(SPORTS, extra)).body.served_from, 'precomputed', extra);
    }
    const after = await calls();
    const delta = Object.fromEntries(Object.keys(after).flatMap((c) => (c !== 'info' && after[c] > (before[c] ?? 0) ? [[c, after[c] - (before[c] ?? 0)]] : [])));
    assert.deepEqual(delta, { mget: 3 });
  } finally {
    r.disconnect();
  }

  const text = await matchText({ text: SOCCER, category: 'sports-watch', block_category: ['sports-watch'] });
  assert.deepEqual([text.body.results, text.body.blocked], [[], { rule: 'block_category', value: 'sports-watch' }]);
  assert.equal((await matchText({ text: SOCCER, block_category: ['sports-watch'] })).body.results.length, 5, 'a text without a category is not blocked by one');
});

test('block_site: a page of a blocked site or of its subdomain gets no ads; a name that only ends the same does not block', async () => {
  await put('articles', 'page-on-site', { title: 'サッカー観戦記', body: SOCCER, site: 'news.example.com', category: 'sports-watch' });
  for (const [sites, blocked] of /** @type {[string[], string | null][]} */ ([[['example.com'], 'example.com'], [['NEWS.example.com'], 'NEWS.example.com'],
    [['ample.com'], null], [['other.example'], null]])) {
    const r = await matchFor('page-on-site', sites.map((x) => `&block_site=${x}`).join(''));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.blocked, blocked === null ? undefined : { rule: 'block_site', value: blocked }, sites.join());
    assert.equal(r.body.results.length, blocked === null ? 5 : 0);
    const t = await matchText({ text: SOCCER, site: 'news.example.com', block_site: sites });
    assert.deepEqual(t.body.blocked, blocked === null ? undefined : { rule: 'block_site', value: blocked }, sites.join());
  }
});

test('block_keyword: Japanese keywords match inside words, Latin ones as whole words, after NFKC and lower-casing; title, text and keywords are looked in', async () => {
  const quake = '東日本大震災から一年、被災地ではサッカーの試合が開かれ、日本代表の選手が子どもたちと交流した。';
  const t = await matchText({ text: quake, block_keyword: ['震災'] });
  assert.deepEqual([t.body.results, t.body.blocked], [[], { rule: 'block_keyword', value: '震災', field: 'text' }], 'a part of the compound 東日本大震災 blocks it');
  assert.equal((await matchText({ text: quake, block_keyword: ['台風'] })).body.results.length, 5);
  assert.deepEqual((await matchText({ title: 'ＧＵＮ　ＳＨＯＷ', text: SOCCER, block_keyword: ['gun'] })).body.blocked, { rule: 'block_keyword', value: 'gun', field: 'title' });
  assert.equal((await matchText({ title: 'The game has begun', text: SOCCER, block_keyword: ['gun'] })).body.blocked, undefined, '"gun" does not block "begun"');
  assert.deepEqual((await matchText({ text: SOCCER, keywords: ['ｶﾞｽ爆発'], block_keyword: ['ガス爆発'] })).body.blocked, { rule: 'block_keyword', value: 'ガス爆発', field: 'keywords' });
  // GET: the stored page's title and keywords (its body is not stored).
  await put('articles', 'page-keywords', { title: '台風一過のスタジアム', body: SOCCER, keywords: ['サッカー', '台風'] });
  assert.deepEqual((await matchFor('page-keywords', `&block_keyword=${encodeURIComponent('台風一過')}`)).body.blocked, { rule: 'block_keyword', value: '台風一過', field: 'title' });
  assert.equal((await matchFor('page-keywords', `&block_keyword=${encodeURIComponent('地震')}`)).body.results.length, 5);
  assert.ok(containsKeyword(normaliseText('Ｃ＋＋ and AI-driven'), 'ai') && !containsKeyword(normaliseText('said'), 'ai'));
});

test('sensitive topics: a page close to a seed text gets no ads (GET live and precomputed, POST), per page collection; the answer gives the similarity', async () => {
  const { football, phone, threshold } = measured;
  assert.deepEqual([football.rule, football.topic, phone.topic], ['sensitive_topic', 'football', 'football']);
  assert.ok(football.similarity > phone.similarity + 0.05, `football ${football.similarity}, phone ${phone.similarity}`);
  // A stored page of the same text: the same similarity, to the store's precision (stored values are 11-bit codes).
  const stored = (await matchFor('page-football', '', probe)).body.blocked;
  assert.ok(stored.topic === 'football' && Math.abs(stored.similarity - football.similarity) < 2e-3, JSON.stringify([stored, football]));

  const t = await matchText({ text: SOCCER }, guarded);
  assert.deepEqual([t.body.results, t.body.blocked], [[], { rule: 'sensitive_topic', topic: 'football', similarity: football.similarity, threshold }]);
  assert.equal((await matchText({ text: PHONE_TEXT }, guarded)).body.results.length, 5);
  assert.equal((await matchText({ text: SOCCER, source: 'blogs' }, guarded)).body.results.length, 5, 'the rule is off for the collection blogs');
  const live = await matchFor('page-football', '', guarded);
  assert.equal(live.status, 200, JSON.stringify(live.body));
  assert.deepEqual([live.body.served_from, live.body.results, live.body.blocked], ['live', [], { ...t.body.blocked, similarity: stored.similarity }]);
  assert.equal((await matchFor('page-phone', '', guarded)).body.results.length, 5);

  // Entries computed without the seeds are not judged by them: answered live until precomputed with them.
  await precompute();
  assert.equal((await matchFor('page-football', '', guarded)).body.served_from, 'live');
  assert.equal((await matchFor('page-football', '', srv)).body.served_from, 'precomputed', 'a server without the rule serves them');
  await precompute(guardedSettings);
  const pre = await matchFor('page-football', '', guarded);
  assert.deepEqual([pre.body.served_from, pre.body.results, pre.body.blocked], ['precomputed', [], live.body.blocked], 'the same verdict from the entry');
  const preOpen = await matchFor('page-phone', '', guarded);
  assert.deepEqual([preOpen.body.served_from, preOpen.body.results.length, preOpen.body.blocked], ['precomputed', 5, undefined]);
  // The entry keeps its results: a server with the rule off serves them.
  assert.equal((await matchFor('page-football', '', srv)).body.results.length, 5);
});

test('an ad\'s exclude_categories and exclude_sites keep it off those pages\' lists, which fill up from the next ads; live, precomputed and POST', async () => {
  await put('ads', 'ad-no-sports', { title: 'サッカー観戦ツアー', body: SOCCER, exclude_categories: ['sports-watch'] });
  await put('ads', 'ad-no-example', { title: 'サッカー中継', body: SOCCER, exclude_sites: ['example.com'] });
  await put('articles', 'page-sports-site', { title: 'サッカー観戦記', body: SOCCER, site: 'www.example.com', category: 'sports-watch' });
  await put('articles', 'page-plain', { title: 'サッカー観戦記', body: SOCCER });
  const k = 7; // every ad: the 5 of ./helpers.js and these two
  const ids = (/** @type {any} */ body) => body.results.map((/** @type {any} */ r) => r.id);
  const check = async (/** @type {string} */ from) => {
    const plain = (await call(`/v1/match?collection=ads&for=page-plain&k=${k}&min_score=-1`)).body;
    assert.deepEqual([plain.served_from, plain.excluded_ads], [from, undefined]);
    assert.deepEqual(ids(plain).slice(0, 2).sort(), ['ad-no-example', 'ad-no-sports'], 'both ads are the best for the plain page');
    const both = (await call(`/v1/match?collection=ads&for=page-sports-site&k=${k}&min_score=-1`)).body;
    assert.equal(both.served_from, from);
    assert.deepEqual(ids(both), ids(plain).filter((/** @type {string} */ id) => !id.startsWith('ad-no-')));
    assert.deepEqual(both.excluded_ads.sort((/** @type {any} */ a, /** @type {any} */ b) => a.id.localeCompare(b.id)),
      [{ id: 'ad-no-example', by: 'exclude_sites' }, { id: 'ad-no-sports', by: 'exclude_categories' }]);
    const sports = (await call(`/v1/match?collection=ads&for=${SPORTS}&k=2&min_score=-1`)).body;
    assert.equal(sports.results.length, 2, 'the list is filled from the next ads');
    assert.ok(!ids(sports).includes('ad-no-sports') && sports.results.length === 2, JSON.stringify(sports));
  };
  await check('live');
  await precompute({}, k);
  await check('precomputed');
  const text = (await matchText({ text: SOCCER, site: 'blog.example.com', k })).body;
  assert.deepEqual([ids(text).includes('ad-no-example'), ids(text).includes('ad-no-sports'), text.excluded_ads], [false, true, [{ id: 'ad-no-example', by: 'exclude_sites' }]]);
  const doc = (await call('/v1/collections/ads/documents/ad-no-sports')).body;
  assert.deepEqual(doc.ad, { exclude_categories: ['sports-watch'] });
});

test('bad exclusions are refused with the field named, in a PUT and in a corpus line; bad brand-safety settings name the key', async () => {
  const cases = /** @type {[Record<string, unknown>, RegExp][]} */ ([
    [{ exclude_sites: 'example.com' }, /field "exclude_sites" must be a list of at most 100 strings of 1 to 200 characters/],
    [{ exclude_categories: Array.from({ length: 101 }, (_, i) => `c${i}`) }, /field "exclude_categories" must be a list of at most 100 strings/],
    [{ exclude_categories: [''] }, /field "exclude_categories" must be a list/],
  ]);
  for (const [bad, message] of cases) {
    const r = parseDocument(Buffer.from(JSON.stringify({ id: 'ad-x', body: 'サッカー', ...bad })), 1);
    assert.ok('error' in r && message.test(r.error.reason), `${JSON.stringify(bad)}: ${JSON.stringify(r)}`);
    const p = await call({ method: 'PUT', url: '/v1/collections/ads/documents/ad-x', headers: KEY, payload: { body: 'サッカーの試合', ...bad } });
    assert.equal(p.status, 400, JSON.stringify(bad));
    assert.match(JSON.stringify(p.body), /exclude_(sites|categories)/);
  }
  const q = await call('/v1/match?collection=ads&for=x&block_keyword=');
  assert.equal(q.status, 400, 'an empty keyword is refused');
  for (const [bs, message] of /** @type {[Record<string, unknown>, RegExp][]} */ ([
    [{ threshold: 2 }, /server\.brandSafety\.threshold must be a number from -1 to 1, or null \(null: off\)/],
    [{ seeds: [{ topic: 'x' }] }, /server\.brandSafety\.seeds\[0\]\.text is missing/],
    [{ collections: [{ collection: 'a' }, { collection: 'a' }] }, /server\.brandSafety\.collections\[1\]\.collection names a a second time/],
    [{ collections: [{ collection: 'a', threshold: 'high' }] }, /server\.brandSafety\.collections\[0\]\.threshold must be a number/],
  ])) {
    assert.throws(() => loadConfig({ overrides: { server: { brandSafety: bs } } }), { code: 'SCDV_CONFIG_INVALID', message }, JSON.stringify(bs));
  }
  const defaults = loadConfig().server.brandSafety;
  assert.equal(defaults.threshold, null, 'off until a threshold is set (its scale depends on the layout)');
  assert.deepEqual(defaults.seeds.map((s) => s.topic).slice(0, 4), ['disaster', 'accident', 'crime', 'death']);
});
