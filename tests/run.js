#!/usr/bin/env node
// `npm test`: type-check the JavaScript, run the node:test suites and the Python tests, the type-check and the Python
// tests beside the node:test files. `npm run test:quick` (--quick): the edit loop, type-check and the node:test files
// that need no trained model, server, Redis or CLI run (tests/lib/test-files.js).
// Every part runs even when another fails; the exit code is non-zero if any failed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, VENV_PYTHON } from '../pipeline/paths.js';
import { runTestFiles } from './lib/suite.js';
import { isQuick, testFiles } from './lib/test-files.js';

const quick = process.argv.includes('--quick');

// Test files run as many at a time as the machine has cores, 2 to 4 (--concurrency=N sets it): every file has its own
// folders, Redis and ports, and the models and collections they share are built once under a lock
// (tests/lib/test-cache.js). Files whose checks compare timings run alone, after the others.
const concurrencyFlag = process.argv.find((a) => a.startsWith('--concurrency='));
const concurrency = concurrencyFlag ? Math.max(1, Number(concurrencyFlag.split('=')[1]) || 1) : Math.max(2, Math.min(4, os.availableParallelism?.() ?? 2));
const ALONE = ['tests/bench/scale.test.js', 'tests/server/embed-lanes.test.js', 'tests/tokenizer/native.test.js'];
const files = testFiles().filter((f) => !quick || isQuick(f));
// The order of a machine's first run (longest first), before it has times of its own (tests/lib/suite.js keeps each
// run's in the temporary folder): the wall times of a full run, refreshed by `npm test -- --record-times`, which
// writes that run's times here when it completed (commit the file when the slowest files have changed).
const EXPECTED_TIMES = path.join(REPO_ROOT, 'tests', 'lib', 'expected-times.json');
const recordTimes = !quick && process.argv.includes('--record-times') ? EXPECTED_TIMES : undefined;

// The type-check and the python tests run beside the node:test files, in a lane of their own (tests/lib/suite.js:
// `beside`), their output held and printed when each ends: most node:test files leave part of a core idle (they wait on
// Redis, servers, child processes), which these fill. Budgets, generous: on an idle 2-core machine typecheck takes
// 14 s and the python tests 14 s.
/** @type {import('./lib/suite.js').BesideCommand[]} */
const beside = [
  { name: 'typecheck', command: process.execPath, args: [path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'jsconfig.json'], budgetMs: 5 * 60_000 },
];
if (!quick && fs.existsSync(path.join(REPO_ROOT, 'workers', 'tests'))) {
  beside.push({
    name: 'python tests', command: VENV_PYTHON, args: ['-m', 'pytest', '-q', 'workers/tests'], budgetMs: 10 * 60_000,
    env: { ...process.env, PYTHONPATH: path.join(REPO_ROOT, 'workers') },
  });
}

const name = quick ? 'quick node tests' : 'node tests';
process.stderr.write(`\n== ${name}, with ${beside.map((b) => b.name).join(' and ')} beside them\n`);
const t0 = Date.now();
// The node tests' files take about 10 minutes of CPU in all (the quick ones 1), which the closing summary of each run reports.
const status = await runTestFiles({ name, files, cwd: REPO_ROOT, budgetMs: (quick ? 5 : 25) * 60_000, concurrency, alone: ALONE, beside,
  expectedTimes: EXPECTED_TIMES, recordTimes });
process.stderr.write(`== ${name}: ${status === 0 ? 'ok' : 'FAILED'} in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
if (status !== 0) {
  // The suite's closing lines name the failed files; a failed type-check or python run is named here too.
  const besideFailed = beside.filter((b) => b.status !== 0).map((b) => b.name);
  process.stderr.write(`\nFAILED: ${besideFailed.length ? besideFailed.join(', ') : name}\n`);
  process.exit(1);
}
