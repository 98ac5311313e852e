// scdv key hash: the digest server.apiKeyHashes holds for an API key (servers keep digests, never keys), so that
// configuring a key needs no other tool. The key comes from the argument or, better (not in the shell's history
// nor in `ps`), from stdin.
import fs from 'node:fs';
import { errors } from '../errors.js';
import { keyDigest } from '../api-keys.js';
import { opt } from './define.js';

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: 'API keys: servers hold their SHA-256 digests in server.apiKeyHashes, never the keys.',
  subcommands: {
    hash: {
      summary: 'print the server.apiKeyHashes digest of a key (from the argument, or stdin)',
      arguments: [['[key]', 'the key (default: read from stdin, so that it stays out of the shell history)']],
      options: [opt('--json', 'as the config fragment {"server": {"apiKeyHashes": ["…"]}}')],
      examples: ['scdv key hash demo-key --json', 'printf %s "$MY_KEY" | scdv key hash'],
      run: hash,
    },
  },
  examples: ['scdv key hash demo-key', 'printf %s "$MY_KEY" | scdv key hash'],
};

/**
 * @param {Record<string, any>} values
 * @param {string[]} positionals
 */
async function hash(values, positionals) {
  if (positionals.length > 1) throw errors.USAGE(`scdv key hash takes one key, got ${positionals.length} arguments`);
  let key = positionals[0];
  if (key === undefined) {
    if (process.stdin.isTTY) process.stderr.write('key (then Enter, or Ctrl-D): ');
    key = fs.readFileSync(0, 'utf8').replace(/\r?\n$/, '');
  }
  if (!key) throw errors.USAGE('scdv key hash needs a key: as its argument, or on stdin');
  const digest = keyDigest(key);
  process.stdout.write(values.json ? `${JSON.stringify({ server: { apiKeyHashes: [digest] } })}\n` : `${digest}\n`);
  if (!values.json) process.stderr.write('add it to server.apiKeyHashes (config file, or SCDV_SERVER_API_KEY_HASHES) and restart the server\n');
}
