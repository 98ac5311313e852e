// docs/configuration.md, the Config type (pipeline/config/types.d.ts) and the validator
// (pipeline/config/validator.generated.cjs), generated from the schema
// (schema.js): every key with its environment variable, default, rule, meaning and the why of its default, so
// none can drift from the code. `npm run docs:config` rewrites them; tests/config-env.test.js fails when
// the committed files are stale.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_CONFIG } from '../config.js';
import { CLI_SCHEMA, CONFIG_SCHEMA, ENGINE_SCHEMA, defaultsOf, isSection, schemaKeys } from './schema.js';
import { describeRule, typesOf } from './describe.js';
import { validatorSource } from './validate.js';
import { ENV_ALIASES, OTHER_ENV_VARIABLES, SECRET_KEYS, configKeys, describeEnvType, envName, envType } from './env.js';

export const CONFIG_DOC = fileURLToPath(new URL('../../docs/configuration.md', import.meta.url));
export const CONFIG_TYPES = fileURLToPath(new URL('./types.d.ts', import.meta.url));
export const CONFIG_VALIDATOR = fileURLToPath(new URL('./validator.generated.cjs', import.meta.url));

/** @typedef {import('./schema/section.js').KeySchema} KeySchema */

/** @param {unknown} v */
const shown = (v) => `\`${JSON.stringify(v)}\``;

/** Markdown table cells hold no pipes or line breaks. @param {string} s */
const cell = (s) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** A key's meaning: its description and the why of its default. @param {KeySchema} s */
const meaning = (s) => `${s.description ?? ''}${s.why ? ` Why this default: ${s.why}` : ''}`;

/** The variables that are not config keys, one line per use: "- `A`, `B`: where things live". */
function otherVariables() {
  /** @type {Map<string, string[]>} */
  const byUse = new Map();
  for (const [name, use] of Object.entries(OTHER_ENV_VARIABLES)) byUse.set(use, [...(byUse.get(use) ?? []), name]);
  return [...byUse].map(([use, names]) => `- ${names.map((n) => `\`${n}\``).join(', ')}: ${use}`);
}

/**
 * The sub-sections of a section with their descriptions, as list lines ("- `embed.hybrid`: …").
 * @param {KeySchema} s
 * @param {string} prefix
 * @returns {string[]}
 */
function subsections(s, prefix) {
  return Object.entries(/** @type {Record<string, KeySchema>} */ (s.properties)).filter(([, v]) => isSection(v))
    .flatMap(([k, v]) => [`- \`${prefix}.${k}\`: ${meaning(v)}`, ...subsections(v, `${prefix}.${k}`)]);
}

/** The text of docs/configuration.md. */
export function configurationDoc() {
  const aliases = /** @type {Record<string, string[]>} */ ({});
  for (const [name, key] of Object.entries(ENV_ALIASES)) (aliases[key] ??= []).push(name);
  const defaults = new Map(configKeys(DEFAULT_CONFIG).map(({ key, value }) => [key, value]));
  const sections = Object.entries(/** @type {Record<string, KeySchema>} */ (CONFIG_SCHEMA.properties)).flatMap(([name, s]) => [
    `## \`${name}\``,
    '',
    meaning(s),
    ...(subsections(s, name).length ? ['', ...subsections(s, name)] : []),
    '',
    '| key | environment variable | default | allowed | from the environment | meaning |',
    '| --- | --- | --- | --- | --- | --- |',
    ...schemaKeys(s, name).map(({ key, schema }) => {
      const names = [envName(key), ...(aliases[key] ?? [])].map((n) => `\`${n}\``).join(', ');
      const secret = SECRET_KEYS.has(key) ? '**Secret: set it by environment, keep it out of config files.** ' : '';
      return `| \`${key}\` | ${names} | ${shown(defaults.get(key))} | ${cell(describeRule(schema))} | ${describeEnvType(envType(key))} | ${cell(secret + meaning(schema))} |`;
    }),
    '',
  ]);
  /** @param {KeySchema} schema @param {string} what */
  const table = (schema, what) => [
    `| ${what} | default | allowed | meaning |`, '| --- | --- | --- | --- |',
    ...schemaKeys(schema).map(({ key, schema: s }) => `| \`${key}\` | ${shown(defaultsOf(s))} | ${cell(describeRule(s))} | ${cell(meaning(s))} |`),
  ];
  return [
    '# Configuration reference',
    '',
    '<!-- Generated from pipeline/config/schema.js by `npm run docs:config`; tests/config-env.test.js fails when it is stale. -->',
    '',
    'Every key has a default (the schema, `pipeline/config/schema.js`). A JSON file (`--config FILE`) overrides the',
    'defaults, an environment variable overrides the file, and a command\'s flags override both. Each key\'s variable is',
    '`SCDV_` and its path in upper snake case (`store.opensearch.nodes` → `SCDV_STORE_OPENSEARCH_NODES`,',
    '`server.apiKeyHashes` → `SCDV_SERVER_API_KEY_HASHES`), read as the key\'s type: numbers in decimal',
    '(`0x10` is refused), booleans `true`/`false`/`1`/`0`, lists as comma-separated values or a JSON array, and',
    '`null` where a key takes null. An empty variable counts as unset. A value of the wrong type stops the command',
    'with `SCDV_CONFIG_INVALID` naming the variable, the key and the expected type; every value is then checked',
    'against its rule (the "allowed" column) as for a config file, and an error names the key, the rule and the',
    'value. Older names (`SCDV_OPENSEARCH_NODES`, …) keep working beside the derived ones; setting both to',
    'different values is an error.',
    '',
    'Other variables, not config keys (any other `SCDV_` variable is reported when a command starts, with the closest',
    'known name: a misspelt setting is not ignored silently):',
    '',
    '- `REDIS_URL`: the Redis of the queues (a private one is started when unset)',
    ...otherVariables(),
    '',
    ...sections,
    '## Store engine options',
    '',
    `${meaning(ENGINE_SCHEMA)} Not config keys: their defaults are listed here with the config's.`,
    '',
    ...table(ENGINE_SCHEMA, 'option'),
    '',
    '## Command-line flag defaults',
    '',
    `${meaning(CLI_SCHEMA)} Each command's \`--help\` shows them.`,
    '',
    ...table(CLI_SCHEMA, 'default of'),
    '',
  ].join('\n');
}

/**
 * The TypeScript type of a schema.
 * @param {KeySchema} s
 * @param {string} indent
 * @returns {string}
 */
function tsOf(s, indent) {
  if (s.tsType) return s.tsType;
  if (s.enum) return s.enum.map((/** @type {unknown} */ v) => JSON.stringify(v).replace(/"/g, "'")).join(' | ');
  if (s.type === 'object' && s.properties) {
    const inner = `${indent}  `;
    const lines = Object.entries(/** @type {Record<string, KeySchema>} */ (s.properties)).map(([k, v]) => {
      const doc = v.description ? `${inner}/** ${v.description.replace(/\*\//g, '*\\/')} */\n` : '';
      return `${doc}${inner}${k}: ${tsOf(v, inner)};`;
    });
    return `{\n${lines.join('\n')}\n${indent}}`;
  }
  const parts = typesOf(s).map((t) => {
    if (t === 'integer' || t === 'number') return 'number';
    if (t === 'array') {
      const item = s.items ? tsOf(s.items, indent) : 'unknown';
      return /[|{]/.test(item) && !item.startsWith('{') ? `(${item})[]` : `${item}[]`;
    }
    return t;
  });
  return parts.join(' | ');
}

/** The text of pipeline/config/types.d.ts. */
export function configTypes() {
  return [
    '// Generated from pipeline/config/schema.js by `npm run docs:config`; tests/config-env.test.js fails when it is stale.',
    '',
    '/** The loaded configuration (pipeline/config.js loadConfig). */',
    `export type Config = ${tsOf(CONFIG_SCHEMA, '')};`,
    '',
    '/** Options of the native store engine (pipeline/store/engine-state.js DEFAULT_ENGINE_OPTIONS). */',
    `export type EngineOptions = ${tsOf(ENGINE_SCHEMA, '')};`,
    '',
    '/** Defaults of command-line flags that are not config keys (pipeline/config.js CLI_DEFAULTS). */',
    `export type CliDefaults = ${tsOf(CLI_SCHEMA, '')};`,
    '',
  ].join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  fs.writeFileSync(CONFIG_DOC, configurationDoc());
  fs.writeFileSync(CONFIG_TYPES, configTypes());
  fs.writeFileSync(CONFIG_VALIDATOR, validatorSource());
  for (const f of [CONFIG_DOC, CONFIG_TYPES, CONFIG_VALIDATOR]) process.stdout.write(`wrote ${path.relative(process.cwd(), f)}\n`);
}
