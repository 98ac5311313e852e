// The `index` queue's shard job: its payload, built in one place for everyone who queues it (`scdv index`,
// the server's bulk uploads: the worker cannot tell them apart), and the result marker its worker writes.
//
// On the OpenSearch backend `scdv index` may have workers on other hosts (`scdv worker index` with the same
// REDIS_URL and OpenSearch config, their own data folder): its jobs carry what such a worker needs and cannot
// read from the queuing host, the shard's bytes (ShardJob.lines) and the digest of the model's files, and name
// the backend instead of a store folder; the worker opens the model's store from its own config.
import { duplicatesIn } from '../corpus/duplicates.js';
import { shardBytes } from './shard.js';
import { jobSettings } from './job-schemas.js';

/**
 * @typedef {object} IndexShardFields
 * @property {string} model
 * @property {'native'|'opensearch'} backend the store backend to write to (the worker reaches it with its own
 *   store settings: `openModelStore(model, its config)`); no store folder travels, so workers on other hosts
 *   write straight to a cluster
 * @property {string} collection
 * @property {string} [modelFilesSha256] modelFilesDigest() of the model on the queuing host: a worker whose copy
 *   differs refuses the job (SCDV_MODEL_FILES_MISMATCH) instead of writing vectors of another space
 * @property {import('../match/expand.js').ExpandSettings} [expand] an expanded ad collection: the own vectors go to
 *   its companion collection, the expanded ones to `collection` (pipeline/match/expand.js)
 * @property {[number, number][]} [duplicates] lines of this shard whose id an earlier line has: [line, first line]
 */

/** @typedef {import('./shard.js').ShardJob & IndexShardFields} IndexShardJob */

/**
 * @typedef {object} IndexShardResult
 * @property {number} shard
 * @property {string} runKey
 * @property {number} lines
 * @property {number} documents documents written to the store
 * @property {import('../corpus/document.js').LineIssue[]} rejected lines not indexed, with reasons
 * @property {import('../corpus/document.js').LineIssue[]} empty documents without any known word (not indexed)
 * @property {number} writes store write batches
 * @property {string | null} collectionCreated created_at of the collection the documents were written to
 *   (null when none was written): a re-run redoes the shard if the collection was deleted since
 * @property {number} seconds
 * @property {string} worker
 */

/**
 * Whether the shard jobs of `scdv index` carry their documents (any host can run them) or a path on this host:
 * the one place that decides. The native store is a folder of this host, so its workers are local anyway.
 * @param {import('../config.js').Config} config
 */
export const shardsTravel = (config) => backendOf(config) === 'opensearch';

/** @param {import('../config.js').Config} config */
export const backendOf = (config) => config.store.backend;

/**
 * The payload of one `index` shard job.
 * @param {object} run
 * @param {string} run.runKey
 * @param {string} run.corpus absolute path
 * @param {string} run.outDir the run folder (shard markers live in outDir/shards)
 * @param {string} run.model
 * @param {string} run.collection
 * @param {import('../config.js').Config} run.config
 * @param {Map<number, {id: string, firstLine: number}>} run.duplicates the corpus's repeated ids (findDuplicateIds)
 * @param {string} [run.modelFilesSha256] with `travel`
 * @param {import('../match/expand.js').ExpandSettings | null} [run.expand] the collection's expansion (expandSettingsOf)
 * @param {boolean} [run.travel] carry the shard's documents (see shardsTravel; the server's bulk jobs do not)
 * @param {import('../corpus/plan.js').Shard} shard
 * @returns {IndexShardJob}
 */
export function indexShardJob(run, shard) {
  const backend = backendOf(run.config);
  return {
    runKey: run.runKey, corpus: run.corpus, shard, outDir: run.outDir, model: run.model, backend,
    // Only how documents are cut and embedded (jobSettings): no store, queue or server settings (visible in Redis
    // and the board, and a worker uses its own), which the worker refuses (checkJob).
    collection: run.collection, config: /** @type {any} */ (jobSettings(run.config)), duplicates: duplicatesIn(run.duplicates, shard),
    ...(run.expand ? { expand: run.expand } : {}),
    ...(run.travel ? { lines: shardBytes(run.corpus, shard), modelFilesSha256: run.modelFilesSha256 } : {}),
  };
}
