// Where the active-model record lives, and how a process hears that it changed: one interface, two places.
//
// - `file` (store.backend `native`): dataDir()/server/active-model.json. Every process of one host reads the
//   same file; followers read it every server.modelPollMs.
// - `redis` (store.backend `opensearch`): the JSON under the key `scdv:active-model:<indexPrefix>` of the Redis
//   every host shares (REDIS_URL), and a publish on the channel of the same name at each write, so that every
//   server on every host follows an activation at once; followers also poll the key every server.modelPollMs
//   as a safety net (a message lost while a subscriber reconnected). The index prefix keeps the deployments of
//   one Redis apart as it keeps their indices apart in one OpenSearch cluster.
//
// Which of the two a process uses is decided in activeRecords() only.
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { dataDir } from '../paths.js';
import { errors } from '../errors.js';
import { writeFileAtomic } from '../fsutil.js';
import { redactUrl, redisOptions } from '../queue/redis.js';

/**
 * @typedef {object} ActiveRecord
 * @property {string} model
 * @property {string | null} previous
 * @property {string} activated_at ISO 8601
 * @property {string[]} [collections] the collections the activation was asked to keep serving (`{"collections"}`
 *   of the activate body); absent when it kept every collection the previous model served
 * @property {string[]} [unserved] collections with documents the previous model served that this one lacks
 */

/**
 * @typedef {object} ActiveRecords
 * @property {'file' | 'redis'} kind
 * @property {string} where the file, or the Redis key and URL (passwords hidden): for messages
 * @property {() => Promise<ActiveRecord | null>} read
 * @property {(r: ActiveRecord) => Promise<void>} write
 * @property {(onChange: (r: ActiveRecord) => void, pollMs: number) => void} follow calls onChange with the
 *   current record every pollMs, and at once when the backend can tell it was written (Redis pub/sub), whoever
 *   wrote it (this process included): the caller compares it with what it serves. At most one per instance
 * @property {() => Promise<void>} close stops following and releases connections
 */

/** The file of the native backend. */
export const activeModelFile = () => path.join(dataDir(), 'server', 'active-model.json');

/** @param {unknown} r @returns {ActiveRecord | null} */
const asRecord = (r) => (r && typeof r === 'object' && typeof (/** @type {any} */ (r).model) === 'string' ? /** @type {ActiveRecord} */ (r) : null);

/** @param {string} text */
function parseRecord(text) {
  try {
    return asRecord(JSON.parse(text));
  } catch {
    return null;
  }
}

/** @implements {ActiveRecords} */
export class FileActiveRecords {
  /** @param {string} [file] */
  constructor(file = activeModelFile()) {
    this.kind = /** @type {const} */ ('file');
    this.file = file;
    this.where = file;
    /** @type {NodeJS.Timeout | null} */
    this.timer = null;
  }

  readSync() {
    try {
      return parseRecord(fs.readFileSync(this.file, 'utf8'));
    } catch {
      return null;
    }
  }

  async read() {
    return this.readSync();
  }

  /** @param {ActiveRecord} record */
  async write(record) {
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    writeFileAtomic(this.file, JSON.stringify(record, null, 2) + '\n');
  }

  /** @param {(r: ActiveRecord) => void} onChange @param {number} pollMs */
  follow(onChange, pollMs) {
    this.timer = setInterval(() => {
      const r = this.readSync();
      if (r) onChange(r);
    }, pollMs);
    this.timer.unref();
  }

  async close() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/** @implements {ActiveRecords} */
export class RedisActiveRecords {
  /**
   * @param {string} url the shared Redis
   * @param {string} key also the pub/sub channel
   */
  constructor(url, key) {
    this.kind = /** @type {const} */ ('redis');
    this.url = url;
    this.key = key;
    this.where = `${key} in Redis ${redactUrl(url)}`;
    // Commands fail fast while Redis is down (the caller reports it) instead of queueing for ever.
    this.client = new Redis({ ...redisOptions(url), lazyConnect: true, maxRetriesPerRequest: 2, enableOfflineQueue: true });
    this.client.on('error', () => {}); // reconnects by itself; failed commands reject and are reported there
    /** @type {Redis | null} */
    this.subscriber = null;
    /** @type {NodeJS.Timeout | null} */
    this.timer = null;
  }

  /** @param {() => Promise<any>} fn */
  async guarded(fn) {
    try {
      return await fn();
    } catch (err) {
      throw errors.REDIS_UNAVAILABLE(redactUrl(this.url), `${/** @type {Error} */ (err).message} (the active-model record ${this.key})`).because(/** @type {Error} */ (err));
    }
  }

  async read() {
    const text = await this.guarded(() => this.client.get(this.key));
    return text === null ? null : parseRecord(text);
  }

  /** @param {ActiveRecord} record */
  async write(record) {
    const text = JSON.stringify(record);
    await this.guarded(() => this.client.multi().set(this.key, text).publish(this.key, text).exec());
  }

  /** @param {(r: ActiveRecord) => void} onChange @param {number} pollMs */
  follow(onChange, pollMs) {
    // A message only wakes the follower, which reads the key: the key is the truth, so a message that arrives
    // after a newer write can never switch a server back.
    const look = () => { this.client.get(this.key).then((text) => { const r = text === null ? null : parseRecord(text); if (r) onChange(r); }, () => {}); };
    const sub = new Redis({ ...redisOptions(this.url), lazyConnect: false });
    sub.on('error', () => {});
    sub.on('message', (channel) => { if (channel === this.key) look(); });
    // ioredis subscribes again after a reconnect; the poll covers what was published meanwhile.
    void sub.subscribe(this.key).catch(() => {});
    this.subscriber = sub;
    this.timer = setInterval(look, pollMs);
    this.timer.unref();
  }

  async close() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.subscriber?.disconnect();
    this.subscriber = null;
    this.client.disconnect();
  }
}

/**
 * The active-model record of this deployment: the file on the native backend, the shared Redis on OpenSearch
 * (every host must see one record). The one place that decides.
 * @param {import('../config.js').Config} config
 * @param {{redisUrl?: string, privateRedis?: boolean}} [opts] redisUrl: the Redis to use (default REDIS_URL);
 *   privateRedis: it is a throw-away server of this process, which no other host can share
 * @returns {ActiveRecords}
 */
export function activeRecords(config, opts = {}) {
  if (config.store.backend !== 'opensearch') return new FileActiveRecords();
  const url = opts.redisUrl ?? process.env.REDIS_URL;
  if (!url || opts.privateRedis) {
    throw errors.CONFIG_INVALID('store.backend "opensearch" keeps the active model in the Redis every server shares: set REDIS_URL ' +
      '(e.g. redis://10.0.0.5:6379) on every host running scdv serve, scdv index, scdv precompute or scdv collection');
  }
  return new RedisActiveRecords(url, `scdv:active-model:${config.store.opensearch.indexPrefix}`);
}
