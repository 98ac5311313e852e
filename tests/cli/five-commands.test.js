// README "Your own corpus in five commands", run as written: the lines between the five-commands markers are
// taken from README.md and run by bash on the bundled livedoor sample, against a real server that serves another
// model with `articles` and `ads` (as `npm start` does), so the walk-through cannot go stale.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const h = await import('../server/helpers.js');
const { startServer } = await import('../../server/start.js');
const { REPO_ROOT, modelsDir } = await import('../../pipeline/paths.js');
const { keyDigest } = await import('../../pipeline/api-keys.js');

const README = path.join(REPO_ROOT, 'README.md');
const CLI = path.join(REPO_ROOT, 'pipeline', 'cli.js');
const FIXTURE = path.join(REPO_ROOT, 'tests', 'fixtures', 'livedoor', 'sample.jsonl');
/** @type {import('../../server/start.js').RunningServer} */
let srv;
/** @type {string} */
let redisUrl;

before(async () => {
  redisUrl = (await h.setup()).redis.url;
  // The demo's key, which the walk-through uses.
  srv = await startServer({ config: h.testConfig({ apiKeyHashes: [keyDigest('demo-key')] }), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
});
after(async () => {
  await srv?.close();
  await h.teardown();
});

/** The shell lines of the README's walk-through (the fenced block between the markers). */
export function walkThrough(readme = fs.readFileSync(README, 'utf8')) {
  const m = /<!-- five-commands:begin[^>]*-->\s*```sh\n([\s\S]*?)```\s*<!-- five-commands:end -->/.exec(readme);
  assert.ok(m, 'README.md has the five-commands block between its markers');
  return m[1];
}

/**
 * bash running `script` in `cwd`, with `npx scdv` as the repository's CLI.
 * @param {string} script
 * @param {string} cwd
 * @returns {Promise<{code: number | null, stdout: string, stderr: string}>}
 */
function bash(script, cwd) {
  return new Promise((resolve) => {
    // `npx scdv` as the clone's CLI without npm in between (tests/cli/readme-commands.test.js runs npx itself).
    const shim = `npx() { if [ "$1" = scdv ]; then shift; ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"; else command npx "$@"; fi; }`;
    const child = spawn('bash', ['-c', `set -euo pipefail\n${shim}\n${script}`],
      // One word2vec thread: the walk-through's model is then the same on every run (with two, gensim's racy
      // updates make it differ, and the on-topic check below would depend on the run).
      { cwd, env: { ...process.env, REDIS_URL: redisUrl, SCDV_API_KEY: '', SCDV_TRAIN_WORD2VEC_WORKERS: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('the walk-through is train, eval, index, activate, query', () => {
  const commands = walkThrough().split('\n').map((l) => /^(npx scdv \w+|curl)/.exec(l)?.[1]).filter(Boolean);
  assert.deepEqual(commands, ['npx scdv train', 'npx scdv eval', 'npx scdv index', 'npx scdv activate', 'curl']);
});

test('the README walk-through runs as written: the server ends up serving the new model, which answers the query', async () => {
  const block = walkThrough();
  const url = /^B=(\S+?);/m.exec(block)?.[1];
  assert.equal(url, 'http://127.0.0.1:8080', 'the block sets B to the demo server');
  const work = path.join(h.tmp, 'walk-through');
  fs.mkdirSync(work, { recursive: true });
  fs.copyFileSync(FIXTURE, path.join(work, 'my-corpus.jsonl'));
  const r = await bash(block.replace(/^B=\S+?;/m, `B=${srv.url};`), work);
  assert.equal(r.code, 0, `exit ${r.code}\n${r.stderr.slice(-3000)}`);
  // train and eval: the model, its evaluation and its report.
  assert.ok(fs.existsSync(path.join(modelsDir(), 'mine', 'eval.json')), 'scdv eval wrote eval.json');
  assert.match(fs.readFileSync(path.join(modelsDir(), 'mine', 'report.html'), 'utf8'), /tfidf|TF-IDF/);
  // index and activate: the printed answer, and the server's state.
  assert.match(r.stderr, /indexed 306 documents into mine\/articles/);
  assert.match(r.stdout, new RegExp(`^activated mine \\(previous: ${h.MODEL_A}\\)$`, 'm'));
  const models = /** @type {any} */ (await (await fetch(`${srv.url}/v1/models`)).json());
  assert.equal(models.active, 'mine');
  // The query: the last line is the server's answer, from the new model, on topic.
  const answer = JSON.parse(r.stdout.trim().split('\n').pop() ?? '');
  assert.equal(answer.model, 'mine');
  assert.equal(answer.results.length, 5);
  const scores = answer.results.map((/** @type {{score: number}} */ x) => x.score);
  assert.deepEqual(scores, [...scores].sort((a, b) => b - a), 'ranked by score');
  // On topic, loosely: livedoor-homme also writes on sport.
  assert.ok(answer.results.some((/** @type {{id: string}} */ x) => x.id.startsWith('sports-watch-')),
    `a sports article for a football text: ${answer.results.map((/** @type {{id: string}} */ x) => x.id).join(', ')}`);
});
