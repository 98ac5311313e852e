// The suite runners' guard (tests/lib/suite.js): a file whose tests are done exits even with something still running,
// a test over its limit fails, and a suite over its wall budget is killed and reported failed, so CI never stalls.
// And its scheduling: files run `concurrency` at a time, those marked `alone` after the others with nothing beside them.
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

/**
 * A file that marks itself started in `dir`, then waits (up to 20 s) for the marks of `others`.
 * @param {string} name @param {string[]} others
 */
function waitingFile(name, others) {
  return testFile(`${name}.test.js`, `import fs from 'node:fs';
import path from 'node:path';
test('${name} meets the others', async () => {
  fs.writeFileSync(path.join(${JSON.stringify(dir)}, '${name}.started'), '');
  const t0 = Date.now();
  while (!${JSON.stringify(others)}.every((o) => fs.existsSync(path.join(${JSON.stringify(dir)}, o + '.started')))) {
    if (Date.now() - t0 > 20_000) throw new Error('the others never started');
    await new Promise((r) => setTimeout(r, 50));
  }
});`);
}

test('files run `concurrency` at a time: two files that each wait for the other pass together, and time out one by one', async () => {
  const files = [waitingFile('left', ['right']), waitingFile('right', ['left'])];
  assert.equal(await runTestFiles({ name: 'pair', files, cwd: dir, budgetMs: 60_000, concurrency: 2, stdio: 'ignore' }), 0);
  for (const f of fs.readdirSync(dir)) if (f.endsWith('.started')) fs.rmSync(path.join(dir, f));
  const one = await runTestFiles({ name: 'pair', files, cwd: dir, budgetMs: 60_000, concurrency: 1, perTestMs: 1000, stdio: 'ignore' });
  assert.notEqual(one, 0, 'one at a time, the first waits for a file that has not started');
});

test('a file run `alone` runs after the others, when none of them runs any more', async () => {
  const mark = (/** @type {string} */ name) => testFile(`${name}.test.js`, `import fs from 'node:fs';
test('${name}', async () => {
  fs.writeFileSync(${JSON.stringify(path.join(dir, `${name}.running`))}, '');
  await new Promise((r) => setTimeout(r, 300));
  fs.renameSync(${JSON.stringify(path.join(dir, `${name}.running`))}, ${JSON.stringify(path.join(dir, `${name}.done`))});
});`);
  const shared = ['s1', 's2', 's3'].map(mark);
  const lonely = testFile('lonely.test.js', `import fs from 'node:fs';
import assert from 'node:assert/strict';
test('nothing else runs', () => {
  const names = fs.readdirSync(${JSON.stringify(dir)});
  assert.deepEqual(names.filter((n) => n.endsWith('.running')), []);
  assert.equal(names.filter((n) => n.endsWith('.done')).length, 3);
});`);
  const status = await runTestFiles({ name: 'alone', files: [lonely, ...shared], cwd: dir, budgetMs: 60_000, concurrency: 3, alone: [lonely], stdio: 'ignore' });
  assert.equal(status, 0);
});

test('a failing file fails the suite, and the other files still run', async () => {
  const bad = testFile('bad.test.js', "import assert from 'node:assert/strict';\ntest('fails', () => assert.equal(1, 2));");
  const good = testFile('good.test.js', `import fs from 'node:fs';\ntest('runs', () => fs.writeFileSync(${JSON.stringify(path.join(dir, 'good.ran'))}, ''));`);
  assert.equal(await runTestFiles({ name: 'mixed', files: [bad, good], cwd: dir, budgetMs: 60_000, stdio: 'ignore' }), 1);
  assert.ok(fs.existsSync(path.join(dir, 'good.ran')), 'the file after the failing one ran');
});

test('a command run `beside` runs with the shared files, before the `alone` ones, and its failure fails the suite', async () => {
  const shared = waitingFile('sharer', ['beside']);
  // The command marks itself started and waits for the shared file's mark: they must run at the same time.
  const script = `const fs = require('node:fs'); const path = require('node:path');
fs.writeFileSync(path.join(${JSON.stringify(dir)}, 'beside.started'), '');
const t0 = Date.now();
const wait = () => fs.existsSync(path.join(${JSON.stringify(dir)}, 'sharer.started')) ? process.exit(Number(process.argv[1]))
  : Date.now() - t0 > 20000 ? process.exit(3) : setTimeout(wait, 50);
wait();`;
  const lonely = testFile('after-beside.test.js', `import fs from 'node:fs';
import assert from 'node:assert/strict';
test('the command is done', () => assert.ok(fs.existsSync(${JSON.stringify(path.join(dir, 'beside.started'))})));`);
  /** @param {number} exit */
  const run = async (exit) => {
    for (const f of fs.readdirSync(dir)) if (f.endsWith('.started')) fs.rmSync(path.join(dir, f));
    const cmd = { name: 'beside-cmd', command: process.execPath, args: ['-e', script, String(exit)], budgetMs: 30_000 };
    const status = await runTestFiles({ name: 'beside', files: [shared, lonely], cwd: dir, budgetMs: 60_000, alone: [lonely], beside: [cmd], stdio: 'ignore' });
    return { status, cmd: /** @type {{status?: number}} */ (cmd).status };
  };
  assert.deepEqual(await run(0), { status: 0, cmd: 0 }, 'one shared file at a time, and the command beside it');
  assert.deepEqual(await run(2), { status: 1, cmd: 2 });
});

test('without times of their own, files start longest first by the expected times; a completed run can record its own', async () => {
  const log = path.join(dir, 'order.log');
  // Names unique to this run, so that no earlier run's times (kept in the temporary folder) know them.
  const tag = path.basename(dir);
  const [a, b] = ['a', 'b'].map((n) => testFile(`order-${n}-${tag}.test.js`, `import fs from 'node:fs';
test('${n}', () => fs.appendFileSync(${JSON.stringify(log)}, '${n}'));`));
  const expected = path.join(dir, 'expected-times.json');
  fs.writeFileSync(expected, JSON.stringify({ [b]: 90_000, [a]: 1_000 }));
  const recorded = path.join(dir, 'recorded-times.json');
  assert.equal(await runTestFiles({ name: 'order', files: [a, b], cwd: dir, budgetMs: 60_000, expectedTimes: expected, recordTimes: recorded, stdio: 'ignore' }), 0);
  assert.equal(fs.readFileSync(log, 'utf8'), 'ba', 'the file expected to take longer started first');
  const times = JSON.parse(fs.readFileSync(recorded, 'utf8'));
  assert.deepEqual(Object.keys(times).sort(), [a, b].sort());
  for (const ms of Object.values(times)) assert.ok(Number.isInteger(ms) && ms % 100 === 0 && ms < 60_000, String(ms));
});
