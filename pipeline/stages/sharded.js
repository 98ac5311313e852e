// Running a corpus stage as one Bull job per shard: shared by tokenise and index.
// Completion is decided by files, not by Redis: a shard is done when its result marker
// (outDir/shards/NNNNN.json, written last and atomically, carrying the run key) exists. So a run
// survives Redis restarts and worker deaths, and a re-run skips every finished shard.
import fs from 'node:fs';
import { errors } from '../errors.js';
import { ISSUE } from '../line-issues.js';
import { openQueue } from '../queue/queues.js';
import { readShardResult, shardJobId, writeShardResult } from '../queue/shard.js';
import { ProgressBar, formatSeconds, plural } from '../progress.js';

/** How often a run looks for shard jobs that Redis lost. */
const LOST_JOB_CHECK_MS = 2000;

/** Leading bytes of compressed and archive formats a corpus is sometimes handed over in. */
const COMPRESSED_MAGIC = /** @type {const} */ ([
  ['gzip', [0x1f, 0x8b], 'gunzip'], ['zip', [0x50, 0x4b, 0x03, 0x04], 'unzip'], ['bzip2', [0x42, 0x5a, 0x68], 'bunzip2'],
  ['xz', [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], 'unxz'], ['zstd', [0x28, 0xb5, 0x2f, 0xfd], 'unzstd'],
]);

/**
 * The compression format whose magic bytes start the file, if any (null when unreadable: planShards reports that).
 * @param {string} file
 * @returns {{format: string, tool: string} | null}
 */
export function compressionOf(file) {
  const head = Buffer.alloc(8);
  let n = 0;
  try {
    const fd = fs.openSync(file, 'r');
    try { n = fs.readSync(fd, head, 0, head.length, 0); } finally { fs.closeSync(fd); }
  } catch {
    return null;
  }
  for (const [format, magic, tool] of COMPRESSED_MAGIC) {
    if (n >= magic.length && magic.every((b, i) => head[i] === b)) return { format, tool };
  }
  return null;
}

/**
 * Fail before any work on a compressed corpus: every line of it would be rejected as INVALID_UTF8.
 * @param {string} corpus
 */
export function rejectUnreadableCorpus(corpus) {
  const c = compressionOf(corpus);
  if (c) throw errors.CORPUS_UNUSABLE(corpus, `it looks like a ${c.format} file; decompress it first (e.g. ${c.tool}) and pass the JSON Lines file`);
}

/**
 * A run with no usable document is an error, naming the likely cause; a run that rejected more than
 * corpus.warnRejectedFraction of its lines returns a warning for its summary.
 * @param {{corpus: string, lines: number, documents: number, empty?: number, rejectedByCode: Record<string, number>, details: string, config: import('../config.js').Config}} options
 *   empty: documents without a word the model knows (scdv index), neither indexed nor rejected
 * @returns {string | null} the warning, if any
 */
export function checkUsableRun(options) {
  const rejected = Object.values(options.rejectedByCode).reduce((a, b) => a + b, 0);
  const codes = Object.entries(options.rejectedByCode).sort((a, b) => b[1] - a[1]);
  const byCode = codes.map(([k, v]) => `${k} ${v}`).join(', ');
  if (options.documents === 0) {
    const top = codes[0]?.[0];
    const causes = [
      rejected ? `${rejected} of ${options.lines} lines rejected (${byCode})` : '',
      top === ISSUE.INVALID_UTF8 ? 'the file is not UTF-8 text (a binary file, or another encoding such as Shift_JIS: convert it with iconv)'
        : top === ISSUE.INVALID_JSON || top === ISSUE.NOT_AN_OBJECT ? 'its lines are not JSON objects; a corpus is JSON Lines, one {"id", "body", "title"?} object a line'
        : '',
      options.empty ? `none of its ${options.empty} documents has a word the model knows (another language or subject than the model was trained on?)` : '',
    ].filter(Boolean);
    throw errors.CORPUS_UNUSABLE(options.corpus, `${causes.length ? causes.join('; ') : 'no line holds a document'}; details: ${options.details}`);
  }
  const fraction = rejected / options.lines;
  if (rejected > 0 && fraction > options.config.corpus.warnRejectedFraction) {
    return `${(100 * fraction).toFixed(1)} % of the lines were rejected (${rejected} of ${options.lines}: ${byCode}), ` +
      `over corpus.warnRejectedFraction ${options.config.corpus.warnRejectedFraction}; see ${options.details}`;
  }
  return null;
}

/**
 * @typedef {object} ShardRunOptions
 * @property {'tokenize'|'index'} queueName
 * @property {string} [label] the progress bar's name (default: the queue's)
 * @property {string} outDir the run folder (shard markers live in outDir/shards)
 * @property {string} runKey
 * @property {import('../corpus/plan.js').Shard[]} pending
 * @property {(shard: import('../corpus/plan.js').Shard) => Record<string, any>} jobData
 * @property {import('../config.js').Config} config
 * @property {string} redisUrl
 * @property {(m: string) => void} log
 * @property {boolean} [quiet]
 * @property {{failure: string | null}} [pool] local workers: the run fails when they all died for good
 * @property {boolean} [travel] the jobs carry their documents (ShardJob.lines) and may run on other hosts: each
 *   returns its result through the queue and this process writes the marker, then removes the job; at most
 *   index.queuedShards of them are in Redis at a time (each holds a shard's bytes)
 */

/**
 * Queue the pending shards and wait until each has a completion marker (or failed for good).
 * Workers must already be running (a WorkerPool, or `scdv worker <stage>` elsewhere).
 * @param {ShardRunOptions} options
 */
export async function runShards(options) {
  const queue = openQueue(options.queueName, options.redisUrl, options.config.queue);
  queue.on('error', () => {}); // reconnects are automatic; failures surface as missing progress
  const jobId = (/** @type {number} */ i) => shardJobId(options.runKey, i);
  // A travelling job stays after completion until its result is harvested (below).
  const jobOptions = (/** @type {number} */ i) => ({ jobId: jobId(i), ...(options.travel ? { removeOnComplete: false } : {}) });
  const remaining = new Set(options.pending.map((s) => s.index));
  /**
   * A travelling job's result becomes this host's marker; then the job goes (so a job that is gone and a marker
   * that is absent still mean a lost shard, as below).
   * @param {import('bull').Job} job
   */
  const harvest = async (job) => {
    const r = job.returnvalue;
    if (!r || r.runKey !== options.runKey) return;
    if (remaining.has(r.shard)) writeShardResult(options.outDir, r.shard, r);
    await job.remove();
  };
  /** @param {import('../corpus/plan.js').Shard} shard */
  const add = async (shard) => {
    const stale = await queue.getJob(jobId(shard.index));
    if (stale && options.travel && (await stale.isCompleted())) await harvest(stale); // done while no one was waiting
    if (readShardResult(options.outDir, shard.index, options.runKey)) return;
    if (stale && ((await stale.isFailed()) || (await stale.isCompleted()))) await stale.remove();
    await queue.add('shard', options.jobData(shard), jobOptions(shard.index));
  };
  const window = options.travel ? options.config.index.queuedShards : Infinity;
  /** o.pending[0, queued) have been queued */
  let queued = 0;
  const queueMore = async () => {
    while (queued < options.pending.length && queued - (options.pending.length - remaining.size) < window) await add(options.pending[queued++]);
  };
  await queueMore();
  const byIndex = new Map(options.pending.map((s) => [s.index, s]));
  /**
   * Queue again the unfinished shards whose job Redis no longer has (a Redis restarted without its data).
   * A finished job is removed only after its shard's marker is written, so a job that is gone and a marker
   * that is still absent when looked at afterwards mean the shard was lost, not done.
   * @param {number[]} indexes
   */
  const requeueLost = async (indexes) => {
    let n = 0;
    for (const index of indexes) {
      if (options.pending.findIndex((s) => s.index === index) >= queued) continue; // not queued yet
      if (await queue.getJob(jobId(index))) continue;
      if (readShardResult(options.outDir, index, options.runKey)) continue;
      await queue.add('shard', options.jobData(/** @type {import('../corpus/plan.js').Shard} */ (byIndex.get(index))), jobOptions(index));
      n++;
    }
    if (n) options.log(`${options.queueName}: ${n} shard job(s) were lost by Redis and are queued again`);
  };
  let lastLostCheck = Date.now();
  const totalLines = options.pending.reduce((a, s) => a + s.lines, 0);
  // One unit from start to end: corpus lines (a line is a document, or a rejected line); shards are the jobs.
  const bar = options.quiet ? null : new ProgressBar(options.label ?? options.queueName, { unit: 'line', total: totalLines });
  /** Wakes the wait below as soon as a job completes or fails, instead of at the next poll. */
  let wake = () => {};
  queue.on('global:completed', () => wake());
  queue.on('global:failed', () => wake());

  /** @type {Map<number, number>} */
  const linesDone = new Map();
  queue.on('global:progress', (id, progress) => {
    const index = Number(String(id).slice(options.runKey.length + 1));
    try {
      const p = typeof progress === 'string' ? JSON.parse(progress) : progress;
      if (Number.isInteger(index) && p && typeof p.lines === 'number') linesDone.set(index, p.lines);
    } catch { /* not ours */ }
  });

  /** @type {string[]} */
  const failures = [];
  let docs = 0;
  const started = Date.now();
  try {
    while (remaining.size > 0) {
      if (options.travel) {
        try {
          for (const job of await queue.getCompleted()) if (String(job.id).startsWith(`${options.runKey}-`)) await harvest(job);
        } catch { /* Redis unreachable: next round */ }
      }
      for (const index of [...remaining]) {
        const r = readShardResult(options.outDir, index, options.runKey);
        if (r) {
          remaining.delete(index);
          linesDone.set(index, r.lines);
          docs += r.documents;
        }
      }
      try {
        for (const job of await queue.getFailed()) {
          const index = Number(String(job.id).slice(options.runKey.length + 1));
          if (String(job.id).startsWith(`${options.runKey}-`) && remaining.has(index)) {
            remaining.delete(index);
            failures.push(`shard ${index} (lines ${job.data.shard.firstLine}-${job.data.shard.firstLine + job.data.shard.lines - 1}): ${job.failedReason}`);
          }
        }
        await queueMore();
        if (remaining.size > 0 && Date.now() - lastLostCheck > LOST_JOB_CHECK_MS) {
          lastLostCheck = Date.now();
          await requeueLost([...remaining]);
        }
      } catch {
        // Redis unreachable for longer than a command waits (the connection keeps reconnecting): completion
        // is read from the shard markers, so just look again on the next round.
      }
      if (options.pool?.failure && remaining.size > 0) throw errors.WORKERS_DIED(options.pool.failure);
      const lines = [...linesDone.values()].reduce((a, b) => a + b, 0);
      const secs = (Date.now() - started) / 1000;
      const finished = options.pending.length - remaining.size;
      bar?.update({
        done: lines,
        extra: `(${finished} of ${plural(options.pending.length, 'shard')} finished: ${plural(docs, 'document')} accepted; ` +
          `${(lines / Math.max(secs, 0.001)).toFixed(0)} lines/s)`,
      });
      if (remaining.size > 0) {
        await new Promise((r) => {
          const timer = setTimeout(r, 250);
          wake = () => { clearTimeout(timer); r(undefined); };
        });
      }
    }
    bar?.finish({ extra: `(${plural(options.pending.length, 'shard')}: ${plural(docs, 'document')} accepted; done in ${formatSeconds((Date.now() - started) / 1000)})` });
  } finally {
    // A run that stops early (its workers died, an error) withdraws its queued shards, so that later workers on
    // this queue do not pick them up for a run nobody waits for; a re-run queues them again.
    if (remaining.size > 0) await withdrawJobs(queue, [...remaining].map(jobId));
    await queue.close();
  }
  if (failures.length) throw errors.SHARD_FAILED(failures.length, failures.join('; '));
}

/**
 * Remove the jobs that are not being processed (a job in a worker's hands is locked and left to finish).
 * @param {import('bull').Queue} queue
 * @param {string[]} ids
 */
async function withdrawJobs(queue, ids) {
  for (const id of ids) {
    try {
      const job = await queue.getJob(id);
      if (job && !(await job.isActive())) await job.remove();
    } catch { /* locked, or Redis is gone: nothing more to do */ }
  }
}
