// The configuration schema (pipeline/config/schema.js) is what loadConfig enforces: for every key, a value of the
// wrong type, one out of its range, one that is not a choice, and a list item that breaks its rule are refused
// with SCDV_CONFIG_INVALID naming the key by its dotted path, the key's rule in words and the value (a secret's
// never); the rules between keys each have their own message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_CONFIG, loadConfig } from '../pipeline/config.js';
import { CONFIG_SCHEMA, schemaKeys } from '../pipeline/config/schema.js';
import { describeRule, typesOf } from '../pipeline/config/describe.js';
import { RULES } from '../pipeline/config/rules.js';

/** @typedef {import('../pipeline/config/schema/section.js').KeySchema} KeySchema */

/**
 * An override tree that sets `key` to `value`.
 * @param {string} key
 * @param {unknown} value
 */
const setting = (key, value) => key.split('.').reduceRight((/** @type {any} */ v, part) => ({ [part]: v }), value);

/**
 * Bad values of a schema, each with what it breaks.
 * @param {KeySchema} s
 * @returns {[string, unknown][]}
 */
function badValues(s) {
  const types = typesOf(s);
  /** @type {[string, unknown][]} */
  const out = [];
  const base = types.find((t) => t !== 'null');
  out.push(['wrong type', base === 'string' ? 5 : base === 'boolean' ? 'yes' : base === 'array' ? 'a,b' : 'ten']);
  if (s.enum) out.push(['not a choice', 'not-a-choice']);
  if (s.exclusiveMinimum !== undefined) out.push(['at the excluded minimum', s.exclusiveMinimum]);
  if (s.minimum !== undefined) out.push(['below the minimum', s.minimum - 1]);
  if (s.maximum !== undefined) out.push(['above the maximum', s.maximum + 1]);
  if (base === 'integer') out.push(['not a whole number', (s.minimum ?? s.exclusiveMinimum ?? 0) + 1.5]);
  if (s.pattern) out.push(['not matching the pattern', 'no such thing']);
  if (s.minLength) out.push(['empty', '']);
  if (base === 'number' && s.minimum === undefined && s.exclusiveMinimum === undefined) out.push(['not finite', Infinity]);
  return out;
}

/**
 * Asserts that setting `key` to `value` is refused naming `path` and the rule of `schema`.
 * @param {string} key
 * @param {unknown} value
 * @param {string} path the dotted path the message must name (a list item: key[0])
 * @param {KeySchema} schema
 * @param {string} what
 */
function assertRefused(key, value, path, schema, what) {
  assert.throws(() => loadConfig({ overrides: setting(key, value) }), (/** @type {any} */ err) => {
    assert.equal(err.code, 'SCDV_CONFIG_INVALID', `${key} ${what}: ${err.message}`);
    const rule = describeRule(schema);
    assert.ok(err.message.startsWith(`invalid configuration: ${path} must be ${rule}`), `${key} ${what} (${JSON.stringify(value)}): ${err.message}, not the rule "${rule}"`);
    if (schema.secret || schema.hideValue) assert.doesNotMatch(err.message, /got/, `${key} is not echoed`);
    else assert.ok(err.message.includes(', got '), `${key} ${what}: the value is named in ${err.message}`);
    return true;
  }, `${key} ${what}`);
}

test('every key refuses a bad value of each kind, naming the key, its rule and the value', () => {
  const keys = schemaKeys();
  assert.ok(keys.length > 150, `only ${keys.length} keys`);
  let cases = 0;
  for (const { key, schema } of keys) {
    for (const [what, value] of badValues(schema)) {
      assertRefused(key, value, key, schema, what);
      cases++;
    }
    if (schema.items) {
      if (schema.minItems) { assertRefused(key, [], key, schema, 'too few items'); cases++; }
      if (schema.maxItems) { assertRefused(key, Array(schema.maxItems + 1).fill(schema.default[0]), key, schema, 'too many items'); cases++; }
      for (const [what, value] of badValues(schema.items)) {
        assertRefused(key, [value], `${key}[0]`, schema.items, `item ${what}`);
        cases++;
      }
    }
  }
  assert.ok(cases > 400, `only ${cases} cases`);
});

test('the rules words say: bounds, choices, null and notes', () => {
  const at = (/** @type {string} */ key) => /** @type {KeySchema} */ (schemaKeys().find((k) => k.key === key)?.schema);
  assert.equal(describeRule(at('train.word2vec.vector_size')), 'a whole number from 1 to 1000');
  assert.equal(describeRule(at('train.gmm.n_components')), 'a whole number from 1 to 1000, or null (null: √(N/2) for N training documents, rounded, from 2 to 60)');
  assert.equal(describeRule(at('tokenize.shardSize')), 'a positive integer');
  assert.equal(describeRule(at('train.topics.keep_fraction')), 'a number above 0 and at most 1, or null');
  assert.equal(describeRule(at('store.backend')), 'native or opensearch');
  assert.equal(describeRule(at('train.gmm.covariance_type')), 'one of tied, diag, full');
  assert.equal(describeRule(at('server.keyFailures.windowS')), 'a whole number from 1 to 1000000000 (seconds)');
  assert.equal(describeRule(at('store.opensearch.compression')), 'a boolean');
});

test('the fields of an arm: unknown and missing ones are named; a section given as something else is refused', () => {
  const arms = (/** @type {unknown} */ a) => () => loadConfig({ overrides: { experiments: { arms: [a] } } });
  assert.throws(arms({ name: 'a', method: 'scdv', weight: 1, share: 2 }), /unknown key experiments\.arms\[0\]\.share \(known: name, method, weight\)/);
  assert.throws(arms({ name: 'a', method: 'scdv' }), /experiments\.arms\[0\]\.weight is missing: it must be a number above 0/);
  assert.throws(arms({ name: 'no spaces', method: 'scdv', weight: 1 }), /experiments\.arms\[0\]\.name must be 1-32 letters/);
  assert.throws(() => loadConfig({ overrides: { server: { writePace: 5 } } }), /server\.writePace must be an object \{sliceUs, share, budgetMs\}, got 5/);
  assert.throws(() => loadConfig({ overrides: { server: { embedWorkers: 1 } } }), /unknown key server\.embedWorkers \(renamed to server\.indexWorkers\)/);
  assert.throws(() => loadConfig({ overrides: JSON.parse('{"__proto__": {"x": 1}}') }), /unknown key __proto__/);
});

test('each rule between keys has its message', () => {
  const broken = /** @type {Record<string, [object, RegExp | {code: string}]>} */ ({
    'the headers arrive within the request time': [{ server: { requestTimeoutMs: 1000, headersTimeoutMs: 2000 } }, /server\.headersTimeoutMs \(2000\) must not exceed server\.requestTimeoutMs \(1000\)/],
    'the default k is an allowed k': [{ server: { maxK: 50, defaultK: 60 } }, /server\.defaultK \(60\) must not exceed server\.maxK \(50\)/],
    'the candidates bounds are in order': [{ store: { opensearch: { candidates: { min: 500, max: 400 } } } }, /store\.opensearch\.candidates\.max \(400\) must not be below store\.opensearch\.candidates\.min \(500\)/],
    'a user name comes with a password': [{ store: { opensearch: { username: 'u' } } }, /store\.opensearch\.username is set without a password/],
    'arm names are distinct': [{ experiments: { arms: [{ name: 'a', method: 'scdv', weight: 1 }, { name: 'a', method: 'hybrid', weight: 1 }] } }, /experiments\.arms\[1\]\.name "a" is used twice/],
    'server.model is a model name': [{ server: { model: '../etc' } }, { code: 'SCDV_MODEL_NAME_INVALID' }],
    'brand-safety collections are named once': [{ server: { brandSafety: { collections: [{ collection: 'a' }, { collection: 'a' }] } } }, /server\.brandSafety\.collections\[1\]\.collection names a a second time/],
  });
  assert.deepEqual(RULES.map((r) => r.name).sort(), Object.keys(broken).sort(), 'every rule is tested here');
  for (const [name, [overrides, expected]] of Object.entries(broken)) assert.throws(() => loadConfig({ overrides }), expected, name);
  assert.ok(loadConfig(), 'the defaults keep every rule');
});

test('the defaults are what the schema says, and match it', () => {
  for (const { key, schema } of schemaKeys()) {
    const v = key.split('.').reduce((/** @type {any} */ n, p) => n[p], DEFAULT_CONFIG);
    assert.deepEqual(v, schema.default, key);
    assert.ok(typeof schema.description === 'string' && schema.description.length > 3, `${key} has a description`);
    assert.ok(!/\b(session \d+|issue \d|before 20\d\d|since 20\d\d|20\d\d-\d\d-\d\d)\b/i.test(`${schema.description} ${schema.why ?? ''}`), `${key}: no history in its description`);
  }
  assert.equal(CONFIG_SCHEMA.additionalProperties, false);
});

test('the store engine\'s options are checked against their schema too, naming the option and its rule', async () => {
  const fs = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const { openStore } = await import('../pipeline/store/store.js');
  const { ENGINE_SCHEMA } = await import('../pipeline/config/schema.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-engine-options-'));
  try {
    let cases = 0;
    for (const { key, schema } of schemaKeys(ENGINE_SCHEMA)) {
      if (!typesOf(schema).some((t) => t === 'integer' || t === 'number')) continue;
      for (const [what, value] of badValues(schema)) {
        assert.throws(() => openStore(dir, { [key]: value }), (/** @type {any} */ err) => err.code === 'SCDV_STORE_OPTION_INVALID' &&
          err.message.includes(`openStore.${key}: must be ${describeRule(schema)}, got `), `${key} ${what}`);
        cases++;
      }
    }
    assert.ok(cases > 20, `only ${cases} cases`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the generated validator and the schema compiled now give the same answers', async () => {
  const { compileSchema } = await import('../pipeline/config/validate.js');
  const generated = (await import('node:module')).createRequire(import.meta.url)('../pipeline/config/validator.generated.cjs');
  const now = compileSchema();
  const defaults = structuredClone(DEFAULT_CONFIG);
  assert.equal(generated(defaults), true);
  assert.equal(now(defaults), true);
  for (const { key, schema } of schemaKeys()) {
    for (const [, value] of badValues(schema)) {
      const cfg = structuredClone(DEFAULT_CONFIG);
      const parts = key.split('.');
      parts.slice(0, -1).reduce((/** @type {any} */ n, p) => n[p], cfg)[parts[parts.length - 1]] = value;
      assert.equal(generated(cfg), false, key);
      assert.equal(now(cfg), false, key);
      assert.deepEqual(generated.errors, now.errors, key);
    }
  }
});
