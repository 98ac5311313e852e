// The `index` queue's shard job: its payload, built in one place for everyone who queues it (`scdv index`,
// the server's bulk uploads: the worker cannot tell them apart), and the result marker its worker writes.
import { duplicatesIn } from '../corpus/duplicates.js';

/**
 * @typedef {object} IndexShardFields
 * @property {string} model
 * @property {'native'|'opensearch'} backend the store backend to write to (the worker reaches it with its own
 *   store settings: `openModelStore(model, its config)`); no store folder travels, so workers on other hosts
 *   write straight to a cluster
 * @property {string} collection
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
 * The payload of one `index` shard job.
 * @param {object} run
 * @param {string} run.runKey
 * @param {string} run.corpus absolute path
 * @param {string} run.outDir the run folder (shard markers live in outDir/shards)
 * @param {string} run.model
 * @param {string} run.collection
 * @param {import('../config.js').Config} run.config
 * @param {Map<number, {id: string, firstLine: number}>} run.duplicates the corpus's repeated ids (findDuplicateIds)
 * @param {import('../corpus/plan.js').Shard} shard
 * @returns {IndexShardJob}
 */
export function indexShardJob(run, shard) {
  return {
    runKey: run.runKey, corpus: run.corpus, shard, outDir: run.outDir, model: run.model, backend: run.config.store.backend,
    collection: run.collection, config: run.config, duplicates: duplicatesIn(run.duplicates, shard),
  };
}
