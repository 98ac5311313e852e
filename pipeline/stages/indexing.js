// `scdv index`: embed a corpus with a model and write it to a store collection, one Bull `index` job per
// shard, with the same run-folder bookkeeping as tokenise (a re-run skips finished shards).
import fs from 'node:fs';
import path from 'node:path';
import { dataDir, storeDirFor } from '../paths.js';
import { CLI_DEFAULTS, hashOf } from '../config.js';
import { planShards } from '../corpus/plan.js';
import { loadModel } from '../model/load.js';
import { startShardWorkers } from '../queue/worker-pool.js';
/** @typedef {import('../queue/worker-pool.js').WorkerPool} WorkerPool */
import { checkUsableRun, rejectUnreadableCorpus, runShards } from './sharded.js';
import { prepareRunDir, readShardResult, shardMarker } from '../queue/shard.js';
import { indexShardJob, shardsTravel } from '../queue/index-job.js';
import { writeBatchSizeOf } from '../queue/job-schemas.js';
import { modelFilesDigest } from '../model/files-digest.js';
import { writeFileAtomic } from '../fsutil.js';
import { plural } from '../progress.js';
import { mayHaveModelStore, openModelStore, validateCollectionName } from '../store/index.js';
import { findDuplicateIds } from '../corpus/duplicates.js';
import { modelLayout } from '../embed/index.js';
import { newCollectionEmbed } from '../embed/layout.js';
import { indexedLayoutDifference, recordCollectionLayout, rederiveThresholds } from '../serving/index.js';
import { recordExpansion, refreshExpansions } from '../serving/ad-expansion.js';
import { expandSettingsOf } from '../match/expand.js';
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
 * @property {number} writes store write batches (of up to writeBatchSize documents each, one per shard at least)
 * @property {number} writeBatchSize documents a write of the run (writeBatchSizeOf: index.writeBatchSize, on OpenSearch store.opensearch.bulkDocs)
 * @property {number} seconds
 * @property {string} reportFile rejected and empty documents, one JSON object per line
 * @property {string | null} warning a high share of rejected lines (corpus.warnRejectedFraction)
 * @property {Record<string, import('../match/threshold.js').MatchThreshold>} matchThresholds default min_scores derived by the run, by target collection
 * @property {Record<string, import('../serving/ad-expansion.js').ExpansionRecord | null>} expansions ad collections expanded by the run
 *   (the collection itself when it is an expanded ad collection; the ads expanded from it again when it is their source)
 */



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
  // A collection's settings: the config's, or the ads' for an ad collection (adEmbed.collections).
  const embed = newCollectionEmbed(config.embed, config.adEmbed, collection);
  const layout = modelLayout(model, embed);
  model.wordTopics.close();
  const runConfig = embed === config.embed ? config : { ...config, embed };
  // An ad collection borrowing from a page collection (adEmbed.expand): the workers keep the own vectors apart.
  const expand = expandSettingsOf(config.adEmbed, collection);
  const corpus = path.resolve(opts.corpus);
  const storeDir = storeDirFor(opts.model);
  // The model's store, opened once for the run when first needed (opening a native store creates its folder) and
  // closed at its end. While the workers write, this process keeps none of the collection's files open and does no
  // background work on it (the native collectionInfo closes what it opened to answer).
  /** @type {import('../store/index.js').StoreBackend | null} */
  let opened = null;
  const runStore = async () => (opened ??= await openModelStore(opts.model, config));
  /** @type {WorkerPool | null} */
  let pool = null;
  /** @type {{created: boolean} | null} beginLoad's answer: a load to end (also when the run fails) */
  let loading = null;
  try {
    // A collection holds vectors of one layout: adding documents embedded otherwise would make its scores meaningless.
    const diff = await indexedLayoutDifference(opts.model, collection, layout, config, mayHaveModelStore(opts.model, config) ? await runStore() : undefined);
    if (diff && ((await collectionNow(await runStore(), collection))?.count ?? 0) > 0) {
      throw errors.EMBED_LAYOUT_MISMATCH(opts.model, collection, embed === config.embed ? diff : `${diff}; an ad collection gets adEmbed's alpha and keepFraction`);
    }
    rejectUnreadableCorpus(corpus);
    // Recorded with the layout: a server refuses to serve the collection with other model files (checkModelFiles).
    const modelFilesSha256 = await modelFilesDigest(opts.model);
    const travel = shardsTravel(config);
    const plan = await planShards(corpus, config.index.shardSize);
    const runKey = hashOf({
      corpus: plan.sha256, model: opts.model, modelCreated: model.manifest.created_at, collection,
      embed, maxDocumentBytes: config.corpus.maxDocumentBytes, shardSize: config.index.shardSize,
    });
    const outDir = path.join(dataDir(), 'runs', 'index', `${opts.model}-${collection}-${runKey}`);
    prepareRunDir(outDir, runKey, log);
    // A finished shard counts only if its documents are in the collection as it is now: one written to a
    // collection since deleted (and maybe re-created) is done again. Shards that wrote nothing always count.
    const created = (await collectionNow(await runStore(), collection, layout.width))?.createdAt ?? null;
    const pending = plan.shards.filter((s) => {
      const r = readShardResult(outDir, s.index, runKey);
      if (r && (r.documents === 0 || r.collectionCreated === created)) return false;
      if (r) fs.rmSync(shardMarker(outDir, s.index), { force: true });
      return true;
    });
    // Shards run in parallel and every write is an upsert: repeated ids are settled here, first occurrence wins.
    const dups = pending.length ? await findDuplicateIds(corpus, config.corpus.maxDocumentBytes) : new Map();
    log(`index: ${plural(plan.lines, 'line')} in ${plural(plan.shards.length, 'shard')}` +
      (plan.shards.length - pending.length ? ` (${plan.shards.length - pending.length} already done)` : '') +
      ` -> model ${opts.model}, collection ${collection}`);
    // A load into a cluster runs with settings of its own (OpenSearch: refreshes every 10 s; a new index holds no
    // replica until the end), restored when the run ends, fails or, after its process died, by the next run.
    const loadStore = await runStore();
    if (pending.length && loadStore.beginLoad) loading = await loadStore.beginLoad(collection, layout.width);
    if (pending.length) {
      // Workers start once the shards to do are known: never more workers than shards.
      pool = startShardWorkers({ stage: 'index', requested: opts.workers ?? config.index.workers, shards: pending.length, redisUrl: opts.redisUrl, config, log, allowPaths: [corpus] });
      opts.onWorkersStarted?.(pool);
      await runShards({
        queueName: 'index', outDir, runKey, pending, config, redisUrl: opts.redisUrl, log, quiet: opts.quiet, pool, travel,
        jobData: (shard) => indexShardJob({ runKey, corpus, outDir, model: opts.model, collection, config: runConfig, duplicates: dups, travel, modelFilesSha256, expand }, shard),
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
      /** @type {import('../queue/index-job.js').IndexShardResult | null} */
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
    // A collection made for the load that received no document is dropped: a run that writes none creates none.
    if (loading?.created && (await runStore()).endLoad) await endEmptyLoad(await runStore(), collection);
    loading = null; // ended below, on success
    const warning = checkUsableRun({ corpus, lines: plan.lines, documents, empty, rejectedByCode, details: reportFile, config });
    // Workers write without waiting for searchability: everything they wrote becomes searchable now.
    const store = await runStore();
    if ((await store.collectionInfo(collection)) !== null) {
      await (await store.collection(collection)).flush();
      // A large load into a cluster ends compact: one segment a shard, without the load's recovery source.
      const merged = store.compactAfterLoad ? await store.compactAfterLoad(collection, documents) : null;
      if (merged) {
        log(`index: merged ${collection} to ${plural(merged.segments, 'segment')}, ${merged.bytesPerDoc} bytes a document ` +
          `(${(merged.waitedMs / 1000).toFixed(1)} s for the retention leases${merged.leasesPassed ? '' : ', which had not all passed'}, merge ${(merged.mergeMs / 1000).toFixed(1)} s)`);
      }
    }
    // The load's settings are put back (also those of an earlier run whose process died).
    if (store.endLoad && (await collectionNow(store, collection)) !== null) await store.endLoad(collection);
    // A run that wrote no document created no collection: there is no layout to record for it.
    /** @type {Record<string, import('../match/threshold.js').MatchThreshold>} */
    let matchThresholds = {};
    /** @type {IndexSummary['expansions']} */
    let expansions = {};
    if ((await collectionNow(store, collection)) !== null) {
      await recordCollectionLayout(store, collection, layout, plan.sha256, corpus, modelFilesSha256);
      if (expand) expansions[collection] = await recordExpansion(store, collection, expand, true);
      // The ads expanded from this collection are expanded again from its new contents (before their thresholds).
      expansions = { ...expansions, ...(await refreshExpansions(store, collection, config)) };
      // Ads' default min_score against the articles (and, for the articles, the thresholds measured against them).
      matchThresholds = await rederiveThresholds(store, collection, CLI_DEFAULTS.collection, config);
    }
    return {
      collection, model: opts.model, storeDir, documents, empty, rejected, rejectedByCode, writes, writeBatchSize: writeBatchSizeOf(config),
      shards: plan.shards.length, reusedShards: plan.shards.length - pending.length, seconds: (Date.now() - t0) / 1000, reportFile, warning,
      matchThresholds, expansions,
    };
  } finally {
    try {
      await pool?.stop();
      if (loading && opened) await endFailedLoad(opened, collection, loading.created, log);
    } finally {
      await /** @type {import('../store/index.js').StoreBackend | null} */ (opened)?.close(); // (assigned by runStore)
    }
  }
}

/**
 * The end of a load that failed: its settings restored, and a collection it created and left empty dropped (a
 * run that writes no document creates none). A failure here is logged, not thrown over the run's own.
 * @param {import('../store/index.js').StoreBackend} store
 * @param {string} collection
 * @param {boolean} created
 * @param {(m: string) => void} log
 */
async function endFailedLoad(store, collection, created, log) {
  try {
    await store.endLoad?.(collection);
    if (created) await endEmptyLoad(store, collection);
  } catch (err) {
    log(`index: the load's settings of ${collection} could not be restored (the next \`scdv index\` of it restores them): ${/** @type {Error} */ (err).message}`);
  }
}

/**
 * A collection beginLoad created: dropped when it holds no document (it was made for this run alone).
 * @param {import('../store/index.js').StoreBackend} store
 * @param {string} collection
 */
async function endEmptyLoad(store, collection) {
  const c = await store.collection(collection);
  await c.flush();
  if ((await store.collectionInfo(collection))?.count === 0) await store.dropCollection(collection);
}

/**
 * The collection as the store has it now, null when it does not exist (nothing is created: a collection is
 * created by its first written document). With `width`, a collection of another width is refused before any
 * worker starts. Its createdAt tells a deleted and re-created collection from the one a finished shard wrote to.
 * @param {import('../store/index.js').StoreBackend} store the model's
 * @param {string} collection
 * @param {number} [width]
 * @returns {Promise<{width: number, createdAt: string, count: number} | null>}
 */
async function collectionNow(store, collection, width) {
  const info = await store.collectionInfo(collection);
  if (info && width !== undefined && info.width !== width) throw errors.STORE_WIDTH_MISMATCH(collection, String(info.width), String(width));
  return info;
}
