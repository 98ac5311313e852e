// `scdv tokenize`: split a corpus into shards, queue one Bull job per shard, run local workers,
// follow their progress, then merge the shard outputs (dropping duplicate ids) into tokens.tsv.
// Re-running with the same corpus and config reuses every finished shard.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { planShards } from '../corpus/plan.js';
import { hashOf } from '../config.js';
import { errors } from '../errors.js';
import { createTokenizer } from '../tokenizer/index.js';
import { openQueue } from '../queue/queues.js';
import { ProgressBar } from '../progress.js';
import { WorkerPool } from './worker-pool.js';
import { readShardResult, shardsDir, shardTsv, writeFileAtomic } from './tokenize-output.js';

/**
 * @typedef {object} TokenizeOptions
 * @property {string} corpus
 * @property {string} outDir
 * @property {import('../config.js').Config} config
 * @property {string} redisUrl
 * @property {number} [workers] local worker processes (0: rely on `scdv worker tokenize` elsewhere)
 * @property {(msg: string) => void} [log]
 * @property {boolean} [quiet] no progress bar
 * @property {(pool: WorkerPool) => void} [onWorkersStarted] test hook: lets a test kill a worker
 */

/**
 * @typedef {object} TokenizeSummary
 * @property {string} outDir
 * @property {string} tokensFile
 * @property {number} documents
 * @property {number} rejected
 * @property {number} warnings
 * @property {number} emptyDocuments
 * @property {number} tokens
 * @property {number} shards
 * @property {number} reusedShards
 * @property {number} seconds
 * @property {Record<string, number>} rejectedByCode
 */

/**
 * @param {TokenizeOptions} opts
 * @returns {Promise<TokenizeSummary>}
 */
export async function runTokenize(opts) {
  const t0 = Date.now();
  const log = opts.log ?? ((/** @type {string} */ m) => process.stderr.write(`${m}\n`));
  const corpus = path.resolve(opts.corpus);
  const outDir = path.resolve(opts.outDir);
  const { config } = opts;
  // Loading the tokenizer here checks dictionary and config before any worker starts.
  const tokenizer = await createTokenizer(config.tokenizer);
  const described = tokenizer.describe();
  if (tokenizer.dictionary.warning) log(`WARNING: ${tokenizer.dictionary.warning}`);
  // Workers start now, so that their start-up overlaps planning and queueing.
  const pool = new WorkerPool({ stage: 'tokenize', count: opts.workers ?? config.tokenize.workers, redisUrl: opts.redisUrl, config, log });
  pool.start();
  opts.onWorkersStarted?.(pool);
  /** @type {Promise<void> | null} */
  let stopping = null;
  try {
    const plan = await planShards(corpus, config.tokenize.shardSize);
    const runKey = hashOf({
      corpus: plan.sha256, tokenizer: config.tokenizer, dictionary: [described.dictionary.name, described.dictionary.size],
      maxDocumentBytes: config.corpus.maxDocumentBytes, shardSize: config.tokenize.shardSize,
    });
    prepareOutDir(outDir, runKey, log);
    const pending = plan.shards.filter((s) => !readShardResult(outDir, s.index, runKey));
    const reused = plan.shards.length - pending.length;
    log(`tokenize: ${plan.lines} lines in ${plan.shards.length} shards` +
      (reused ? ` (${reused} already done, reused)` : '') + `; dictionary ${described.dictionary.name}`);

    if (pending.length) await runShards({ ...opts, corpus, outDir, runKey, pending, log });
    // Workers shut down (each closes its Redis connections) while the coordinator merges.
    stopping = pool.stop();
    const merged = await mergeShards(outDir, plan.shards.map((s) => s.index), runKey);
    const summary = {
      outDir, tokensFile: path.join(outDir, 'tokens.tsv'), ...merged, shards: plan.shards.length,
      reusedShards: reused, seconds: (Date.now() - t0) / 1000,
    };
    writeFileAtomic(path.join(outDir, 'manifest.json'), JSON.stringify({
      format: 'scdv-tokens/1', runKey, created_at: new Date().toISOString(),
      corpus: { path: corpus, bytes: plan.bytes, lines: plan.lines, sha256: plan.sha256 },
      tokenizer: { ...described, config: config.tokenizer },
      counts: {
        documents: summary.documents, rejected: summary.rejected, warnings: summary.warnings,
        emptyDocuments: summary.emptyDocuments, tokens: summary.tokens, shards: summary.shards,
      },
      rejectedByCode: summary.rejectedByCode, seconds: summary.seconds,
    }, null, 2) + '\n');
    return summary;
  } finally {
    await (stopping ?? pool.stop());
  }
}

/**
 * Keep the folder's finished shards when they belong to this run; otherwise start it over.
 * @param {string} outDir
 * @param {string} runKey
 * @param {(m: string) => void} log
 */
function prepareOutDir(outDir, runKey, log) {
  const runFile = path.join(outDir, 'run.json');
  let previous = null;
  try {
    previous = JSON.parse(fs.readFileSync(runFile, 'utf8')).runKey;
  } catch { /* new folder */ }
  if (previous && previous !== runKey) {
    log(`tokenize: ${outDir} held a run with other inputs; its shards are discarded`);
    fs.rmSync(shardsDir(outDir), { recursive: true, force: true });
  }
  fs.mkdirSync(shardsDir(outDir), { recursive: true });
  writeFileAtomic(runFile, JSON.stringify({ runKey }) + '\n');
}

/**
 * Queue the pending shards and wait until each has a completion marker (or failed for good).
 * @param {TokenizeOptions & {corpus: string, outDir: string, runKey: string, pending: import('../corpus/plan.js').Shard[], log: (m: string) => void}} o
 */
async function runShards(o) {
  const queue = openQueue('tokenize', o.redisUrl, o.config.queue);
  queue.on('error', () => {}); // reconnects are automatic; failures surface as missing progress
  const jobId = (/** @type {number} */ i) => `${o.runKey}-${i}`;
  for (const shard of o.pending) {
    const stale = await queue.getJob(jobId(shard.index));
    if (stale && ((await stale.isFailed()) || (await stale.isCompleted()))) await stale.remove();
    await queue.add('shard', { runKey: o.runKey, corpus: o.corpus, shard, outDir: o.outDir, config: o.config }, { jobId: jobId(shard.index) });
  }
  const bar = o.quiet ? null : new ProgressBar('tokenize');
  /** Wakes the wait below as soon as a job completes or fails, instead of at the next poll. */
  let wake = () => {};
  queue.on('global:completed', () => wake());
  queue.on('global:failed', () => wake());

  /** @type {Map<number, number>} */
  const linesDone = new Map();
  queue.on('global:progress', (id, progress) => {
    const index = Number(String(id).slice(o.runKey.length + 1));
    try {
      const p = typeof progress === 'string' ? JSON.parse(progress) : progress;
      if (Number.isInteger(index) && p && typeof p.lines === 'number') linesDone.set(index, p.lines);
    } catch { /* not ours */ }
  });

  const remaining = new Set(o.pending.map((s) => s.index));
  const totalLines = o.pending.reduce((a, s) => a + s.lines, 0);
  /** @type {string[]} */
  const failures = [];
  let docs = 0;
  const started = Date.now();
  try {
    while (remaining.size > 0) {
      for (const index of [...remaining]) {
        const r = readShardResult(o.outDir, index, o.runKey);
        if (r) {
          remaining.delete(index);
          linesDone.set(index, r.lines);
          docs += r.documents;
        }
      }
      for (const job of await queue.getFailed()) {
        const index = Number(String(job.id).slice(o.runKey.length + 1));
        if (String(job.id).startsWith(`${o.runKey}-`) && remaining.has(index)) {
          remaining.delete(index);
          failures.push(`shard ${index} (lines ${job.data.shard.firstLine}-${job.data.shard.firstLine + job.data.shard.lines - 1}): ${job.failedReason}`);
        }
      }
      const lines = [...linesDone.values()].reduce((a, b) => a + b, 0);
      const secs = (Date.now() - started) / 1000;
      bar?.update({
        done: o.pending.length - remaining.size, total: o.pending.length, unit: 'shards', fraction: lines / totalLines,
        extra: `${docs} docs ${(lines / Math.max(secs, 0.001)).toFixed(0)} docs/s`,
      });
      if (remaining.size > 0) {
        await new Promise((r) => {
          const timer = setTimeout(r, 250);
          wake = () => { clearTimeout(timer); r(undefined); };
        });
      }
    }
    bar?.finish();
  } finally {
    await queue.close();
  }
  if (failures.length) throw errors.SHARD_FAILED(failures.length, failures.join('; '));
}

/**
 * Concatenate finished shards in corpus order into tokens.tsv; the first occurrence of an id wins.
 * @param {string} outDir
 * @param {number[]} indexes
 * @param {string} runKey
 */
async function mergeShards(outDir, indexes, runKey) {
  const tokensFile = path.join(outDir, 'tokens.tsv');
  const tmp = `${tokensFile}.tmp-${process.pid}`;
  const out = fs.createWriteStream(tmp);
  const rejectedOut = [];
  const warningsOut = [];
  /** @type {Map<string, number>} */
  const firstLine = new Map();
  let documents = 0;
  let emptyDocuments = 0;
  let tokens = 0;
  for (const index of indexes) {
    const r = readShardResult(outDir, index, runKey);
    if (!r) throw new Error(`shard ${index} has no completion marker after the run`);
    rejectedOut.push(...r.rejected);
    warningsOut.push(...r.warnings);
    const rl = readline.createInterface({ input: fs.createReadStream(shardTsv(outDir, index)), crlfDelay: Infinity });
    for await (const row of rl) {
      const t1 = row.indexOf('\t');
      const t2 = row.indexOf('\t', t1 + 1);
      const line = Number(row.slice(0, t1));
      const id = row.slice(t1 + 1, t2);
      const seen = firstLine.get(id);
      if (seen !== undefined) {
        rejectedOut.push({ line, id, code: 'DUPLICATE_ID', reason: `duplicate id "${id}" (first on line ${seen})` });
        continue;
      }
      firstLine.set(id, line);
      const toks = row.slice(t2 + 1);
      if (toks === '') emptyDocuments++;
      else tokens += toks.split(' ').length;
      documents++;
      if (!out.write(`${id}\t${toks}\n`)) await new Promise((res) => out.once('drain', () => res(undefined)));
    }
  }
  await new Promise((resolve, reject) => out.end((/** @type {any} */ e) => (e ? reject(e) : resolve(undefined))));
  fs.renameSync(tmp, tokensFile);
  rejectedOut.sort((a, b) => a.line - b.line);
  warningsOut.sort((a, b) => a.line - b.line);
  writeFileAtomic(path.join(outDir, 'rejected.jsonl'), rejectedOut.map((r) => JSON.stringify(r)).join('\n') + (rejectedOut.length ? '\n' : ''));
  writeFileAtomic(path.join(outDir, 'warnings.jsonl'), warningsOut.map((r) => JSON.stringify(r)).join('\n') + (warningsOut.length ? '\n' : ''));
  /** @type {Record<string, number>} */
  const rejectedByCode = {};
  for (const r of rejectedOut) rejectedByCode[r.code] = (rejectedByCode[r.code] ?? 0) + 1;
  return { documents, rejected: rejectedOut.length, warnings: warningsOut.length, emptyDocuments, tokens, rejectedByCode };
}
