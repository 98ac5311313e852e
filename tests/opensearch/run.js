#!/usr/bin/env node
// `npm run test:opensearch`: set-up with OpenSearch (Java and the engine, cached after the first run), then every
// tests/opensearch/*.test.js one file at a time, each against real nodes it starts (tests/lib/opensearch.js); then
// the fault figures the tests reported (also in .scdv/opensearch-tests/figures.jsonl), for RELIABILITY.md.
// Extra arguments go to `node --test` (e.g. --test-name-pattern).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runTestFiles } from '../lib/suite.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const setup = spawnSync(process.execPath, [path.join(root, 'pipeline', 'setup', 'make-ready.js'), '--opensearch'], { cwd: root, stdio: 'inherit' });
if (setup.status !== 0) process.exit(setup.status ?? 1);
const files = fs.readdirSync(here).filter((f) => f.endsWith('.test.js')).sort().map((f) => path.relative(root, path.join(here, f)));
const figures = path.join(root, '.scdv', 'opensearch-tests', 'figures.jsonl');
fs.mkdirSync(path.dirname(figures), { recursive: true });
fs.rmSync(figures, { force: true });
const t0 = Date.now();
// 20 minutes: the suite takes about 4 on an idle machine; the budget keeps a stuck node from stalling CI.
const status = await runTestFiles({
  name: 'opensearch suite', files, cwd: root, extraArgs: process.argv.slice(2), budgetMs: 20 * 60_000,
  env: { ...process.env, SCDV_RELIABILITY_FIGURES: figures },
});
process.stderr.write(`\n== opensearch suite: ${status === 0 ? 'ok' : 'FAILED'} in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
if (fs.existsSync(figures)) process.stderr.write(`== figures (${path.relative(root, figures)}):\n${fs.readFileSync(figures, 'utf8')}`);
process.exit(status);
