// The known-word rule of /v1/match: a page of which the model knows too small a share of its distinct words gets no
// ads (pipeline/match/safety.js, pageBlock), whatever its best ad scores; the minimum is derived per target collection
// from the known shares of the source's pages (pipeline/match/threshold.js), recorded with the derived min_score and
// overridable by the config and by the request. Checked through the API on the sample model (the demo's
// livedoor-sample: default training and embedding settings) with the demo's ads: live GET and POST, a stored page
// (its counts kept with it when written), a precomputed entry, and a document written before the counts were kept.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { LESSON, SOCCER } from './match-texts.js';

const h = await import('./helpers.js');
const { waitFor } = await import('../lib/wait.js');
const { startServer } = await import('../../server/start.js');
const { loadConfig } = await import('../../pipeline/config.js');
const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { REPO_ROOT, SAMPLE_CORPUS } = await import('../../pipeline/paths.js');
const { ensureModels } = await import('../lib/tiny-model.js');
const { DEMO_MODEL } = await import('../../pipeline/commands/demo.js');
const { runPrecompute } = await import('../../pipeline/stages/precompute.js');
const { localPrecompute } = await import('../../workers/precompute.js');
const { readIndexed } = await import('../../pipeline/serving/index.js');
const { adEmbedSettings } = await import('../../pipeline/embed/layout.js');
const { documentMeta } = await import('../../pipeline/embed/meta.js');
const { createEmbedder } = await import('../../pipeline/embed/index.js');
const { openStore } = await import('../../pipeline/store/index.js');
const { storeDirFor } = await import('../../pipeline/paths.js');
const { keyDigest } = await import('../../pipeline/api-keys.js');
const { keys } = await import('../../pipeline/match/index.js');
const { redisOptions } = await import('../../pipeline/queue/redis.js');

/** @type {import('../../server/start.js').RunningServer} */
let srv;
/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redis;
const config = loadConfig({ overrides: { server: { indexWorkers: 0, logLevel: 'silent', modelPollMs: 100, apiKeyHashes: [keyDigest(h.API_KEY)] } } });
const KEY = { authorization: `Bearer ${h.API_KEY}` };
const ADS = fs.readFileSync(path.join(REPO_ROOT, 'tests', 'fixtures', 'ads', 'sample.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
/** The demo's examples (articles of the sample). */
const EXAMPLES = ['sports-watch-4597641', 'it-life-hack-6292880'];

before(async () => {
  redis = await startPrivateRedis();
  await ensureModels({ corpus: SAMPLE_CORPUS, models: [{ name: DEMO_MODEL, overrides: {} }], redisUrl: redis.url });
  await h.indexDocs(DEMO_MODEL, 'ads', ADS, { ...config, embed: adEmbedSettings(config.embed, config.adEmbed) });
  await h.indexDocs(DEMO_MODEL, 'articles', h.sampleDocs(), config);
  // A page written before the word counts were kept: its metadata has none (the lesson's text, so the rule would block it).
  const embedder = await createEmbedder(DEMO_MODEL, config, { inMemory: true });
  const [v] = await embedder.embedDocuments([{ title: '', body: LESSON }]);
  embedder.model.wordTopics.close();
  const store = openStore(storeDirFor(DEMO_MODEL));
  const coll = store.collection('articles', { width: embedder.width });
  await coll.upsert([{ id: 'old-lesson', vector: { indices: v.indices, values: v.values }, meta: documentMeta({ id: 'old-lesson', title: '', body: LESSON }) }]);
  await coll.flush();
  store.close();
  srv = await startServer({ config, model: DEMO_MODEL, redisUrl: redis.url, host: '127.0.0.1', port: 0, indexWorkers: 0 });
});
after(async () => {
  await srv?.close();
  await redis?.stop();
  await h.teardown();
});

/** @param {import('light-my-request').InjectOptions | string} opts */
const call = (opts) => h.inject(srv.app, opts);
/** @param {string} text */
const matchText = (text, extra = {}) => call({ method: 'POST', url: '/v1/match', payload: { collection: 'ads', text, k: 3, ...extra } });
/** @param {string} id */
const matchFor = (id, extra = '') => call(`/v1/match?collection=ads&for=${encodeURIComponent(id)}${extra.includes('k=') ? '' : '&k=3'}${extra}`);

test('before the minimum is derived the rule is off, and the answer says so and gives the page\'s known share', async () => {
  const r = await matchText(LESSON, { min_score: -1 });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual([r.body.min_known_share, r.body.min_known_share_from, r.body.blocked, r.body.results.length], [0, 'none', undefined, 3]);
  assert.equal(r.body.known_share, 0.2, 'the model knows 3 of the lesson\'s 15 distinct words');
});

test('the stored page keeps its word counts; precomputing derives the minimum from the articles\' known shares, recorded and listed', async () => {
  const put = await call({ method: 'PUT', url: '/v1/collections/articles/documents/lesson', headers: KEY, payload: { title: '', body: LESSON } });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  const doc = await call('/v1/collections/articles/documents/lesson');
  assert.deepEqual([doc.body.known_words, doc.body.unknown_words], [put.body.known_words, put.body.unknown_words]);
  assert.deepEqual([doc.body.known_words, doc.body.unknown_words], [3, 12]);
  assert.equal((await call('/v1/collections/articles/documents/old-lesson')).body.known_words, undefined);

  const pre = await runPrecompute({ model: DEMO_MODEL, source: 'articles', target: 'ads', k: 3, redisUrl: redis.url, config, processor: localPrecompute });
  const ks = pre.threshold?.known_share;
  assert.ok(ks, JSON.stringify(pre.threshold));
  // Every article but old-lesson carries counts; half the median share of the sample's articles (0.433 on this model).
  assert.equal(ks.pages, h.sampleDocs().length + 1);
  assert.equal(ks.ratio, config.server.matchThreshold.knownShareRatio);
  assert.equal(ks.value, Math.floor(ks.ratio * ks.median * 1000 + 1e-6) / 1000);
  assert.ok(ks.value > 0.2 && ks.value < 0.3, JSON.stringify(ks));
  assert.deepEqual(readIndexed(DEMO_MODEL).ads?.match_min_score?.known_share, ks);
  await waitFor(async () => (await matchText(SOCCER)).body.min_known_share_from === 'derived', { timeoutMs: 30_000, everyMs: 50, what: 'the derived minimum to be applied' });
  const listed = (await call('/v1/collections')).body.collections.find((/** @type {any} */ c) => c.name === 'ads');
  assert.deepEqual(listed.match_min_score.known_share, ks);
  const model = (await call('/v1/models')).body.models.find((/** @type {any} */ m) => m.name === DEMO_MODEL);
  assert.deepEqual(model.collections.find((/** @type {any} */ c) => c.name === 'ads').match_min_score.known_share, ks);
});

test('the chemistry lesson gets no ads by default, and the answer says why; min_known_share 0 turns the rule off', async () => {
  const r = await matchText(LESSON);
  const min = r.body.min_known_share;
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.min_known_share_from, 'derived');
  assert.deepEqual(r.body.blocked, { rule: 'unknown_words', known_share: 0.2, known_words: 3, unknown_words: 12, min_known_share: min });
  assert.deepEqual([r.body.results, r.body.below_min_score, r.body.known_share], [[], 0, 0.2]);
  // Not the score threshold's doing: without the rule its best ad (the disaster kit) passes the derived min_score.
  const off = await matchText(LESSON, { min_known_share: 0 });
  assert.deepEqual([off.body.blocked, off.body.min_known_share, off.body.min_known_share_from], [undefined, 0, 'request']);
  const all = await matchText(LESSON, { min_known_share: 0, min_score: -1 });
  assert.equal(all.body.results.length, 3);
  assert.deepEqual(off.body.results, all.body.results.filter((/** @type {any} */ x) => x.score >= off.body.min_score));
  assert.ok(off.body.results.length >= 1, `the lesson's best ad scores ${all.body.results[0].score}, under min_score ${off.body.min_score}`);
  // A request's minimum replaces the derived one either way.
  const strict = await matchText(SOCCER, { min_known_share: 0.9 });
  assert.deepEqual([strict.body.blocked?.rule, strict.body.blocked?.min_known_share, strict.body.results], ['unknown_words', 0.9, []]);
});

test('a stored page gets the decision its text gets when POSTed: live, then from its precomputed entry', async () => {
  const posted = (await matchText(LESSON)).body;
  // Precomputed before the lesson's entry was written? The precompute above ran after the PUT: its entry is there.
  const pre = await matchFor('lesson');
  assert.equal(pre.status, 200, JSON.stringify(pre.body));
  assert.equal(pre.body.served_from, 'precomputed');
  assert.deepEqual([pre.body.blocked, pre.body.results, pre.body.known_share], [posted.blocked, [], posted.known_share]);
  const live = await matchFor('lesson', '&k=4'); // more than the entry holds: answered live
  assert.equal(live.body.served_from, 'live');
  assert.deepEqual([live.body.blocked, live.body.results, live.body.known_share], [posted.blocked, [], posted.known_share]);
  // The override applies to the precomputed entry too: its ads are served.
  const off = await matchFor('lesson', '&min_known_share=0&min_score=-1');
  assert.deepEqual([off.body.served_from, off.body.blocked, off.body.results.length, off.body.min_known_share_from], ['precomputed', undefined, 3, 'request']);
  assert.deepEqual(off.body.results.map((/** @type {any} */ x) => x.id), (await matchText(LESSON, { min_known_share: 0, min_score: -1 })).body.results.map((/** @type {any} */ x) => x.id));
  // An entry computed before the counts were recorded in entries (no `words`): the page's stored counts decide.
  const raw = new Redis(redisOptions(redis.url));
  try {
    const key = keys(config.queue.prefix).entry(DEMO_MODEL, 'articles', 'ads', 'lesson');
    const entry = /** @type {string} */ (await raw.get(key));
    assert.match(entry, /"words":\{"known":3,"unknown":12\},/);
    await raw.set(key, entry.replace(/"words":\{[^}]*\},/, ''), 'KEEPTTL');
    const older = await matchFor('lesson');
    assert.deepEqual([older.body.served_from, older.body.blocked, older.body.known_share], ['precomputed', posted.blocked, posted.known_share]);
  } finally {
    raw.disconnect();
  }
});

test('the demo\'s examples and a football report keep their ads; a page written before the counts is not judged, and says so', async () => {
  for (const id of EXAMPLES) {
    const r = await matchFor(id);
    assert.equal(r.body.served_from, 'precomputed');
    assert.equal(r.body.blocked, undefined, JSON.stringify(r.body));
    assert.ok(r.body.known_share > r.body.min_known_share, JSON.stringify(r.body));
  }
  const soccer = await matchText(SOCCER);
  assert.equal(soccer.body.blocked, undefined, JSON.stringify(soccer.body));
  assert.ok(soccer.body.results.length >= 1 && soccer.body.known_share > soccer.body.min_known_share, JSON.stringify(soccer.body));
  for (const extra of ['', '&k=4']) {
    const old = await matchFor('old-lesson', extra);
    assert.equal(old.status, 200, JSON.stringify(old.body));
    assert.deepEqual([old.body.served_from, old.body.blocked, old.body.known_share, old.body.min_known_share_from],
      [extra ? 'live' : 'precomputed', undefined, null, 'derived']);
  }
});

test('a number in server.matchMinKnownShare replaces the derived minimum (0: off); the settings are checked', async () => {
  const fixed = await startServer({
    config: { ...config, server: { ...config.server, matchMinKnownShare: 0 } }, model: DEMO_MODEL, redisUrl: redis.url, host: '127.0.0.1', port: 0, indexWorkers: 0,
  });
  try {
    const r = await h.inject(fixed.app, { method: 'POST', url: '/v1/match', payload: { collection: 'ads', text: LESSON, k: 3 } });
    assert.deepEqual([r.body.blocked, r.body.min_known_share, r.body.min_known_share_from], [undefined, 0, 'config']);
    const g = await h.inject(fixed.app, '/v1/match?collection=ads&for=lesson&k=3');
    assert.deepEqual([g.body.served_from, g.body.blocked, g.body.min_known_share_from], ['precomputed', undefined, 'config']);
    const q = await h.inject(fixed.app, '/v1/match?collection=ads&for=lesson&k=3&min_known_share=0.5');
    assert.deepEqual([q.body.blocked?.rule, q.body.min_known_share_from], ['unknown_words', 'request']);
    assert.equal((await h.inject(fixed.app, '/v1/match?collection=ads&for=lesson&min_known_share=2')).status, 400);
  } finally {
    await fixed.close();
  }
  assert.equal(loadConfig().server.matchMinKnownShare, null);
  assert.equal(loadConfig().server.matchThreshold.knownShareRatio, 0.5);
  for (const bad of [-0.1, 1.5, '0.2']) {
    assert.throws(() => loadConfig({ overrides: { server: { matchMinKnownShare: bad } } }), { code: 'SCDV_CONFIG_INVALID', message: /server\.matchMinKnownShare/ }, String(bad));
  }
});
