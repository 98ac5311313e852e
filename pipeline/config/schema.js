// The configuration schema: every key of the config with its default, type, range or choices, one-line
// description, environment variable and the reason for its default (JSON Schema, checked by ajv: validate.js).
// Everything else is generated from it: DEFAULT_CONFIG, the loading (file → environment → flags: ../config.js,
// env.js), the error messages (validate.js, describe.js), the CLI help defaults (commands/define.js),
// docs/configuration.md and the Config type (docs.js writes both: `npm run docs:config`).
//
// Adding a key is one edit: add it to its section's file in schema/ (sections in the order below), with `default`,
// `type`, its range (`minimum`/`maximum`/`exclusiveMinimum`) or `enum`, a `description`, and `why` when the
// default was measured (a pointer, e.g. "BENCHMARKS.md § REST API"); then `npm run docs:config`. Its
// environment variable (SCDV_ + the path in upper snake case), its checks and its messages follow. A rule between
// two keys that JSON Schema cannot say goes in rules.js. Annotation keywords: schema/section.js.
import { section } from './schema/section.js';
import { corpus, queue, tokenizer, workerProcesses } from './schema/tokenizer.js';
import { adEmbed, embed, evalSection, train } from './schema/train.js';
import { index, store, tokenize } from './schema/store.js';
import { server } from './schema/server.js';
import { events, experiments } from './schema/events.js';

export { engine as ENGINE_SCHEMA } from './schema/engine.js';
export { cli as CLI_SCHEMA } from './schema/cli.js';
export { ARM_METHODS } from './schema/events.js';

/** @typedef {import('./schema/section.js').KeySchema} KeySchema */

/** The whole config: its top-level sections, in the order docs/configuration.md lists them. */
export const CONFIG_SCHEMA = section(undefined, {
  tokenizer, corpus, workerProcesses, queue, train, embed, adEmbed, eval: evalSection, index, store, tokenize, server, events, experiments,
});

/** @param {KeySchema} schema */
export const isSection = (schema) => schema.type === 'object' && schema.properties !== undefined && schema.default === undefined;

/**
 * The defaults tree of a section schema (a fresh copy each call).
 * @param {KeySchema} schema
 * @returns {any}
 */
export function defaultsOf(schema) {
  if (!isSection(schema)) return structuredClone(schema.default);
  return Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, defaultsOf(/** @type {KeySchema} */ (v))]));
}

/**
 * Every key of a section schema (sections walked; arrays and scalars are keys) as a dotted path with its schema.
 * @param {KeySchema} [s]
 * @returns {{key: string, schema: KeySchema}[]}
 */
export function schemaKeys(s = CONFIG_SCHEMA, prefix = '') {
  return Object.entries(/** @type {Record<string, KeySchema>} */ (s.properties)).flatMap(([k, v]) => {
    const key = prefix ? `${prefix}.${k}` : k;
    return isSection(v) ? schemaKeys(v, key) : [{ key, schema: v }];
  });
}

/**
 * The schema at a path of the config (sections by property, arrays by item; a number is an array index), or
 * undefined when the config has nothing there.
 * @param {(string|number)[]} path
 * @param {KeySchema} [root]
 * @returns {KeySchema | undefined}
 */
export function schemaAt(path, root = CONFIG_SCHEMA) {
  /** @type {KeySchema | undefined} */
  let s = root;
  for (const p of path) {
    if (!s) return undefined;
    s = typeof p === 'number' ? s.items : s.properties && Object.hasOwn(s.properties, p) ? s.properties[p] : undefined;
  }
  return s;
}

/** @param {string} key dotted path */
export const schemaOfKey = (key) => schemaAt(key.split('.'));
