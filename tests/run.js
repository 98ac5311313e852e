#!/usr/bin/env node
// `npm test`: type-check the JavaScript, run the node:test suites, then the Python tests.
// Every part runs even when an earlier one fails; the exit code is non-zero if any failed.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, VENV_PYTHON } from '../pipeline/paths.js';

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

/** @type {[string, string, string[], NodeJS.ProcessEnv?][]} */
const parts = [
  ['typecheck', process.execPath, [path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'jsconfig.json']],
  ['node tests', process.execPath, ['--test', '--test-concurrency=1', ...testFiles(path.join(REPO_ROOT, 'tests'))]],
];
if (fs.existsSync(path.join(REPO_ROOT, 'workers', 'tests'))) {
  parts.push(['python tests', VENV_PYTHON, ['-m', 'pytest', '-q', 'workers/tests'], { ...process.env, PYTHONPATH: path.join(REPO_ROOT, 'workers') }]);
}

const failed = [];
for (const [name, cmd, args, env] of parts) {
  process.stderr.write(`\n== ${name}: ${path.basename(cmd)} ${args.join(' ')}\n`);
  const t0 = Date.now();
  const res = spawnSync(cmd, args, { cwd: REPO_ROOT, stdio: 'inherit', env: env ?? process.env });
  process.stderr.write(`== ${name}: ${res.status === 0 ? 'ok' : 'FAILED'} in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  if (res.status !== 0) failed.push(name);
}
if (failed.length) {
  process.stderr.write(`\nFAILED: ${failed.join(', ')}\n`);
  process.exit(1);
}
