// Collection names: also folder names, so they are validated before any path is built from them.
import { errors } from '../errors.js';

export const COLLECTION_NAME_RE = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/**
 * @param {unknown} name
 * @returns {string} the name, when valid
 * @throws {import('../errors.js').ScdvError} SCDV_STORE_NAME_INVALID
 */
export function validateCollectionName(name) {
  if (typeof name !== 'string' || !COLLECTION_NAME_RE.test(name)) throw errors.STORE_NAME_INVALID(String(name));
  return name;
}
