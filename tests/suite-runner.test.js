// The suite runners' guard (tests/lib/suite.js): a file whose tests are done exits even with something still running,
// a test over its limit fails, and a suite over its wall budget is killed and reported failed, so CI never stalls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runTestFiles } from './lib/suite.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-suite-'));
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** @param {string} name @param {string} body */
function testFile(name, body) {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `import { test } from 'node:test';\n${body}\n`);
  return file;
}

test('a file whose test passed but left a timer running exits and counts as passed', async () => {
  const file = testFile('lingering.test.js', "test('passes, leaves a loop', () => { setInterval(() => {}, 1000); });");
  const t0 = Date.now();
  const status = await runTestFiles({ name: 'lingering', files: [file], cwd: dir, budgetMs: 60_000, stdio: 'ignore' });
  assert.equal(status, 0);
  assert.ok(Date.now() - t0 < 30_000, `it exited on its own, long before the budget: ${Date.now() - t0} ms`);
});

test('a test over its time limit fails', async () => {
  const file = testFile('slow.test.js', "test('never ends', () => new Promise(() => { setInterval(() => {}, 1000); }));");
  const t0 = Date.now();
  const status = await runTestFiles({ name: 'slow', files: [file], cwd: dir, budgetMs: 60_000, perTestMs: 1000, stdio: 'ignore' });
  assert.notEqual(status, 0);
  assert.ok(Date.now() - t0 < 30_000, `failed at its own limit, long before the suite's budget: ${Date.now() - t0} ms`);
});

test('a suite over its wall budget is killed, with what it started, and reported failed', async () => {
  const pidFile = path.join(dir, 'grandchild.pid');
  // A hook has no time limit: only the budget ends this file. It starts a process of its own, which must go too.
  const file = testFile('stuck.test.js', `import { before } from 'node:test';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
before(() => new Promise(() => {
  const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  fs.writeFileSync(${JSON.stringify(pidFile)}, String(c.pid));
}));
test('never reached', () => {});`);
  const t0 = Date.now();
  const status = await runTestFiles({ name: 'stuck', files: [file], cwd: dir, budgetMs: 3000, stdio: 'ignore' });
  assert.equal(status, 1);
  assert.ok(Date.now() - t0 < 20_000, `killed at its budget: ${Date.now() - t0} ms`);
  const pid = Number(fs.readFileSync(pidFile, 'utf8'));
  await new Promise((r) => setTimeout(r, 200));
  // Gone, or a zombie where PID 1 does not reap (some containers): either way no longer running.
  const state = fs.existsSync(`/proc/${pid}/stat`) ? fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1][0] : 'gone';
  assert.ok(state === 'gone' || state === 'Z', `the process the stuck file started is gone too (state ${state})`);
});
