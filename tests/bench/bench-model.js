// The benchmarks' model and corpus: the livedoor dev split in ../shared, and the model tests/bench/train.bench.js
// trains on it (bench-livedoor-dev), trained here on first use.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SHARED_DIR, modelsDir } from '../../pipeline/paths.js';

export const BENCH_MODEL = 'bench-livedoor-dev';

/**
 * The dev split's path, once the bench model exists (trained now when missing). Exits the process (2: no corpus,
 * 1: training failed) as a benchmark script would.
 * @param {string} [model]
 */
export function ensureBenchModel(model = BENCH_MODEL) {
  const corpus = path.join(SHARED_DIR, 'corpora', 'livedoor', 'dev.jsonl');
  if (!fs.existsSync(corpus)) { console.error(`no corpus at ${corpus}`); process.exit(2); }
  if (!fs.existsSync(path.join(modelsDir(), model, 'manifest.json'))) {
    process.stderr.write(`model ${model} missing: training it (tests/bench/train.bench.js)\n`);
    const trainer = path.join(path.dirname(fileURLToPath(import.meta.url)), 'train.bench.js');
    const r = spawnSync(process.execPath, [trainer], { stdio: 'inherit' });
    if (r.status !== 0) process.exit(1);
  }
  return corpus;
}
