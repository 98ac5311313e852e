// Browser sessions for the queue board (/admin/queues): a login form takes an API key, checks it like the header path
// (keyChecker: hashed, constant-time), and sets a cookie holding a random session id, never the key. The session lives
// in Redis (the board needs Redis anyway) under the id's SHA-256, with the digest of the key that opened it: every
// server of a deployment accepts it, a restart keeps it, and removing that key from server.apiKeyHashes ends it.
import crypto from 'node:crypto';
import { keyDigest } from '../pipeline/api-keys.js';

export const SESSION_COOKIE = 'scdv_admin';
/** The cookie's Path: the login page and the board both live under it, nothing else does. */
export const ADMIN_ROOT = '/admin';

/**
 * The value of one cookie in a Cookie header, or undefined.
 * @param {string | undefined} header
 * @param {string} name
 */
export function readCookie(header, name) {
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

export class AdminSessions {
  /**
   * @param {{redis: import('ioredis').Redis, prefix: string, apiKeyHashes: string[], maxAgeS: number}} options
   */
  constructor(options) {
    this.redis = options.redis;
    this.prefix = options.prefix;
    this.digests = new Set(options.apiKeyHashes.map((h) => h.toLowerCase()));
    this.maxAgeS = options.maxAgeS;
  }

  /** @param {string} id */
  redisKey(id) {
    return `${this.prefix}:admin-session:${crypto.createHash('sha256').update(id).digest('hex')}`;
  }

  /**
   * Open a session for a key already checked; returns the cookie's id.
   * @param {string} key
   */
  async open(key) {
    const id = crypto.randomBytes(32).toString('base64url');
    await this.redis.set(this.redisKey(id), keyDigest(key), 'EX', this.maxAgeS);
    return id;
  }

  /**
   * Whether the request's cookie names a live session whose key is still configured. Redis unreachable: no.
   * @param {string | undefined} cookieHeader
   */
  async valid(cookieHeader) {
    const id = readCookie(cookieHeader, SESSION_COOKIE);
    if (!id || !/^[A-Za-z0-9_-]{43}$/.test(id)) return false;
    try {
      const digest = await this.redis.get(this.redisKey(id));
      return digest != null && this.digests.has(digest);
    } catch {
      return false;
    }
  }

  /** @param {string | undefined} cookieHeader */
  async close(cookieHeader) {
    const id = readCookie(cookieHeader, SESSION_COOKIE);
    if (id) await this.redis.del(this.redisKey(id)).catch(() => {});
  }

  /**
   * Set-Cookie for a new session, or one that clears it (id null).
   * @param {string | null} id
   * @param {boolean} secure the request came over TLS (or a trusted proxy says so)
   */
  cookie(id, secure) {
    return [`${SESSION_COOKIE}=${id ?? ''}`, `Path=${ADMIN_ROOT}`, `Max-Age=${id ? this.maxAgeS : 0}`, 'HttpOnly', 'SameSite=Strict',
      ...(secure ? ['Secure'] : [])].join('; ');
  }
}
