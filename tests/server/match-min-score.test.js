// The default min_score of /v1/match: derived per model and target collection from the scores of unrelated pairs
// (pipeline/match/threshold.js), recorded when the ads are precomputed or indexed, shown in the listings, and
// overridable by the config and by the request (the known-word rule beside it is off in these requests:
// match-known-words.test.js tests it); checked with the bundled sample model (the demo's livedoor-sample:
// default training and embedding settings) and the demo's ads, through the API. Training the default model on the
// sample takes one to three minutes the first time; later runs copy it from the test-model cache (tests/lib/tiny-model.js).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { LESSON, RECIPE, SOCCER } from './match-texts.js';

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
const { quantileOf } = await import('../../pipeline/match/threshold.js');
const { adEmbedSettings } = await import('../../pipeline/embed/layout.js');

/** @type {import('../../server/start.js').RunningServer} */
let srv;
/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redis;
// The defaults (server.matchMinScore null: derived), with the records re-read every 100 ms.
const config = loadConfig({ overrides: { server: { indexWorkers: 0, logLevel: 'silent', modelPollMs: 100 } } });
const ADS = fs.readFileSync(path.join(REPO_ROOT, 'tests', 'fixtures', 'ads', 'sample.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
/** The article of the demo's printed example: `curl '…/v1/match?collection=ads&for=sports-watch-4597641&k=3'`. */
const DEMO_EXAMPLE = 'sports-watch-4597641';

before(async () => {
  redis = await startPrivateRedis();
  await ensureModels({ corpus: SAMPLE_CORPUS, models: [{ name: DEMO_MODEL, overrides: {} }], redisUrl: redis.url });
  // Written straight to the store (as the API writes them, in the ads' layout: adEmbed): no threshold is derived yet.
  await h.indexDocs(DEMO_MODEL, 'ads', ADS, { ...config, embed: adEmbedSettings(config.embed, config.adEmbed) });
  await h.indexDocs(DEMO_MODEL, 'articles', h.sampleDocs(), config);
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

/** The server has read the records again (every modelPollMs) and applies the derived threshold. */
async function untilDerived() {
  /** @type {any} */
  let body;
  await waitFor(async () => {
    body = (await matchText(SOCCER)).body;
    return body.min_score_from === 'derived';
  }, { timeoutMs: 30_000, everyMs: 50, what: 'the derived threshold to be applied', last: () => body });
  return body.min_score;
}

test('a collection whose threshold was never derived answers with the fallback, and says so', async () => {
  assert.equal(config.server.matchMinScore, null);
  const r = await matchText(SOCCER);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual([r.body.min_score, r.body.min_score_from], [config.server.matchThreshold.fallback, 'fallback']);
  const listed = (await call('/v1/collections')).body.collections.find((/** @type {any} */ c) => c.name === 'ads');
  assert.equal(listed.match_min_score, undefined);
});

test('precomputing derives the ads\' threshold: the 99th percentile of article–ad scores of different categories, recorded and listed', async () => {
  const pre = await runPrecompute({ model: DEMO_MODEL, source: 'articles', target: 'ads', k: 3, redisUrl: redis.url, config, processor: localPrecompute });
  const t = pre.threshold;
  assert.ok(t, 'a threshold was derived');
  assert.deepEqual([t.basis, t.source, t.quantile, t.ads, t.pages], ['different-category', 'articles', 0.99, ADS.length, h.sampleDocs().length]);
  // Recorded beside the layout record of the collection (here it has none: it was written as the API writes).
  assert.deepEqual(readIndexed(DEMO_MODEL).ads.match_min_score, t);

  // The same distribution measured through the API: every article's score with every ad (min_score -1 keeps all).
  const articles = h.sampleDocs();
  const category = new Map(ADS.map((a) => [a.id, a.category]));
  /** @type {number[]} */ const unrelated = [];
  for (const a of articles) {
    const r = await call(`/v1/match?collection=ads&for=${encodeURIComponent(a.id)}&k=${ADS.length}&min_score=-1&min_known_share=0`);
    assert.equal(r.body.results.length, ADS.length);
    for (const x of r.body.results) if (category.get(x.id) !== a.category) unrelated.push(x.score);
  }
  assert.equal(unrelated.length, t.pairs);
  const p99 = quantileOf(Float64Array.from(unrelated).sort(), 0.99);
  assert.ok(t.value >= p99 - 1e-6 && t.value - p99 < 0.0011, `recorded ${t.value}, measured p99 ${p99}`);
  const through = unrelated.filter((s) => s >= t.value).length / unrelated.length;
  assert.ok(through <= 0.01, `unrelated pairs at or above the threshold: ${through}`);

  assert.equal(await untilDerived(), t.value);
  const listed = (await call('/v1/collections')).body.collections.find((/** @type {any} */ c) => c.name === 'ads');
  assert.deepEqual(listed.match_min_score, t);
  const model = (await call('/v1/models')).body.models.find((/** @type {any} */ m) => m.name === DEMO_MODEL);
  assert.deepEqual(model.collections.find((/** @type {any} */ c) => c.name === 'ads').match_min_score, t);
  assert.equal(model.collections.find((/** @type {any} */ c) => c.name === 'articles').match_min_score, undefined);
});

test('the derived threshold applies to every match: the demo\'s example (precomputed) and texts (live) are cut by it, and say so', async () => {
  const min = await untilDerived();
  // The demo's printed example, served from the precomputed entry as the demo serves it.
  const demo = await call(`/v1/match?collection=ads&for=${DEMO_EXAMPLE}&k=3`);
  assert.equal(demo.status, 200);
  assert.deepEqual([demo.body.served_from, demo.body.min_score, demo.body.min_score_from], ['precomputed', min, 'derived']);
  assert.equal(demo.body.results.length + demo.body.below_min_score, 3);
  const all = await call(`/v1/match?collection=ads&for=${DEMO_EXAMPLE}&k=3&min_score=-1`);
  assert.deepEqual(demo.body.results, all.body.results.filter((/** @type {any} */ r) => r.score >= min));

  for (const text of [LESSON, RECIPE, SOCCER]) {
    // The score threshold alone (the lesson and the recipe are kept from ads by the known-word rule by default).
    const r = await matchText(text, { min_known_share: 0 });
    const every = await matchText(text, { min_score: -1, min_known_share: 0 });
    assert.deepEqual([every.body.results.length, every.body.below_min_score, every.body.min_score_from], [3, 0, 'request']);
    assert.deepEqual([r.body.min_score, r.body.min_score_from], [min, 'derived']);
    assert.deepEqual(r.body.results, every.body.results.filter((/** @type {any} */ x) => x.score >= min), text);
    assert.equal(r.body.below_min_score, 3 - r.body.results.length);
  }
  // A football report keeps the football ads.
  const related = await matchText(SOCCER);
  assert.ok(related.body.results.length >= 1, JSON.stringify(related.body));
  assert.equal(related.body.results[0].category, 'sports-watch', JSON.stringify(related.body.results));
});

test('precomputed lists are cut by the derived threshold when served, the same as live ones', async () => {
  const min = await untilDerived();
  const sports = h.sampleDocs().filter((d) => d.category === 'sports-watch').map((d) => d.id);
  let passedThrough = 0;
  for (const id of sports) {
    const pre = (await call(`/v1/match?collection=ads&for=${encodeURIComponent(id)}&k=3`)).body;
    // k above the entry's: answered live, with the same threshold.
    const live = (await call(`/v1/match?collection=ads&for=${encodeURIComponent(id)}&k=4`)).body;
    assert.deepEqual([pre.served_from, live.served_from, pre.min_score, live.min_score], ['precomputed', 'live', min, min]);
    assert.deepEqual(pre.results, live.results.slice(0, pre.results.length), id);
    for (const r of pre.results) assert.ok(r.score >= min);
    if (pre.below_min_score === 0) passedThrough++;
  }
  assert.ok(passedThrough < sports.length, 'some sports articles have ads below the threshold among their top 3');
});

test('a number in server.matchMinScore replaces the derived threshold; a request\'s min_score replaces both', async () => {
  const fixed = await startServer({
    config: { ...config, server: { ...config.server, matchMinScore: 0.02 } }, model: DEMO_MODEL, redisUrl: redis.url, host: '127.0.0.1', port: 0, indexWorkers: 0,
  });
  try {
    const r = await h.inject(fixed.app, { method: 'POST', url: '/v1/match', payload: { collection: 'ads', text: LESSON, k: 3, min_known_share: 0 } });
    assert.deepEqual([r.body.min_score, r.body.min_score_from], [0.02, 'config']);
    assert.ok(r.body.results.length >= 1, 'the chemistry lesson scores above 0.02 with some ads');
    const g = await h.inject(fixed.app, `/v1/match?collection=ads&for=${DEMO_EXAMPLE}&k=3&min_score=0.5`);
    assert.deepEqual([g.body.min_score, g.body.min_score_from, g.body.results, g.body.below_min_score], [0.5, 'request', [], 3]);
  } finally {
    await fixed.close();
  }
});

test('server.matchMinScore is null or a number from -1 to 1; the threshold\'s quantile and fallback are checked too', () => {
  for (const bad of [5, -2, Number.NaN, '0.1']) {
    assert.throws(() => loadConfig({ overrides: { server: { matchMinScore: bad } } }),
      { code: 'SCDV_CONFIG_INVALID', message: /server\.matchMinScore must be a number from -1 to 1, or null \(null: each target collection's derived threshold\), got/ }, String(bad));
  }
  assert.equal(loadConfig({ overrides: { server: { matchMinScore: -1 } } }).server.matchMinScore, -1);
  assert.equal(loadConfig().server.matchMinScore, null);
  assert.deepEqual(loadConfig().server.matchThreshold, { quantile: 0.99, fallback: 0.1, knownShareRatio: 0.5 });
  for (const q of [0.4, 1.5, null]) {
    assert.throws(() => loadConfig({ overrides: { server: { matchThreshold: { quantile: q } } } }), { message: /server\.matchThreshold\.quantile must be a number from 0\.5 to 1/ });
  }
  assert.throws(() => loadConfig({ overrides: { server: { matchThreshold: { fallback: 2 } } } }), { message: /server\.matchThreshold\.fallback must be a number from -1 to 1/ });
});

test('the bundled sensitive topics at the threshold docs/matching.md measured keep a few sample articles from ads and name the topic; the demo\'s example keeps its ads', async () => {
  assert.equal(config.server.brandSafety.threshold, null, 'off by default');
  const defaults = loadConfig({ overrides: { server: { indexWorkers: 0, logLevel: 'silent', brandSafety: { threshold: 0.15 } } } });
  const guarded = await startServer({ config: defaults, model: DEMO_MODEL, redisUrl: redis.url, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  try {
    /** @type {any[]} */ const blocked = [];
    for (const a of h.sampleDocs()) {
      const r = await h.inject(guarded.app, `/v1/match?collection=ads&for=${encodeURIComponent(a.id)}&k=3&min_score=-1&min_known_share=0`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      if (r.body.blocked) blocked.push({ id: a.id, ...r.body.blocked, results: r.body.results.length });
    }
    // On this model 4 of 306 (docs/matching.md): a handful, not a category's worth.
    assert.ok(blocked.length >= 1 && blocked.length <= 15, JSON.stringify(blocked));
    for (const b of blocked) {
      assert.equal(b.rule, 'sensitive_topic');
      assert.ok(b.similarity >= 0.15 && b.results === 0 && defaults.server.brandSafety.seeds.some((s) => s.topic === b.topic), JSON.stringify(b));
    }
    assert.ok(!blocked.some((b) => b.id === DEMO_EXAMPLE));
  } finally {
    await guarded.close();
  }
});
