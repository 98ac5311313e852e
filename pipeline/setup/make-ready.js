#!/usr/bin/env node
// `npm run setup` (and the prestart/pretest hooks): make this machine ready, idempotently.
// Uses Node built-ins only, because it runs before node_modules exists.
// OpenSearch (Java and the engine) only when asked: `npm run setup -- --opensearch` (see pipeline/store/opensearch/install.js).
import { ensureSystemPackages, OPENSEARCH_PACKAGES, SetupError } from './system-packages.js';
import { ensureNeologd } from './neologd.js';
import { ensurePythonVenv } from './python-venv.js';
import { ensureNodeDependencies } from './node-deps.js';
import { ensureOpenSearch, InstallError, openSearchWanted } from '../store/opensearch/install.js';

/** @param {string} msg */
const log = (msg) => process.stderr.write(`[setup] ${msg}\n`);

const openSearchWhy = openSearchWanted(process.argv.slice(2), process.env);
/** @type {[string, (log: (m: string) => void) => string[] | void | Promise<unknown>][]} */
const steps = [
  ['system packages', (l) => ensureSystemPackages(l, { extra: openSearchWhy ? OPENSEARCH_PACKAGES : [] })],
  ['dictionary', ensureNeologd],
  ['python', ensurePythonVenv],
  ['node', ensureNodeDependencies],
];
if (openSearchWhy) steps.push(['opensearch', (l) => (l(`opensearch: wanted (${openSearchWhy})`), ensureOpenSearch(l))]);

const t0 = Date.now();
if (process.env.SCDV_SKIP_SETUP === '1') {
  log('skipped (SCDV_SKIP_SETUP=1)');
} else {
  /** System packages left out on purpose (SCDV_SYSTEM_SETUP=0): a later failure names them as the likely cause. */
  let skipped = /** @type {string[]} */ ([]);
  for (const [name, step] of steps) {
    try {
      const left = await step(log);
      if (Array.isArray(left)) skipped = left;
    } catch (err) {
      const e = /** @type {Error} */ (err);
      const hint = skipped.length
        ? `\n\nSCDV_SYSTEM_SETUP=0 left these system packages uninstalled, which this step may need: ${skipped.join(' ')}`
        : '';
      process.stderr.write(`\n[setup] ${name} failed:\n${e instanceof SetupError || e instanceof InstallError ? e.message : e.stack}${hint}\n`);
      process.exit(1);
    }
  }
  const without = skipped.length ? ` without the system packages ${skipped.join(' ')} (SCDV_SYSTEM_SETUP=0)` : '';
  log(`ready in ${((Date.now() - t0) / 1000).toFixed(1)} s${without}`);
}
