// Every config key from the environment: the variable's name is derived from the key's path
// (store.opensearch.nodes -> SCDV_STORE_OPENSEARCH_NODES) and its text is read as the key's type in the schema
// (schema.js), so a key added to the schema is settable by environment at once. Applied by loadConfig between the
// file and the flags.
import { errors } from '../errors.js';
import { schemaKeys, schemaOfKey } from './schema.js';
import { typesOf } from './describe.js';

/**
 * Older names of some keys' variables (README "Store backends", docs/scale-out.md), from the schema's envAliases:
 * each works as well as the derived name; setting both to different values is an error.
 * @type {Readonly<Record<string, string>>}
 */
export const ENV_ALIASES = Object.freeze(Object.fromEntries(schemaKeys().flatMap(({ key, schema }) => (schema.envAliases ?? []).map((/** @type {string} */ n) => [n, key]))));

/**
 * The SCDV_ variables that are not config keys, by what they are for (docs/configuration.md lists them from
 * here). Any other SCDV_ variable in the environment is reported as unknown (unknownEnvVariables): a misspelt
 * setting would otherwise be ignored without a word. tests/config-env.test.js checks that every variable the
 * sources read is here or a config key's.
 */
const T = 'read by the test and benchmark suites only';
export const OTHER_ENV_VARIABLES = Object.freeze({
  SCDV_MODELS_DIR: 'where things live', SCDV_DATA_DIR: 'where things live', SCDV_STORE_DIR: 'where things live',
  SCDV_CACHE_DIR: 'where things live', SCDV_API_KEY: 'the key commands such as `scdv activate` present to a server',
  SCDV_SKIP_SETUP: 'set-up (README)', SCDV_SYSTEM_SETUP: 'set-up (README)', SCDV_OFFLINE: 'set-up (README)',
  SCDV_SETUP_OPENSEARCH: 'set-up (README)', SCDV_OPENSEARCH_HOME: 'set-up (README)',
  SCDV_TEST_OPENSEARCH_URL: T, SCDV_FAULT_BATCH_DELAY_MS: T, SCDV_FAULT_TRAIN_EXIT: T, SCDV_FUZZ_CASES: T, SCDV_FUZZ_SEED: T,
  SCDV_SCHEMATHESIS_EXAMPLES: T, SCDV_SCHEMATHESIS_SEED: T, SCDV_SCREENSHOT_DIR: T, SCDV_RELIABILITY_FIGURES: T, SCDV_SOAK: T,
  SCDV_SOAK_P99_MS: T, SCDV_SOAK_SECONDS: T, SCDV_SOAK_WRITES: T, SCDV_BENCH_SPEC: T, SCDV_SERVE_WORKER: T,
});

/** Edit distance of two names (to suggest the variable a misspelt one meant). */
function editDistance(/** @type {string} */ a, /** @type {string} */ b) {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length];
}

/**
 * SCDV_ variables set in the environment that nothing reads, each with the closest known name when one is a few
 * edits away (what a misspelling looks like).
 * @param {Record<string, any>} defaults DEFAULT_CONFIG
 * @param {Record<string, string | undefined>} [env]
 * @returns {{name: string, suggestion: string | null}[]}
 */
export function unknownEnvVariables(defaults, env = process.env) {
  const known = new Set([...configKeys(defaults).map(({ key }) => envName(key)), ...Object.keys(ENV_ALIASES), ...Object.keys(OTHER_ENV_VARIABLES)]);
  return Object.keys(env).filter((n) => n.startsWith('SCDV_') && !known.has(n)).sort().map((name) => {
    let suggestion = null;
    let bestDistance = Math.max(2, Math.floor(name.length / 6)) + 1; // a suggestion must be closer than this
    for (const k of known) {
      const d = editDistance(name, k);
      if (d < bestDistance) { suggestion = k; bestDistance = d; }
    }
    return { name, suggestion };
  });
}

/** Names already warned about: a process loads its config more than once. */
const warnedEnv = new Set();

/**
 * A process warning (ScdvConfigWarning, once per name) for each SCDV_ variable nothing reads.
 * @param {Record<string, any>} defaults DEFAULT_CONFIG
 */
export function warnUnknownEnv(defaults) {
  for (const { name, suggestion } of unknownEnvVariables(defaults)) {
    if (warnedEnv.has(name)) continue;
    warnedEnv.add(name);
    process.emitWarning(`environment variable ${name} is not a setting and is ignored${suggestion ? ` (did you mean ${suggestion}?)` : ''}; the settings: docs/configuration.md`, 'ScdvConfigWarning');
  }
}

/** Keys whose values are secrets: documented as such, and never echoed in an error message. */
export const SECRET_KEYS = new Set(schemaKeys().filter(({ schema }) => schema.secret).map(({ key }) => key));

/** @param {unknown} v */
const isPlain = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Every settable key of a defaults tree, as a dotted path with its default (objects are walked; arrays, null and
 * scalars are keys).
 * @param {Record<string, any>} defaults
 * @returns {{key: string, value: unknown}[]}
 */
export function configKeys(defaults, prefix = '') {
  return Object.entries(defaults).flatMap(([k, v]) => {
    const key = prefix ? `${prefix}.${k}` : k;
    return isPlain(v) ? configKeys(v, key) : [{ key, value: v }];
  });
}

/**
 * The variable of a key: SCDV_ and its path in upper snake case (server.apiKeyHashes -> SCDV_SERVER_API_KEY_HASHES).
 * @param {string} key
 */
export const envName = (key) => `SCDV_${key.split('.').map((p) => p.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()).join('_')}`;

/**
 * The type a key's variable is read as, from its schema: 'number', 'boolean', 'string', 'string[]',
 * 'json:string[]' (envFormat 'json': items may contain commas), 'json' (a list of objects), each '|null' when
 * the key takes null.
 * @param {string} key
 */
export function envType(key) {
  const s = schemaOfKey(key);
  if (!s) throw new Error(`no config key ${key}`);
  const types = typesOf(s);
  const base = types.find((t) => t !== 'null');
  const nullable = types.includes('null') ? '|null' : '';
  if (base === 'array') {
    const item = typesOf(s.items ?? {})[0];
    if (item === 'object') return `json${nullable}`;
    const elem = item === 'integer' ? 'number' : item ?? 'string';
    return `${s.envFormat === 'json' ? 'json:' : ''}${elem}[]${nullable}`;
  }
  return `${base === 'integer' ? 'number' : base}${nullable}`;
}

/** Plain decimal numbers only: "0x10", "1_000", "" and "Infinity" are mistakes, not numbers. */
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

const WORDS = /** @type {Record<string, string>} */ ({
  number: 'a number', boolean: 'true or false (or 1 or 0)', string: 'a string', json: 'a JSON array',
  'json:string[]': 'a JSON array of strings',
  'number[]': 'numbers separated by commas, or a JSON array', 'string[]': 'values separated by commas, or a JSON array',
});

/**
 * What a type expects, in words, e.g. "a number, or null".
 * @param {string} type
 */
export const describeEnvType = (type) => {
  const [base, nullable] = type.split('|');
  return `${WORDS[base] ?? base}${nullable ? ', or null' : ''}`;
};

/**
 * A variable's text as a value of `type`; undefined when it is not one.
 * @param {string} text
 * @param {string} type
 * @returns {{value: unknown} | undefined}
 */
function coerce(text, type) {
  const [base, nullable] = type.split('|');
  const t = text.trim();
  if (nullable && t === 'null') return { value: null };
  if (base === 'number') return DECIMAL.test(t) ? { value: Number(t) } : undefined;
  if (base === 'boolean') return ['true', '1'].includes(t) ? { value: true } : ['false', '0'].includes(t) ? { value: false } : undefined;
  if (base === 'string') return { value: text };
  if (base.startsWith('json') || t.startsWith('[')) {
    let parsed;
    try { parsed = JSON.parse(t); } catch { return undefined; }
    if (!Array.isArray(parsed)) return undefined;
    const elem = base.replace(/^json:?/, '').replace('[]', '');
    return !elem || parsed.every((e) => typeof e === elem) ? { value: parsed } : undefined;
  }
  const parts = t === '' ? [] : t.split(',').map((p) => p.trim()).filter(Boolean);
  if (base === 'string[]') return { value: parts };
  const numbers = parts.map((p) => (DECIMAL.test(p) ? Number(p) : NaN));
  return numbers.every(Number.isFinite) ? { value: numbers } : undefined;
}

/**
 * The config set by the environment, as an override tree for loadConfig (null when nothing is set). An empty
 * variable counts as unset; a value that is not of the key's type is an error naming the variable.
 * @param {Record<string, any>} defaults DEFAULT_CONFIG
 * @param {Record<string, string | undefined>} [env]
 * @returns {Record<string, any> | null}
 */
export function envOverrides(defaults, env = process.env) {
  const aliasesOf = /** @type {Record<string, string[]>} */ ({});
  for (const [name, key] of Object.entries(ENV_ALIASES)) (aliasesOf[key] ??= []).push(name);
  /** @type {Record<string, any>} */
  const out = {};
  let any = false;
  for (const { key } of configKeys(defaults)) {
    const names = [envName(key), ...(aliasesOf[key] ?? [])].filter((n) => env[n] !== undefined && env[n] !== '');
    if (!names.length) continue;
    const secret = SECRET_KEYS.has(key);
    if (new Set(names.map((n) => env[n])).size > 1) {
      throw errors.CONFIG_INVALID(`environment variables ${names.join(' and ')} both set ${key}, to different values: set one of them`);
    }
    const text = /** @type {string} */ (env[names[0]]);
    const type = envType(key);
    const parsed = coerce(text, type);
    if (!parsed) {
      throw errors.CONFIG_INVALID(`environment variable ${names[0]} (${key}) must be ${describeEnvType(type)}, got ${secret ? 'a value that is not' : JSON.stringify(text)}`);
    }
    const parts = key.split('.');
    let node = out;
    for (const p of parts.slice(0, -1)) node = node[p] ??= {};
    node[parts[parts.length - 1]] = parsed.value;
    any = true;
  }
  return any ? out : null;
}
