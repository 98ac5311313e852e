// Helpers shared by subcommands: config from flags, integer flags, Redis for the run.
import { loadConfig } from '../config.js';
import { errors } from '../errors.js';

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
