// Helpers shared by subcommands: config from flags, integer flags, Redis for the run.
import { loadConfig } from '../config.js';
import { errors } from '../errors.js';
import { connectOrStartRedis } from '../queue/redis.js';

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
 * @param {string|undefined} value
 * @param {string} flag
 * @returns {number|undefined}
 */
export function intFlag(value, flag) {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw errors.USAGE(`${flag} must be a whole number, got "${value}"`);
  return n;
}

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
