#!/usr/bin/env node
// `npm run test:opensearch`: set-up with OpenSearch (Java and the engine, cached after the first run), then every
// tests/opensearch/*.test.js one file at a time, each against real nodes it starts (tests/lib/opensearch.js).
// Extra arguments go to `node --test` (e.g. --test-name-pattern).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const setup = spawnSync(process.execPath, [path.join(root, 'pipeline', 'setup', 'index.js'), '--opensearch'], { cwd: root, stdio: 'inherit' });
if (setup.status !== 0) process.exit(setup.status ?? 1);
const files = fs.readdirSync(here).filter((f) => f.endsWith('.test.js')).sort().map((f) => path.relative(root, path.join(here, f)));
const t0 = Date.now();
const res = spawnSync(process.execPath, ['--test', '--test-concurrency=1', ...process.argv.slice(2), ...files], { cwd: root, stdio: 'inherit' });
process.stderr.write(`\n== opensearch suite: ${res.status === 0 ? 'ok' : 'FAILED'} in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
process.exit(res.status ?? 1);
