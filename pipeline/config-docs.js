// docs/configuration.md, generated from pipeline/config.js: every key with its environment variable, its default
// and its meaning (the key's doc comment in DEFAULT_CONFIG), so the reference cannot drift from the code.
// `npm run docs:config` rewrites it; tests/config-env.test.js fails when the committed file is stale.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_CONFIG } from './config.js';
import { ENV_ALIASES, OTHER_ENV_VARIABLES, SECRET_KEYS, configKeys, describeEnvType, envName, envType } from './config-env.js';

const CONFIG_SOURCE = fileURLToPath(new URL('./config.js', import.meta.url));
export const CONFIG_DOC = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));

/**
 * The doc comment above each key of DEFAULT_CONFIG, by dotted path (a comment above a section describes the
 * section). A small scanner of the object literal: comments, strings, `name:`, braces and brackets.
 * @param {string} source config.js
 * @returns {Map<string, string>}
 */
export function keyComments(source) {
  const start = source.indexOf('export const DEFAULT_CONFIG = Object.freeze(');
  const text = source.slice(source.indexOf('{', start));
  const TOKEN = /\/\*\*([\s\S]*?)\*\/|\/\/[^\n]*|'(?:[^'\\]|\\.)*'|([A-Za-z_$][\w$]*)\s*:|[{}[\]]/g;
  /** @type {Map<string, string>} */
  const out = new Map();
  /** @type {{kind: '{'|'[', path: string}[]} */
  const stack = [];
  let pending = '';
  let lastKey = '';
  for (const m of text.matchAll(TOKEN)) {
    const [tok, comment, key] = m;
    const top = stack[stack.length - 1];
    if (comment !== undefined) {
      if (!/^\s*@type\b/.test(comment)) pending = comment.replace(/^\s*\*\s?/gm, '').replace(/\s+/g, ' ').trim();
    } else if (key !== undefined) {
      if (top?.kind === '{' && stack.every((f) => f.kind === '{')) {
        lastKey = top.path ? `${top.path}.${key}` : key;
        if (pending) out.set(lastKey, pending);
      }
      pending = '';
    } else if (tok === '{' || tok === '[') {
      stack.push({ kind: tok, path: stack.length ? lastKey : '' });
    } else if (tok === '}' || tok === ']') {
      stack.pop();
      if (!stack.length) break;
    }
  }
  return out;
}

/** @param {unknown} v */
const shown = (v) => `\`${JSON.stringify(v)}\``;

/** Markdown table cells hold no pipes or line breaks. @param {string} s */
const cell = (s) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The variables that are not config keys, one line per use: "- `A`, `B`: where things live". */
function otherVariables() {
  /** @type {Map<string, string[]>} */
  const byUse = new Map();
  for (const [name, use] of Object.entries(OTHER_ENV_VARIABLES)) byUse.set(use, [...(byUse.get(use) ?? []), name]);
  return [...byUse].map(([use, names]) => `- ${names.map((n) => `\`${n}\``).join(', ')}: ${use}`);
}

/** The text of docs/configuration.md. */
export function configurationDoc() {
  const comments = keyComments(fs.readFileSync(CONFIG_SOURCE, 'utf8'));
  const aliases = /** @type {Record<string, string[]>} */ ({});
  for (const [name, key] of Object.entries(ENV_ALIASES)) (aliases[key] ??= []).push(name);
  /** Meaning of a key: its own comment, else its section's (the nearest commented parent). @param {string} key */
  const meaning = (key) => {
    for (let parts = key.split('.'); parts.length; parts.pop()) {
      const c = comments.get(parts.join('.'));
      if (c) return parts.length === key.split('.').length ? c : `(${parts.join('.')}) ${c}`;
    }
    return '';
  };
  const rows = configKeys(DEFAULT_CONFIG).map(({ key, value }) => {
    const names = [envName(key), ...(aliases[key] ?? [])].map((n) => `\`${n}\``).join(', ');
    const secret = SECRET_KEYS.has(key) ? '**Secret: set it by environment, keep it out of config files.** ' : '';
    return `| \`${key}\` | ${names} | ${shown(value)} | ${describeEnvType(envType(key, value))} | ${cell(secret + meaning(key))} |`;
  });
  return [
    '# Configuration reference',
    '',
    '<!-- Generated from pipeline/config.js by `npm run docs:config`; tests/config-env.test.js fails when it is stale. -->',
    '',
    'Every key has a default (`pipeline/config.js`). A JSON file (`--config FILE`) overrides the defaults, an',
    'environment variable overrides the file, and a command\'s flags override both. Each key\'s variable is `SCDV_`',
    'and its path in upper snake case (`store.opensearch.nodes` → `SCDV_STORE_OPENSEARCH_NODES`,',
    '`server.apiKeyHashes` → `SCDV_SERVER_API_KEY_HASHES`), read as the default\'s type: numbers in decimal',
    '(`0x10` is refused), booleans `true`/`false`/`1`/`0`, lists as comma-separated values or a JSON array, and',
    '`null` where a key takes null. An empty variable counts as unset. A value of the wrong type stops the command',
    'with `SCDV_CONFIG_INVALID` naming the variable, the key and the expected type; the ranges and choices of each key',
    'are then checked as for a config file. Older names (`SCDV_OPENSEARCH_NODES`, …) keep working beside the derived',
    'ones; setting both to different values is an error.',
    '',
    'Other variables, not config keys (any other `SCDV_` variable is reported when a command starts, with the closest',
    'known name: a misspelt setting is not ignored silently):',
    '',
    '- `REDIS_URL`: the Redis of the queues (a private one is started when unset)',
    ...otherVariables(),
    '',
    '| key | environment variable | default | type from the environment | meaning |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  fs.writeFileSync(CONFIG_DOC, configurationDoc());
  process.stdout.write(`wrote ${path.relative(process.cwd(), CONFIG_DOC)}\n`);
}
