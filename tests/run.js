#!/usr/bin/env node
// `npm test`: type-check the JavaScript, run the node:test suites, then the Python tests.
// `npm run test:quick` (--quick): the edit loop, type-check and the node:test files that need no trained model,
// server, Redis or CLI run (tests/lib/test-files.js).
// Every part runs even when an earlier one fails; the exit code is non-zero if any failed.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, VENV_PYTHON } from '../pipeline/paths.js';
import { runTestFiles } from './lib/suite.js';
import { isQuick, testFiles } from './lib/test-files.js';

const quick = process.argv.includes('--quick');

/**
 * A command run to completion, killed after `budgetMs` (a hung part must not stall CI).
 * @param {string} cmd @param {string[]} args @param {number} budgetMs @param {NodeJS.ProcessEnv} [env]
 */
function runCommand(cmd, args, budgetMs, env) {
  process.stderr.write(`\n== ${path.basename(cmd)} ${args.join(' ')}\n`);
  const res = spawnSync(cmd, args, { cwd: REPO_ROOT, stdio: 'inherit', env: env ?? process.env, timeout: budgetMs, killSignal: 'SIGKILL' });
  if (res.error) process.stderr.write(`${res.error.message}\n`);
  return res.status ?? 1;
}

// Test files run as many at a time as the machine has cores, 2 to 4 (--concurrency=N sets it): every file has its own
// folders, Redis and ports, and the models and collections they share are built once under a lock
// (tests/lib/test-cache.js). Files whose checks compare timings run alone, after the others.
const concurrencyFlag = process.argv.find((a) => a.startsWith('--concurrency='));
const concurrency = concurrencyFlag ? Math.max(1, Number(concurrencyFlag.split('=')[1]) || 1) : Math.max(2, Math.min(4, os.availableParallelism?.() ?? 2));
const ALONE = ['tests/bench/scale.test.js', 'tests/server/embed-lanes.test.js', 'tests/tokenizer/native.test.js'];
const files = testFiles().filter((f) => !quick || isQuick(f));

// Budgets, generous: on an idle 2-core machine typecheck takes 10 s and the python tests 15 s; the node tests' files
// take about 13 minutes of CPU in all (the quick ones 1), which the closing summary of each run reports.
/** @type {[string, () => number | Promise<number>][]} */
const parts = [
  ['typecheck', () => runCommand(process.execPath, [path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'jsconfig.json'], 5 * 60_000)],
  ['node tests', () => runTestFiles({
    name: quick ? 'quick node tests' : 'node tests', files, cwd: REPO_ROOT, budgetMs: (quick ? 5 : 25) * 60_000, concurrency,
    alone: ALONE,
  })],
];
if (!quick && fs.existsSync(path.join(REPO_ROOT, 'workers', 'tests'))) {
  parts.push(['python tests', () => runCommand(VENV_PYTHON, ['-m', 'pytest', '-q', 'workers/tests'], 10 * 60_000, { ...process.env, PYTHONPATH: path.join(REPO_ROOT, 'workers') })]);
}

const failed = [];
for (const [name, run] of parts) {
  process.stderr.write(`\n== ${name}\n`);
  const t0 = Date.now();
  const status = await run();
  process.stderr.write(`== ${name}: ${status === 0 ? 'ok' : 'FAILED'} in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  if (status !== 0) failed.push(name);
}
if (failed.length) {
  process.stderr.write(`\nFAILED: ${failed.join(', ')}\n`);
  process.exit(1);
}
