// Shared set-up of the reliability tests: a temporary DATA/MODELS/STORE folder (set in the environment before
// any pipeline module is imported, so import this module first), a Redis that can be stopped and started
// again on the same socket, one small real model (tests/lib/tiny-model.js), and a tmpfs for disk faults.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-rel-'));
process.env.SCDV_MODELS_DIR = path.join(tmp, 'models');
process.env.SCDV_DATA_DIR = path.join(tmp, 'data');
process.env.SCDV_STORE_DIR = path.join(tmp, 'store');

export * from './lib.js';

const { loadConfig } = await import('../../pipeline/config.js');
const { SAMPLE_CORPUS } = await import('../../pipeline/paths.js');
const { TWO_TOPIC_TRAIN, ensureSampleModels, sampleTrain, writeTwoTopicCorpus } = await import('../lib/tiny-model.js');

export const SAMPLE = SAMPLE_CORPUS;
export const sampleLines = () => fs.readFileSync(SAMPLE_CORPUS, 'utf8').trim().split('\n');
export const MODEL = 'rel-small';

/** Small but real training settings (a model in seconds); fast stall detection for killed workers. */
export const testOverrides = (/** @type {Record<string, any>} */ extra = {}) => ({
  train: sampleTrain(1),
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

/** 240 short documents on two topics (seeded): with tinyTrainConfig, a model in a few seconds. */
export const twoTopicCorpus = () => writeTwoTopicCorpus(path.join(tmp, 'two-topics.jsonl'));

export const tinyTrainConfig = () => testConfig({ train: TWO_TOPIC_TRAIN });

/**
 * The model MODEL in modelsDir(): trained on the sample (about 15 s) or copied from an earlier test file's run
 * when no training input changed.
 * @param {string} redisUrl
 */
export async function ensureModel(redisUrl) {
  await ensureSampleModels({ names: [MODEL], redisUrl });
}

export function cleanup() {
  fs.rmSync(tmp, { recursive: true, force: true });
}
