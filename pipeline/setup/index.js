#!/usr/bin/env node
// `npm run setup` (and the prestart/pretest hooks): make this machine ready, idempotently.
// Uses Node built-ins only, because it runs before node_modules exists.
import { ensureSystemPackages, SetupError } from './system-packages.js';
import { ensureNeologd } from './neologd.js';
import { ensurePythonVenv } from './python-venv.js';
import { ensureNodeDependencies } from './node-deps.js';

/** @param {string} msg */
const log = (msg) => process.stderr.write(`[setup] ${msg}\n`);

const steps = [
  ['system packages', ensureSystemPackages],
  ['dictionary', ensureNeologd],
  ['python', ensurePythonVenv],
  ['node', ensureNodeDependencies],
];

const t0 = Date.now();
if (process.env.SCDV_SKIP_SETUP === '1') {
  log('skipped (SCDV_SKIP_SETUP=1)');
} else {
  for (const [name, step] of /** @type {[string, (log: (m: string) => void) => void][]} */ (steps)) {
    try {
      step(log);
    } catch (err) {
      const e = /** @type {Error} */ (err);
      process.stderr.write(`\n[setup] ${name} failed:\n${e instanceof SetupError ? e.message : e.stack}\n`);
      process.exit(1);
    }
  }
  log(`ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
