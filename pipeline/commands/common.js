// Helpers shared by subcommands: config from flags, integer flags, Redis for the run. (Flags are declared in
// each command's spec and parsed by commander: define.js; a negative value, `--dims -5`, reaches the flag's check.)
import { TRAIN_RANGES, describeRange, inRange, loadConfig } from '../config.js';
import { errors } from '../errors.js';
import { connectOrStartRedis } from '../queue/redis.js';
import fs from 'node:fs';
import path from 'node:path';

/**
 * A file named by a flag (--corpus) must exist: said with the flag's name, a usage error (exit 2), before any work.
 * @param {string} file
 * @param {string} [flag]
 */
export function existingFileFlag(file, flag = '--corpus') {
  let stat = null;
  try { stat = fs.statSync(file); } catch { /* below */ }
  if (!stat?.isFile()) {
    throw errors.USAGE(`${flag} ${file}: ${stat ? 'not a regular file' : 'no such file'}${path.isAbsolute(file) ? '' : ` (looked for ${path.resolve(file)})`}`);
  }
  return file;
}

/**
 * Config from --config FILE (users) or --config-json (parent process -> local workers).
 * @param {{config?: string, 'config-json'?: string}} values
 * @param {Record<string, any>} [overrides]
 */
export function configFromFlags(values, overrides) {
  if (values['config-json']) {
    return loadConfig({ overrides: { ...JSON.parse(values['config-json']), ...(overrides ?? {}) } });
  }
  return loadConfig({ file: values.config, overrides });
}

/**
 * A whole-number flag; `range` (default: 0 or more) is named in the message when the value is outside it.
 * @param {string|undefined} value
 * @param {string} flag
 * @param {import('../config.js').Range} [range]
 * @returns {number|undefined}
 */
export function intFlag(value, flag, range = { min: 0, integer: true }) {
  if (value === undefined) return undefined;
  const n = value.trim() === '' ? NaN : Number(value);
  if (!inRange(n, { ...range, integer: true, nullable: false })) {
    throw errors.USAGE(`${flag} must be ${describeRange({ ...range, integer: true, nullable: false })}, got "${value}"`);
  }
  return n;
}

/**
 * A flag that sets a training parameter, checked against the parameter's range in the config schema (pipeline/config/schema/train.js).
 * @param {string|undefined} value
 * @param {string} flag
 * @param {keyof typeof TRAIN_RANGES} key e.g. 'word2vec.vector_size'
 */
export const trainFlag = (value, flag, key) => intFlag(value, flag, TRAIN_RANGES[key]);

/**
 * Run `fn` with Redis (REDIS_URL, or a private server stopped afterwards, also on Ctrl-C).
 * @template T
 * @param {(redisUrl: string) => Promise<T>} fn
 * @returns {Promise<T>}
 */
export async function withRedis(fn) {
  const redis = await connectOrStartRedis();
  const stop = async () => { await redis.stop(); process.exit(130); };
  process.once('SIGINT', stop);
  try {
    return await fn(redis.url);
  } finally {
    process.off('SIGINT', stop);
    await redis.stop();
  }
}
