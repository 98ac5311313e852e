// `scdv train`: corpus -> tokenise -> word2vec -> idf -> gmm -> word-topic vectors -> models/<name>/.
// Every stage's output is keyed by a hash of its inputs (the previous stage's key + its own parameters),
// so a re-run reuses what is unchanged and resumes where a crash or Ctrl-C stopped it. The model folder
// is assembled under a temporary name and renamed into place only when complete.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import os from 'node:os';
import { dataDir, modelsDir, validateModelName, VENV_PYTHON } from '../paths.js';
import { hashOf } from '../config.js';
import { errors } from '../errors.js';
import { openQueue } from '../queue/queues.js';
import { TrainProgress } from './train-progress.js';
import { runTokenize } from './tokenize.js';
import { acquireRunLock } from './run-lock.js';
import { shardsDir } from '../queue/shard.js';
import { WorkerPool } from '../queue/worker-pool.js';
import { writeFileAtomic } from '../fsutil.js';
import { MODEL_FORMAT } from '../model/format.js';
import { runAnalysisPython } from '../inspect/run-analysis.js';
import { ANALYSIS_FILE } from '../inspect/analysis.js';
import { writeReport } from '../report/index.js';
import { buildLexicon, lexicalTokenizerConfig, lexiconPossible, LEXICON_FILE } from '../model/lexicon.js';

/** @typedef {'word2vec'|'idf'|'gmm'|'topics'} TrainStage */
/** @type {TrainStage[]} */
export const TRAIN_STAGES = ['word2vec', 'idf', 'gmm', 'topics'];

/** Files of the work folder that make up a model (everything else there is scratch). */
const MODEL_FILES = ['vocab.txt', 'word_vectors.npy', 'gmm.npz', 'word_topics.bin', 'clusters.tsv'];

/**
 * @typedef {object} TrainOptions
 * @property {string} corpus JSON Lines corpus
 * @property {string} name model name
 * @property {import('../config.js').Config} config
 * @property {string} redisUrl
 * @property {boolean} [force] replace an existing model of that name
 * @property {(m: string) => void} [log]
 * @property {boolean} [quiet]
 * @property {string} [tokensDir] the tokenise run folder (default: the work folder's tokens/); one that already holds
 *   this corpus tokenised with the same settings (the run key: corpus hash, tokenizer, dictionary, shard size) is
 *   reused shard by shard, so `scdv demo` tokenises the sample once; one of other inputs is redone
 * @property {(pool: WorkerPool) => void} [onTrainWorkersStarted] test hook
 */

/**
 * @param {TrainOptions} opts
 * @returns {Promise<{modelDir: string, manifest: Record<string, any>}>}
 */
export async function runTrain(opts) {
  const name = validateModelName(opts.name);
  // One run per model name at a time: two would share the work folder and the last to finish would win.
  const lock = acquireRunLock(path.join(dataDir(), 'locks', 'train'), name);
  const work = path.join(dataDir(), 'work', name);
  const workExisted = fs.existsSync(work);
  try {
    return await trainLocked(opts, name, work);
  } catch (err) {
    // A failed run that leaves nothing a re-run could reuse leaves no work folder either.
    if (!workExisted && !hasReusableWork(work, err)) fs.rmSync(work, { recursive: true, force: true });
    throw err;
  } finally {
    lock.release();
  }
}

/**
 * Whether a failed run's work folder holds finished output a re-run reuses: a finished training stage, or
 * finished tokenise shards (unless the corpus was unusable: the fixed corpus is another one).
 * @param {string} work
 * @param {unknown} err
 */
function hasReusableWork(work, err) {
  const files = (/** @type {string} */ dir) => { try { return fs.readdirSync(dir); } catch { return []; } };
  if (files(path.join(work, 'train')).some((f) => /^stage-.*\.json$/.test(f))) return true;
  if (/** @type {any} */ (err)?.code === errors.CORPUS_UNUSABLE.code) return false;
  return files(shardsDir(path.join(work, 'tokens'))).some((f) => /^\d+\.json$/.test(f));
}

/**
 * @param {TrainOptions} opts
 * @param {string} name
 * @param {string} work the run's work folder
 */
async function trainLocked(opts, name, work) {
  const t0 = Date.now();
  const log = opts.log ?? ((/** @type {string} */ m) => process.stderr.write(`${m}\n`));
  const modelDir = path.join(modelsDir(), name);
  if (fs.existsSync(modelDir) && !opts.force) throw errors.MODEL_EXISTS(name, modelDir);
  if (!fs.existsSync(VENV_PYTHON)) throw errors.PYTHON_MISSING(VENV_PYTHON);
  const trainDir = path.join(work, 'train');

  const tokens = await runTokenize({
    corpus: opts.corpus, outDir: opts.tokensDir ?? path.join(work, 'tokens'), config: opts.config, redisUrl: opts.redisUrl, log, quiet: opts.quiet,
  });
  if (tokens.warning) log(`train: warning: ${tokens.warning}`);
  fs.mkdirSync(trainDir, { recursive: true });
  const tokensManifest = JSON.parse(fs.readFileSync(path.join(tokens.outDir, 'manifest.json'), 'utf8'));
  const corpusTxt = path.join(trainDir, 'corpus.txt');
  const corpusDocs = await writeTrainingCorpus(tokens.tokensFile, corpusTxt, tokensManifest.runKey);

  /** @type {Record<string, any>} */
  const stageResults = {};
  let prevKey = tokensManifest.runKey;
  const pending = [];
  for (const stage of TRAIN_STAGES) {
    const key = hashOf({ prev: prevKey, stage, params: stageParams(stage, opts.config) });
    const stamp = readStamp(trainDir, stage);
    if (stamp?.key === key && pending.length === 0) {
      stageResults[stage] = { ...stamp.result, reused: true };
    } else {
      pending.push({ stage, key });
    }
    prevKey = key;
  }
  const reused = TRAIN_STAGES.filter((s) => stageResults[s]?.reused);
  if (reused.length) log(`train: reusing finished stages: ${reused.join(', ')}`);
  if (pending.length) {
    Object.assign(stageResults, await runStagesOnQueue({ ...opts, log, trainDir, corpusTxt, pending, documents: corpusDocs }));
  }

  // The lexical block's own vocabulary: the corpus tokenised again without the stop lists (a second run on the
  // tokenise workers: parallel, with progress, reused shard by shard like the first), counted by workers/scdv/lexicon.py.
  const trainedTokenizer = tokensManifest.tokenizer?.config ?? opts.config.tokenizer;
  /** @type {{words: number, documents: number, seconds: number} | null} */
  let lexicon = null;
  if (lexiconPossible(trainedTokenizer)) {
    const t = Date.now();
    log('lexicon: the corpus tokenised again without the stop lists, for the lexical block\'s vocabulary (lexicon.txt)');
    const lexical = await runTokenize({
      corpus: opts.corpus, outDir: path.join(work, 'lexical-tokens'), label: 'lexicon',
      config: { ...opts.config, tokenizer: lexicalTokenizerConfig(trainedTokenizer) }, redisUrl: opts.redisUrl, log, quiet: opts.quiet,
    });
    const lexicalManifest = JSON.parse(fs.readFileSync(path.join(lexical.outDir, 'manifest.json'), 'utf8'));
    const lexicalTxt = path.join(trainDir, 'lexical-corpus.txt');
    await writeTrainingCorpus(lexical.tokensFile, lexicalTxt, lexicalManifest.runKey);
    const built = await buildLexicon(lexicalTxt, { dir: trainDir, minCount: opts.config.train.word2vec.min_count });
    lexicon = { ...built, seconds: (Date.now() - t) / 1000 };
  }

  // What the GMM learned (cluster top words, coherence over the training corpus, the word map), for
  // `scdv inspect clusters` and report.html. Optional: a failure here warns and never fails the training.
  const extraFiles = [];
  try {
    await runAnalysisPython({ modelDir: trainDir, out: path.join(trainDir, ANALYSIS_FILE), corpusTxt, label: name });
    extraFiles.push(ANALYSIS_FILE);
  } catch (err) {
    log(`train: warning: model analysis failed, the model has no ${ANALYSIS_FILE}: ${/** @type {Error} */ (err).message}`);
  }

  const manifest = {
    format: MODEL_FORMAT,
    name,
    created_at: new Date().toISOString(),
    corpus: tokensManifest.corpus,
    tokenizer: tokensManifest.tokenizer,
    tokens: { ...tokensManifest.counts, trainingDocuments: corpusDocs, runKey: tokensManifest.runKey },
    hyperparameters: opts.config.train,
    stages: stageResults,
    counts: summarizeCounts(stageResults),
    lexicon: lexicon ? { stopwords: 'kept', minCount: opts.config.train.word2vec.min_count, words: lexicon.words, documents: lexicon.documents } : null,
    timings: {
      tokenize_s: tokens.seconds,
      lexicon_s: lexicon?.seconds ?? null,
      ...Object.fromEntries(TRAIN_STAGES.map((s) => [`${s}_s`, stageResults[s]?.seconds ?? null])),
      total_s: (Date.now() - t0) / 1000,
    },
    files: [...MODEL_FILES, ...(lexicon ? [LEXICON_FILE] : []), ...extraFiles],
    host: os.hostname(),
  };
  assembleModel(trainDir, modelDir, manifest);
  try {
    const report = await writeReport({ name, dir: modelDir, manifest }, { log });
    if (!opts.quiet) log(`train: report ${report}`);
  } catch (err) {
    log(`train: warning: report.html not written: ${/** @type {Error} */ (err).message}`);
  }
  return { modelDir, manifest };
}

/**
 * The config sections a stage depends on (idf depends on the vocabulary, hence on word2vec's).
 * @param {TrainStage} stage
 * @param {import('../config.js').Config} config
 */
function stageParams(stage, config) {
  const t = config.train;
  return { word2vec: t.word2vec, idf: {}, gmm: t.gmm, topics: t.topics }[stage];
}

/**
 * tokens.tsv -> one line of space-separated tokens per non-empty document (gensim's corpus_file format).
 * @param {string} tokensFile
 * @param {string} out
 * @param {string} runKey rewritten only when the tokenised corpus changed
 * @returns {Promise<number>} documents written
 */
async function writeTrainingCorpus(tokensFile, out, runKey) {
  const stampFile = `${out}.json`;
  try {
    const s = JSON.parse(fs.readFileSync(stampFile, 'utf8'));
    if (s.runKey === runKey && fs.existsSync(out)) return s.documents;
  } catch { /* absent */ }
  const tmp = `${out}.tmp-${process.pid}`;
  const ws = fs.createWriteStream(tmp);
  let documents = 0;
  for await (const row of readline.createInterface({ input: fs.createReadStream(tokensFile), crlfDelay: Infinity })) {
    const toks = row.slice(row.indexOf('\t') + 1);
    if (toks === '') continue;
    documents++;
    if (!ws.write(`${toks}\n`)) await new Promise((r) => ws.once('drain', () => r(undefined)));
  }
  await new Promise((resolve, reject) => ws.end((/** @type {any} */ e) => (e ? reject(e) : resolve(undefined))));
  fs.renameSync(tmp, out);
  writeFileAtomic(stampFile, JSON.stringify({ runKey, documents }) + '\n');
  return documents;
}

/**
 * @param {string} trainDir
 * @param {TrainStage} stage
 * @returns {{key: string, result: Record<string, any>} | null}
 */
function readStamp(trainDir, stage) {
  try {
    return JSON.parse(fs.readFileSync(path.join(trainDir, `stage-${stage}.json`), 'utf8'));
  } catch {
    return null;
  }
}

/**
 * Queue the pending stages one after another on `train`, with a local worker, showing their progress.
 * @param {TrainOptions & {log: (m: string) => void, trainDir: string, corpusTxt: string, pending: {stage: TrainStage, key: string}[], documents: number}} o
 *   documents: of the training corpus
 * @returns {Promise<Record<string, any>>}
 */
async function runStagesOnQueue(o) {
  const queue = openQueue('train', o.redisUrl, o.config.queue);
  queue.on('error', () => {});
  const pool = new WorkerPool({ stage: 'train', count: 1, redisUrl: o.redisUrl, config: o.config, log: o.log });
  pool.start();
  o.onTrainWorkersStarted?.(pool);
  /** @type {Record<string, any>} */
  const results = {};
  /** @type {TrainProgress | null} */
  let bar = null;
  const totals = { epochs: o.config.train.word2vec.epochs, documents: o.documents, maxIterations: o.config.train.gmm.max_iter };
  /** @type {string | null} */
  let currentJob = null;
  queue.on('global:progress', (id, progress) => {
    if (String(id) !== currentJob || !bar) return;
    try {
      const p = typeof progress === 'string' ? JSON.parse(progress) : progress;
      bar.onMessage(p);
    } catch { /* ignore */ }
  });
  try {
    for (const { stage, key } of o.pending) {
      const jobId = `train-${key}`;
      const stale = await queue.getJob(jobId);
      if (stale) await stale.remove();
      bar = o.quiet ? null : new TrainProgress(stage, totals);
      currentJob = jobId;
      const add = () => queue.add('stage', {
        stage, corpus: o.corpusTxt, workDir: o.trainDir, params: o.config.train,
      }, { jobId, removeOnComplete: false, removeOnFail: false });
      await add();
      const result = await waitForJob(queue, jobId, add);
      bar?.finish(result.seconds ?? 0);
      // The Python result line nests the stage's own figures under stages[stage].
      const summary = { ...(result.stages?.[stage] ?? {}), seconds: result.seconds };
      results[stage] = summary;
      writeFileAtomic(path.join(o.trainDir, `stage-${stage}.json`), JSON.stringify({ key, result: summary }, null, 2));
      const job = await queue.getJob(jobId);
      await job?.remove();
    }
  } finally {
    await pool.stop();
    await queue.close();
  }
  return results;
}

/**
 * Resolve with the job's return value once completed; reject with its own failure message once it has
 * failed for good (retries exhausted). A job that Redis lost (restarted without its data) is queued again.
 * @param {import('bull').Queue} queue
 * @param {string} jobId
 * @param {() => Promise<unknown>} add queues the job (a no-op while it exists)
 */
async function waitForJob(queue, jobId, add) {
  for (;;) {
    let job = null;
    let state = null;
    try {
      job = await queue.getJob(jobId);
      if (job) state = await job.getState();
      else await add();
      // Finished between the two reads: the job read first has no return value or failure reason yet.
      if (job && (state === 'completed' || state === 'failed') && job.finishedOn == null) job = await queue.getJob(jobId);
    } catch {
      // Redis unreachable for longer than a command waits: the connection keeps reconnecting; ask again.
    }
    if (job && state === 'completed') return job.returnvalue;
    if (job && state === 'failed') throw errors.TRAIN_FAILED(job.data.stage, job.failedReason ?? 'unknown error');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** @param {Record<string, any>} stages */
function summarizeCounts(stages) {
  const topics = stages.topics ?? {};
  return {
    vocabulary: stages.word2vec?.n_words ?? null,
    clusters: stages.gmm?.n_components ?? null,
    dims: topics.n_clusters && topics.dim ? topics.n_clusters * topics.dim : null,
    nnz: topics.nnz ?? null,
    density: topics.density ?? null,
  };
}

/**
 * Hard-link (or copy) the model files and the manifest into a temporary folder, then rename it into place.
 * @param {string} trainDir
 * @param {string} modelDir
 * @param {Record<string, any>} manifest
 */
function assembleModel(trainDir, modelDir, manifest) {
  fs.mkdirSync(path.dirname(modelDir), { recursive: true });
  const tmp = path.join(path.dirname(modelDir), `.${path.basename(modelDir)}.tmp-${process.pid}`);
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp);
  for (const f of manifest.files) {
    const src = path.join(trainDir, f);
    if (!fs.existsSync(src)) throw errors.TRAIN_FAILED('assemble', `${f} is missing from ${trainDir}`);
    try {
      fs.linkSync(src, path.join(tmp, f));
    } catch {
      fs.copyFileSync(src, path.join(tmp, f));
    }
  }
  fs.writeFileSync(path.join(tmp, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  if (fs.existsSync(modelDir)) {
    const old = path.join(path.dirname(modelDir), `.${path.basename(modelDir)}.old-${process.pid}`);
    fs.renameSync(modelDir, old);
    fs.renameSync(tmp, modelDir);
    fs.rmSync(old, { recursive: true, force: true });
  } else {
    fs.renameSync(tmp, modelDir);
  }
}
