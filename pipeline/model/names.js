// Model names become folder names: keep them to a safe alphabet (no path tricks).
import { errors } from '../errors.js';

/** Format identifier written into every model manifest; bump on incompatible changes. */
export const MODEL_FORMAT = 'scdv-model/1';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * @param {string} name
 * @returns {string} the name, when valid
 */
export function validateModelName(name) {
  if (typeof name !== 'string' || !NAME.test(name) || name.includes('..')) throw errors.MODEL_NAME_INVALID(String(name));
  return name;
}
