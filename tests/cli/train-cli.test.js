// `scdv train` as a user runs it (the real CLI in child processes, real Redis, MeCab and Python): one run per
// model name, parameters checked before any work, unusable corpora refused, no work folder left by a failure.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { REPO_ROOT } from '../../pipeline/paths.js';
import { startPrivateRedis } from '../../pipeline/queue/redis.js';

const CLI = path.join(REPO_ROOT, 'pipeline', 'cli.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-train-cli-'));
const DATA = path.join(tmp, 'data');
const MODELS = path.join(tmp, 'models');
const lockFile = (/** @type {string} */ name) => path.join(DATA, 'locks', 'train', `${name}.lock`);

/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redis;
before(async () => { redis = await startPrivateRedis(); });
after(async () => { await redis.stop(); fs.rmSync(tmp, { recursive: true, force: true }); });

/** 120 documents of ten words from one of two groups: enough for a 2-cluster model in seconds. */
function writeCorpus() {
  const groups = [['犬', '猫', '馬', '牛', '羊', '豚'], ['自動車', '電車', '飛行機', '自転車', 'バス', 'タクシー']];
  const lines = [];
  for (let i = 0; i < 120; i++) {
    const g = groups[i % 2];
    lines.push(JSON.stringify({ id: `d${i}`, body: `${Array.from({ length: 10 }, (_, j) => g[(i * 7 + j * 3) % g.length]).join('と')}。` }));
  }
  const file = path.join(tmp, 'corpus.jsonl');
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

const configFile = path.join(tmp, 'small.json');
fs.writeFileSync(configFile, JSON.stringify({
  train: { word2vec: { vector_size: 12, window: 5, min_count: 1, epochs: 5, workers: 1 }, gmm: { n_components: 2 }, topics: { keep_fraction: 0.5 } },
  tokenize: { workers: 1 },
}));

/**
 * Start `scdv ARGS` with the test's folders and Redis.
 * @param {string[]} args
 */
function start(args) {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, REDIS_URL: redis.url, SCDV_DATA_DIR: DATA, SCDV_MODELS_DIR: MODELS },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  /** @type {Promise<{code: number | null, signal: string | null, stderr: string, pid: number}>} */
  const done = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr, pid: /** @type {number} */ (child.pid) })));
  return { child, done };
}
const scdv = (/** @type {string[]} */ args) => start(args).done;

test('two trains of one model name at once: exactly one succeeds, the other is told who holds the name', async () => {
  const corpus = writeCorpus();
  const args = ['train', '--corpus', corpus, '--name', 'twin', '--config', configFile];
  const [a, b] = await Promise.all([scdv(args), scdv(args)]);
  const winners = [a, b].filter((r) => r.code === 0);
  const losers = [a, b].filter((r) => r.code !== 0);
  assert.equal(winners.length, 1, `one run succeeds:\n${a.stderr}\n---\n${b.stderr}`);
  assert.equal(losers[0].code, 1);
  assert.match(losers[0].stderr, new RegExp(`model "twin" is being trained by another run \\(pid ${winners[0].pid},`));
  assert.match(winners[0].stderr, /model "twin" trained in .*clusters 2 .*word-topic dims 24/s);
  assert.ok(!fs.existsSync(lockFile('twin')), 'the lock goes with the run');
  // Once the first is done the name is free again, and the usual check applies.
  const again = await scdv(args);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /model "twin" already exists/);
});

test('a lock left by a SIGKILLed run does not block the next run', async () => {
  const corpus = writeCorpus();
  const args = ['train', '--corpus', corpus, '--name', 'killed', '--config', configFile];
  const first = start(args);
  const deadline = Date.now() + 20_000;
  while (!fs.existsSync(lockFile('killed')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.ok(fs.existsSync(lockFile('killed')), 'the first run took the lock');
  first.child.kill('SIGKILL');
  assert.equal((await first.done).signal, 'SIGKILL');
  assert.equal(JSON.parse(fs.readFileSync(lockFile('killed'), 'utf8')).pid, first.child.pid, 'its lock is left behind');
  const next = await scdv(args);
  assert.equal(next.code, 0, next.stderr);
  assert.ok(fs.existsSync(path.join(MODELS, 'killed', 'manifest.json')));
});

test('train parameters are checked before any work, with one message however the value is spelled', async () => {
  const corpus = writeCorpus();
  const base = ['train', '--corpus', corpus, '--name', 'bad-params'];
  const spaced = await scdv([...base, '--dims', '-5']);
  const joined = await scdv([...base, '--dims=-5']);
  for (const r of [spaced, joined]) {
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'scdv: --dims must be a whole number from 1 to 1000, got "-5"\n');
  }
  const zero = await scdv([...base, '--clusters', '0']);
  assert.equal(zero.code, 2);
  assert.equal(zero.stderr, 'scdv: --clusters must be a whole number from 1 to 1000, got "0"\n');
  const cfg = path.join(tmp, 'zero-window.json');
  fs.writeFileSync(cfg, JSON.stringify({ train: { word2vec: { window: 0 } } }));
  const fromFile = await scdv([...base, '--config', cfg]);
  assert.equal(fromFile.code, 1);
  assert.match(fromFile.stderr, /train\.word2vec\.window must be a whole number from 1 to 100, got 0/);
  assert.doesNotMatch(fromFile.stderr, /tokeni[sz]e/, 'nothing was tokenised');
  assert.ok(!fs.existsSync(path.join(DATA, 'work', 'bad-params')));
});

test('a corpus with nothing usable fails train with its likely cause and leaves no work folder', async () => {
  const gz = path.join(tmp, 'corpus.jsonl.gz');
  fs.writeFileSync(gz, zlib.gzipSync(fs.readFileSync(writeCorpus())));
  const g = await scdv(['train', '--corpus', gz, '--name', 'gz', '--config', configFile]);
  assert.equal(g.code, 1);
  assert.match(g.stderr, /corpus\.jsonl\.gz has no usable document: it looks like a gzip file; decompress it first/);

  const binary = path.join(tmp, 'binary.jsonl');
  const bytes = Buffer.alloc(4000);
  for (let i = 0; i < bytes.length; i++) bytes[i] = i % 50 === 49 ? 10 : 0x80 + (i % 100); // 80 lines, none UTF-8
  fs.writeFileSync(binary, bytes);
  const b = await scdv(['train', '--corpus', binary, '--name', 'bin', '--config', configFile]);
  assert.equal(b.code, 1);
  assert.match(b.stderr, /binary\.jsonl has no usable document: 80 of 80 lines rejected \(INVALID_UTF8 80\); the file is not UTF-8 text/);

  const missing = await scdv(['train', '--corpus', path.join(tmp, 'nope.jsonl'), '--name', 'missing', '--config', configFile]);
  // the flag's name and the file, not a raw ENOENT; a bad value: exit 2, as a usage error
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^scdv: --corpus .*nope\.jsonl: no such file\n$/);
  const evil = await scdv(['train', '--corpus', writeCorpus(), '--name', '../evil', '--config', configFile]);
  assert.equal(evil.code, 2, 'a model name that is not one: a value error, exit 2 as the README says');
  assert.match(evil.stderr, /invalid model name "\.\.\/evil"/);
  for (const name of ['gz', 'bin', 'missing']) assert.ok(!fs.existsSync(path.join(DATA, 'work', name)), `no work folder for ${name}`);
});
