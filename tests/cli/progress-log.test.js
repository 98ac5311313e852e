// Progress written to a log, as a user sees it with `scdv train … 2> train.log`: the real CLI with stderr on a pipe
// (not a TTY), real Redis, MeCab and Python. Each bar counts one unit from its first line to its last, with its
// total known from the start; plurals agree; every number says what it is; no terminal control characters.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, SAMPLE_CORPUS } from '../../pipeline/paths.js';
import { startPrivateRedis } from '../../pipeline/queue/redis.js';

const CLI = path.join(REPO_ROOT, 'pipeline', 'cli.js');
const ADS = path.join(REPO_ROOT, 'tests', 'fixtures', 'ads', 'sample.jsonl');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-progress-log-'));
const EPOCHS = 3;
const configFile = path.join(tmp, 'small.json');
fs.writeFileSync(configFile, JSON.stringify({
  train: { word2vec: { vector_size: 16, min_count: 3, epochs: EPOCHS }, gmm: { n_components: 4 } },
  tokenize: { workers: 1, shardSize: 200 },
}));

/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redis;
before(async () => { redis = await startPrivateRedis(); });
after(async () => { await redis.stop(); fs.rmSync(tmp, { recursive: true, force: true }); });

/**
 * `scdv ARGS` with stderr on a pipe; resolves with its exit code and stderr.
 * @param {string[]} args
 * @returns {Promise<{code: number | null, stderr: string}>}
 */
function scdv(args) {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, REDIS_URL: redis.url, SCDV_DATA_DIR: path.join(tmp, 'data'), SCDV_MODELS_DIR: path.join(tmp, 'models') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

/** A bar's line: label, done, total, unit (as printed, plural or not), the rest. */
const BAR = /^([a-z0-9 ]+?) \[[#-]+\] (\d+)\/(\d+) ((?:EM )?[a-z]+)\b(.*)$/;

/**
 * Assert what holds for every log: no control characters, no unknown totals, plurals that agree.
 * @param {string} log
 */
function assertReadableLog(log) {
  assert.doesNotMatch(log, /[\r\x1b]/, 'no carriage returns or escape sequences in a log');
  assert.doesNotMatch(log, /(^|[^\d.])0\/0\b/m, 'no bar without a total');
  assert.doesNotMatch(log, /(^|[^\d.,/])1 (shard|document|line|epoch|word|token|iteration|cluster|store write)s\b/m, 'singular after 1');
  assert.doesNotMatch(log, /\(\d+ writes\)/, 'a count of writes says what a write is');
}

test('scdv train to a pipe: one unit per bar from start to end, totals up front, every number explained', async () => {
  const r = await scdv(['train', '--corpus', SAMPLE_CORPUS, '--name', 'logged', '--config', configFile]);
  assert.equal(r.code, 0, r.stderr);
  const log = r.stderr;
  assertReadableLog(log);
  /** @type {Map<string, {units: Set<string>, totals: Set<number>, done: number[], lines: string[]}>} */
  const bars = new Map();
  for (const line of log.split('\n')) {
    const m = BAR.exec(line);
    if (!m) continue;
    const [, label, done, total, unit] = m;
    const b = bars.get(label) ?? { units: new Set(), totals: new Set(), done: [], lines: [] };
    b.units.add(unit);
    b.totals.add(Number(total));
    b.done.push(Number(done));
    b.lines.push(line);
    bars.set(label, b);
  }
  assert.deepEqual([...bars.keys()], ['tokenize', 'word2vec', 'idf', 'gmm fit', 'gmm assign', 'topics', 'lexicon'], log);
  const expectedUnits = { tokenize: 'lines', word2vec: 'epochs', idf: 'documents', 'gmm fit': 'EM iterations', 'gmm assign': 'words', topics: 'words', lexicon: 'lines' };
  for (const [label, b] of bars) {
    assert.deepEqual([...b.units], [/** @type {Record<string, string>} */ (expectedUnits)[label]], `${label}: one unit throughout\n${b.lines.join('\n')}`);
    assert.equal(b.totals.size, 1, `${label}: the total is known from the first line and never changes\n${b.lines.join('\n')}`);
    assert.equal(b.done[0], 0, `${label} starts at 0`);
    assert.ok(b.done.every((d, i) => i === 0 || d >= b.done[i - 1]), `${label} never goes back`);
    if (label !== 'gmm fit') assert.equal(b.done.at(-1), [...b.totals][0], `${label} ends at its total\n${b.lines.join('\n')}`);
    assert.match(b.lines.at(-1) ?? '', /done in \d+s|converged|cap/, `${label}: the last line says how it ended`);
  }
  const sample = fs.readFileSync(SAMPLE_CORPUS, 'utf8').split('\n').filter(Boolean).length;
  assert.equal([...(bars.get('tokenize')?.totals ?? [])][0], sample, 'tokenize counts the corpus lines');
  assert.equal([...(bars.get('lexicon')?.totals ?? [])][0], sample, 'the lexicon tokenises the corpus lines again');
  assert.match(log, /^lexicon: the corpus tokenised again without the stop lists, for the lexical block's vocabulary \(lexicon\.txt\)$/m);
  assert.equal([...(bars.get('word2vec')?.totals ?? [])][0], EPOCHS);
  // One line per epoch (a log gets every step of a short bar), each with its loss and what that number is.
  // The loss is a mean per word pair, below its untrained value ((1 + negative)·ln 2), not gensim's float32 sum.
  const epochs = bars.get('word2vec')?.lines.filter((l) => /loss per word pair/.test(l)) ?? [];
  assert.deepEqual(epochs.map((l) => Number(BAR.exec(l)?.[2])), [1, 2, 3], epochs.join('\n'));
  const losses = epochs.map((l) => /loss per word pair (\d\.\d{3}), untrained (\d\.\d{3}): the mean on a fixed sample of pairs; lower is better/.exec(l));
  assert.ok(losses.every((m) => m && Number(m[1]) < Number(m[2])), epochs.join('\n'));
  assert.match(log, /^tokenize: 306 lines in 2 shards; dictionary /m);
  assert.match(log, /^gmm fit .*\(at most 100; EM stops once converged\)/m);
});

test('scdv index to a pipe: the summary says what a store write is', async () => {
  const r = await scdv(['index', '--model', 'logged', '--corpus', ADS, '--collection', 'ads', '--workers', '1', '--batch-size', '4']);
  assert.equal(r.code, 0, r.stderr);
  assertReadableLog(r.stderr);
  const ads = fs.readFileSync(ADS, 'utf8').split('\n').filter(Boolean).length;
  assert.match(r.stderr, new RegExp(`^index \\[#+\\] ${ads}/${ads} lines \\(1 shard: \\d+ documents? accepted; done in \\d+s\\)$`, 'm'));
  assert.match(r.stderr, /^indexed \d+ documents? into logged\/ads in [\d.]+ s \(\d+ store writes? of up to 4 documents each: --batch-size, index\.writeBatchSize or on OpenSearch store\.opensearch\.bulkDocs\)$/m);
});
