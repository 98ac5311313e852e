// Bull processor of the `tokenize` queue: one job = one shard (a byte range of the corpus).
// Output goes to a temp file renamed into place, and the shard's marker is written last, so a
// worker killed mid-shard leaves nothing that looks finished: the shard is simply done again.
import fs from 'node:fs';
import os from 'node:os';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { documentText } from '../pipeline/corpus/document.js';
import { japaneseShare } from '../pipeline/tokenizer/normalize.js';
import { createTokenizer } from '../pipeline/tokenizer/index.js';
import { hashOf } from '../pipeline/config.js';
import { runQueueWorker } from '../pipeline/queue/queue-worker.js';
import { shardTsv } from '../pipeline/queue/tokenize-output.js';
import { processShardLines, shardsDir } from '../pipeline/queue/shard.js';
import { ISSUE } from '../pipeline/line-issues.js';

/** @typedef {import('../pipeline/queue/shard.js').ShardJob} ShardJob */

/** @typedef {{lines: number, documents: number, shardLines: number}} ShardProgress */

/** Tokenizers by config hash: loading a dictionary is done once per worker process. */
const tokenizers = new Map();

/**
 * @param {import('../pipeline/config.js').Config['tokenizer']} cfg
 * @param {boolean} hugePages tokenize.hugePages
 */
async function tokenizerFor(cfg, hugePages) {
  const key = hashOf(cfg);
  if (!tokenizers.has(key)) tokenizers.set(key, await createTokenizer(cfg, { hugePages }));
  return tokenizers.get(key);
}

/** Share of letters that must be Japanese before a document is flagged as not Japanese. */
const MIN_JAPANESE_SHARE = 0.2;

/**
 * Tokenise one shard into its output files.
 * @param {ShardJob} job
 * @param {(p: ShardProgress) => void} [onProgress]
 * @returns {Promise<import('../pipeline/queue/tokenize-output.js').ShardResult>}
 */
export async function processShard(job, onProgress) {
  const startedAt = Date.now();
  const { shard, outDir, config } = job;
  // (A job queued by a version without tokenize.hugePages has none: such a job leaves the pages as they are.)
  const tokenizer = await tokenizerFor(config.tokenizer, config.tokenize?.hugePages ?? false);
  fs.mkdirSync(shardsDir(outDir), { recursive: true });
  const finalTsv = shardTsv(outDir, shard.index);
  const tmpTsv = `${finalTsv}.tmp-${process.pid}`;
  const out = fs.createWriteStream(tmpTsv);
  // A write error (ENOSPC, EIO…) must fail this job, not crash the worker: keep it and throw it below.
  /** @type {Error | null} */
  let writeError = null;
  out.on('error', (err) => { writeError = err; });
  /** @type {import('../pipeline/queue/tokenize-output.js').ShardResult} */
  const result = {
    shard: shard.index, runKey: job.runKey, lines: 0, documents: 0, blank: 0, emptyDocuments: 0, tokens: 0,
    bytes: 0, rejected: [], warnings: [], seconds: 0, worker: `${os.hostname()}:${process.pid}`,
  };

  /** @param {import('../pipeline/queue/shard.js').BatchItem[]} batch */
  const flush = async (batch) => {
    const texts = batch.map((b) => documentText(b.doc));
    const tokens = await tokenizer.tokenizeBatch(texts);
    let chunk = '';
    for (let i = 0; i < batch.length; i++) {
      const { line, doc } = batch[i];
      const t = tokens[i];
      if (t === '') {
        result.emptyDocuments++;
        const notJa = japaneseShare(texts[i]) < MIN_JAPANESE_SHARE;
        result.warnings.push({
          line, id: doc.id, code: notJa ? ISSUE.NOT_JAPANESE : ISSUE.NO_TOKENS,
          reason: notJa ? 'text is not Japanese: no token kept' : 'no token survived the filters',
        });
      } else {
        result.tokens += 1 + countSpaces(t);
        if (japaneseShare(texts[i]) < MIN_JAPANESE_SHARE) {
          result.warnings.push({ line, id: doc.id, code: ISSUE.NOT_JAPANESE, reason: 'text is mostly not Japanese' });
        }
      }
      chunk += `${line}\t${doc.id}\t${t}\n`;
      result.documents++;
    }
    if (writeError) throw writeError;
    if (!out.write(chunk)) await once(out, 'drain'); // rejects when the stream fails instead
    onProgress?.({ lines: result.lines, documents: result.documents, shardLines: shard.lines });
  };

  return processShardLines(job, {
    result, batchSize: config.tokenize.batchSize, flush, startedAt,
    onLine: (buf) => { result.bytes += buf.length; },
    onBlank: () => { result.blank++; },
    accept: (_doc, _line, warnings) => { result.warnings.push(...warnings); },
    finish: async () => {
      out.end();
      await finished(out);
      if (writeError) throw writeError;
      fs.renameSync(tmpTsv, finalTsv);
    },
    abandon: () => {
      out.destroy();
      fs.rmSync(tmpTsv, { force: true });
    },
  });
}

/** @param {string} s */
function countSpaces(s) {
  let n = 0;
  for (let i = s.indexOf(' '); i !== -1; i = s.indexOf(' ', i + 1)) n++;
  return n;
}

/**
 * Run a worker on the `tokenize` queue until SIGTERM/SIGINT; resolves when it has stopped.
 * @param {{redisUrl: string, config: import('../pipeline/config.js').Config, concurrency?: number, allowPaths?: string[]}} opts
 */
export function runTokenizeWorker(opts) {
  return runQueueWorker({
    ...opts, queueName: 'tokenize', jobName: 'shard',
    handle: async (/** @type {import('bull').Job<ShardJob>} */ job, progress) => {
      const r = await processShard(job.data, progress);
      return { shard: r.shard, documents: r.documents, rejected: r.rejected.length, seconds: r.seconds };
    },
  });
}
