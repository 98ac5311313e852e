// One shard of a corpus stage (tokenise, index) run as one Bull job: the run folder's files, the job payload both
// stages queue, and the one skeleton of a shard processor (read lines -> size check -> parse -> batch -> flush ->
// marker). Completion is decided by files, not by Redis: a shard is done when its result marker
// (outDir/shards/NNNNN.json, written last and atomically, carrying the run key) exists.
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../fsutil.js';
import { readLines } from '../corpus/lines.js';
import { parseDocument } from '../corpus/document.js';
import { ISSUE } from '../line-issues.js';
import { errors } from '../errors.js';

/**
 * The payload of a shard job; each stage adds its own fields.
 * @typedef {object} ShardJob
 * @property {string} runKey
 * @property {string} corpus absolute path (on the host that queued the job)
 * @property {import('../corpus/plan.js').Shard} shard
 * @property {string} outDir the run folder (shard markers live in outDir/shards)
 * @property {import('../config.js').Config} config queued as jobSettings(config); checkJob gives the processor its own
 *   configuration with those settings on top
 * @property {string} [lines] the shard's bytes, base64: a job that carries them can run on any host. Its worker
 *   reads them instead of `corpus` and returns the shard's result through the queue (job.returnvalue) instead of
 *   writing the marker, which lives on the queuing host: that host writes it (runShards)
 */

/**
 * What every shard's marker holds; each stage adds its own counts.
 * @typedef {object} ShardResultBase
 * @property {number} shard
 * @property {string} runKey
 * @property {number} lines lines read
 * @property {number} documents
 * @property {import('../corpus/document.js').LineIssue[]} rejected lines not used, with reasons
 * @property {number} seconds
 * @property {string} worker host:pid that wrote it
 */

/**
 * The Bull job id of a run's shard: a re-queued shard replaces its own job, and a run finds its jobs again.
 * @param {string} runKey
 * @param {number} index
 */
export const shardJobId = (runKey, index) => `${runKey}-${index}`;

/** @param {string} outDir */
export const shardsDir = (outDir) => path.join(outDir, 'shards');
/** @param {string} outDir @param {number} index */
export const shardMarker = (outDir, index) => path.join(shardsDir(outDir), `${String(index).padStart(5, '0')}.json`);

/**
 * The shard's result marker when it completed for this run, else null.
 * @template T
 * @param {string} outDir
 * @param {number} index
 * @param {string} runKey
 * @returns {(T & {runKey: string, lines: number, documents: number}) | null}
 */
export function readShardResult(outDir, index, runKey) {
  try {
    const r = JSON.parse(fs.readFileSync(shardMarker(outDir, index), 'utf8'));
    return r.runKey === runKey ? r : null;
  } catch {
    return null;
  }
}

/**
 * Write a shard's marker (last, atomically): the shard is done.
 * @param {string} outDir
 * @param {number} index
 * @param {ShardResultBase} result
 */
export function writeShardResult(outDir, index, result) {
  fs.mkdirSync(shardsDir(outDir), { recursive: true });
  writeFileAtomic(shardMarker(outDir, index), JSON.stringify(result));
}

/**
 * The bytes of a shard, base64, for a job that carries them (ShardJob.lines).
 * @param {string} corpus
 * @param {import('../corpus/plan.js').Shard} shard
 */
export function shardBytes(corpus, shard) {
  const buf = Buffer.alloc(shard.end - shard.start);
  const fd = fs.openSync(corpus, 'r');
  try {
    let n = 0;
    while (n < buf.length) {
      const r = fs.readSync(fd, buf, n, buf.length - n, shard.start + n);
      if (r === 0) break;
      n += r;
    }
    return buf.subarray(0, n).toString('base64');
  } finally {
    fs.closeSync(fd);
  }
}

/** @param {string} outDir */
const cancelMarker = (outDir) => path.join(outDir, 'cancelled.json');

/**
 * Cancel a run: its shards stop before their next write and fail for good (SCDV_RUN_CANCELLED, not retried).
 * Written (atomically) before whatever makes the run pointless is done, e.g. its collection deleted.
 * @param {string} outDir
 * @param {string} reason
 */
export function cancelRun(outDir, reason) {
  writeFileAtomic(cancelMarker(outDir), JSON.stringify({ reason, at: new Date().toISOString() }) + '\n');
}

/**
 * Why the run was cancelled (cancelRun), or null when it was not.
 * @param {string} outDir
 * @returns {{reason: string, at: string} | null}
 */
export function runCancelled(outDir) {
  try {
    return JSON.parse(fs.readFileSync(cancelMarker(outDir), 'utf8'));
  } catch {
    return null;
  }
}

/**
 * A job of a run that was cancelled must not go on. Only jobs whose run folder is on this host (without
 * ShardJob.lines) can tell.
 * @param {ShardJob} job
 * @throws SCDV_RUN_CANCELLED
 */
export function refuseCancelledRun(job) {
  const c = job.lines === undefined ? runCancelled(job.outDir) : null;
  if (c) throw errors.RUN_CANCELLED(c.reason);
}

/**
 * Keep the folder's finished shards when they belong to this run; otherwise start it over.
 * @param {string} outDir
 * @param {string} runKey
 * @param {(m: string) => void} log
 */
export function prepareRunDir(outDir, runKey, log) {
  const runFile = path.join(outDir, 'run.json');
  let previous = null;
  try {
    previous = JSON.parse(fs.readFileSync(runFile, 'utf8')).runKey;
  } catch { /* new folder */ }
  if (previous && previous !== runKey) {
    log(`${outDir} held a run with other inputs; its shard results are discarded`);
    fs.rmSync(shardsDir(outDir), { recursive: true, force: true });
  }
  fs.mkdirSync(shardsDir(outDir), { recursive: true });
  writeFileAtomic(runFile, JSON.stringify({ runKey }) + '\n');
}

/** Fault injection for the reliability tests: a pause after each batch keeps a shard in flight long enough to kill it. */
const FAULT_BATCH_DELAY_MS = Number(process.env.SCDV_FAULT_BATCH_DELAY_MS || 0);

/** @typedef {{line: number, doc: import('../corpus/document.js').Document}} BatchItem */

/**
 * Process one shard: read its lines, reject those over corpus.maxDocumentBytes and those that do not parse, hand
 * the documents to `flush` in batches, then write the shard's marker (last, atomically). A processor killed or
 * failing before the marker leaves the shard to be done again.
 * @template {ShardResultBase} R
 * @param {ShardJob} job
 * @param {object} options
 * @param {R} options.result counts so far; `lines`, `rejected` and `seconds` are kept here, the hooks keep the rest
 * @param {number} options.batchSize documents per flush
 * @param {(batch: BatchItem[]) => Promise<void>} options.flush
 * @param {(buf: Buffer) => void} [options.onLine] each line within the size limit (before parsing)
 * @param {() => void} [options.onBlank] a blank line (skipped)
 * @param {(doc: import('../corpus/document.js').Document, line: number, warnings: import('../corpus/document.js').LineIssue[]) =>
 *   import('../corpus/document.js').LineIssue | null | void} [options.accept] a parsed document: return an issue to reject it
 * @param {() => Promise<void>} [options.finish] after the last flush, before the marker (close and move output files)
 * @param {() => void} [options.abandon] on failure, before it is thrown (remove partial output)
 * @param {number} [options.startedAt] when the job started (Date.now()), if before this call: `seconds` counts from it
 * @returns {Promise<R>}
 */
export async function processShardLines(job, options) {
  const t0 = options.startedAt ?? Date.now();
  const { shard, config } = job;
  const { result } = options;
  /** @type {BatchItem[]} */
  let batch = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const full = batch;
    batch = [];
    // A cancelled run writes nothing more (its collection may be gone: a write would create it again).
    refuseCancelledRun(job);
    await options.flush(full);
    if (FAULT_BATCH_DELAY_MS > 0) await new Promise((r) => setTimeout(r, FAULT_BATCH_DELAY_MS));
  };
  refuseCancelledRun(job);
  const source = job.lines === undefined ? job.corpus : Buffer.from(job.lines, 'base64');
  const range = typeof source === 'string' ? { start: shard.start, end: shard.end } : { start: 0, end: source.length };
  try {
    for await (const l of readLines(source, { ...range, firstLine: shard.firstLine, maxLineBytes: config.corpus.maxDocumentBytes })) {
      result.lines++;
      if ('tooLongBytes' in l) {
        result.rejected.push({
          line: l.lineNo, code: ISSUE.TOO_LARGE,
          reason: `line of ${l.tooLongBytes} bytes exceeds corpus.maxDocumentBytes = ${config.corpus.maxDocumentBytes}`,
        });
        continue;
      }
      options.onLine?.(l.buf);
      const parsed = parseDocument(l.buf, l.lineNo);
      if ('blank' in parsed) { options.onBlank?.(); continue; }
      if ('error' in parsed) { result.rejected.push(parsed.error); continue; }
      const issue = options.accept?.(parsed.doc, l.lineNo, parsed.warnings);
      if (issue) { result.rejected.push(issue); continue; }
      batch.push({ line: l.lineNo, doc: parsed.doc });
      if (batch.length >= options.batchSize) await flush();
    }
    await flush();
    await options.finish?.();
  } catch (err) {
    options.abandon?.();
    // A write refused because the run was cancelled meanwhile (its collection deleted) is the cancellation.
    refuseCancelledRun(job);
    throw err;
  }
  result.seconds = (Date.now() - t0) / 1000;
  if (job.lines === undefined) writeShardResult(job.outDir, shard.index, result);
  return result;
}
