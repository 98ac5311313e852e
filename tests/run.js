#!/usr/bin/env node
// `npm test`: type-check the JavaScript, run the node:test suites, then the Python tests.
// Every part runs even when an earlier one fails; the exit code is non-zero if any failed.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, VENV_PYTHON } from '../pipeline/paths.js';
import { runTestFiles } from './lib/suite.js';

/**
 * Every *.test.js below `dir` (Node 20's test runner does not expand globs itself).
 * @param {string} dir
 * @returns {string[]}
 */
function testFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    // tests/reliability and tests/opensearch run as their own steps (npm run test:reliability, about 5 minutes;
    // npm run test:opensearch, which needs OpenSearch installed).
    const ownStep = ['reliability', 'opensearch'].some((d) => p === path.join(REPO_ROOT, 'tests', d));
    if (e.isDirectory()) return e.name === 'fixtures' || ownStep ? [] : testFiles(p);
    return e.name.endsWith('.test.js') ? [path.relative(REPO_ROOT, p)] : [];
  }).sort();
}

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

// Budgets, generous: on an idle 2-core machine typecheck takes 10 s, the node tests 5-6 min, the python tests 15 s.
/** @type {[string, () => number | Promise<number>][]} */
const parts = [
  ['typecheck', () => runCommand(process.execPath, [path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'jsconfig.json'], 5 * 60_000)],
  ['node tests', () => runTestFiles({ name: 'node tests', files: testFiles(path.join(REPO_ROOT, 'tests')), cwd: REPO_ROOT, budgetMs: 25 * 60_000 })],
];
if (fs.existsSync(path.join(REPO_ROOT, 'workers', 'tests'))) {
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
