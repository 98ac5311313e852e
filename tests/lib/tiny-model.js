// Small real models for tests, in one place: the seeded two-topic corpus, the training settings of the test
// models, and ensureModels(), which trains models into a models folder — or copies them from a cache in the
// system's temporary folder when nothing that shapes them changed (training code, dictionary, corpus, settings).
// Import it after the test has chosen its folders (environment or usePaths): it loads pipeline modules.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { rng } from './random.js';
import { loadConfig } from '../../pipeline/config.js';
import { SAMPLE_CORPUS, dataDir, modelsDir, usePaths } from '../../pipeline/paths.js';
import { cachedFolder, inputsHash } from './test-cache.js';

export const ANIMALS = ['犬', '猫', '馬', '牛', '羊', '豚', '鶏', '兎', '狐', '熊', '象', '亀'];
export const VEHICLES = ['自動車', '電車', '飛行機', '自転車', '船舶', 'バス', 'トラック', '地下鉄', '新幹線', 'タクシー', 'ヘリコプター', 'オートバイ'];

/**
 * Writes 240 short documents (seeded), alternately on animals and on vehicles, each listing ten words of its
 * group: the contexts separate the groups perfectly. With TWO_TOPIC_TRAIN, a model in a few seconds.
 * @param {string} file
 * @returns {string} file
 */
export function writeTwoTopicCorpus(file) {
  const r = rng(7);
  const lines = [];
  for (let i = 0; i < 240; i++) {
    const group = i % 2 === 0 ? ANIMALS : VEHICLES;
    lines.push(JSON.stringify({ id: `d${i}`, body: `${Array.from({ length: 10 }, () => group[Math.floor(r() * group.length)]).join('と')}。` }));
  }
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** `train` settings for the two-topic corpus: 16-dim word vectors, 2 clusters (a 32-wide model). */
export const TWO_TOPIC_TRAIN = Object.freeze({
  word2vec: { vector_size: 16, window: 5, min_count: 1, epochs: 30, workers: 1, seed: 3, negative: 5 },
  gmm: { n_components: 2, seed: 3 },
  topics: { keep_fraction: 0.5 },
});

/**
 * `train` settings for the bundled sample (or a part of it): a small but real model in seconds, 6 clusters of
 * 24-dim word vectors (144 wide).
 * @param {number} [seed] of the GMM (the word vectors keep seed 1, so models of two seeds share them)
 */
export const sampleTrain = (seed = 1) => ({
  word2vec: { vector_size: 24, window: 5, min_count: 2, epochs: 3, workers: 2, seed: 1, negative: 5 },
  gmm: { n_components: 6, seed, max_iter: 30 },
  topics: { keep_fraction: 0.2 },
});

/**
 * Hash of what shapes trained models: the training code and dictionary, this file, the corpus, the settings.
 * @param {string} corpus
 * @param {unknown} settings
 */
function trainingInputsHash(corpus, settings) {
  return inputsHash([settings, crypto.createHash('sha256').update(fs.readFileSync(corpus)).digest('hex')], [
    'pipeline/stages/train.js', 'pipeline/config/schema', 'dictionaries/build/active.json', 'workers/scdv', 'pipeline/tokenizer', 'pipeline/model',
    'dictionaries/stopwords', 'build/Release/scdv_mecab.node', 'tests/lib/tiny-model.js',
  ]);
}

/**
 * Models trained on one corpus, in `into` (default: modelsDir()). They are trained one after the other in a
 * scratch folder under one working name, so a later model reuses the stages its settings share with the earlier
 * ones (e.g. tokenising and word2vec when only the GMM seed differs), then cached (tests/lib/test-cache.js); a later
 * call with the same inputs, in this test file or another, copies the cache. Training points the pipeline's folders
 * at the scratch folder (usePaths) and back.
 * @param {{corpus: string, models: {name?: string, overrides: Record<string, any>}[], redisUrl: string, into?: string}} o
 *   overrides: loadConfig overrides of each model (its `train` section, and `tokenizer` for another language);
 *   a model without a name is trained (cached) but not copied
 * @returns {Promise<string>} the hash of the models' inputs (for caches of what is built from them)
 */
export async function ensureModels({ corpus, models, redisUrl, into = modelsDir() }) {
  // Cached by position, not name: test files that train the same settings on the same corpus share the cache.
  const key = trainingInputsHash(corpus, models.map((m) => m.overrides));
  const cache = await cachedFolder('model-set', key, async (dir) => {
    const { runTrain } = await import('../../pipeline/stages/train.js');
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-test-train-'));
    const before = { modelsDir: modelsDir(), dataDir: dataDir() };
    usePaths({ modelsDir: path.join(work, 'models'), dataDir: path.join(work, 'data') });
    try {
      for (const [i, m] of models.entries()) {
        const config = loadConfig({ overrides: m.overrides });
        await runTrain({ corpus, name: 'm', config, redisUrl, quiet: true, log: () => {}, force: true });
        fs.renameSync(path.join(work, 'models', 'm'), path.join(dir, `model-${i}`));
      }
    } finally {
      usePaths(before);
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
  models.forEach((m, i) => { if (m.name) fs.cpSync(path.join(cache, `model-${i}`), path.join(into, m.name), { recursive: true }); });
  return key;
}

/**
 * The small models of the bundled sample, sampleTrain(1) and sampleTrain(2), as one cached set shared by every test
 * file that needs a small sample model (the server tests, the index stage's, the eval's, the reliability suite's):
 * trained once in all (the second reuses the first's tokenising and word vectors), and the first `names.length` of
 * them copied under `names` (sampleTrain(1)'s model as names[0]).
 * @param {{names: [string] | [string, string], redisUrl: string, into?: string}} o
 * @returns {Promise<string>} the hash of the models' inputs (ensureModels)
 */
export function ensureSampleModels({ names, redisUrl, into }) {
  const models = [1, 2].map((seed, i) => ({ name: names[i], overrides: { train: sampleTrain(seed) } }));
  return ensureModels({ corpus: SAMPLE_CORPUS, models, redisUrl, into });
}
