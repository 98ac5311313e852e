// The tokenise stage end to end: real Redis (private server), real worker processes, real MeCab.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { loadConfig } from '../../pipeline/config.js';
import { startPrivateRedis } from '../../pipeline/queue/redis.js';
import { runTokenize } from '../../pipeline/stages/tokenize.js';
import { readShardResult } from '../../pipeline/queue/shard.js';
import { WorkerPool, localWorkerCount } from '../../pipeline/queue/worker-pool.js';

const SAMPLE = 'tests/fixtures/livedoor/sample.jsonl';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-tokq-'));
/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redis;
before(async () => { redis = await startPrivateRedis(); });
after(async () => { await redis.stop(); });

const quietLog = () => {};
/** Fast stall detection, so a killed worker's shard is taken over within seconds. */
const config = (/** @type {number} */ shardSize) => loadConfig({
  overrides: { tokenize: { shardSize, batchSize: 8 }, queue: { lockDurationMs: 2000, stalledIntervalMs: 1000, backoffMs: 200 } },
});

/** @param {string} file @returns {Map<string, string>} */
function readTokens(file) {
  const m = new Map();
  for (const row of fs.readFileSync(file, 'utf8').trim().split('\n')) {
    const [id, toks] = row.split('\t');
    assert.ok(!m.has(id), `id ${id} twice in ${file}`);
    m.set(id, toks);
  }
  return m;
}

test('a corpus with bad lines: every good document once, every bad line reported with its reason', async () => {
  const lines = fs.readFileSync(SAMPLE, 'utf8').trim().split('\n').slice(0, 40);
  const firstId = JSON.parse(lines[0]).id;
  const bad = [
    '{"id": "broken", "body": ',                                 // 41 invalid JSON
    JSON.stringify({ id: 'nobody' }),                             // 42 missing body
    lines[0],                                                      // 43 duplicate id
    JSON.stringify({ id: 'huge', body: 'あ'.repeat(400_000) }),   // 44 over maxDocumentBytes (1 MiB)
    '',                                                            // 45 blank: skipped silently
    JSON.stringify({ id: 'english', body: 'The quick brown fox jumps over the lazy dog.' }), // 46 kept, warned
  ];
  const corpus = path.join(tmp, 'bad.jsonl');
  fs.writeFileSync(corpus, Buffer.concat([
    Buffer.from([...lines, ...bad].join('\n') + '\n'),
    Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d, 0x0a]), // 47 invalid UTF-8
  ]));
  const out = path.join(tmp, 'out-bad');
  const s = await runTokenize({ corpus, outDir: out, config: config(10), redisUrl: redis.url, workers: 2, log: quietLog, quiet: true });
  assert.equal(s.documents, 41);
  assert.deepEqual(s.rejectedByCode, { INVALID_JSON: 1, MISSING_FIELD: 1, DUPLICATE_ID: 1, TOO_LARGE: 1, INVALID_UTF8: 1 });
  const rejected = fs.readFileSync(path.join(out, 'rejected.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(rejected.map((r) => r.line), [41, 42, 43, 44, 47]);
  // 5 of 47 lines is over corpus.warnRejectedFraction (10 %): the summary says so.
  assert.match(String(s.warning), /^10\.6 % of the lines were rejected \(5 of 47: .*INVALID_JSON 1.*\), over corpus\.warnRejectedFraction 0\.1; see .*rejected\.jsonl$/);
  const lenient = await runTokenize({
    corpus, outDir: out, config: loadConfig({ overrides: { tokenize: { shardSize: 10 }, corpus: { warnRejectedFraction: 0.2 } } }),
    redisUrl: redis.url, workers: 1, log: quietLog, quiet: true,
  });
  assert.equal(lenient.warning, null, 'under the threshold: no warning');
  assert.match(rejected[2].reason, new RegExp(`duplicate id "${firstId}" \\(first on line 1\\)`));
  assert.match(rejected[3].reason, /1200\d+ bytes exceeds corpus\.maxDocumentBytes = 1048576/);
  const warnings = fs.readFileSync(path.join(out, 'warnings.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(warnings.map((w) => [w.line, w.code]), [[46, 'NOT_JAPANESE']]);
  const tokens = readTokens(s.tokensFile);
  assert.equal(tokens.size, 41);
  assert.ok(tokens.get(firstId)?.length, 'the first occurrence of a duplicated id is kept');
  const manifest = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
  assert.equal(manifest.counts.documents, 41);
  assert.equal(manifest.tokenizer.config.dictionary, 'default');
  assert.ok(manifest.tokenizer.dictionary.filename.endsWith('sys.dic'));
});

test('a worker killed mid-shard: the shard is redone elsewhere, each document exactly once; a re-run reuses all shards', async () => {
  const out = path.join(tmp, 'out-kill');
  // Slow batches down (fault injection) so that the kill lands while a shard is in flight.
  process.env.SCDV_FAULT_BATCH_DELAY_MS = '150';
  let killedPid = 0;
  let s;
  try {
    s = await runTokenize({
      corpus: SAMPLE, outDir: out, config: config(60), redisUrl: redis.url, workers: 2, log: quietLog, quiet: true,
      onWorkersStarted: (pool) => {
        const shards = path.join(out, 'shards');
        const timer = setInterval(() => {
          // A temp file named after its writer's pid means that worker is mid-shard.
          // Workers start before the run folder exists: nothing to look at yet.
          const tmpFile = fs.existsSync(shards) ? fs.readdirSync(shards).find((f) => /\.tsv\.tmp-\d+$/.test(f)) : undefined;
          const pid = tmpFile ? Number(tmpFile.split('tmp-')[1]) : 0;
          if (pid && pool.pids.includes(pid)) {
            killedPid = pid;
            process.kill(pid, 'SIGKILL');
            clearInterval(timer);
          }
        }, 20);
      },
    });
  } finally {
    delete process.env.SCDV_FAULT_BATCH_DELAY_MS;
  }
  assert.ok(killedPid > 0, 'a worker was killed mid-shard');
  const expected = fs.readFileSync(SAMPLE, 'utf8').trim().split('\n').map((l) => JSON.parse(l).id);
  const tokens = readTokens(s.tokensFile);
  assert.deepEqual([...tokens.keys()], expected, 'every document exactly once, in corpus order');
  assert.equal(s.rejected, 0);
  const runKey = JSON.parse(fs.readFileSync(path.join(out, 'run.json'), 'utf8')).runKey;
  const writers = new Set(Array.from({ length: s.shards }, (_, i) => /** @type {import('../../pipeline/queue/tokenize-output.js').ShardResult | null} */ (readShardResult(out, i, runKey))?.worker.split(':')[1]));
  assert.ok(!writers.has(String(killedPid)), 'no shard result comes from the killed worker');
  assert.deepEqual(fs.readdirSync(path.join(out, 'shards')).filter((f) => f.includes('.tmp-')), [], 'the killed worker\'s temp file is cleaned up');

  const before = fs.readFileSync(s.tokensFile, 'utf8');
  const again = await runTokenize({ corpus: SAMPLE, outDir: out, config: config(60), redisUrl: redis.url, workers: 1, log: quietLog, quiet: true });
  assert.equal(again.reusedShards, again.shards, 'every finished shard is reused');
  assert.equal(fs.readFileSync(again.tokensFile, 'utf8'), before);
});

test('the same corpus tokenised by 1 or 2 workers gives identical output', async () => {
  const one = await runTokenize({ corpus: SAMPLE, outDir: path.join(tmp, 'w1'), config: config(100), redisUrl: redis.url, workers: 1, log: quietLog, quiet: true });
  const kill = fs.readFileSync(path.join(tmp, 'out-kill', 'tokens.tsv'), 'utf8');
  assert.equal(fs.readFileSync(one.tokensFile, 'utf8'), kill);
});

test('a corpus whose every line is rejected fails with the likely cause; a compressed one before any work', async () => {
  const binary = path.join(tmp, 'binary.jsonl');
  fs.writeFileSync(binary, Buffer.from(Array.from({ length: 1200 }, (_, i) => (i % 40 === 39 ? 10 : 0xc0 + (i % 50)))));
  const log = /** @type {string[]} */ ([]);
  await assert.rejects(
    runTokenize({ corpus: binary, outDir: path.join(tmp, 'out-binary'), config: config(10), redisUrl: redis.url, workers: 1, log: (m) => log.push(m), quiet: true }),
    (err) => /** @type {any} */ (err).code === 'SCDV_CORPUS_UNUSABLE' &&
      /has no usable document: 30 of 30 lines rejected \(INVALID_UTF8 30\); the file is not UTF-8 text/.test(/** @type {Error} */ (err).message),
  );
  const gz = path.join(tmp, 'sample.jsonl.gz');
  fs.writeFileSync(gz, zlib.gzipSync(fs.readFileSync(SAMPLE)));
  /** @type {WorkerPool | null} */
  let started = null;
  await assert.rejects(
    runTokenize({ corpus: gz, outDir: path.join(tmp, 'out-gz'), config: config(10), redisUrl: redis.url, log: quietLog, quiet: true, onWorkersStarted: (p) => { started = p; } }),
    /sample\.jsonl\.gz has no usable document: it looks like a gzip file; decompress it first \(e\.g\. gunzip\)/,
  );
  assert.equal(started, null, 'no worker was started');
  assert.ok(!fs.existsSync(path.join(tmp, 'out-gz')), 'no output folder');
});

test('never more workers than shards, and at most workerProcesses.maxPerCore per core unless allowed', async () => {
  const cfg = loadConfig();
  const log = /** @type {string[]} */ ([]);
  assert.equal(localWorkerCount({ stage: 'tokenize', requested: 16, shards: 100, config: cfg, log: (m) => log.push(m), cores: 2 }), 4);
  assert.match(log[0], /tokenize: warning: 16 workers capped to 4 \(2 per core, 2 cores\); pass --allow-many-workers/);
  const many = loadConfig({ overrides: { workerProcesses: { allowMany: true } } });
  assert.equal(localWorkerCount({ stage: 'tokenize', requested: 16, shards: 100, config: many, log: (m) => log.push(m), cores: 2 }), 16);
  assert.equal(localWorkerCount({ stage: 'tokenize', requested: 16, shards: 1, config: many, log: (m) => log.push(m), cores: 2 }), 1);
  assert.equal(localWorkerCount({ stage: 'tokenize', requested: 16, shards: 3, config: cfg, log: (m) => log.push(m), cores: 2 }), 3);
  assert.equal(log.length, 1, 'allowed and shard-bound counts are not warned about');

  // A one-shard corpus with 8 workers asked for: one worker process.
  let pids = /** @type {number[]} */ ([]);
  const corpus = path.join(tmp, 'one-shard.jsonl');
  fs.writeFileSync(corpus, fs.readFileSync(SAMPLE, 'utf8').trim().split('\n').slice(0, 5).join('\n') + '\n');
  const s = await runTokenize({
    corpus, outDir: path.join(tmp, 'out-one-shard'), config: config(100), redisUrl: redis.url, workers: 8, log: quietLog, quiet: true,
    onWorkersStarted: (pool) => { pids = pool.pids; },
  });
  assert.equal(s.documents, 5);
  assert.equal(pids.length, 1);
});
