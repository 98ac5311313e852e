#!/usr/bin/env node
// `npm run bench:search`: the store benchmark on real SCDV vectors — synthetic documents recombined from the
// livedoor dev split, embedded with the model trained on it (bench:train makes it when missing).
// npm run bench:search [-- --docs 1000000] [-- any option of tests/bench/search.bench.js]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MODELS_DIR, REPO_ROOT } from '../../pipeline/paths.js';
import { makeScdvVectors } from './scdv-vectors.js';

const args = process.argv.slice(2);
const at = args.indexOf('--docs');
const docs = at >= 0 ? Number(args.splice(at, 2)[1]) : 100_000;
const model = 'bench-livedoor-dev';
if (!fs.existsSync(path.join(MODELS_DIR, model, 'manifest.json'))) {
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'tests', 'bench', 'train.bench.js'), '--name', model], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
const file = path.join(os.tmpdir(), `scdv-${model}-${docs}.csr`);
if (!fs.existsSync(file)) {
  process.stderr.write(`embedding ${docs} synthetic documents with ${model} into ${file}\n`);
  const v = await makeScdvVectors({ docs, model, out: file });
  process.stderr.write(`${v.docs} vectors, ${(v.nnz / v.docs).toFixed(0)} non-zeros each, in ${v.seconds.toFixed(0)} s\n`);
}
const r = spawnSync(process.execPath, ['--max-old-space-size=12000', path.join(REPO_ROOT, 'tests', 'bench', 'search.bench.js'), '--data', file, ...args], { stdio: 'inherit' });
process.exit(r.status ?? 1);
