// One configuration object for every stage. Its keys, defaults, ranges and descriptions are the schema in
// pipeline/config/schema.js (how to add a key: the top of that file); a JSON file, SCDV_… environment variables
// (config/env.js, docs/configuration.md) and CLI flags override the defaults, in that order.
import fs from 'node:fs';
import crypto from 'node:crypto';
import { errors } from './errors.js';
import { CLI_SCHEMA, CONFIG_SCHEMA, defaultsOf, schemaKeys } from './config/schema.js';
import { rangeOf } from './config/describe.js';
import { validateConfig } from './config/validate.js';
import { envOverrides, warnUnknownEnv } from './config/env.js';

export { describeRange, inRange } from './config/describe.js';
export { ARM_METHODS } from './config/schema.js';

/** @typedef {import('./config/types.js').Config} Config */
/** @typedef {import('./config/describe.js').Range} Range */

/** The built-in config: every key's default from the schema. @type {Readonly<Config>} */
export const DEFAULT_CONFIG = Object.freeze(defaultsOf(CONFIG_SCHEMA));

/** Defaults of `scdv` flags that are not config keys (shown by each command's --help). */
export const CLI_DEFAULTS = Object.freeze(/** @type {{modelName: string, collection: string, labelField: string, clusterSort: string, clusterWords: number, opensearchPort: number, opensearchHeapMb: number}} */ (defaultsOf(CLI_SCHEMA)));

/**
 * Allowed values of the numeric training parameters, from the schema ('word2vec.vector_size' -> its range): the
 * CLI flags that set them (--dims, --clusters, …) check against these, so a bad value fails before any work, with
 * the config's wording. workers/scdv/config.py checks the same parameters again on the Python side.
 * @type {Readonly<Record<string, Range>>}
 */
export const TRAIN_RANGES = Object.freeze(Object.fromEntries(schemaKeys(CONFIG_SCHEMA.properties.train)
  .flatMap(({ key, schema }) => { const r = rangeOf(schema); return r ? [[key, r]] : []; })));

/** @param {unknown} v */
const isPlain = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * `override` deep-merged into a copy of `base`: objects merge key by key, anything else replaces. Keys the schema
 * does not know are kept, for the check to name them.
 * @param {any} base
 * @param {any} override
 * @returns {any}
 */
function merge(base, override) {
  if (override === undefined) return structuredClone(base);
  if (!isPlain(base) || !isPlain(override)) return structuredClone(override);
  const out = structuredClone(base);
  for (const [k, v] of Object.entries(override)) {
    // defineProperty: a "__proto__" key of a JSON file stays a key (and is refused as unknown).
    Object.defineProperty(out, k, { value: merge(Object.hasOwn(base, k) ? base[k] : undefined, v), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * Build the effective config: defaults <- JSON file <- environment <- overrides (flags), checked against the
 * schema (SCDV_CONFIG_INVALID naming the key and its rule).
 * @param {{file?: string, overrides?: Record<string, any>}} [opts]
 * @returns {Config}
 */
export function loadConfig(opts = {}) {
  let cfg = merge(DEFAULT_CONFIG, undefined);
  if (opts.file) {
    let parsed;
    try {
      parsed = JSON.parse(fs.readFileSync(opts.file, 'utf8'));
    } catch (err) {
      throw errors.CONFIG_FILE_UNREADABLE(opts.file, /** @type {Error} */ (err).message).because(err);
    }
    if (!isPlain(parsed)) throw errors.CONFIG_INVALID(`config must be an object, got ${JSON.stringify(parsed)}`);
    cfg = merge(cfg, parsed);
  }
  const env = envOverrides(DEFAULT_CONFIG);
  if (env) cfg = merge(cfg, env);
  warnUnknownEnv(DEFAULT_CONFIG);
  if (opts.overrides) cfg = merge(cfg, opts.overrides);
  validateConfig(cfg);
  return cfg;
}

/**
 * Stable short hash of any JSON-able value (key order independent), used to key reusable outputs.
 * @param {unknown} value
 */
export function hashOf(value) {
  /** @type {(v: any) => any} */
  const canon = (v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])]))
      : Array.isArray(v) ? v.map(canon) : v;
  return crypto.createHash('sha256').update(JSON.stringify(canon(value))).digest('hex').slice(0, 16);
}
