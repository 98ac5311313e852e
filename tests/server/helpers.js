// Shared set-up of the server tests: a temporary DATA/MODELS/STORE folder (set in the environment before any
// pipeline module is imported), a private Redis, two small real models trained on the bundled sample, and
// the collections `articles` (the sample) and `ads` (a few hand-written ads) indexed for both models.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';

export const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-server-'));
process.env.SCDV_MODELS_DIR = path.join(tmp, 'models');
process.env.SCDV_DATA_DIR = path.join(tmp, 'data');
process.env.SCDV_STORE_DIR = path.join(tmp, 'store');

const { loadConfig } = await import('../../pipeline/config.js');
const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { createEmbedder } = await import('../../pipeline/embed/index.js');
const { documentMeta } = await import('../../pipeline/embed/meta.js');
const { parseDocument } = await import('../../pipeline/corpus/document.js');
const { openStore } = await import('../../pipeline/store/index.js');
const { storeDirFor } = await import('../../pipeline/paths.js');
const { keyDigest: hashKey } = await import('../../pipeline/api-keys.js');
const { SAMPLE_CORPUS, REPO_ROOT } = await import('../../pipeline/paths.js');

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

/** Small but real training settings: a model in seconds. */
export const trainOverrides = (/** @type {number} */ seed) => ({
  train: {
    word2vec: { vector_size: 24, window: 5, min_count: 2, epochs: 3, workers: 2, seed: 1, negative: 5 },
    gmm: { n_components: 6, seed, max_iter: 30 },
    topics: { keep_fraction: 0.2 },
  },
});

/**
 * @param {Record<string, any>} [server] overrides of the server section
 */
export function testConfig(server = {}) {
  return loadConfig({
    overrides: {
      ...trainOverrides(1),
      // The small models are 144 wide: keep a quarter of the entries, not the default 2 %.
      embed: { keepCount: 36, hybrid: { alpha: 1 } }, // the pure SCDV layout these tests were written for (default: hybrid)
      server: { apiKeyHashes: [hashKey(API_KEY)], indexWorkers: 0, logLevel: 'silent', modelPollMs: 100, ...server },
    },
  });
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
  const rows = docs.map((d, i) => ({ id: d.id, vector: { indices: vectors[i].indices, values: vectors[i].values }, meta: documentMeta(d) }))
    .filter((r) => r.vector.indices.length > 0);
  await coll.upsert(rows);
  await coll.flush();
  store.close();
  embedder.model.wordTopics.close();
  return rows.length;
}

/** Files whose change must retrain the cached test models. */
function trainingInputsHash() {
  const files = [SAMPLE_CORPUS, path.join(REPO_ROOT, 'pipeline', 'stages', 'train.js'), path.join(REPO_ROOT, 'dictionaries', 'build', 'active.json')];
  for (const dir of ['workers/scdv', 'pipeline/tokenizer', 'pipeline/model', 'dictionaries/stopwords']) {
    const abs = path.join(REPO_ROOT, dir);
    for (const f of fs.readdirSync(abs)) if (fs.statSync(path.join(abs, f)).isFile()) files.push(path.join(abs, f));
  }
  const h = crypto.createHash('sha256').update(JSON.stringify([trainOverrides(1), trainOverrides(2)]));
  for (const f of files.sort()) { try { h.update(f).update(fs.readFileSync(f)); } catch { /* optional */ } }
  return h.digest('hex').slice(0, 16);
}

/**
 * Both models in modelsDir(): trained here (one full run, then only the GMM and topics again with another
 * seed, about 20 s) or copied from the previous test file's run when no training input changed.
 * @param {string} redisUrl
 */
async function ensureModels(redisUrl) {
  const cache = path.join(os.tmpdir(), `scdv-server-test-models-${trainingInputsHash()}`);
  if (!fs.existsSync(path.join(cache, MODEL_B, 'manifest.json'))) {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-server-train-'));
    try {
      // Train in a scratch folder: dataDir() and modelsDir() are read when pipeline modules load, so the
      // training runs in a child process pointed at the scratch folder.
      const code = `
        const { loadConfig } = await import(${JSON.stringify(path.join(REPO_ROOT, 'pipeline/config.js'))});
        const { runTrain } = await import(${JSON.stringify(path.join(REPO_ROOT, 'pipeline/stages/train.js'))});
        const fs = await import('node:fs');
        const o = JSON.parse(process.env.SCDV_TEST_TRAIN);
        const run = (seed, force) => runTrain({ corpus: o.corpus, name: 'm', config: loadConfig({ overrides: o.overrides[seed] }), redisUrl: o.redis, quiet: true, log: () => {}, force });
        await run(1, false);
        fs.renameSync(o.models + '/m', o.models + '/' + o.a);
        await run(2, true); // reuses tokenize, word2vec and idf
        fs.renameSync(o.models + '/m', o.models + '/' + o.b);
      `;
      const { spawnSync } = await import('node:child_process');
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
        env: {
          ...process.env, SCDV_MODELS_DIR: path.join(work, 'models'), SCDV_DATA_DIR: path.join(work, 'data'),
          SCDV_TEST_TRAIN: JSON.stringify({ corpus: SAMPLE_CORPUS, overrides: { 1: trainOverrides(1), 2: trainOverrides(2) }, redis: redisUrl, models: path.join(work, 'models'), a: MODEL_A, b: MODEL_B }),
        },
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      if (r.status !== 0) throw new Error('training the test models failed');
      fs.rmSync(cache, { recursive: true, force: true });
      fs.cpSync(path.join(work, 'models'), `${cache}.tmp-${process.pid}`, { recursive: true });
      fs.renameSync(`${cache}.tmp-${process.pid}`, cache);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  }
  fs.cpSync(cache, /** @type {string} */ (process.env.SCDV_MODELS_DIR), { recursive: true });
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
  await ensureModels(redis.url);
  const config = testConfig();
  for (const name of [MODEL_A, MODEL_B]) {
    await indexDocs(name, 'articles', sampleDocs(), config);
    await indexDocs(name, 'ads', ADS.map((a) => ({ ...a, url: `https://ads.example/${a.id}` })), config);
  }
  return state;
}

export async function teardown() {
  await state?.redis.stop();
  state = null;
  fs.rmSync(tmp, { recursive: true, force: true });
}
