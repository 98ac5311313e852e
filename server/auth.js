// API keys. The config holds SHA-256 digests only; a presented key is hashed and compared with every digest
// in constant time (no early exit), so neither the keys nor their number leak through timing or files.
import crypto from 'node:crypto';
import { keyDigest } from '../pipeline/api-keys.js';
import { errors } from '../pipeline/errors.js';
import { errorBody } from './error-replies.js';

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

/** Entries kept per counter map: past it, windows that are over are dropped, then the oldest (the total still counts). */
const MAX_TRACKED = 10_000;

/**
 * Wrong API keys, counted in fixed windows of limits.windowS per client address, per presented key (its SHA-256)
 * and from all addresses together: once a count is past its limit, a wrong key is answered 429 with Retry-After
 * instead of 403. A valid key is checked first and always accepted, so nobody else's failures (a proxy address
 * shared by everyone, a flood with rotating X-Forwarded-For) lock its owner out. Per process.
 */
export class KeyFailures {
  /**
   * @param {{perAddress: number, perKey: number, total: number, windowS: number}} limits server.keyFailures (0: no limit)
   * @param {(scope: 'address'|'key'|'all') => void} [onRefusal] called for each 429 (a metric)
   */
  constructor(limits, onRefusal = () => {}) {
    this.limits = limits;
    this.onRefusal = onRefusal;
    /** @type {Map<string, {failures: number, since: number}>} */ this.byAddress = new Map();
    /** @type {Map<string, {failures: number, since: number}>} */ this.byKey = new Map();
    this.all = { failures: 0, since: 0 };
  }

  /**
   * Count one wrong key; the refusal when a limit is now passed, else null (answer 403).
   * @param {string} ip the client address (request.ip: X-Forwarded-For with server.trustProxy)
   * @param {string} key the key presented
   * @param {number} [now]
   * @returns {{failures: number, scope: 'address'|'key'|'all', retryAfterS: number} | null}
   */
  fail(ip, key, now = Date.now()) {
    const windowMs = this.limits.windowS * 1000;
    const bump = (/** @type {{failures: number, since: number}} */ c) => {
      if (now - c.since >= windowMs) { c.failures = 0; c.since = now; }
      c.failures++;
      return c;
    };
    const counted = (/** @type {Map<string, {failures: number, since: number}>} */ m, /** @type {string} */ k) => {
      let c = m.get(k);
      if (!c) {
        if (m.size >= MAX_TRACKED) {
          for (const [old, v] of m) if (now - v.since >= windowMs) m.delete(old);
          if (m.size >= MAX_TRACKED) m.delete(/** @type {string} */ (m.keys().next().value));
        }
        c = { failures: 0, since: now };
        m.set(k, c);
      }
      return bump(c);
    };
    const scopes = /** @type {const} */ ([
      ['address', counted(this.byAddress, ip), this.limits.perAddress],
      ['key', counted(this.byKey, keyDigest(key)), this.limits.perKey],
      ['all', bump(this.all), this.limits.total],
    ]);
    /** @type {{failures: number, scope: 'address'|'key'|'all', retryAfterS: number} | null} */
    let refusal = null;
    for (const [scope, c, limit] of scopes) {
      if (limit === 0 || c.failures <= limit) continue;
      const retryAfterS = Math.max(1, Math.ceil((c.since + windowMs - now) / 1000));
      if (!refusal || retryAfterS > refusal.retryAfterS) refusal = { failures: c.failures, scope, retryAfterS };
    }
    if (refusal) this.onRefusal(refusal.scope);
    return refusal;
  }

  /**
   * The error for a wrong key: 403, or 429 past a limit (with the Retry-After header set on `reply`).
   * @param {string} ip
   * @param {string} key
   * @param {string} what what the key is not valid for (the 403's message)
   * @param {import('fastify').FastifyReply} reply
   */
  refuse(ip, key, what, reply) {
    const r = this.fail(ip, key);
    if (!r) return errors.FORBIDDEN(what);
    reply.header('retry-after', String(r.retryAfterS));
    return errors.LOGIN_RATE_LIMITED(r.failures, SCOPE_WORDS[r.scope], r.retryAfterS);
  }
}

const SCOPE_WORDS = { address: 'from this address', key: 'with this key', all: 'from all addresses' };

/**
 * An onRequest hook enforcing the route's access level (routeOptions.config.access, default 'read').
 * It answers 401/403 itself rather than throwing, so that plugins with their own error handler (Bull Board)
 * still give the catalogue's error body. Wrong keys count towards `failures` (429 past its limits).
 * @param {{apiKeyHashes: string[], openReads: boolean}} cfg
 * @param {KeyFailures} failures
 * @returns {import('fastify').onRequestHookHandler}
 */
export function accessHook(cfg, failures) {
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
    const e = !cfg.apiKeyHashes.length ? errors.NO_API_KEYS(what) : key === undefined ? errors.UNAUTHORIZED() : failures.refuse(request.ip, key, what, reply);
    if (key === undefined) reply.header('www-authenticate', 'Bearer');
    reply.code(e.status).send(errorBody(e));
  };
}
