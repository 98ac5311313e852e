// scdv train: a corpus in, a model folder out (models/<name>/).
import { parseArgs } from 'node:util';
import { errors } from '../errors.js';
import { runTrain } from '../stages/train.js';
import { formatSeconds } from '../progress.js';
import { configFromFlags, intFlag, trainFlag, withRedis } from './common.js';

/** @param {string[]} argv */
export async function run(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      corpus: { type: 'string' }, name: { type: 'string', default: 'default' }, config: { type: 'string' },
      force: { type: 'boolean', default: false }, workers: { type: 'string' }, 'allow-many-workers': { type: 'boolean', default: false },
      clusters: { type: 'string' }, dims: { type: 'string' }, epochs: { type: 'string' }, 'min-count': { type: 'string' },
      covariance: { type: 'string' }, seed: { type: 'string' }, lang: { type: 'string' },
    },
  });
  if (!values.corpus) throw errors.USAGE('scdv train needs --corpus FILE');
  const w2v = /** @type {Record<string, number>} */ ({});
  const gmm = /** @type {Record<string, number|string>} */ ({});
  const set = (/** @type {Record<string, any>} */ o, /** @type {string} */ k, /** @type {number|undefined} */ v) => { if (v !== undefined) o[k] = v; };
  // Each flag is checked against its parameter's range now, before any work (pipeline/config.js TRAIN_RANGES).
  set(w2v, 'vector_size', trainFlag(values.dims, '--dims', 'word2vec.vector_size'));
  set(w2v, 'epochs', trainFlag(values.epochs, '--epochs', 'word2vec.epochs'));
  set(w2v, 'min_count', trainFlag(values['min-count'], '--min-count', 'word2vec.min_count'));
  set(gmm, 'n_components', trainFlag(values.clusters, '--clusters', 'gmm.n_components'));
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
  });
}

/**
 * @param {string} modelDir
 * @param {Record<string, any>} m manifest
 */
export function printTrainSummary(modelDir, m) {
  const t = m.timings;
  const c = m.counts;
  const stages = Object.entries(t).filter(([k]) => k !== 'total_s')
    .map(([k, v]) => `${k.replace(/_s$/, '')} ${v == null ? '-' : formatSeconds(v)}${m.stages[k.replace(/_s$/, '')]?.reused ? ' (reused)' : ''}`);
  process.stderr.write([
    `model "${m.name}" trained in ${formatSeconds(t.total_s)}: ${modelDir}`,
    `  documents ${m.tokens.trainingDocuments}, vocabulary ${c.vocabulary}, clusters ${c.clusters} (${m.hyperparameters.gmm.covariance_type}), ` +
      `word-topic dims ${c.dims}, density ${c.density == null ? '?' : `${(100 * c.density).toFixed(2)} %`}`,
    `  stages: ${stages.join(', ')}`,
  ].join('\n') + '\n');
}
