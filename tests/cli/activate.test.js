// `scdv activate` against a real server started here (real models, store and Redis: tests/server/helpers.js):
// it calls the activate API with the key, prints the answer, and turns a 409 into the commands that satisfy it;
// `--server local` applies the same rule without the server and records the activation, which servers follow.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

const h = await import('../server/helpers.js');
const { startServer } = await import('../../server/start.js');
const { REPO_ROOT, storeDirFor } = await import('../../pipeline/paths.js');
const { openStore } = await import('../../pipeline/store/index.js');

const CLI = path.join(REPO_ROOT, 'pipeline', 'cli.js');
/** @type {import('../../server/start.js').RunningServer} */
let srv;
let base = '';
let redisUrl = '';

before(async () => {
  const { redis } = await h.setup();
  redisUrl = redis.url;
  const storeB = openStore(storeDirFor(h.MODEL_B));
  await storeB.dropCollection('ads'); // model B: a site's own model, built without the ads model A serves
  await storeB.close();
  srv = await startServer({ config: h.testConfig(), model: h.MODEL_A, redisUrl: redis.url, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  base = srv.url;
});
after(async () => {
  await srv?.close();
  await h.teardown();
});

/**
 * The CLI in a child process (asynchronously: the server answers from this process meanwhile).
 * @param {string[]} args
 * @param {Record<string, string>} [env]
 * @returns {Promise<{code: number, stdout: string, stderr: string}>}
 */
const scdv = (args, env = {}) => new Promise((resolve) => {
  const childEnv = { ...process.env, ...env };
  if (!('SCDV_API_KEY' in env)) delete childEnv.SCDV_API_KEY;
  execFile(process.execPath, [CLI, 'activate', ...args], { env: childEnv, encoding: 'utf8' }, (err, stdout, stderr) => {
    resolve({ code: err ? Number(/** @type {any} */ (err).code ?? 1) : 0, stdout, stderr });
  });
});
const active = async () => /** @type {any} */ (await (await fetch(`${base}/v1/models`)).json()).active;

test('without a key the server refuses, and the message says how to pass one', async () => {
  const r = await scdv(['--model', h.MODEL_B, '--server', base]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /^scdv: an API key is required.*\(no key was sent: pass --key KEY or set SCDV_API_KEY\)/m);
  assert.equal(await active(), h.MODEL_A);
});

test('a server with no keys configured: the message says so, how to set one, and the command that hashes a key', async () => {
  const open = await startServer({ config: h.testConfig({ apiKeyHashes: [] }), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  try {
    const r = await scdv(['--model', h.MODEL_B, '--server', open.url], { SCDV_API_KEY: 'demo-key' });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^scdv: this server has no API keys configured \(server\.apiKeyHashes is empty\), so no key opens write and admin routes: add the SHA-256 digest of a key to server\.apiKeyHashes \(`npx scdv key hash` prints it\)/m);
    assert.match(r.stderr, /\(the key from SCDV_API_KEY was sent; the server has none to compare it with\)/);
  } finally {
    await open.close();
  }
});

test('a key the server does not know: the message says it was sent and how to compare its digest', async () => {
  const r = await scdv(['--model', h.MODEL_B, '--server', base], { SCDV_API_KEY: 'not-the-key' });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /the API key is not valid for write and admin routes \(the key from SCDV_API_KEY was sent, and its digest is not in the server's server\.apiKeyHashes: `printf %s "\$SCDV_API_KEY" \| npx scdv key hash`/);
});

test('scdv key hash prints the digest server.apiKeyHashes holds, from the argument or stdin', async () => {
  const { keyDigest } = await import('../../pipeline/api-keys.js');
  const run = (/** @type {string[]} */ args, /** @type {string} */ input) => new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, 'key', 'hash', ...args], { encoding: 'utf8' }, (err, stdout, stderr) => resolve({ code: err ? 1 : 0, stdout, stderr }));
    child.stdin?.end(input);
  });
  const a = /** @type {any} */ (await run(['demo-key'], ''));
  assert.equal(a.stdout, `${keyDigest('demo-key')}\n`, a.stderr);
  const b = /** @type {any} */ (await run([], 'demo-key\n'));
  assert.equal(b.stdout, `${keyDigest('demo-key')}\n`, b.stderr);
  const c = /** @type {any} */ (await run(['demo-key', '--json'], ''));
  assert.deepEqual(JSON.parse(c.stdout), { server: { apiKeyHashes: [keyDigest('demo-key')] } });
});

test('a refused activation prints the rule, the scdv index command and the --collections alternative', async () => {
  const r = await scdv(['--model', h.MODEL_B, '--server', base], { SCDV_API_KEY: h.API_KEY });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /model "srv-b" cannot be activated: its store lacks collection\(s\) ads that model srv-a serves/);
  assert.match(r.stderr, new RegExp(`^  scdv index --model ${h.MODEL_B} --collection ads --corpus `, 'm'), r.stderr);
  assert.match(r.stderr, new RegExp(`^  scdv activate --model ${h.MODEL_B} --collections articles$`, 'm'), r.stderr);
  assert.equal(await active(), h.MODEL_A, 'nothing switched');
});

test('--collections serves the model for the collections it has; the answer is printed (and as JSON)', async () => {
  const r = await scdv(['--model', h.MODEL_B, '--collections', 'articles', '--server', base, '--key', h.API_KEY]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `activated ${h.MODEL_B} (previous: ${h.MODEL_A})\nno longer served: ads (requests to them answer 404)\n`);
  assert.equal(await active(), h.MODEL_B);
  const again = await scdv(['--model', h.MODEL_B, '--collections', 'articles', '--server', base, '--json'], { SCDV_API_KEY: h.API_KEY });
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(JSON.parse(again.stdout), { active: h.MODEL_B, previous: h.MODEL_A, changed: false });
});

test('no server at the URL: an error naming it and the alternatives', async () => {
  const port = await new Promise((resolve) => { const s = net.createServer().listen(0, '127.0.0.1', () => { const p = /** @type {any} */ (s.address()).port; s.close(() => resolve(p)); }); });
  const r = await scdv(['--model', h.MODEL_A, '--server', `http://127.0.0.1:${port}`], { SCDV_API_KEY: h.API_KEY });
  assert.equal(r.code, 1);
  assert.match(r.stderr, new RegExp(`no scdv server answers at http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\).*--server local`));
  const bad = await scdv(['--model', h.MODEL_A, '--server', 'not a url']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--server must be a URL/);
});

test('--server local: the same rule, then the record, which the running server follows', async () => {
  // Model B is active and serves only articles: activating A keeps that; activating B's rule is checked locally too.
  const r = await scdv(['--model', h.MODEL_A, '--server', 'local']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^activated ${h.MODEL_A} \\(previous: ${h.MODEL_B}\\) \\(recorded`));
  for (let i = 0; i < 100 && (await active()) !== h.MODEL_A; i++) await new Promise((res) => setTimeout(res, 50));
  assert.equal(await active(), h.MODEL_A, 'the server followed the recorded activation');
  const refused = await scdv(['--model', h.MODEL_B, '--server', 'local']);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /lacks collection\(s\) ads that model srv-a serves/);
  assert.match(refused.stderr, new RegExp(`^  scdv activate --model ${h.MODEL_B} --collections articles$`, 'm'));
  const missing = await scdv(['--model', 'no-such-model', '--server', 'local']);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /model "no-such-model" not found/);
});
