// scdv train: a corpus in, a model folder out (models/<name>/).
import { parseArgs } from 'node:util';
import { errors } from '../errors.js';
import { runTrain } from '../stages/train.js';
import { formatSeconds } from '../progress.js';
import { configFromFlags, intFlag, withRedis } from './common.js';

/** @param {string[]} argv */
export async function run(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      corpus: { type: 'string' }, name: { type: 'string', default: 'default' }, config: { type: 'string' },
      force: { type: 'boolean', default: false }, workers: { type: 'string' },
      clusters: { type: 'string' }, dims: { type: 'string' }, epochs: { type: 'string' }, 'min-count': { type: 'string' },
      covariance: { type: 'string' }, seed: { type: 'string' }, lang: { type: 'string' },
    },
  });
  if (!values.corpus) throw errors.USAGE('scdv train needs --corpus FILE');
  const w2v = /** @type {Record<string, number>} */ ({});
  const gmm = /** @type {Record<string, number|string>} */ ({});
  const set = (/** @type {Record<string, any>} */ o, /** @type {string} */ k, /** @type {number|undefined} */ v) => { if (v !== undefined) o[k] = v; };
  set(w2v, 'vector_size', intFlag(values.dims, '--dims'));
  set(w2v, 'epochs', intFlag(values.epochs, '--epochs'));
  set(w2v, 'min_count', intFlag(values['min-count'], '--min-count'));
  set(gmm, 'n_components', intFlag(values.clusters, '--clusters'));
  const seed = intFlag(values.seed, '--seed');
  set(w2v, 'seed', seed);
  set(gmm, 'seed', seed);
  if (values.covariance) gmm.covariance_type = values.covariance;
  const workers = intFlag(values.workers, '--workers');
  if (values.lang !== undefined && values.lang !== 'ja' && values.lang !== 'en') throw errors.USAGE(`--lang must be ja or en, got "${values.lang}"`);
  const config = configFromFlags(values, {
    ...(values.lang ? { tokenizer: { lang: values.lang } } : {}),
    train: { word2vec: w2v, gmm },
    ...(workers ? { tokenize: { workers } } : {}),
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
