// The tests' build-once folders (tests/lib/test-cache.js): test files that ask for the same folder at once build it
// once, the others wait and get the same folder; a lock left by a process that died does not block; a change of
// inputs is another folder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../pipeline/paths.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-cache-test-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const MODULE = path.join(REPO_ROOT, 'tests', 'lib', 'test-cache.js');

/**
 * A process asking for the folder `kind`/`key`, whose build (half a second) appends a line to builds.log.
 * @param {string} key
 * @returns {Promise<string>} the folder it got
 */
function ask(key) {
  const code = `const { cachedFolder } = await import(${JSON.stringify(MODULE)});
const fs = await import('node:fs');
const dir = await cachedFolder('selftest', ${JSON.stringify(key)}, async (d) => {
  fs.appendFileSync(${JSON.stringify(path.join(tmp, 'builds.log'))}, 'built\\n');
  await new Promise((r) => setTimeout(r, 500));
  fs.writeFileSync(d + '/content', 'x');
});
process.stdout.write(dir + '\\n' + fs.readFileSync(dir + '/content', 'utf8'));`;
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ['--input-type=module', '-e', code], { env: { ...process.env, TMPDIR: tmp }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.on('data', (d) => { out += d; });
    c.on('close', (status) => (status === 0 ? resolve(out) : reject(new Error(`exit ${status}`))));
  });
}

test('three processes asking for one folder at once: one builds it, all get it', async () => {
  const got = await Promise.all([ask('k1'), ask('k1'), ask('k1')]);
  assert.equal(new Set(got).size, 1, JSON.stringify(got));
  assert.match(got[0], /scdv-test-selftest-k1\nx$/);
  assert.equal(fs.readFileSync(path.join(tmp, 'builds.log'), 'utf8'), 'built\n');
  await ask('k1');
  assert.equal(fs.readFileSync(path.join(tmp, 'builds.log'), 'utf8'), 'built\n', 'a later ask copies, builds nothing');
  await ask('k2');
  assert.equal(fs.readFileSync(path.join(tmp, 'builds.log'), 'utf8'), 'built\nbuilt\n', 'other inputs: another folder');
});

test('a lock left by a process that died is taken over', { timeout: 60_000 }, async () => {
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
  const lock = path.join(tmp, 'scdv-test-selftest-k3.lock');
  fs.mkdirSync(lock);
  fs.writeFileSync(path.join(lock, 'pid'), dead);
  assert.match(await ask('k3'), /x$/);
  assert.ok(!fs.existsSync(lock), 'released');
});

test('inputsHash changes with a value and with a file\'s content', async () => {
  const { inputsHash } = await import('./lib/test-cache.js');
  const a = inputsHash([1], ['tests/lib/test-cache.js']);
  assert.equal(inputsHash([1], ['tests/lib/test-cache.js']), a);
  assert.notEqual(inputsHash([2], ['tests/lib/test-cache.js']), a);
  assert.notEqual(inputsHash([1], ['tests/lib/test-cache.js', 'tests/lib/suite.js']), a);
});
