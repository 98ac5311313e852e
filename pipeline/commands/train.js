// scdv train: a corpus in, a model folder out (models/<name>/).
import path from 'node:path';
import { CLI_DEFAULTS } from '../config.js';
import { errors } from '../errors.js';
import { runTrain } from '../stages/train.js';
import { formatSeconds } from '../progress.js';
import { readAnalysis, ANALYSIS_FILE } from '../inspect/analysis.js';
import { clusterAdvice, adviceLines } from '../inspect/advice.js';
import { configFromFlags, intFlag, trainFlag, withRedis, existingFileFlag } from './common.js';
import { CONFIG_OPTION, opt } from './define.js';

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: 'Train a model on a corpus: tokenise, word2vec and IDF, a Gaussian mixture over the word vectors, the ' +
    'word-topic vectors; into models/NAME/. One run per model name at a time; parameters are checked before any work.',
  options: [
    opt('--corpus <file>', 'the corpus: JSON Lines, one {"id", "body", …} per line (required)'),
    opt('--name <name>', 'the model name: models/NAME/', { default: CLI_DEFAULTS.modelName }),
    opt('--force', 'replace an existing model of that name'),
    opt('--clusters <k>', 'GMM clusters (topics); auto: √(N/2) for N training documents, from 2 to 60', { config: 'train.gmm.n_components', nullValue: 'auto' }),
    opt('--dims <d>', 'word vector dimensions', { config: 'train.word2vec.vector_size' }),
    opt('--epochs <e>', 'word2vec epochs', { config: 'train.word2vec.epochs' }),
    opt('--min-count <m>', 'words seen fewer times are dropped', { config: 'train.word2vec.min_count' }),
    opt('--covariance <type>', 'GMM covariance', { config: 'train.gmm.covariance_type', choices: ['tied', 'diag', 'full'] }),
    opt('--seed <s>', 'seed of word2vec and the GMM', { config: 'train.word2vec.seed' }),
    opt('--lang <lang>', 'ja, or en for English text (a regex tokeniser, lower case, an English stop list)', { config: 'tokenizer.lang', choices: ['ja', 'en'] }),
    opt('--workers <n>', 'local tokenise worker processes (at most 2 per core, with a warning)', { config: 'tokenize.workers' }),
    opt('--allow-many-workers', 'lift the 2-per-core cap of --workers'),
    CONFIG_OPTION,
  ],
  examples: ['scdv train --corpus corpus.jsonl --name news --clusters 60', 'scdv train --corpus corpus.jsonl --name news --config small.json --force'],
  run,
};

/** @param {Record<string, any>} values */
async function run(values) {
  if (!values.corpus) throw errors.USAGE('scdv train needs --corpus FILE');
  existingFileFlag(values.corpus);
  const w2v = /** @type {Record<string, number>} */ ({});
  const gmm = /** @type {Record<string, number|string|null>} */ ({});
  const set = (/** @type {Record<string, any>} */ o, /** @type {string} */ k, /** @type {number|undefined} */ v) => { if (v !== undefined) o[k] = v; };
  // Each flag is checked against its parameter's range now, before any work (pipeline/config.js TRAIN_RANGES).
  set(w2v, 'vector_size', trainFlag(values.dims, '--dims', 'word2vec.vector_size'));
  set(w2v, 'epochs', trainFlag(values.epochs, '--epochs', 'word2vec.epochs'));
  set(w2v, 'min_count', trainFlag(values['min-count'], '--min-count', 'word2vec.min_count'));
  if (values.clusters === 'auto') gmm.n_components = null; // resolved from the corpus by the training (workers/scdv/config.py)
  else set(gmm, 'n_components', trainFlag(values.clusters, '--clusters', 'gmm.n_components'));
  const seed = trainFlag(values.seed, '--seed', 'word2vec.seed');
  set(w2v, 'seed', seed);
  set(gmm, 'seed', seed);
  if (values.covariance !== undefined && !['tied', 'diag', 'full'].includes(values.covariance)) {
    throw errors.USAGE(`--covariance must be tied, diag or full, got "${values.covariance}"`);
  }
  if (values.covariance) gmm.covariance_type = values.covariance;
  const workers = intFlag(values.workers, '--workers', { min: 1 });
  if (values.lang !== undefined && values.lang !== 'ja' && values.lang !== 'en') throw errors.USAGE(`--lang must be ja or en, got "${values.lang}"`);
  const config = configFromFlags(values, {
    ...(values.lang ? { tokenizer: { lang: values.lang } } : {}),
    train: { word2vec: w2v, gmm },
    ...(workers ? { tokenize: { workers } } : {}),
    ...(values['allow-many-workers'] ? { workerProcesses: { allowMany: true } } : {}),
  });

  const { corpus, name, force } = values;
  await withRedis(async (redisUrl) => {
    const { modelDir, manifest } = await runTrain({ corpus, name, config, redisUrl, force });
    printTrainSummary(modelDir, manifest);
    const advice = trainAdvice(modelDir, manifest);
    if (advice.length) process.stderr.write(`${advice.join('\n')}\n`);
  });
}

/**
 * The cluster-count advice `scdv train` ends with when the model looks over-clustered (pipeline/inspect/advice.js,
 * as in report.html); nothing otherwise, or when the model has no analysis.
 * @param {string} modelDir
 * @param {Record<string, any>} manifest manifest
 * @returns {string[]}
 */
export function trainAdvice(modelDir, manifest) {
  const analysis = readAnalysis(path.join(modelDir, ANALYSIS_FILE));
  if (!analysis) return [];
  return adviceLines(clusterAdvice({ analysis, manifest, modelName: manifest.name }), manifest.name);
}

/**
 * @param {string} modelDir
 * @param {Record<string, any>} manifest manifest
 * @param {{reused?: boolean}} [opts] reused: an existing model (the demo's), not one trained by this run
 */
export function printTrainSummary(modelDir, manifest, opts = {}) {
  const t = manifest.timings;
  const c = manifest.counts;
  const stages = Object.entries(t).filter(([k]) => k !== 'total_s')
    .map(([k, v]) => `${k.replace(/_s$/, '')} ${v == null ? '-' : formatSeconds(v)}${manifest.stages[k.replace(/_s$/, '')]?.reused ? ' (reused)' : ''}`);
  process.stderr.write([
    opts.reused
      ? `model "${manifest.name}" reused, trained earlier (${manifest.created_at ?? 'date unknown'}, in ${formatSeconds(t.total_s)}): ${modelDir}`
      : `model "${manifest.name}" trained in ${formatSeconds(t.total_s)}: ${modelDir}`,
    `  documents ${manifest.tokens.trainingDocuments}, vocabulary ${c.vocabulary}, clusters ${c.clusters}${manifest.hyperparameters.gmm.n_components === null ? ' (auto, √(N/2))' : ''} (${manifest.hyperparameters.gmm.covariance_type}), ` +
      `word-topic dims ${c.dims}, density ${c.density == null ? '?' : `${(100 * c.density).toFixed(2)} %`}`,
    `  stages: ${stages.join(', ')}`,
  ].join('\n') + '\n');
}
