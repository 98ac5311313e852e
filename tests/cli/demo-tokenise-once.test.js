// `npm start` (scdv demo) on a machine without the demo model tokenises the sample once: training reuses the run the
// demo made (same corpus hash and tokenizer settings, hence the same run key) instead of queueing it all again.
// The real CLI with its private Redis; a small training config keeps the training to seconds.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../pipeline/paths.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-demo-once-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

test('scdv demo without a model: one tokenise run over the sample, reused by training', { timeout: 300_000 }, async () => {
  const config = path.join(tmp, 'small.json');
  fs.writeFileSync(config, JSON.stringify({
    train: { word2vec: { vector_size: 16, min_count: 3, epochs: 2 }, gmm: { n_components: 4 } },
    server: { port: 0 },
  }));
  /** @type {NodeJS.ProcessEnv} */
  const env = { ...process.env, SCDV_DATA_DIR: path.join(tmp, 'data'), SCDV_MODELS_DIR: path.join(tmp, 'models'), TMPDIR: tmp };
  delete env.REDIS_URL;
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'pipeline', 'cli.js'), 'demo', '--config', config], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let all = '';
  child.stdout.on('data', (d) => { all += d; });
  child.stderr.on('data', (d) => { all += d; });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  try {
    await new Promise((resolve, reject) => {
      const timer = setInterval(() => { if (/^Serving on http/m.test(all)) { clearInterval(timer); resolve(undefined); } }, 200);
      exited.then((r) => { clearInterval(timer); reject(new Error(`demo exited before serving: ${JSON.stringify(r)}\n${all}`)); });
    });
  } finally {
    child.kill('SIGINT');
  }
  assert.deepEqual(await exited, { code: 0, signal: null }, all);
  assert.match(all, /Training model "livedoor-sample" on the sample/);
  // Each tokenise run logs its plan once; only the first queues shards (a progress bar), the second reuses them all.
  const plans = all.split('\n').filter((l) => /^tokenize: \d+ lines in \d+ shards?/.test(l));
  assert.equal(plans.length, 2, plans.join('\n'));
  assert.doesNotMatch(plans[0], /already done/);
  const [, shards] = /** @type {RegExpExecArray} */ (/in (\d+) shards?/.exec(plans[0]));
  assert.match(plans[1], new RegExp(`in ${shards} shards?.* \\(${shards} already done, reused\\)`), plans.join('\n'));
  const finished = all.split('\n').filter((l) => /^tokenize \[.*done in/.test(l));
  assert.equal(finished.length, 1, `one tokenise bar ran to its end: the sample, once\n${finished.join('\n')}`);
});
