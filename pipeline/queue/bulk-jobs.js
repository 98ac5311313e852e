// The folders of the server's bulk jobs, dataDir()/server/jobs/<id>/: job.json (the record), the run folder's
// shard markers (shard.js), `finished` once the job is over and `cancelled.json` when it was cancelled. Here so
// that everything that deletes a collection (the server's route, `scdv collection delete`) cancels its jobs.
import fs from 'node:fs';
import path from 'node:path';
import { dataDir } from '../paths.js';
import { cancelRun, readShardResult, runCancelled } from './shard.js';

export const JOB_ID_RE = /^bulk-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const bulkJobsDir = () => path.join(dataDir(), 'server', 'jobs');

/**
 * @typedef {object} BulkRecord
 * @property {string} id
 * @property {'bulk'} kind
 * @property {string} model
 * @property {string} collection
 * @property {string} corpus
 * @property {boolean} uploaded the corpus is a request body saved by the server (deleted when done)
 * @property {number} lines
 * @property {string} [sha256] of the corpus when accepted: a changed {"path"} file is not resumed
 * @property {import('../corpus/plan.js').Shard[]} shards
 * @property {string} created_at
 */

/**
 * Unfinished bulk jobs: [id, folder, record] of each job folder with a record and without its `finished` mark.
 * @returns {[string, string, BulkRecord][]}
 */
export function unfinishedBulkJobs() {
  let names;
  try { names = fs.readdirSync(bulkJobsDir()); } catch { return []; }
  /** @type {[string, string, BulkRecord][]} */
  const out = [];
  for (const id of names) {
    const outDir = path.join(bulkJobsDir(), id);
    if (!JOB_ID_RE.test(id) || fs.existsSync(path.join(outDir, 'finished'))) continue;
    try { out.push([id, outDir, JSON.parse(fs.readFileSync(path.join(outDir, 'job.json'), 'utf8'))]); } catch { /* being created */ }
  }
  return out;
}

/**
 * Remove the folders of bulk jobs that ended more than `retentionMs` ago (their `finished` mark's time): what
 * GET /v1/jobs/ID answers from, kept so a client can read a job's outcome after it ends, not for ever (every job
 * leaves its record and one result file per shard). Unfinished jobs are never touched. 0 keeps every job.
 * @param {number} retentionMs
 * @returns {{removed: number}}
 */
export function sweepFinishedBulkJobs(retentionMs) {
  if (!(retentionMs > 0)) return { removed: 0 };
  let names;
  try { names = fs.readdirSync(bulkJobsDir()); } catch { return { removed: 0 }; }
  let removed = 0;
  for (const id of names) {
    if (!JOB_ID_RE.test(id)) continue;
    const outDir = path.join(bulkJobsDir(), id);
    let endedAt;
    try { endedAt = fs.statSync(path.join(outDir, 'finished')).mtimeMs; } catch { continue; }
    if (Date.now() - endedAt < retentionMs) continue;
    fs.rmSync(outDir, { recursive: true, force: true });
    removed++;
  }
  return { removed };
}

/**
 * Cancel (cancelRun) the unfinished bulk jobs that write to a collection about to be deleted: their shards stop
 * before their next write (one after the delete would create the collection again, without the documents
 * written before) and the jobs end failed with `reason`. Jobs with every shard done are left alone.
 * @param {string} model
 * @param {string} collection
 * @param {string} reason
 * @returns {{id: string, pending: import('../corpus/plan.js').Shard[]}[]} the jobs cancelled and their unfinished shards
 */
export function cancelCollectionBulkJobs(model, collection, reason) {
  const out = [];
  for (const [id, outDir, rec] of unfinishedBulkJobs()) {
    if (rec.model !== model || rec.collection !== collection || runCancelled(outDir)) continue;
    const pending = rec.shards.filter((s) => !readShardResult(outDir, s.index, id));
    if (!pending.length) continue;
    cancelRun(outDir, reason);
    out.push({ id, pending });
  }
  return out;
}
