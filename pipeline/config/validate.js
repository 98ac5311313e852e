// Checking a config against the schema (schema.js) with ajv, then the rules between keys (rules.js); a broken
// rule is SCDV_CONFIG_INVALID naming the key by its dotted path, what it must be (describe.js) and the value
// found (secrets never). ajv, because it is JSON Schema (the format the HTTP API's schemas already use, read by
// fastify and OpenAPI tools) and already a dependency, well kept; its standalone code of the schema is generated
// (validator.generated.cjs) so that a command does not compile the schema each time it starts.
import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { errors } from '../errors.js';
import { describeRule } from './describe.js';
import { ANNOTATIONS } from './schema/section.js';
import { CONFIG_SCHEMA, schemaAt } from './schema.js';
import { RULES } from './rules.js';

/** @typedef {import('./schema/section.js').KeySchema} KeySchema */

/** Keys of earlier versions, named in the error a config file that still uses them gets. */
const RENAMED_KEYS = /** @type {Record<string, string>} */ ({ 'server.embedWorkers': 'server.indexWorkers' });

/** Keywords of the schema that ajv does not check: the annotations, descriptions and defaults. */
const NOT_CHECKED = new Set([...ANNOTATIONS, 'description', 'default']);

/**
 * The schema as ajv checks it: annotations, descriptions and defaults left out (walking the schema's own
 * structure, so a key named like a keyword stays).
 * @param {KeySchema} s
 * @returns {KeySchema}
 */
export function checkedSchema(s = CONFIG_SCHEMA) {
  /** @type {KeySchema} */
  const out = {};
  for (const [k, v] of Object.entries(s)) {
    if (NOT_CHECKED.has(k)) continue;
    if (k === 'properties') out[k] = Object.fromEntries(Object.entries(v).map(([name, sub]) => [name, checkedSchema(sub)]));
    else if (k === 'items') out[k] = checkedSchema(v);
    else out[k] = v;
  }
  return out;
}

/** Identifies the checked schema: the generated validator is used only when it was made from this one. */
export const schemaDigest = () => crypto.createHash('sha256').update(JSON.stringify(checkedSchema())).digest('hex').slice(0, 16);

/** ajv's own messages are not used: messageOf words each error from the key's schema. */
const AJV_OPTIONS = { strict: true, allowUnionTypes: true, messages: false };
const require = createRequire(import.meta.url);
/** The generated validator (a variable: the type checker need not read its 180 kB of generated code). */
const GENERATED = './validator.generated.cjs';

/**
 * The source of the generated validator (validator.generated.cjs, written by `npm run docs:config`): ajv's
 * standalone code of the checked schema. Compiling the schema costs a process about ten times what loading this
 * code does (1.0-1.5 s against 0.09-0.18 s on the 2-core machine at load average 15).
 */
export function validatorSource() {
  const Ajv = /** @type {typeof import('ajv').default} */ (require('ajv').default);
  const standalone = /** @type {typeof import('ajv/dist/standalone/index.js').default} */ (require('ajv/dist/standalone/index.js').default);
  const ajv = new Ajv({ ...AJV_OPTIONS, code: { source: true } });
  return `// @ts-nocheck\n// Generated from pipeline/config/schema.js by \`npm run docs:config\` (ajv standalone code); do not edit.\n${standalone(ajv, ajv.compile(checkedSchema()))}\nmodule.exports.schemaDigest = ${JSON.stringify(schemaDigest())};\n`;
}

/** @typedef {((data: unknown) => boolean) & {errors?: import('ajv').ErrorObject[] | null}} Check */
/** @type {Check | undefined} */
let check;

/** The generated validator when it is the schema's, else the schema compiled now (an edit not yet regenerated). */
function compiled() {
  if (check) return check;
  try {
    const generated = require(GENERATED);
    if (generated.schemaDigest === schemaDigest()) return (check = /** @type {Check} */ (generated));
  } catch { /* not generated yet: compiled below */ }
  return (check = compileSchema());
}

/** The schema compiled by ajv now (what the generated code does, at the cost of compiling). @returns {Check} */
export function compileSchema() {
  const Ajv = /** @type {typeof import('ajv').default} */ (require('ajv').default);
  return new Ajv(AJV_OPTIONS).compile(checkedSchema());
}

/**
 * A path as users write it: server.port, experiments.arms[0].name ("config" for the whole).
 * @param {(string|number)[]} path
 */
export const dotted = (path) => path.reduce((/** @type {string} */ out, p) => (typeof p === 'number' ? `${out}[${p}]` : out ? `${out}.${p}` : p), '') || 'config';

/** @param {unknown} v */
function shown(v) {
  if (v === undefined) return 'nothing';
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  const text = JSON.stringify(v);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/**
 * An ajv instance path ("/experiments/arms/0/name") as path parts, array indices as numbers.
 * @param {string} instancePath
 */
function partsOf(instancePath) {
  /** @type {(string|number)[]} */
  const parts = [];
  for (const raw of instancePath.split('/').slice(1)) {
    const p = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    parts.push(schemaAt(parts)?.items && /^\d+$/.test(p) ? Number(p) : p);
  }
  return parts;
}

/**
 * The message of one ajv error.
 * @param {import('ajv').ErrorObject} e
 * @param {unknown} cfg
 */
function messageOf(e, cfg) {
  const parts = partsOf(e.instancePath);
  if (e.keyword === 'additionalProperties') {
    const key = dotted([...parts, e.params.additionalProperty]);
    const known = Object.keys(schemaAt(parts)?.properties ?? {});
    return `unknown key ${key}${RENAMED_KEYS[key] ? ` (renamed to ${RENAMED_KEYS[key]})` : ''} (known: ${known.join(', ')})`;
  }
  if (e.keyword === 'required') {
    const at = [...parts, e.params.missingProperty];
    const s = schemaAt(at);
    return `${dotted(at)} is missing${s ? `: it must be ${describeRule(s)}` : ''}`;
  }
  const s = schemaAt(parts) ?? {};
  const value = parts.reduce((/** @type {any} */ v, p) => v?.[p], cfg);
  return `${dotted(parts)} must be ${describeRule(s)}${s.secret || s.hideValue ? '' : `, got ${shown(value)}`}`;
}

/**
 * The problems of a config, as messages: the first place where it breaks the schema (ajv stops there: its code
 * stays small), else every rule between keys that it breaks.
 * @param {unknown} cfg
 * @returns {string[]}
 */
export function configProblems(cfg) {
  const check = compiled();
  if (!check(cfg)) return [...new Set((check.errors ?? []).map((e) => messageOf(e, cfg)))];
  return RULES.map((r) => r.check(/** @type {import('./types.js').Config} */ (cfg))).filter((m) => m !== null);
}

/**
 * Throws SCDV_CONFIG_INVALID with the first problem of the config.
 * @param {unknown} cfg
 * @returns {asserts cfg is import('./types.js').Config}
 */
export function validateConfig(cfg) {
  const [first] = configProblems(cfg);
  if (first) throw errors.CONFIG_INVALID(first);
}
