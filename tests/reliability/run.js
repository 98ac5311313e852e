#!/usr/bin/env node
// `npm run test:reliability`: every tests/reliability/*.test.js, the soak included (SCDV_SOAK=1), one file at a
// time; then the figures the tests reported, one JSON line per case (also in .scdv/reliability/figures.jsonl),
// for RELIABILITY.md. Extra arguments go to `node --test` (e.g. --test-name-pattern).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runTestFiles } from '../lib/suite.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const files = fs.readdirSync(here).filter((f) => f.endsWith('.test.js')).sort().map((f) => path.relative(root, path.join(here, f)));
const figures = path.join(root, '.scdv', 'reliability', 'figures.jsonl');
fs.mkdirSync(path.dirname(figures), { recursive: true });
fs.rmSync(figures, { force: true });
const t0 = Date.now();
// 20 minutes: the suite takes about 5 on an idle machine; the budget keeps a stuck test from stalling CI.
const status = await runTestFiles({
  name: 'reliability suite', files, cwd: root, extraArgs: process.argv.slice(2), budgetMs: 20 * 60_000,
  env: { SCDV_SOAK: '1', ...process.env, SCDV_RELIABILITY_FIGURES: figures },
});
process.stderr.write(`\n== reliability suite: ${status === 0 ? 'ok' : 'FAILED'} in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
if (fs.existsSync(figures)) process.stderr.write(`== figures (${path.relative(root, figures)}):\n${fs.readFileSync(figures, 'utf8')}`);
process.exit(status);
