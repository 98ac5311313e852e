// Bull processor of the `tokenize` queue: one job = one shard (a byte range of the corpus).
// Output goes to a temp file renamed into place, and the shard's marker is written last, so a
// worker killed mid-shard leaves nothing that looks finished: the shard is simply done again.
import fs from 'node:fs';
import os from 'node:os';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { readLines } from '../pipeline/corpus/lines.js';
import { parseDocument, documentText } from '../pipeline/corpus/document.js';
import { japaneseShare } from '../pipeline/tokenizer/normalize.js';
import { createTokenizer } from '../pipeline/tokenizer/index.js';
import { hashOf } from '../pipeline/config.js';
import { runQueueWorker } from '../pipeline/queue/worker.js';
import { shardTsv } from '../pipeline/stages/tokenize-output.js';
import { shardMarker, shardsDir } from '../pipeline/stages/sharded.js';
import { writeFileAtomic } from '../pipeline/fsutil.js';

/**
 * @typedef {object} ShardJob
 * @property {string} runKey
 * @property {string} corpus absolute path
 * @property {import('../pipeline/corpus/plan.js').Shard} shard
 * @property {string} outDir absolute path
 * @property {import('../pipeline/config.js').Config} config
 */

/** @typedef {{lines: number, documents: number, shardLines: number}} ShardProgress */

/** Tokenizers by config hash: loading a dictionary is done once per worker process. */
const tokenizers = new Map();

/** @param {import('../pipeline/config.js').Config['tokenizer']} cfg */
async function tokenizerFor(cfg) {
  const key = hashOf(cfg);
  if (!tokenizers.has(key)) tokenizers.set(key, await createTokenizer(cfg));
  return tokenizers.get(key);
}

/** Fault injection for the reliability tests: a pause after each batch keeps a shard in flight long enough to kill it. */
const BATCH_DELAY_MS = Number(process.env.SCDV_FAULT_BATCH_DELAY_MS || 0);

/** Share of letters that must be Japanese before a document is flagged as not Japanese. */
const MIN_JAPANESE_SHARE = 0.2;

/**
 * Tokenise one shard into its output files.
 * @param {ShardJob} job
 * @param {(p: ShardProgress) => void} [onProgress]
 * @returns {Promise<import('../pipeline/stages/tokenize-output.js').ShardResult>}
 */
export async function processShard(job, onProgress) {
  const t0 = Date.now();
  const { shard, outDir, config } = job;
  const tokenizer = await tokenizerFor(config.tokenizer);
  fs.mkdirSync(shardsDir(outDir), { recursive: true });
  const finalTsv = shardTsv(outDir, shard.index);
  const tmpTsv = `${finalTsv}.tmp-${process.pid}`;
  const out = fs.createWriteStream(tmpTsv);
  // A write error (ENOSPC, EIO…) must fail this job, not crash the worker: keep it and throw it below.
  /** @type {Error | null} */
  let writeError = null;
  out.on('error', (err) => { writeError = err; });
  /** @type {import('../pipeline/stages/tokenize-output.js').ShardResult} */
  const result = {
    shard: shard.index, runKey: job.runKey, lines: 0, documents: 0, blank: 0, emptyDocuments: 0, tokens: 0,
    bytes: 0, rejected: [], warnings: [], seconds: 0, worker: `${os.hostname()}:${process.pid}`,
  };
  /** @type {{line: number, doc: import('../pipeline/corpus/document.js').Document}[]} */
  let batch = [];

  const flush = async () => {
    if (batch.length === 0) return;
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
          line, id: doc.id, code: notJa ? 'NOT_JAPANESE' : 'NO_TOKENS',
          reason: notJa ? 'text is not Japanese: no token kept' : 'no token survived the filters',
        });
      } else {
        result.tokens += 1 + countSpaces(t);
        if (japaneseShare(texts[i]) < MIN_JAPANESE_SHARE) {
          result.warnings.push({ line, id: doc.id, code: 'NOT_JAPANESE', reason: 'text is mostly not Japanese' });
        }
      }
      chunk += `${line}\t${doc.id}\t${t}\n`;
      result.documents++;
    }
    batch = [];
    if (writeError) throw writeError;
    if (!out.write(chunk)) await once(out, 'drain'); // rejects when the stream fails instead
    onProgress?.({ lines: result.lines, documents: result.documents, shardLines: shard.lines });
    if (BATCH_DELAY_MS > 0) await new Promise((r) => setTimeout(r, BATCH_DELAY_MS));
  };

  try {
    for await (const l of readLines(job.corpus, {
      start: shard.start, end: shard.end, firstLine: shard.firstLine, maxLineBytes: config.corpus.maxDocumentBytes,
    })) {
      result.lines++;
      if ('tooLongBytes' in l) {
        result.rejected.push({
          line: l.lineNo, code: 'TOO_LARGE',
          reason: `line of ${l.tooLongBytes} bytes exceeds corpus.maxDocumentBytes = ${config.corpus.maxDocumentBytes}`,
        });
        continue;
      }
      result.bytes += l.buf.length;
      const parsed = parseDocument(l.buf, l.lineNo);
      if ('blank' in parsed) { result.blank++; continue; }
      if ('error' in parsed) { result.rejected.push(parsed.error); continue; }
      result.warnings.push(...parsed.warnings);
      batch.push({ line: l.lineNo, doc: parsed.doc });
      if (batch.length >= config.tokenize.batchSize) await flush();
    }
    await flush();
    out.end();
    await finished(out);
    if (writeError) throw writeError;
    fs.renameSync(tmpTsv, finalTsv);
  } catch (err) {
    out.destroy();
    fs.rmSync(tmpTsv, { force: true });
    throw err;
  }
  result.seconds = (Date.now() - t0) / 1000;
  writeFileAtomic(shardMarker(outDir, shard.index), JSON.stringify(result));
  return result;
}

/** @param {string} s */
function countSpaces(s) {
  let n = 0;
  for (let i = s.indexOf(' '); i !== -1; i = s.indexOf(' ', i + 1)) n++;
  return n;
}

/**
 * Run a worker on the `tokenize` queue until SIGTERM/SIGINT; resolves when it has stopped.
 * @param {{redisUrl: string, config: import('../pipeline/config.js').Config, concurrency?: number}} opts
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
