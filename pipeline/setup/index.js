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
  /** System packages left out on purpose (SCDV_SYSTEM_SETUP=0): a later failure names them as the likely cause. */
  let skipped = /** @type {string[]} */ ([]);
  for (const [name, step] of /** @type {[string, (log: (m: string) => void) => string[] | void][]} */ (steps)) {
    try {
      const left = step(log);
      if (Array.isArray(left)) skipped = left;
    } catch (err) {
      const e = /** @type {Error} */ (err);
      const hint = skipped.length
        ? `\n\nSCDV_SYSTEM_SETUP=0 left these system packages uninstalled, which this step may need: ${skipped.join(' ')}`
        : '';
      process.stderr.write(`\n[setup] ${name} failed:\n${e instanceof SetupError ? e.message : e.stack}${hint}\n`);
      process.exit(1);
    }
  }
  const without = skipped.length ? ` without the system packages ${skipped.join(' ')} (SCDV_SYSTEM_SETUP=0)` : '';
  log(`ready in ${((Date.now() - t0) / 1000).toFixed(1)} s${without}`);
}
