// `scdv index`: embed a corpus with a model and write it to a store collection, one Bull `embed` job per
// shard, with the same run-folder bookkeeping as tokenise (a re-run skips finished shards).
import fs from 'node:fs';
import path from 'node:path';
import { DATA_DIR, STORE_DIR } from '../paths.js';
import { hashOf } from '../config.js';
import { planShards } from '../corpus/plan.js';
import { loadModel } from '../model/load.js';
import { WorkerPool, localWorkerCount } from './worker-pool.js';
import { checkUsableRun, prepareRunDir, readShardResult, rejectUnreadableCorpus, runShards } from './sharded.js';
import { writeFileAtomic } from '../fsutil.js';
import { openStore, validateCollectionName } from '../store/index.js';
import { duplicatesIn, findDuplicateIds } from '../corpus/duplicates.js';
import { layoutDifference, readIndexed, recordIndexed, vectorLayout } from '../embed/layout.js';
import { errors } from '../errors.js';

/**
 * @typedef {object} IndexOptions
 * @property {string} corpus
 * @property {string} model
 * @property {string} collection
 * @property {import('../config.js').Config} config
 * @property {string} redisUrl
 * @property {number} [workers]
 * @property {(m: string) => void} [log]
 * @property {boolean} [quiet]
 * @property {(pool: WorkerPool) => void} [onWorkersStarted]
 */

/**
 * @typedef {object} IndexSummary
 * @property {string} collection
 * @property {string} model
 * @property {string} storeDir
 * @property {number} documents indexed
 * @property {number} empty documents without known words (not indexed)
 * @property {number} rejected lines with reasons
 * @property {Record<string, number>} rejectedByCode
 * @property {number} shards
 * @property {number} reusedShards
 * @property {number} writes
 * @property {number} seconds
 * @property {string} reportFile rejected and empty documents, one JSON object per line
 * @property {string | null} warning a high share of rejected lines (corpus.warnRejectedFraction)
 */

/** @param {string} model */
export const storeDirFor = (model) => path.join(STORE_DIR, model);

/**
 * @param {IndexOptions} opts
 * @returns {Promise<IndexSummary>}
 */
export async function runIndex(opts) {
  const t0 = Date.now();
  const log = opts.log ?? ((/** @type {string} */ m) => process.stderr.write(`${m}\n`));
  const collection = validateCollectionName(opts.collection);
  const { config } = opts;
  const model = loadModel(opts.model); // fails early on a missing model
  const layout = vectorLayout(config.embed, model.width, model.wordTopics.nWords);
  model.wordTopics.close();
  const corpus = path.resolve(opts.corpus);
  const storeDir = storeDirFor(opts.model);
  // A collection holds vectors of one layout: adding documents embedded otherwise would make its scores meaningless.
  const recorded = readIndexed(model.dir)[collection];
  const diff = recorded ? layoutDifference(recorded.layout, layout) : '';
  if (diff && collectionCount(storeDir, collection) > 0) throw errors.EMBED_LAYOUT_MISMATCH(opts.model, collection, diff);
  rejectUnreadableCorpus(corpus);
  /** @type {WorkerPool | null} */
  let pool = null;
  try {
    const plan = await planShards(corpus, config.index.shardSize);
    const runKey = hashOf({
      corpus: plan.sha256, model: opts.model, modelCreated: model.manifest.created_at, collection,
      collectionCreated: collectionIdentity(storeDir, collection, layout.width),
      embed: config.embed, maxDocumentBytes: config.corpus.maxDocumentBytes, shardSize: config.index.shardSize,
    });
    const outDir = path.join(DATA_DIR, 'runs', 'index', `${opts.model}-${collection}-${runKey}`);
    prepareRunDir(outDir, runKey, log);
    const pending = plan.shards.filter((s) => !readShardResult(outDir, s.index, runKey));
    // Shards run in parallel and every write is an upsert: repeated ids are settled here, first occurrence wins.
    const dups = pending.length ? await findDuplicateIds(corpus, config.corpus.maxDocumentBytes) : new Map();
    log(`index: ${plan.lines} lines in ${plan.shards.length} shards` +
      (plan.shards.length - pending.length ? ` (${plan.shards.length - pending.length} already done)` : '') +
      ` -> model ${opts.model}, collection ${collection}`);
    if (pending.length) {
      // Workers start once the shards to do are known: never more workers than shards.
      const count = localWorkerCount({ stage: 'index', requested: opts.workers ?? config.index.workers, shards: pending.length, config, log });
      pool = new WorkerPool({ stage: 'embed', count, redisUrl: opts.redisUrl, config, log });
      pool.start();
      opts.onWorkersStarted?.(pool);
      await runShards({
        queueName: 'embed', outDir, runKey, pending, config, redisUrl: opts.redisUrl, log, quiet: opts.quiet, pool,
        jobData: (shard) => ({ runKey, corpus, shard, outDir, model: opts.model, storeDir, collection, config, duplicates: duplicatesIn(dups, shard) }),
      });
    }
    /** @type {import('../corpus/document.js').LineIssue[]} */
    const issues = [];
    let documents = 0;
    let empty = 0;
    let writes = 0;
    /** @type {Record<string, number>} */
    const rejectedByCode = {};
    for (const s of plan.shards) {
      /** @type {import('../../workers/embed.js').EmbedShardResult | null} */
      const r = readShardResult(outDir, s.index, runKey);
      if (!r) throw new Error(`shard ${s.index} has no result after the run`);
      documents += r.documents;
      empty += r.empty.length;
      writes += r.writes;
      for (const x of r.rejected) rejectedByCode[x.code] = (rejectedByCode[x.code] ?? 0) + 1;
      issues.push(...r.rejected, ...r.empty);
    }
    issues.sort((a, b) => a.line - b.line);
    const reportFile = path.join(outDir, 'report.jsonl');
    writeFileAtomic(reportFile, issues.map((x) => JSON.stringify(x)).join('\n') + (issues.length ? '\n' : ''));
    const rejected = Object.values(rejectedByCode).reduce((a, b) => a + b, 0);
    const warning = checkUsableRun({ corpus, lines: plan.lines, documents, empty, rejectedByCode, details: reportFile, config });
    recordIndexed(model.dir, collection, layout, plan.sha256);
    return {
      collection, model: opts.model, storeDir, documents, empty, rejected, rejectedByCode, writes,
      shards: plan.shards.length, reusedShards: plan.shards.length - pending.length, seconds: (Date.now() - t0) / 1000, reportFile, warning,
    };
  } finally {
    await pool?.stop();
  }
}


/**
 * Open (creating if needed) the collection, which checks its width against the model before any worker
 * starts, and return its creation time: a run's finished shards count only for the collection instance
 * they were written to (a deleted and recreated store must be filled again).
 * @param {string} storeDir
 * @param {string} collection
 * @param {number} width
 */
function collectionIdentity(storeDir, collection, width) {
  const store = openStore(storeDir);
  try {
    store.collection(collection, { width });
  } finally {
    store.close();
  }
  return JSON.parse(fs.readFileSync(path.join(storeDir, collection, 'collection.json'), 'utf8')).created_at;
}

/**
 * Documents in a collection (0 when it does not exist yet).
 * @param {string} storeDir
 * @param {string} collection
 */
function collectionCount(storeDir, collection) {
  if (!fs.existsSync(path.join(storeDir, collection, 'collection.json'))) return 0;
  const store = openStore(storeDir);
  try {
    return store.collection(collection).count();
  } finally {
    store.close();
  }
}
