// `scdv tokenize`: split a corpus into shards, queue one Bull job per shard, run local workers,
// follow their progress, then merge the shard outputs (dropping duplicate ids) into tokens.tsv.
// Re-running with the same corpus and config reuses every finished shard.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { planShards } from '../corpus/plan.js';
import { hashOf } from '../config.js';
import { createTokenizer } from '../tokenizer/index.js';
import { startShardWorkers } from '../queue/worker-pool.js';
import { jobSettings } from '../queue/job-schemas.js';
/** @typedef {import('../queue/worker-pool.js').WorkerPool} WorkerPool */
import { writeFileAtomic } from '../fsutil.js';
import { plural } from '../progress.js';
import { checkUsableRun, rejectUnreadableCorpus, runShards } from './sharded.js';
import { prepareRunDir, readShardResult, shardsDir } from '../queue/shard.js';
import { shardTsv } from '../queue/tokenize-output.js';
import { duplicateIssue } from '../corpus/duplicates.js';

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
 * @property {string} [label] what its log lines and progress bar are called (default 'tokenize')
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
 * @property {string | null} warning a high share of rejected lines (corpus.warnRejectedFraction)
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
  const label = opts.label ?? 'tokenize';
  // Loading the tokenizer here checks dictionary and config before any worker starts.
  const tokenizer = await createTokenizer(config.tokenizer);
  const described = tokenizer.describe();
  if (tokenizer.dictionary.warning) log(`WARNING: ${tokenizer.dictionary.warning}`);
  rejectUnreadableCorpus(corpus);
  /** @type {WorkerPool | null} */
  let pool = null;
  /** @type {Promise<void> | null} */
  let stopping = null;
  try {
    const plan = await planShards(corpus, config.tokenize.shardSize);
    const runKey = hashOf({
      corpus: plan.sha256, tokenizer: config.tokenizer, dictionary: [described.dictionary.name, described.dictionary.size],
      maxDocumentBytes: config.corpus.maxDocumentBytes, shardSize: config.tokenize.shardSize,
    });
    prepareRunDir(outDir, runKey, log);
    const pending = plan.shards.filter((s) => !readShardResult(outDir, s.index, runKey));
    const reused = plan.shards.length - pending.length;
    log(`${label}: ${plural(plan.lines, 'line')} in ${plural(plan.shards.length, 'shard')}` +
      (reused ? ` (${reused} already done, reused)` : '') + `; dictionary ${described.dictionary.name}`);

    if (pending.length) {
      // Workers start once the shards to do are known: never more workers than shards.
      pool = startShardWorkers({ stage: 'tokenize', requested: opts.workers ?? config.tokenize.workers, shards: pending.length, redisUrl: opts.redisUrl, config, log, allowPaths: [corpus, outDir] });
      opts.onWorkersStarted?.(pool);
      await runShards({
        queueName: 'tokenize', label, outDir, runKey, pending, config, redisUrl: opts.redisUrl, log, quiet: opts.quiet, pool,
        jobData: (shard) => ({ runKey, corpus, shard, outDir, config: /** @type {any} */ (jobSettings(config)) }),
      });
    }
    // Workers shut down (each closes its Redis connections) while the coordinator merges.
    stopping = pool?.stop() ?? null;
    const merged = await mergeShards(outDir, plan.shards.map((s) => s.index), runKey);
    const warning = checkUsableRun({
      corpus, lines: plan.lines, documents: merged.documents, rejectedByCode: merged.rejectedByCode,
      details: path.join(outDir, 'rejected.jsonl'), config,
    });
    const summary = {
      outDir, tokensFile: path.join(outDir, 'tokens.tsv'), ...merged, shards: plan.shards.length,
      reusedShards: reused, seconds: (Date.now() - t0) / 1000, warning,
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
    await (stopping ?? pool?.stop());
  }
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
    /** @type {import('../queue/tokenize-output.js').ShardResult | null} */
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
        rejectedOut.push(duplicateIssue(line, id, seen));
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
  // Temp files of workers killed mid-shard: their shards were done again by others.
  for (const f of fs.readdirSync(shardsDir(outDir))) if (f.includes('.tmp-')) fs.rmSync(path.join(shardsDir(outDir), f), { force: true });
  rejectedOut.sort((a, b) => a.line - b.line);
  warningsOut.sort((a, b) => a.line - b.line);
  writeFileAtomic(path.join(outDir, 'rejected.jsonl'), rejectedOut.map((r) => JSON.stringify(r)).join('\n') + (rejectedOut.length ? '\n' : ''));
  writeFileAtomic(path.join(outDir, 'warnings.jsonl'), warningsOut.map((r) => JSON.stringify(r)).join('\n') + (warningsOut.length ? '\n' : ''));
  /** @type {Record<string, number>} */
  const rejectedByCode = {};
  for (const r of rejectedOut) rejectedByCode[r.code] = (rejectedByCode[r.code] ?? 0) + 1;
  return { documents, rejected: rejectedOut.length, warnings: warningsOut.length, emptyDocuments, tokens, rejectedByCode };
}
