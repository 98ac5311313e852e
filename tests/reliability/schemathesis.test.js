// A peer fuzzer: Schemathesis (pinned in workers/requirements.txt) on every operation of /docs/json, with and
// without the API key, seeded. Its checks: no server error; status codes, content types and bodies as the
// document declares them; schema-violating requests refused, schema-valid ones accepted (tests/reliability/
// schemathesis.toml lists the documented refusals a schema cannot express); a method the document does not
// list answered 405 with a correct Allow header. Must pass with no finding.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { report } from './lib.js';

const h = await import('../server/helpers.js');
const { startServer } = await import('../../server/start.js');
const { VENV_DIR } = await import('../../pipeline/paths.js');

const SCHEMATHESIS = path.join(VENV_DIR, 'bin', 'schemathesis');
const CONFIG = path.join(path.dirname(fileURLToPath(import.meta.url)), 'schemathesis.toml');
/** Cases per operation and phase (Schemathesis' --max-examples), and the seed: the same cases on every run. */
const MAX_EXAMPLES = Number(process.env.SCDV_SCHEMATHESIS_EXAMPLES ?? 20);
const SEED = Number(process.env.SCDV_SCHEMATHESIS_SEED ?? 20261124);
const CHECKS = [
  'not_a_server_error', 'status_code_conformance', 'content_type_conformance', 'response_schema_conformance',
  'negative_data_rejection', 'positive_data_acceptance', 'unsupported_method', 'allow_header_conformance',
];

/** @type {import('../../server/start.js').RunningServer} */
let srv;
before(async () => {
  const { redis } = await h.setup();
  // Wrong keys by the hundred from one address: the wrong-key limits (server.keyFailures, tested in admin-login and
  // security) would answer 429 where the schema's check expects each wrong key's 401/403.
  const config = h.testConfig({ bulkBodyLimit: 400_000, keyFailures: { perAddress: 0, perKey: 0, total: 0, windowS: 900 } });
  srv = await startServer({ config, model: h.MODEL_A, redisUrl: redis.url, host: '127.0.0.1', port: 0, indexWorkers: 0 });
});
after(async () => {
  await srv?.close();
  await h.teardown();
});

/**
 * Run Schemathesis against the server (its .hypothesis folder in the test's temporary folder).
 * @param {string[]} extra
 * @returns {Promise<{code: number | null, out: string}>}
 */
function schemathesis(extra) {
  const args = [
    '--config-file', CONFIG, 'run', `${srv.url}/docs/json`, '--checks', CHECKS.join(','), '--max-examples', String(MAX_EXAMPLES),
    '--seed', String(SEED), '--workers', '1', '--request-timeout', '10', '--no-color', '--output-truncate', 'true', ...extra,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(SCHEMATHESIS, args, { cwd: h.tmp, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b) => { out += b; });
    child.stderr.on('data', (b) => { out += b; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

test('schemathesis: every operation, with and without the key, no finding', async (t) => {
  assert.ok(fs.existsSync(SCHEMATHESIS), `${SCHEMATHESIS} is missing: run npm run setup`);
  const version = /schemathesis, version (\S+)/.exec(spawnSync(SCHEMATHESIS, ['--version'], { encoding: 'utf8' }).stdout)?.[1];
  const doc = /** @type {{paths: Record<string, object>}} */ (await (await fetch(`${srv.url}/docs/json`)).json());
  const operations = Object.values(doc.paths).reduce((n, ops) => n + Object.keys(/** @type {object} */ (ops)).length, 0);
  /** @type {Record<string, any>} */
  const runs = {};
  for (const [name, extra] of /** @type {const} */ ([['with key', ['-H', `Authorization: Bearer ${h.API_KEY}`]], ['without key', []]])) {
    const t0 = Date.now();
    const { code, out } = await schemathesis([...extra]);
    const seconds = (Date.now() - t0) / 1000;
    const tested = Number(/Tested: (\d+)/.exec(out)?.[1]);
    const generated = Number(/(\d+) generated/.exec(out)?.[1]);
    const passed = Number(/(\d+) passed/.exec(/Test cases:[\s\S]*/.exec(out)?.[0] ?? '')?.[1]);
    runs[name] = { operations: tested, cases: generated, seconds: Number(seconds.toFixed(1)) };
    assert.equal(code, 0, `schemathesis ${name} found something:\n${out.slice(-20000)}`);
    assert.equal(tested, operations, `every operation of /docs/json tested (${name})`);
    assert.ok(generated > operations * 10, `${generated} cases`);
    assert.equal(passed, generated, `every case passed (${name})`);
  }
  report(t, 'schemathesis', { version, seed: SEED, maxExamples: MAX_EXAMPLES, checks: CHECKS.length, ...runs });
});
