// OpenSearch is installed only when asked: the set-up step's decision, and what the local-node command says when it
// cannot start. (Installing and running OpenSearch: tests/opensearch, `npm run test:opensearch`.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { openSearchWanted } from '../../pipeline/store/opensearch/install.js';
import { OPENSEARCH_PACKAGES, REQUIRED_PACKAGES } from '../../pipeline/setup/system-packages.js';
import { REPO_ROOT } from '../../pipeline/paths.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-os-setup-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

test('set-up installs OpenSearch only when asked: flag, environment or a config with the opensearch backend', () => {
  assert.equal(openSearchWanted([], {}), null, 'plain `npm run setup` (and npm start / npm test hooks) never install it');
  assert.equal(openSearchWanted(['--other'], { SCDV_STORE_BACKEND: 'native' }), null);
  assert.match(String(openSearchWanted(['--opensearch'], {})), /--opensearch/);
  assert.match(String(openSearchWanted([], { SCDV_SETUP_OPENSEARCH: '1' })), /SCDV_SETUP_OPENSEARCH/);
  assert.match(String(openSearchWanted([], { SCDV_STORE_BACKEND: 'opensearch' })), /SCDV_STORE_BACKEND/);
  const onOpenSearch = path.join(tmp, 'os.json');
  fs.writeFileSync(onOpenSearch, JSON.stringify({ store: { backend: 'opensearch' } }));
  const onNative = path.join(tmp, 'native.json');
  fs.writeFileSync(onNative, JSON.stringify({ store: { backend: 'native' } }));
  const broken = path.join(tmp, 'broken.json');
  fs.writeFileSync(broken, '{ "store": ');
  assert.match(String(openSearchWanted(['--config', onOpenSearch], {})), /store\.backend "opensearch"/);
  assert.match(String(openSearchWanted([`--config=${onOpenSearch}`], {})), /store\.backend "opensearch"/);
  assert.equal(openSearchWanted(['--config', onNative], {}), null);
  assert.equal(openSearchWanted(['--config', broken], {}), null, 'a broken config is for the command that loads it to report');
  assert.equal(openSearchWanted(['--config', path.join(tmp, 'absent.json')], {}), null);
  // Java is one of the packages wanted then, not one of those every set-up installs.
  assert.ok(OPENSEARCH_PACKAGES.includes('openjdk-17-jre-headless'));
  assert.ok(!REQUIRED_PACKAGES.some((p) => OPENSEARCH_PACKAGES.includes(p)));
});

test('scdv opensearch start on a taken port says so and which flag to change', async (t) => {
  const srv = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => srv.once('listening', r));
  t.after(() => srv.close());
  const { port } = /** @type {net.AddressInfo} */ (srv.address());
  const res = spawnSync(process.execPath, ['pipeline/cli.js', 'opensearch', 'start', '--port', String(port)], {
    cwd: REPO_ROOT, encoding: 'utf8', env: { ...process.env, SCDV_DATA_DIR: tmp }, timeout: 30_000,
  });
  assert.notEqual(res.status, 0);
  assert.match(res.stderr, new RegExp(`port ${port} is taken by another program: choose another with --port`));
  assert.doesNotMatch(res.stderr, /\n\s+at /, 'no stack trace');
  const bad = spawnSync(process.execPath, ['pipeline/cli.js', 'opensearch', 'start', '--port', '70000'], { cwd: REPO_ROOT, encoding: 'utf8' });
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /--port/);
});
