// `scdv eval --holdout F`: a held-out check of a model's settings. The corpus is split by a hash of each id
// (the same split on every run), a model `<name>-holdout` is trained on the larger part with the model's own
// training and tokenizer settings, and `scdv eval` scores the held-out part, which that model never saw. A plain
// `scdv eval` scores the training documents: their words shaped the word vectors, the topics and the IDF (not their
// labels), so this is the check that the settings carry over to new documents. A stage coordinator: it trains.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { errors } from '../errors.js';
import { dataDir, modelsDir, validateModelName } from '../paths.js';
import { writeFileAtomic } from '../fsutil.js';
import { evalFileText, runEval } from '../eval/evaluate.js';
import { MATCH_EVAL_FILE, runMatchEval } from '../eval/match-eval.js';
import { runTrain } from './train.js';

/**
 * Whether a document goes to the held-out part: the first 8 hex digits of sha256(id) below fraction × 2³².
 * @param {string} id
 * @param {number} fraction
 */
export const heldOut = (id, fraction) => parseInt(crypto.createHash('sha256').update(id).digest('hex').slice(0, 8), 16) < fraction * 2 ** 32;

/**
 * Splits a JSON Lines corpus into train and test files (lines kept as they are; a line without a readable id
 * goes to train, where training reports it).
 * @param {string} corpus
 * @param {number} fraction
 * @param {string} dir
 * @returns {{train: string, test: string, trainLines: number, testLines: number}}
 */
export function splitCorpus(corpus, fraction, dir) {
  let text;
  try {
    text = fs.readFileSync(corpus, 'utf8');
  } catch (err) {
    throw errors.USAGE(`--corpus ${corpus}: ${/** @type {NodeJS.ErrnoException} */ (err).code === 'ENOENT' ? 'no such file' : /** @type {Error} */ (err).message}`);
  }
  /** @type {string[]} */ const train = [];
  /** @type {string[]} */ const test = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let id = null;
    try { id = JSON.parse(line)?.id; } catch { /* kept for training, which names the line */ }
    ((typeof id === 'string' || typeof id === 'number') && heldOut(String(id), fraction) ? test : train).push(line);
  }
  fs.mkdirSync(dir, { recursive: true });
  const files = { train: path.join(dir, 'train.jsonl'), test: path.join(dir, 'test.jsonl') };
  fs.writeFileSync(files.train, train.length ? train.join('\n') + '\n' : '');
  fs.writeFileSync(files.test, test.length ? test.join('\n') + '\n' : '');
  return { ...files, trainLines: train.length, testLines: test.length };
}

/**
 * @param {Omit<import('../eval/evaluate.js').EvalOptions, 'collection'> & {fraction: number, redisUrl: string, match?: {ads: string | null}}} opts
 *   model: the model whose settings are checked; match: score matching (`scdv eval --match`) on the held-out part
 *   instead of related lists (with the titles-as-ads proxy, ads and pages both come from it)
 * @returns {Promise<Record<string, any>>} the held-out model's eval.json (eval-match.json with `match`), with `holdout`
 */
export async function runHoldoutEval(opts) {
  const log = opts.log ?? ((/** @type {string} */ m) => process.stderr.write(`${m}\n`));
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(modelsDir(), validateModelName(opts.model), 'manifest.json'), 'utf8'));
  } catch {
    throw errors.MODEL_NOT_FOUND(opts.model, modelsDir());
  }
  const name = validateModelName(`${opts.model}-holdout`);
  const split = splitCorpus(opts.corpus, opts.fraction, path.join(dataDir(), 'holdout', opts.model));
  if (split.testLines < 2 || split.trainLines < 2) {
    throw errors.USAGE(`--holdout ${opts.fraction}: ${split.testLines} documents held out and ${split.trainLines} left to train on; both need at least 2`);
  }
  log(`holdout: training ${name} on ${split.trainLines} documents with ${opts.model}'s settings; scoring the other ${split.testLines}`);
  const config = { ...opts.config, train: manifest.hyperparameters ?? opts.config.train, tokenizer: manifest.tokenizer?.config ?? opts.config.tokenizer };
  const trained = await runTrain({ corpus: split.train, name, config, redisUrl: opts.redisUrl, force: true, log, quiet: true });
  const r = opts.match
    // Ads expanded (adEmbed.expand) from the training half: never from the pages scored.
    ? await runMatchEval({ ...opts, model: name, corpus: split.test, config, ads: opts.match.ads, expandFrom: split.train, log })
    : await runEval({ ...opts, model: name, corpus: split.test, config, collection: null, log });
  r.holdout = { model: name, of: opts.model, fraction: opts.fraction, train_documents: trained.manifest.tokens?.trainingDocuments ?? split.trainLines, test_documents: r.corpus.documents };
  writeFileAtomic(path.join(modelsDir(), name, opts.match ? MATCH_EVAL_FILE : 'eval.json'), evalFileText(r));
  return r;
}
