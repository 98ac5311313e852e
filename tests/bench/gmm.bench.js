#!/usr/bin/env node
// Our GMM vs scikit-learn's, same data, same initial parameters: word vectors of a model trained on the
// livedoor dev split (trained first by bench:train when missing) and synthetic 50,000 x 200 x 60.
// node tests/bench/gmm.bench.js [--model bench-livedoor-dev] [-- extra args for scdv.bench_gmm]
// Last line (from workers/scdv/bench_gmm.py):
//   {..., "sklearn_s":…, "ours_s":…, "speedup":…, "loglik_sklearn":…, "loglik_ours":…, "diag_speedup":…}
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { modelsDir, REPO_ROOT, VENV_PYTHON } from '../../pipeline/paths.js';

const args = process.argv.slice(2);
const at = args.indexOf('--model');
const model = at >= 0 ? args.splice(at, 2)[1] : 'bench-livedoor-dev';
const extra = args[0] === '--' ? args.slice(1) : args;
const vectors = path.join(modelsDir(), model, 'word_vectors.npy');
if (!fs.existsSync(vectors)) {
  console.error(`${vectors} is missing: training ${model} on the livedoor dev split first (bench:train)`);
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'tests', 'bench', 'train.bench.js'), '--name', model], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
const r = spawnSync(VENV_PYTHON, ['-m', 'scdv.bench_gmm', '--vectors', vectors, ...extra], {
  stdio: 'inherit', env: { ...process.env, PYTHONPATH: path.join(REPO_ROOT, 'workers') },
});
process.exit(r.status ?? 1);
