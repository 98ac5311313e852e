// Every config key from an SCDV_… environment variable: derived names, coercion by type, errors naming the
// variable, the old names, and docs/configuration.md kept in step with the defaults.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { DEFAULT_CONFIG, loadConfig } from '../pipeline/config.js';
import path from 'node:path';
import { ENV_ALIASES, OTHER_ENV_VARIABLES, configKeys, envName, envOverrides, envType, unknownEnvVariables } from '../pipeline/config/env.js';
import { CONFIG_DOC, CONFIG_TYPES, CONFIG_VALIDATOR, configTypes, configurationDoc } from '../pipeline/config/docs.js';
import { validatorSource } from '../pipeline/config/validate.js';

/**
 * Run `fn` with these variables set (and every SCDV_ config variable of the test cleared), then restore.
 * @param {Record<string, string>} vars
 * @param {() => void} fn
 */
function withEnv(vars, fn) {
  const saved = { ...process.env };
  try {
    Object.assign(process.env, vars);
    fn();
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
}

/** @param {unknown} v the text a user would write for this value */
const asText = (v) => (v === null ? 'null' : typeof v === 'object' ? JSON.stringify(v) : String(v));

test('names are the key path in upper snake case', () => {
  assert.equal(envName('store.opensearch.nodes'), 'SCDV_STORE_OPENSEARCH_NODES');
  assert.equal(envName('server.apiKeyHashes'), 'SCDV_SERVER_API_KEY_HASHES');
  assert.equal(envName('train.word2vec.vector_size'), 'SCDV_TRAIN_WORD2VEC_VECTOR_SIZE');
  assert.equal(envName('store.opensearch.candidates.perK'), 'SCDV_STORE_OPENSEARCH_CANDIDATES_PER_K');
  const names = configKeys(DEFAULT_CONFIG).map((k) => envName(k.key));
  assert.equal(new Set(names).size, names.length, 'two keys share a variable name');
});

test('every key of the defaults is settable from its variable: each default, written as text, reads back equal', () => {
  const keys = configKeys(DEFAULT_CONFIG);
  assert.ok(keys.length > 100, `only ${keys.length} keys found`);
  for (const { key, value } of keys) {
    const tree = envOverrides(DEFAULT_CONFIG, { [envName(key)]: asText(value) });
    const got = key.split('.').reduce((/** @type {any} */ n, p) => n?.[p], tree);
    assert.deepEqual(got, value, `${envName(key)}=${asText(value)}`);
  }
});

test('every key\'s variable is read as a type of the schema, also where the default (null, []) does not tell it', () => {
  const KINDS = /^(number|boolean|string|string\[\]|number\[\]|json:string\[\]|json)(\|null)?$/;
  const odd = configKeys(DEFAULT_CONFIG).map(({ key }) => `${key}: ${envType(key)}`).filter((t) => !KINDS.test(t.split(': ')[1]));
  assert.deepEqual(odd, []);
  assert.equal(envType('server.model'), 'string|null');
  assert.equal(envType('server.corsOrigins'), 'string[]');
  assert.equal(envType('tokenizer.dropPos'), 'json:string[]');
  assert.equal(envType('embed.keepCount'), 'number|null');
});

test('values are coerced by the default\'s type and reach the loaded config, between the file and the flags', () => {
  withEnv({
    SCDV_SERVER_PORT: '9001', SCDV_SERVER_OPEN_READS: 'false', SCDV_SERVER_TRUST_PROXY: '1', SCDV_EMBED_HYBRID_ALPHA: '0.35',
    SCDV_SERVER_CORS_ORIGINS: 'https://a.example, https://b.example', SCDV_TOKENIZER_STOPWORDS_EXTRA: '["a,b","c"]',
    SCDV_TOKENIZER_DROP_POS: '["名詞,数"]', SCDV_EMBED_KEEP_COUNT: '40', SCDV_TRAIN_TOPICS_KEEP_FRACTION: 'null',
    SCDV_SERVER_MODEL: 'news', SCDV_STORE_OPENSEARCH_CANDIDATES_PER_K: '4',
    SCDV_EXPERIMENTS_ARMS: '[{"name":"a","method":"hybrid","weight":1},{"name":"b","method":"scdv","weight":1}]',
    SCDV_TOKENIZE_WORKERS: '',
  }, () => {
    const c = loadConfig({ overrides: { server: { port: 9002 } } });
    assert.equal(c.server.port, 9002, 'flags override the environment');
    assert.equal(loadConfig().server.port, 9001);
    assert.equal(c.server.openReads, false);
    assert.equal(c.server.trustProxy, true);
    assert.equal(c.embed.hybrid.alpha, 0.35);
    assert.deepEqual(c.server.corsOrigins, ['https://a.example', 'https://b.example']);
    assert.deepEqual(c.tokenizer.stopwords.extra, ['a,b', 'c']);
    assert.deepEqual(c.tokenizer.dropPos, ['名詞,数']);
    assert.equal(c.embed.keepCount, 40);
    assert.equal(c.train.topics.keep_fraction, null);
    assert.equal(c.server.model, 'news');
    assert.equal(c.store.opensearch.candidates.perK, 4);
    assert.equal(c.store.opensearch.candidates.min, DEFAULT_CONFIG.store.opensearch.candidates.min);
    assert.deepEqual(c.experiments.arms.map((a) => a.name), ['a', 'b']);
    assert.equal(c.tokenize.workers, DEFAULT_CONFIG.tokenize.workers, 'an empty variable counts as unset');
  });
});

test('a value of the wrong type is refused, naming the variable, the key and the type', () => {
  const cases = /** @type {[Record<string, string>, RegExp][]} */ ([
    [{ SCDV_SERVER_PORT: 'eighty' }, /SCDV_SERVER_PORT \(server\.port\) must be a number, got "eighty"/],
    [{ SCDV_SERVER_PORT: '0x10' }, /SCDV_SERVER_PORT .* must be a number/],
    [{ SCDV_SERVER_OPEN_READS: 'yes please' }, /SCDV_SERVER_OPEN_READS \(server\.openReads\) must be true or false/],
    [{ SCDV_TOKENIZER_DROP_POS: '名詞,数' }, /SCDV_TOKENIZER_DROP_POS .* must be a JSON array of strings/],
    [{ SCDV_STORE_OPENSEARCH_NODES: '[1, 2]' }, /SCDV_STORE_OPENSEARCH_NODES .* must be values separated by commas, or a JSON array/],
    [{ SCDV_SERVER_CORS_ORIGINS: '["https://a.example"' }, /SCDV_SERVER_CORS_ORIGINS .* must be values separated by commas, or a JSON array/],
    [{ SCDV_EMBED_KEEP_COUNT: 'many' }, /SCDV_EMBED_KEEP_COUNT \(embed\.keepCount\) must be a number, or null/],
    [{ SCDV_EXPERIMENTS_ARMS: 'hybrid' }, /SCDV_EXPERIMENTS_ARMS .* must be a JSON array/],
    // The type is right, the value outside its range: the config's own check names the key.
    [{ SCDV_SERVER_PORT: '70000' }, /server\.port must be a whole number from 0 to 65535 \(0: any free port\), got 70000/],
    [{ SCDV_SERVER_LOG_LEVEL: 'loud' }, /server\.logLevel must be/],
  ]);
  for (const [vars, message] of cases) {
    withEnv(vars, () => assert.throws(() => loadConfig(), (err) => /** @type {any} */ (err).code === 'SCDV_CONFIG_INVALID' &&
      message.test(/** @type {Error} */ (err).message), `${JSON.stringify(vars)}: ${message}`));
  }
});

test('the old variable names keep working; an old and a new name that disagree are an error; secrets are not echoed', () => {
  for (const [name, key] of Object.entries(ENV_ALIASES)) assert.notEqual(name, envName(key), `${name} is no alias`);
  withEnv({ SCDV_OPENSEARCH_NODES: 'http://a:9200,http://b:9200', SCDV_OPENSEARCH_INDEX_PREFIX: 'prod-' }, () => {
    const c = loadConfig();
    assert.deepEqual(c.store.opensearch.nodes, ['http://a:9200', 'http://b:9200']);
    assert.equal(c.store.opensearch.indexPrefix, 'prod-');
  });
  withEnv({ SCDV_OPENSEARCH_INDEX_PREFIX: 'prod-', SCDV_STORE_OPENSEARCH_INDEX_PREFIX: 'prod-' }, () => assert.equal(loadConfig().store.opensearch.indexPrefix, 'prod-'));
  withEnv({ SCDV_OPENSEARCH_INDEX_PREFIX: 'a-', SCDV_STORE_OPENSEARCH_INDEX_PREFIX: 'b-' }, () => assert.throws(() => loadConfig(),
    /SCDV_STORE_OPENSEARCH_INDEX_PREFIX and SCDV_OPENSEARCH_INDEX_PREFIX both set store\.opensearch\.indexPrefix/));
  withEnv({ SCDV_OPENSEARCH_PASSWORD: 'hunter2', SCDV_STORE_OPENSEARCH_PASSWORD: 'hunter3' }, () => assert.throws(() => loadConfig(),
    (err) => !/hunter/.test(/** @type {Error} */ (err).message)));
});

test('docs/configuration.md lists every key with its variable and default; it, the Config type and the validator are what the generator writes now', () => {
  const doc = fs.readFileSync(CONFIG_DOC, 'utf8');
  const missing = configKeys(DEFAULT_CONFIG).filter(({ key }) => !doc.includes(`| \`${key}\` | \`${envName(key)}\``)).map((k) => k.key);
  assert.deepEqual(missing, [], 'keys missing from docs/configuration.md: run npm run docs:config');
  assert.equal(doc, configurationDoc(), 'docs/configuration.md is stale: run npm run docs:config');
  assert.equal(fs.readFileSync(CONFIG_TYPES, 'utf8'), configTypes(), 'pipeline/config/types.d.ts is stale: run npm run docs:config');
  assert.equal(fs.readFileSync(CONFIG_VALIDATOR, 'utf8'), validatorSource(), 'pipeline/config/validator.generated.cjs is stale: run npm run docs:config');
  for (const name of Object.keys(ENV_ALIASES)) assert.ok(doc.includes(`\`${name}\``), name);
});

test('an SCDV_ variable nothing reads is reported once, with the closest known name; known ones are not', async () => {
  const env = { SCDV_SERVER_PORTT: '9', SCDV_MODEL_DIR: '/x', SCDV_COMPLETELY_DIFFERENT_THING: '1', SCDV_SERVER_PORT: '8081', SCDV_DATA_DIR: '/d', SCDV_OPENSEARCH_NODES: 'http://a:9200', PATH: '/bin' };
  assert.deepEqual(unknownEnvVariables(DEFAULT_CONFIG, env), [
    { name: 'SCDV_COMPLETELY_DIFFERENT_THING', suggestion: null },
    { name: 'SCDV_MODEL_DIR', suggestion: 'SCDV_MODELS_DIR' },
    { name: 'SCDV_SERVER_PORTT', suggestion: 'SCDV_SERVER_PORT' },
  ]);
  /** @type {string[]} */
  const warnings = [];
  const onWarning = (/** @type {Error} */ w) => { if (w.name === 'ScdvConfigWarning') warnings.push(w.message); };
  process.on('warning', onWarning);
  try {
    withEnv({ SCDV_SERVER_PORTT: '9' }, () => { loadConfig(); loadConfig(); });
    await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
  } finally {
    process.off('warning', onWarning);
  }
  assert.deepEqual(warnings, ['environment variable SCDV_SERVER_PORTT is not a setting and is ignored (did you mean SCDV_SERVER_PORT?); the settings: docs/configuration.md']);
});

test('every SCDV_ variable the sources read is a config key\'s, an old name, or listed in OTHER_ENV_VARIABLES', () => {
  const known = new Set([...configKeys(DEFAULT_CONFIG).map(({ key }) => envName(key)), ...Object.keys(ENV_ALIASES), ...Object.keys(OTHER_ENV_VARIABLES)]);
  // reads of the environment: process.env.X, env.X, env['X'], fromEnv('X'), os.environ.get("X"), os.environ["X"], $X / ${X}
  const READS = /(?:env\.|env\[['"]|fromEnv\(['"]|environ\.get\(['"]|environ\[['"]|\$\{?)(SCDV_[A-Z0-9_]+)/g;
  /** @type {Set<string>} */
  const read = new Set();
  const walk = (/** @type {string} */ dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) { if (!['node_modules', 'build', '.venv', '__pycache__', 'fixtures'].includes(e.name)) walk(p); continue; }
      if (!/\.(js|mjs|py|sh)$/.test(e.name) && e.name !== 'run') continue;
      for (const m of fs.readFileSync(p, 'utf8').matchAll(READS)) read.add(m[1]);
    }
  };
  for (const dir of ['pipeline', 'server', 'workers', 'tests', '.ci']) walk(dir);
  assert.ok(read.has('SCDV_MODELS_DIR') && read.has('SCDV_FAULT_TRAIN_EXIT'), 'the scan finds the reads it is meant to');
  assert.deepEqual([...read].filter((n) => !known.has(n)).sort(), []);
  assert.deepEqual(Object.keys(OTHER_ENV_VARIABLES).filter((n) => !read.has(n)).sort(), [], 'listed variables that nothing reads');
});
