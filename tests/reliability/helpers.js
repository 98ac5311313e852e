// Shared set-up of the reliability tests: a temporary DATA/MODELS/STORE folder (set in the environment before
// any pipeline module is imported, so import this module first), a Redis that can be stopped and started
// again on the same socket, one small real model, and a tmpfs for disk faults.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { rng } from '../lib/random.js';

export const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-rel-'));
process.env.SCDV_MODELS_DIR = path.join(tmp, 'models');
process.env.SCDV_DATA_DIR = path.join(tmp, 'data');
process.env.SCDV_STORE_DIR = path.join(tmp, 'store');

export * from './lib.js';

const { loadConfig } = await import('../../pipeline/config.js');
const { SAMPLE_CORPUS, REPO_ROOT, modelsDir } = await import('../../pipeline/paths.js');

export const SAMPLE = SAMPLE_CORPUS;
export const sampleLines = () => fs.readFileSync(SAMPLE_CORPUS, 'utf8').trim().split('\n');
export const MODEL = 'rel-small';

/** Small but real training settings (a model in seconds); fast stall detection for killed workers. */
export const testOverrides = (/** @type {Record<string, any>} */ extra = {}) => ({
  train: {
    word2vec: { vector_size: 24, window: 5, min_count: 2, epochs: 3, workers: 2, seed: 1, negative: 5 },
    gmm: { n_components: 6, seed: 1, max_iter: 30 },
    topics: { keep_fraction: 0.2 },
  },
  embed: { keepCount: 36 },
  queue: { lockDurationMs: 2000, stalledIntervalMs: 1000, backoffMs: 200 },
  ...extra,
});

/**
 * @param {Record<string, any>} [extra] top-level sections merged over the test settings (shallowly per section)
 */
export function testConfig(extra = {}) {
  const base = /** @type {Record<string, any>} */ (testOverrides());
  for (const [k, v] of Object.entries(extra)) base[k] = { ...(base[k] ?? {}), ...v };
  return loadConfig({ overrides: base });
}

export const quiet = { quiet: true, log: () => {} };

const ANIMALS = ['犬', '猫', '馬', '牛', '羊', '豚', '鶏', '兎', '狐', '熊', '象', '亀'];
const VEHICLES = ['自動車', '電車', '飛行機', '自転車', '船舶', 'バス', 'トラック', '地下鉄', '新幹線', 'タクシー', 'ヘリコプター', 'オートバイ'];

/** 240 short documents on two topics (seeded): with tinyTrainConfig, a model in a few seconds. */
export function twoTopicCorpus() {
  const r = rng(7);
  const lines = [];
  for (let i = 0; i < 240; i++) {
    const group = i % 2 === 0 ? ANIMALS : VEHICLES;
    lines.push(JSON.stringify({ id: `d${i}`, body: `${Array.from({ length: 10 }, () => group[Math.floor(r() * group.length)]).join('と')}。` }));
  }
  const file = path.join(tmp, 'two-topics.jsonl');
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

export const tinyTrainConfig = () => testConfig({
  train: {
    word2vec: { vector_size: 16, window: 5, min_count: 1, epochs: 30, workers: 1, seed: 3, negative: 5 },
    gmm: { n_components: 2, seed: 3 },
    topics: { keep_fraction: 0.5 },
  },
});

/** Files whose change must retrain the cached model. */
function trainingInputsHash() {
  const files = [SAMPLE_CORPUS, path.join(REPO_ROOT, 'pipeline', 'stages', 'train.js'), path.join(REPO_ROOT, 'dictionaries', 'build', 'active.json')];
  for (const dir of ['workers/scdv', 'pipeline/tokenizer', 'pipeline/model', 'dictionaries/stopwords']) {
    const abs = path.join(REPO_ROOT, dir);
    for (const f of fs.readdirSync(abs)) if (fs.statSync(path.join(abs, f)).isFile()) files.push(path.join(abs, f));
  }
  const h = crypto.createHash('sha256').update(JSON.stringify(testOverrides().train));
  for (const f of files.sort()) { try { h.update(f).update(fs.readFileSync(f)); } catch { /* optional */ } }
  return h.digest('hex').slice(0, 16);
}

/**
 * The model MODEL in modelsDir(): trained on the sample (about 15 s) or copied from an earlier test file's run
 * when no training input changed.
 * @param {string} redisUrl
 */
export async function ensureModel(redisUrl) {
  const cache = path.join(os.tmpdir(), `scdv-reliability-model-${trainingInputsHash()}`);
  if (!fs.existsSync(path.join(cache, 'manifest.json'))) {
    const { runTrain } = await import('../../pipeline/stages/train.js');
    await runTrain({ corpus: SAMPLE_CORPUS, name: MODEL, config: testConfig(), redisUrl, ...quiet, force: true });
    fs.rmSync(cache, { recursive: true, force: true });
    fs.cpSync(path.join(modelsDir(), MODEL), `${cache}.tmp-${process.pid}`, { recursive: true });
    fs.renameSync(`${cache}.tmp-${process.pid}`, cache);
  } else {
    fs.cpSync(cache, path.join(modelsDir(), MODEL), { recursive: true });
  }
}

export function cleanup() {
  fs.rmSync(tmp, { recursive: true, force: true });
}
