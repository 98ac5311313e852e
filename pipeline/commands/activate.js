// scdv activate: switch the model a server serves. By default it asks the running server (POST
// /v1/models/NAME/activate, the admin key from --key or SCDV_API_KEY) and prints its answer; a refusal prints the
// rule and the commands that satisfy it. `--server local` applies the same rule without a server and records
// the activation for the next `scdv serve` (and for running servers, which follow the record).
import { ScdvError, errors } from '../errors.js';
import { configFromFlags } from './common.js';
import { CONFIG_OPTION, opt } from './define.js';

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: 'Switch the served model. The rule: an activation keeps every collection with documents the active ' +
    'model serves, unless --collections names the ones to serve (the others stop being served). A refusal ' +
    'prints the exact `scdv index` commands that satisfy the rule.',
  options: [
    opt('--model <name>', 'the model to serve (models/NAME/) (required)'),
    opt('--collections <list>', 'serve exactly these collections, comma-separated (default: every one the active model serves)'),
    opt('--server <url>', 'the running server to ask, or "local": no server, record the activation for the next start ' +
      '(default: http://HOST:PORT from config server.host, server.port)'),
    opt('--key <key>', 'the API key for the activate route (default: $SCDV_API_KEY)'),
    opt('--json', "print the server's answer as JSON"),
    CONFIG_OPTION,
  ],
  examples: [
    'SCDV_API_KEY=demo-key scdv activate --model mine',
    'scdv activate --model mine --collections articles --key demo-key',
    'scdv activate --model mine --server local',
  ],
  run,
};

/** @param {Record<string, any>} values */
async function run(values) {
  if (!values.model) throw errors.USAGE('scdv activate needs --model NAME');
  const collections = values.collections === undefined ? undefined
    : String(values.collections).split(',').map((c) => c.trim()).filter(Boolean);
  if (collections && !collections.length) throw errors.USAGE('--collections needs at least one collection name');
  const config = configFromFlags(values);
  const next = { model: values.model, collections };
  let answer;
  if (values.server === 'local') {
    const { activateRecorded } = await import('../serving/index.js');
    answer = await activateRecorded(values.model, config, { collections }).catch((err) => { throw withCliHints(err, next); });
  } else {
    const host = ['0.0.0.0', '::'].includes(config.server.host) ? '127.0.0.1' : config.server.host;
    answer = await activateOnServer(values.server ?? `http://${host.includes(':') ? `[${host}]` : host}:${config.server.port}`,
      next, values.key ?? process.env.SCDV_API_KEY);
  }
  if (values.json) {
    process.stdout.write(`${JSON.stringify(answer)}\n`);
    return;
  }
  const where = values.server === 'local' ? ' (recorded; servers follow it, the next `scdv serve` starts with it)' : '';
  process.stdout.write(`${answer.changed ? 'activated' : 'already active:'} ${answer.active}` +
    `${answer.previous ? ` (previous: ${answer.previous})` : ''}${where}\n` +
    (answer.unserved?.length ? `no longer served: ${answer.unserved.join(', ')} (requests to them answer 404)\n` : ''));
}

/**
 * POST the activation to a running server; its error answers become errors with the same code and message.
 * @param {string} base e.g. http://127.0.0.1:8080
 * @param {{model: string, collections?: string[]}} next
 * @param {string | undefined} key
 */
async function activateOnServer(base, next, key) {
  let url;
  try {
    url = new URL(`/v1/models/${encodeURIComponent(next.model)}/activate`, base);
  } catch {
    throw errors.USAGE(`--server must be a URL such as http://127.0.0.1:8080, or "local"; got "${base}"`);
  }
  let res;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(next.collections ? { 'content-type': 'application/json' } : {}) },
      ...(next.collections ? { body: JSON.stringify({ collections: next.collections }) } : {}),
    });
  } catch (err) {
    const cause = /** @type {any} */ (err).cause;
    throw errors.SERVER_UNREACHABLE(url.origin, cause?.code ?? cause?.message ?? /** @type {Error} */ (err).message).because(err);
  }
  const text = await res.text();
  let body;
  try { body = JSON.parse(text); } catch { body = null; }
  if (res.ok && body) return body;
  if (body?.error && body.message) {
    const hint = keyHint(body.error, key);
    throw withCliHints(new ScdvError(body.error, `${body.message}${hint}`, res.status, body.details), next);
  }
  throw errors.SERVER_UNREACHABLE(url.origin, `answered ${res.status} ${text.slice(0, 200)}`);
}

/**
 * What the CLI adds to a refused key: which side lacks what (the server no keys at all, this command no key, or the
 * key sent is not among the server's).
 * @param {string} code the server's error code
 * @param {string | undefined} key the key sent
 */
export function keyHint(code, key) {
  const from = process.env.SCDV_API_KEY && key === process.env.SCDV_API_KEY ? 'SCDV_API_KEY' : '--key';
  if (code === 'SCDV_NO_API_KEYS') return key ? ` (the key from ${from} was sent; the server has none to compare it with)` : '';
  if (code === 'SCDV_UNAUTHORIZED') return ' (no key was sent: pass --key KEY or set SCDV_API_KEY)';
  if (code === 'SCDV_FORBIDDEN') {
    return ` (the key from ${from} was sent, and its digest is not in the server's server.apiKeyHashes: ` +
      '`printf %s "$SCDV_API_KEY" | npx scdv key hash` prints the digest to look for)';
  }
  return '';
}

/**
 * A refused activation's message with its commands on their own lines, and the body alternative as the flag.
 * @param {unknown} err
 * @param {{model: string}} next
 */
function withCliHints(err, next) {
  const e = /** @type {any} */ (err);
  if (e?.code !== 'SCDV_MODEL_NOT_BUILT' || !Array.isArray(e.details?.commands)) return err;
  const lines = [e.message, '', 'to satisfy the rule, index each missing collection into the new model:', ...e.details.commands.map((/** @type {string} */ c) => `  ${c}`)];
  const only = e.details.serve_only?.collections;
  if (Array.isArray(only) && only.length) {
    lines.push('or serve only the collections it has (the others stop being served):', `  scdv activate --model ${next.model} --collections ${only.join(',')}`);
  }
  e.message = lines.join('\n');
  return e;
}
