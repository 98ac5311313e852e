// `scdv opensearch start|stop|status` (npm run opensearch): the local node for trying the backend starts, says how
// to use it, is found by status and stop from another process, keeps its data between starts, and stops on Ctrl-C.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { REPO_ROOT } from '../../pipeline/paths.js';
import { freePort } from '../../pipeline/store/opensearch/node.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-os-cli-'));
fs.chmodSync(dataDir, 0o755); // the node runs as nobody when the tests run as root
const env = { ...process.env, SCDV_DATA_DIR: dataDir };
test.after(() => {
  spawnSync(process.execPath, ['pipeline/cli.js', 'opensearch', 'stop'], { cwd: REPO_ROOT, env });
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** @param {...string} args */
function scdv(...args) {
  return spawnSync(process.execPath, ['pipeline/cli.js', 'opensearch', ...args], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 240_000 });
}

/** @param {number} pid */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('start --detach, status, a second start refused, stop; the data stays; Ctrl-C stops a foreground node', async () => {
  const port = await freePort();
  const started = scdv('start', '--detach', '--port', String(port), '--heap-mb', '512');
  assert.equal(started.status, 0, started.stderr);
  const url = `http://127.0.0.1:${port}`;
  assert.ok(started.stdout.includes(`OpenSearch runs at ${url}`), started.stdout);
  assert.ok(started.stdout.includes(`"nodes": ["${url}"]`) && started.stdout.includes(`SCDV_OPENSEARCH_NODES=${url} SCDV_STORE_OPENSEARCH_REPLICAS=0`), started.stdout);

  const status = scdv('status', '--json');
  assert.equal(status.status, 0, status.stderr);
  const s = JSON.parse(status.stdout);
  assert.equal(s.running, true);
  assert.equal(s.url, url);
  assert.ok(['green', 'yellow'].includes(s.health.status), status.stdout);
  const put = await fetch(`${url}/kept`, { method: 'PUT' });
  assert.equal(put.status, 200);

  const again = scdv('start', '--port', String(await freePort()));
  assert.notEqual(again.status, 0);
  assert.match(again.stderr, new RegExp(`is running already at ${url}.*scdv opensearch stop`));

  const stopped = scdv('stop');
  assert.equal(stopped.status, 0, stopped.stderr);
  assert.match(stopped.stderr, new RegExp(`stopped the local OpenSearch node at ${url} \\(pid ${s.pid}\\)`));
  assert.equal(alive(s.pid), false, 'the node process is gone');
  assert.equal(JSON.parse(scdv('status', '--json').stdout).running, false);

  // Foreground (what `npm run opensearch` runs): the index made before is still there; SIGINT stops it cleanly.
  const fg = spawn(process.execPath, ['pipeline/cli.js', 'opensearch', 'start', '--port', String(port), '--heap-mb', '512'], { cwd: REPO_ROOT, env });
  let err = '';
  fg.stderr.on('data', (d) => { err += d; });
  const exit = new Promise((resolve) => fg.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 240_000;
  while (!err.includes('Ctrl-C stops it')) {
    assert.ok(Date.now() < deadline && fg.exitCode === null, `not ready: ${err}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const pid = JSON.parse(scdv('status', '--json').stdout).pid;
  assert.equal((await fetch(`${url}/kept`, { method: 'HEAD' })).status, 200, 'data kept between starts');
  fg.kill('SIGINT');
  assert.equal(await exit, 0, err);
  assert.match(err, /OpenSearch stopped/);
  assert.equal(alive(pid), false);
});
