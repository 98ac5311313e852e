// Shared set-up of the server tests: a temporary DATA/MODELS/STORE folder (set in the environment before any
// pipeline module is imported), a private Redis, two small real models trained on the bundled sample, and
// the collections `articles` (the sample) and `ads` (a few hand-written ads) indexed for both models.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-server-'));
process.env.SCDV_MODELS_DIR = path.join(tmp, 'models');
process.env.SCDV_DATA_DIR = path.join(tmp, 'data');
process.env.SCDV_STORE_DIR = path.join(tmp, 'store');

const { loadConfig } = await import('../../pipeline/config.js');
const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { createEmbedder } = await import('../../pipeline/embed/index.js');
const { storeRows } = await import('../../pipeline/embed/meta.js');
const { parseDocument } = await import('../../pipeline/corpus/document.js');
const { openStore } = await import('../../pipeline/store/index.js');
const { storeDirFor } = await import('../../pipeline/paths.js');
const { keyDigest: hashKey } = await import('../../pipeline/api-keys.js');
const { SAMPLE_CORPUS } = await import('../../pipeline/paths.js');
const { ensureSampleModels, sampleTrain } = await import('../lib/tiny-model.js');
const { cachedFolder, inputsHash } = await import('../lib/test-cache.js');

export const API_KEY = 'test-key-0123456789';
export const MODEL_A = 'srv-a';
export const MODEL_B = 'srv-b';

/** Ads: short texts on topics of the sample's categories. */
export const ADS = [
  { id: 'ad-phone', title: 'スマートフォン 新機種', body: '最新のスマートフォンとアプリ。Android端末の通信と画面、バッテリーが進化。携帯電話の乗り換えキャンペーン。' },
  { id: 'ad-movie', title: '映画 公開記念', body: '話題の映画が劇場で公開。監督と俳優の舞台挨拶、シリーズ最新作の試写会に招待。' },
  { id: 'ad-sports', title: 'サッカー観戦', body: 'サッカー日本代表の試合を観戦。野球とプロ野球の選手、監督、チケット販売。' },
  { id: 'ad-beauty', title: '美容 コスメ', body: '女性のための美容とコスメ、ファッション。恋愛と結婚、女子の悩みに。' },
  { id: 'ad-pc', title: 'パソコン 周辺機器', body: 'ノートパソコンとWindows、ソフトウェア、USB機器、ネットのセキュリティ対策。' },
];

/**
 * Small but real training settings (tests/lib/tiny-model.js): a model in seconds.
 * @param {number} seed of the GMM
 */
export const trainOverrides = (seed) => ({ train: sampleTrain(seed) });

/** Whether this test file's collections have the pure SCDV layout (usePureScdvLayout) instead of the default hybrid. */
let pureScdv = false;

/**
 * For a test file about the SCDV block itself (word decomposition, two methods that must agree): its collections and
 * testConfig() use the pure SCDV layout (embed.hybrid.alpha 1) and related lists are not collapsed (every pair of
 * articles of the tiny model scores ~0.999 in that layout). Call before setup().
 */
export function usePureScdvLayout() {
  if (state) throw new Error('usePureScdvLayout() must come before setup()');
  pureScdv = true;
}

/**
 * The config of the server tests: the defaults (hybrid layout, collapsed related lists) with small-model settings.
 * @param {Record<string, any>} [server] overrides of the server section
 */
export function testConfig(server = {}) {
  const pure = pureScdv ? { hybrid: { alpha: 1 } } : {};
  return loadConfig({
    overrides: {
      ...trainOverrides(1),
      // The small models are 144 wide: keep a quarter of the entries, not the default 2 %.
      embed: { keepCount: 36, ...pure },
      // The handwritten ADS below are a few words long: against the tiny model's articles they score under the default
      // match min_score (calibrated on a full model, docs/matching.md; match-min-score.test.js tests it there), and
      // the known-word rule is off for the same reason (match-known-words.test.js tests it on the sample model).
      server: {
        apiKeyHashes: [hashKey(API_KEY)], indexWorkers: 0, logLevel: 'silent', modelPollMs: 100, matchMinScore: 0, matchMinKnownShare: 0,
        ...(pureScdv ? { rerank: { collapseRelated: false } } : {}), ...server,
      },
    },
  });
}

/**
 * An exact copy of the query document is its most related one when near-duplicates are not collapsed: first, scoring
 * ~1 (stored values are 11-bit codes, scores within 1e-3 of exact: pipeline/store/README.md), well clear of the
 * first distinct article. Returns the copy's result.
 * @param {{id: string, score: number}[]} results of a list asked with collapse=false&feedback=false (feedback scores against
 *   the expanded query, where a copy scores ~0.95)
 * @param {string} id the copy's id
 */
export function assertCopyOnTop(results, id) {
  assert.equal(results[0]?.id, id, `${id} first: ${JSON.stringify(results.slice(0, 3).map((r) => [r.id, r.score]))}`);
  assert.ok(results[0].score > 0.999, `${id} scores ${results[0].score}`);
  assert.ok(results[0].score - (results[1]?.score ?? 0) > 0.1, `a copy stands clear of the distinct articles: ${JSON.stringify(results.slice(0, 2))}`);
  return results[0];
}

/**
 * With near-duplicate collapsing (the default for related lists), the copy is not in the list but among the
 * dropped ids, with its similarity to the query document.
 * @param {{results: {id: string}[], dropped?: {id: string, similarity: number}[]}} list
 * @param {string} id
 */
export function assertCopyCollapsed(list, id) {
  assert.ok(!list.results.some((r) => r.id === id), `${id} collapsed away: ${JSON.stringify(list.results.map((r) => r.id))}`);
  const d = list.dropped?.find((x) => x.id === id);
  assert.ok(d && d.similarity > 0.999, `${id} among the dropped: ${JSON.stringify(list.dropped)}`);
}

/** Sample documents, parsed as the corpus reader does. */
export function sampleDocs() {
  return fs.readFileSync(SAMPLE_CORPUS, 'utf8').split('\n').filter(Boolean).map((l, i) => {
    const r = parseDocument(Buffer.from(l), i + 1);
    if (!('doc' in r)) throw new Error(`sample line ${i + 1}`);
    return r.doc;
  });
}

/**
 * Index documents into a model's store in this process (the bulk route tests the queued path).
 * @param {string} model
 * @param {string} collection
 * @param {import('../../pipeline/corpus/document.js').Document[]} docs
 * @param {import('../../pipeline/config.js').Config} config
 */
export async function indexDocs(model, collection, docs, config) {
  const embedder = await createEmbedder(model, config, { inMemory: true });
  const store = openStore(storeDirFor(model));
  const coll = store.collection(collection, { width: embedder.width });
  const vectors = await embedder.embedDocuments(docs);
  // As every write path makes its rows (the word counts kept in the metadata).
  const { rows } = storeRows(docs, vectors);
  await coll.upsert(rows);
  await coll.flush();
  store.close();
  embedder.model.wordTopics.close();
  return rows.length;
}

/** @type {{redis: import('../../pipeline/queue/redis.js').PrivateRedis} | null} */
let state = null;

/**
 * Models, then the collections `articles` and `ads` of both models. Once per test file.
 */
export async function setup() {
  if (state) return state;
  const redis = await startPrivateRedis();
  // Held from here, so that teardown stops this Redis even when the set-up below fails.
  state = { redis };
  // Both models: trained here (one full run, then only the GMM and topics again with another seed, about 20 s)
  // or copied from an earlier test file's run when no training input changed.
  const modelsKey = await ensureSampleModels({ names: [MODEL_A, MODEL_B], redisUrl: redis.url });
  const config = testConfig();
  // The collections: indexed here, or copied from an earlier test file's folder when nothing that shapes them
  // changed (the models, the config, the documents, the pipeline's code and native addons).
  const key = inputsHash([modelsKey, config, ADS], ['pipeline', 'build/Release/scdv_mecab.node', 'dictionaries/build/active.json',
    'dictionaries/stopwords', 'tests/server/helpers.js', 'tests/fixtures/livedoor/sample.jsonl']);
  const stores = await cachedFolder('server-stores', key, async (dir) => {
    for (const name of [MODEL_A, MODEL_B]) {
      await indexDocs(name, 'articles', sampleDocs(), config);
      await indexDocs(name, 'ads', ADS.map((a) => ({ ...a, url: `https://ads.example/${a.id}` })), config);
      fs.cpSync(storeDirFor(name), path.join(dir, name), { recursive: true });
    }
  });
  for (const name of [MODEL_A, MODEL_B]) {
    if (!fs.existsSync(storeDirFor(name))) fs.cpSync(path.join(stores, name), storeDirFor(name), { recursive: true });
  }
  return state;
}

export async function teardown() {
  await state?.redis.stop();
  state = null;
  fs.rmSync(tmp, { recursive: true, force: true });
}

/**
 * One request through Fastify's inject: its status, and its body parsed when it is JSON.
 * @param {import('fastify').FastifyInstance} app
 * @param {import('light-my-request').InjectOptions | string} opts
 */
export async function inject(app, opts) {
  const res = await app.inject(opts);
  return { status: res.statusCode, body: res.headers['content-type']?.toString().includes('json') ? res.json() : res.body };
}
