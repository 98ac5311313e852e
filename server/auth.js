// API keys. The config holds SHA-256 digests only; a presented key is hashed and compared with every digest
// in constant time (no early exit), so neither the keys nor their number leak through timing or files.
import crypto from 'node:crypto';
import { keyDigest } from '../pipeline/api-keys.js';
import { errors } from '../pipeline/errors.js';
import { errorBody } from './errors.js';

/** @typedef {'open'|'read'|'write'} Access  open: health checks; read: open unless server.openReads is false; write: a key */

/**
 * The key a request presents: `authorization: Bearer <key>` or `x-api-key: <key>`; undefined when none.
 * @param {import('node:http').IncomingHttpHeaders} headers
 */
export function presentedKey(headers) {
  const auth = headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(.+)$/i.exec(auth.trim());
    if (m) return m[1].trim();
  }
  const x = headers['x-api-key'];
  if (typeof x === 'string' && x !== '') return x;
  return undefined;
}

/**
 * @param {string[]} hashes hex SHA-256 digests
 * @returns {(key: string) => boolean}
 */
export function keyChecker(hashes) {
  const digests = hashes.map((h) => Buffer.from(h.toLowerCase(), 'hex'));
  return (key) => {
    const d = Buffer.from(keyDigest(key), 'hex');
    let ok = false;
    for (const h of digests) ok = crypto.timingSafeEqual(d, h) || ok;
    return ok;
  };
}

/**
 * An onRequest hook enforcing the route's access level (routeOptions.config.access, default 'read').
 * It answers 401/403 itself rather than throwing, so that plugins with their own error handler (Bull Board)
 * still give the catalogue's error body.
 * @param {{apiKeyHashes: string[], openReads: boolean}} cfg
 * @returns {import('fastify').onRequestHookHandler}
 */
export function accessHook(cfg) {
  const check = keyChecker(cfg.apiKeyHashes);
  // Callback-style (not async): no promise per request. A refusal sends the answer and does not call done (the
  // request goes no further).
  return (request, reply, done) => {
    /** @type {Access} */
    const access = /** @type {any} */ (request.routeOptions.config)?.access ?? 'read';
    if (access === 'open' || (access === 'read' && cfg.openReads)) return done();
    const key = presentedKey(request.headers);
    if (key !== undefined && check(key)) return done();
    const what = access === 'write' ? 'write and admin routes' : 'this route';
    // No digest configured: no key can succeed, and the answer says which side lacks what.
    const e = !cfg.apiKeyHashes.length ? errors.NO_API_KEYS(what) : key === undefined ? errors.UNAUTHORIZED() : errors.FORBIDDEN(what);
    if (key === undefined) reply.header('www-authenticate', 'Bearer');
    reply.code(e.status).send(errorBody(e));
  };
}
