// Bulk uploads as Bull `index` jobs: the same shards, job data (pipeline/queue/index-job.js), worker and completion
// markers (pipeline/queue/shard.js) as `scdv index`, without waiting for the end. A bulk job
// is a folder dataDir()/server/jobs/<id>/ (job.json, then one marker per finished shard), so its status
// survives restarts of the server and of Redis; Redis only adds the progress of shards still running. Redis may
// lose the queued shards (the private Redis of `scdv serve` keeps nothing, nor does a Redis without persistence):
// on start and on every reconnect, the shards of unfinished jobs that have neither a marker nor a Bull job are
// queued again from the kept corpus (resumeBulkJobs), and since every write is an upsert by id, a shard redone
// rewrites the same documents. The upload is kept until its job is over.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { dataDir } from '../pipeline/paths.js';
import { errors } from '../pipeline/errors.js';
import { META_FIELDS } from '../pipeline/corpus/document.js';
import { planShards } from '../pipeline/corpus/plan.js';
import { findDuplicateIds } from '../pipeline/corpus/duplicates.js';
import { collectionWriteEmbed } from '../pipeline/serving/index.js';
import { cancelRun, prepareRunDir, readShardResult, runCancelled, shardJobId } from '../pipeline/queue/shard.js';
import { indexShardJob } from '../pipeline/queue/index-job.js';
import { JOB_ID_RE, bulkJobsDir, cancelCollectionBulkJobs, sweepFinishedBulkJobs, unfinishedBulkJobs } from '../pipeline/queue/bulk-jobs.js';
import { writeFileAtomic } from '../pipeline/fsutil.js';
import { invalidate } from '../pipeline/match/index.js';
import { expandSettingsOf } from '../pipeline/match/expand.js';
import { invalid } from './error-replies.js';

export { JOB_ID_RE };
const jobsDir = bulkJobsDir;
const uploadsDir = () => path.join(dataDir(), 'server', 'uploads');
/** Default folder whose files a bulk request may name by path (with server.bulkFileRoots). */
export const importsDir = () => path.join(dataDir(), 'imports');

/** @typedef {import('../pipeline/queue/bulk-jobs.js').BulkRecord} BulkRecord */

/** A fresh job id; the upload file is named after it. */
export const newJobId = () => `bulk-${crypto.randomUUID()}`;

/**
 * Stream a request body to dataDir()/server/uploads/<id>.jsonl, never holding it in memory.
 * @param {NodeJS.ReadableStream} body
 * @param {string} id
 * @param {number} limit bytes
 */
export async function saveUpload(body, id, limit) {
  fs.mkdirSync(uploadsDir(), { recursive: true });
  const file = path.join(uploadsDir(), `${id}.jsonl`);
  let bytes = 0;
  const counter = new Transform({
    transform(chunk, _enc, cb) {
      bytes += chunk.length;
      if (bytes > limit) cb(errors.BODY_TOO_LARGE(limit)); else cb(null, chunk);
    },
  });
  try {
    await pipeline(body, counter, fs.createWriteStream(file));
  } catch (err) {
    fs.rmSync(file, { force: true });
    throw err;
  }
  if (bytes === 0) {
    fs.rmSync(file, { force: true });
    throw errors.BULK_SOURCE_INVALID('body', 'is empty: send one JSON document per line');
  }
  return file;
}

/**
 * Remove a request body saved by saveUpload that will not become a job.
 * @param {string} file
 */
export const discardUpload = (file) => fs.rmSync(file, { force: true });

/**
 * A file named in a bulk request: it must resolve (links followed) inside an allowed folder, so that a key
 * holder cannot make the server read /etc/… and echo fragments back in rejection reasons.
 * @param {string} candidate
 * @param {string[]} roots
 */
export function allowedCorpusPath(candidate, roots) {
  const allowed = [importsDir(), ...roots].map((r) => {
    try { return fs.realpathSync(r); } catch { return path.resolve(r); }
  });
  let real;
  try {
    real = fs.realpathSync(path.resolve(candidate));
  } catch {
    throw errors.BULK_SOURCE_INVALID(candidate, 'no such file');
  }
  if (!allowed.some((r) => real === r || real.startsWith(r + path.sep))) {
    throw errors.BULK_SOURCE_INVALID(candidate, `not inside an allowed folder (${allowed.join(', ')}; see server.bulkFileRoots)`);
  }
  if (!fs.statSync(real).isFile()) throw errors.BULK_SOURCE_INVALID(candidate, 'not a regular file');
  return real;
}

const ES_ACTIONS = ['index', 'create', 'update', 'delete'];
/** A line's metadata fields besides an ad's (named in the message below). */
const TEXT_META = META_FIELDS.filter((f) => f !== 'ad');

/**
 * An Elasticsearch `_bulk` body (an action line such as {"index":{"_id":"a1"}}, then the document's source
 * line) is refused at once, with the way to convert it: read as JSON Lines, every action line would be a
 * rejected document and every source line one without an id. Only the first non-blank line is looked at: a
 * corpus line always has `id` and `body`, never a single action key holding an object.
 * @param {string} file
 * @param {boolean} uploaded remove the file when refused (a request body saved by the server)
 */
export function refuseElasticsearchBulk(file, uploaded) {
  const fd = fs.openSync(file, 'r');
  const head = Buffer.alloc(64 * 1024);
  let n;
  try { n = fs.readSync(fd, head, 0, head.length, 0); } finally { fs.closeSync(fd); }
  const err = elasticsearchBulkError(head.subarray(0, n));
  if (!err) return;
  if (uploaded) fs.rmSync(file, { force: true });
  throw err;
}

/**
 * The refusal of an Elasticsearch `_bulk` body (see refuseElasticsearchBulk), or null when `head` does not start
 * with an action line.
 * @param {Buffer} head the body's first bytes
 */
export function elasticsearchBulkError(head) {
  const first = head.toString('utf8').split('\n').map((l) => l.trim()).find((l) => l !== '') ?? '';
  let line;
  try { line = JSON.parse(first); } catch { return null; }
  if (!line || typeof line !== 'object' || Array.isArray(line)) return null;
  const keys = Object.keys(line);
  if (keys.length !== 1 || !ES_ACTIONS.includes(keys[0]) || typeof line[keys[0]] !== 'object' || line[keys[0]] === null) return null;
  const err = invalid('body', `is an Elasticsearch _bulk body (line 1 is the action ${first.slice(0, 200)}), which this route does not take: `
    + `send JSON Lines, one document per line with its id in the line ({"id": …, "body": …, ${TEXT_META.map((f) => `"${f}"?`).join(', ')}}). `
    + 'To convert an index/create _bulk body: jq -c -n \'inputs as $action | input as $doc | $doc + {id: ($action | to_entries[0].value._id)}\' es-bulk.ndjson > corpus.jsonl '
    + '(and rename the text field to "body" if it is called otherwise)');
  err.details = { ...err.details, format: 'elasticsearch-bulk' };
  return err;
}

/**
 * Plan the shards and queue one `index` job per shard.
 * @param {object} options
 * @param {string} options.id
 * @param {string} options.corpus
 * @param {boolean} options.uploaded
 * @param {string} options.model
 * @param {string} options.collection
 * @param {import('../pipeline/config.js').Config} options.config
 * @param {import('./redis-queues.js').QueueHub} options.hub
 * @returns {Promise<BulkRecord>}
 */
export async function createBulkJob(options) {
  refuseElasticsearchBulk(options.corpus, options.uploaded);
  const outDir = path.join(jobsDir(), options.id);
  let written = false;
  try {
    const plan = await planShards(options.corpus, options.config.index.shardSize);
    if (plan.lines === 0) throw errors.BULK_SOURCE_INVALID(options.uploaded ? 'body' : options.corpus, 'has no lines');
    /** @type {BulkRecord} */
    const record = {
      id: options.id, kind: 'bulk', model: options.model, collection: options.collection, corpus: options.corpus, uploaded: options.uploaded,
      lines: plan.lines, sha256: plan.sha256, shards: plan.shards, created_at: new Date().toISOString(),
    };
    fs.mkdirSync(outDir, { recursive: true });
    prepareRunDir(outDir, options.id, () => {});
    writeFileAtomic(path.join(outDir, 'job.json'), JSON.stringify(record));
    written = true;
    await queueShards(record, outDir, options.hub, options.config, plan.shards);
    // Documents of the target may change: precomputed matches listing them go stale now.
    await invalidate(options.hub.redis, options.config.queue.prefix, options.model, options.collection, []);
    return record;
  } catch (err) {
    // Not accepted: nothing of it may run later (shards queued so far stop at once), and the upload goes.
    if (written) cancelRun(outDir, `not accepted: ${/** @type {Error} */ (err)?.message ?? err}`);
    if (options.uploaded) discardUpload(options.corpus);
    throw err;
  }
}

/**
 * Queue `shards` of a bulk job, one `index` job each. Job ids are fixed per shard: a shard still queued is left
 * as it is, so queuing again is harmless.
 * @param {BulkRecord} rec
 * @param {string} outDir
 * @param {import('./redis-queues.js').QueueHub} hub
 * @param {import('../pipeline/config.js').Config} config
 * @param {import('../pipeline/corpus/plan.js').Shard[]} shards
 */
async function queueShards(rec, outDir, hub, config, shards) {
  // Job data is visible in Redis and in Bull Board: the key digests stay out of it. Documents are embedded
  // with the target collection's settings, as the API's writes are (collectionWriteEmbed).
  const jobConfig = { ...config, embed: await collectionWriteEmbed(rec.model, rec.collection, config), server: { ...config.server, apiKeyHashes: [] } };
  // Shards run in parallel and every write is an upsert: repeated ids are settled here, first occurrence wins.
  const dups = await findDuplicateIds(rec.corpus, config.corpus.maxDocumentBytes);
  for (const shard of shards) {
    const job = indexShardJob({ runKey: rec.id, corpus: rec.corpus, outDir, model: rec.model, collection: rec.collection, config: jobConfig, duplicates: dups, expand: expandSettingsOf(config.adEmbed, rec.collection) }, shard);
    await hub.queues.index.add('shard', job, { jobId: shardJobId(rec.id, shard.index) });
  }
}

/**
 * Queue again the shards of unfinished bulk jobs that Redis lost (neither a marker nor a Bull job), from the kept
 * corpus; finish jobs that are over. A job whose corpus is gone or changed fails with that reason.
 * @param {import('./redis-queues.js').QueueHub} hub
 * @param {import('../pipeline/config.js').Config} config
 * @returns {Promise<{jobs: number, shards: number}>} jobs and shards queued again
 */
export async function resumeBulkJobs(hub, config) {
  let jobs = 0;
  let shards = 0;
  for (const [id, outDir, rec] of unfinishedBulkJobs()) {
    /** @type {import('../pipeline/corpus/plan.js').Shard[]} */
    const lost = [];
    if (!runCancelled(outDir)) {
      for (const shard of rec.shards) {
        if (readShardResult(outDir, shard.index, id)) continue;
        if (await hub.queues.index.getJob(shardJobId(id, shard.index))) continue;
        // A shard's Bull job is removed after its marker is written: done meanwhile.
        if (!readShardResult(outDir, shard.index, id)) lost.push(shard);
      }
    }
    if (lost.length) {
      const now = fs.existsSync(rec.corpus) ? await planShards(rec.corpus, config.index.shardSize) : null;
      if (!now) cancelRun(outDir, `its corpus ${rec.uploaded ? '(the uploaded body)' : rec.corpus} is gone: ${lost.length} shards cannot be resumed`);
      else if (rec.sha256 && now.sha256 !== rec.sha256) cancelRun(outDir, `its corpus ${rec.corpus} changed since the job was accepted: ${lost.length} shards cannot be resumed`);
      else {
        await queueShards(rec, outDir, hub, config, lost);
        jobs++;
        shards += lost.length;
        continue;
      }
    }
    await bulkStatus(id, hub, config); // finishes a job that is over
  }
  return { jobs, shards };
}

/**
 * Cancel the unfinished bulk jobs that write to a collection about to be deleted: they end failed with `reason`,
 * their waiting shards are removed from the queue and running ones stop before their next write (a write after
 * the delete would create the collection again, without the documents written before).
 * @param {import('./redis-queues.js').QueueHub | null} hub null without Redis (waiting shards then fail when they start)
 * @param {import('../pipeline/config.js').Config} config
 * @param {string} model
 * @param {string} collection
 * @param {string} reason
 * @returns {Promise<string[]>} the ids of the jobs cancelled
 */
export async function cancelBulkJobs(hub, config, model, collection, reason) {
  const cancelled = cancelCollectionBulkJobs(model, collection, reason);
  if (hub?.up) {
    for (const { id, pending } of cancelled) {
      for (const shard of pending) {
        const job = await hub.queues.index.getJob(shardJobId(id, shard.index)).catch(() => null);
        // An active job cannot be removed (its worker holds the lock): it stops at its next write.
        if (job && ['waiting', 'delayed', 'paused'].includes(await job.getState())) await job.remove().catch(() => {});
      }
    }
  }
  // Over now: uploads go (a running shard has its file open already, and stops before its next write).
  for (const { id } of cancelled) await bulkStatus(id, hub, config).catch(() => {});
  return cancelled.map((c) => c.id);
}

/**
 * Remove uploads that no unfinished job needs: those of finished jobs and those without a job (a server stopped
 * between receiving a body and recording its job). An upload without a job that was written to within
 * `graceMs` may still be being received or planned by a live process: it is looked at again after the grace.
 * @param {number} graceMs
 * @returns {{removed: number, recheckInMs: number | null}}
 */
export function sweepUploads(graceMs) {
  let names;
  try { names = fs.readdirSync(uploadsDir()); } catch { return { removed: 0, recheckInMs: null }; }
  let removed = 0;
  let recheck = Infinity;
  for (const name of names) {
    const file = path.join(uploadsDir(), name);
    const id = name.replace(/\.jsonl$/, '');
    const outDir = path.join(jobsDir(), id);
    if (JOB_ID_RE.test(id) && fs.existsSync(path.join(outDir, 'job.json')) && !fs.existsSync(path.join(outDir, 'finished'))) continue;
    let age;
    try { age = Date.now() - fs.statSync(file).mtimeMs; } catch { continue; }
    if (!fs.existsSync(path.join(outDir, 'job.json')) && age < graceMs) { recheck = Math.min(recheck, graceMs - age); continue; }
    fs.rmSync(file, { force: true });
    removed++;
  }
  return { removed, recheckInMs: Number.isFinite(recheck) ? Math.ceil(recheck) + 100 : null };
}

/**
 * Keep bulk jobs going for the life of a server: resume them now and after every Redis reconnect (a Redis that
 * came back empty lost their queued shards), finish a job (its upload removed) as soon as its last shard ends,
 * sweep orphan uploads, and remove finished jobs past `server.bulkJobRetentionHours` (on start, then hourly).
 * @param {import('./redis-queues.js').QueueHub} hub
 * @param {import('../pipeline/config.js').Config} config
 * @param {{warn: (o: any, m?: string) => void, info: (o: any, m?: string) => void}} log
 * @returns {() => void} stop
 */
export function keepBulkJobs(hub, config, log) {
  let running = Promise.resolve();
  let stopped = false;
  const resume = () => {
    running = running.then(async () => {
      if (stopped || !hub.up) return;
      const r = await resumeBulkJobs(hub, config);
      if (r.shards) log.info({ jobs: r.jobs, shards: r.shards }, `bulk jobs resumed: ${r.shards} shards of ${r.jobs} jobs queued again (Redis had lost them)`);
    }).catch((err) => log.warn({ err: err?.message ?? String(err) }, 'resuming bulk jobs failed; tried again at the next Redis reconnect or start'));
  };
  const onEnd = (/** @type {string} */ jobId) => {
    const m = /^(bulk-[0-9a-f-]{36})-\d+$/.exec(String(jobId));
    if (m && !stopped) void bulkStatus(m[1], hub, config).catch(() => {});
  };
  // Bull's queue.on('global:…') subscribes on its own connection and leaves that promise unhandled: a wrong Redis
  // password, or a server closed while the subscription is pending, would end the process. Subscribe first, with the
  // failure handled (a later 'ready' tries again), then listen: on() finds the subscription made and adds none.
  let listening = false;
  const listen = async () => {
    if (listening || stopped || !hub.up) return;
    listening = true;
    const queue = /** @type {any} */ (hub.queues.index);
    try {
      await Promise.all(['global:completed', 'global:failed'].map((e) => queue._registerEvent(e)));
    } catch {
      listening = false;
      return;
    }
    if (stopped) return;
    hub.queues.index.on('global:completed', onEnd);
    hub.queues.index.on('global:failed', onEnd);
  };
  const onReady = () => { void listen(); resume(); };
  hub.redis.on('ready', onReady);
  onReady();
  /** @type {NodeJS.Timeout | null} */
  let timer = null;
  const sweep = () => {
    if (stopped) return;
    const r = sweepUploads(config.server.requestTimeoutMs);
    if (r.removed) log.info({ removed: r.removed }, `removed ${r.removed} uploads that no bulk job needs`);
    if (r.recheckInMs !== null) (timer = setTimeout(sweep, r.recheckInMs)).unref();
  };
  sweep();
  const retire = () => {
    const r = sweepFinishedBulkJobs(config.server.bulkJobRetentionHours * 3_600_000);
    if (r.removed) log.info({ removed: r.removed }, `removed ${r.removed} bulk jobs that ended over ${config.server.bulkJobRetentionHours} h ago`);
  };
  retire();
  const retiring = setInterval(retire, 3_600_000).unref();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    clearInterval(retiring);
    hub.redis.off('ready', onReady);
    hub.queues.index.off('global:completed', onEnd);
    hub.queues.index.off('global:failed', onEnd);
  };
}

/**
 * @typedef {object} JobStatus
 * @property {string} id
 * @property {'bulk'} kind
 * @property {'queued'|'running'|'completed'|'failed'} state
 * @property {string} model
 * @property {string} collection
 * @property {string} created_at
 * @property {number} lines
 * @property {number} lines_done
 * @property {number} progress 0..1
 * @property {{total: number, done: number, failed: number}} shards
 * @property {number} documents written to the store
 * @property {number} rejected lines not indexed (invalid)
 * @property {number} empty documents without a known word (not indexed)
 * @property {{line: number, code: string, reason: string, id?: string}[]} issues the first 100 rejected or empty lines
 * @property {{shard: number, first_line: number, message: string}[]} errors shards that failed after every retry
 * @property {string | null} reason why a cancelled job failed as a whole (its collection deleted, its corpus gone)
 */

/**
 * @param {string} id
 * @param {import('./redis-queues.js').QueueHub | null} hub
 * @param {import('../pipeline/config.js').Config} config
 * @returns {Promise<JobStatus>}
 */
export async function bulkStatus(id, hub, config) {
  const outDir = path.join(jobsDir(), id);
  /** @type {BulkRecord} */
  let rec;
  try {
    rec = JSON.parse(fs.readFileSync(path.join(outDir, 'job.json'), 'utf8'));
  } catch {
    throw errors.JOB_NOT_FOUND(id);
  }
  let done = 0;
  let linesDone = 0;
  let documents = 0;
  let rejected = 0;
  let empty = 0;
  /** @type {JobStatus['issues']} */
  const issues = [];
  /** @type {JobStatus['errors']} */
  const failures = [];
  /** @type {import('../pipeline/corpus/plan.js').Shard[]} */
  const pending = [];
  for (const shard of rec.shards) {
    /** @type {import('../pipeline/queue/index-job.js').IndexShardResult | null} */
    const r = readShardResult(outDir, shard.index, id);
    if (!r) { pending.push(shard); continue; }
    done++;
    linesDone += r.lines;
    documents += r.documents;
    rejected += r.rejected.length;
    empty += r.empty.length;
    for (const x of [...r.rejected, ...r.empty]) if (issues.length < 100) issues.push(x);
  }
  let active = 0;
  // A cancelled job asks Redis nothing: its shards still out will not write.
  const cancelled = runCancelled(outDir);
  if (pending.length && !cancelled) {
    // Shards still out: only Redis knows whether they wait, run or failed for good.
    if (!hub) throw errors.QUEUE_UNAVAILABLE();
    hub.requireUp();
    for (const shard of pending) {
      const job = await hub.queues.index.getJob(shardJobId(id, shard.index));
      if (!job) continue;
      const state = await job.getState();
      if (state === 'failed') {
        failures.push({ shard: shard.index, first_line: shard.firstLine, message: String(job.failedReason ?? 'failed') });
      } else if (state === 'active') {
        active++;
        const p = /** @type {any} */ (job.progress());
        if (p && typeof p.lines === 'number') linesDone += p.lines;
      }
    }
  }
  const total = rec.shards.length;
  /** @type {JobStatus['state']} */
  let state = 'queued';
  if (done === total) state = 'completed';
  else if (failures.length && done + failures.length === total) state = 'failed';
  else if (done > 0 || active > 0 || failures.length) state = 'running';
  if (cancelled && state !== 'completed') state = 'failed';
  if (state === 'completed' || state === 'failed') await finish(rec, outDir, hub, config);
  issues.sort((a, b) => a.line - b.line);
  return {
    id, kind: 'bulk', state, model: rec.model, collection: rec.collection, created_at: rec.created_at,
    lines: rec.lines, lines_done: Math.min(linesDone, rec.lines), progress: rec.lines ? Math.min(1, linesDone / rec.lines) : 1,
    shards: { total, done, failed: failures.length }, documents, rejected, empty, issues, errors: failures,
    reason: state === 'failed' && cancelled ? cancelled.reason : null,
  };
}

/**
 * Once a job is over: drop the uploaded body and make precomputed matches of the collection stale (once).
 * @param {BulkRecord} rec
 * @param {string} outDir
 * @param {import('./redis-queues.js').QueueHub | null} hub
 * @param {import('../pipeline/config.js').Config} config
 */
async function finish(rec, outDir, hub, config) {
  const mark = path.join(outDir, 'finished');
  if (fs.existsSync(mark)) return;
  if (hub && !(await invalidate(hub.redis, config.queue.prefix, rec.model, rec.collection, []))) return;
  if (rec.uploaded) fs.rmSync(rec.corpus, { force: true });
  fs.writeFileSync(mark, new Date().toISOString() + '\n');
}
