// The server's Redis: one ioredis client for precomputed matches, invalidation and board sessions, and the Bull
// queues: it feeds `index` (bulk uploads) and `precompute`, and shows every pipeline queue (QUEUE_NAMES) in Bull
// Board and /metrics. Redis is optional for reading: the client never queues
// commands while disconnected (they fail at once, and the read path falls back to live search), and queue
// routes answer 503 instead of waiting for a reconnect.
import { Redis } from 'ioredis';
import { errors } from '../pipeline/errors.js';
import { QUEUE_NAMES, openQueue } from '../pipeline/queue/queues.js';
import { redisOptions } from '../pipeline/queue/redis.js';

/**
 * Open one of the pipeline's queues by name.
 * @param {typeof QUEUE_NAMES[number]} name
 * @param {string} redisUrl
 * @param {import('../pipeline/config.js').Config['queue']} cfg
 */
export const openNamedQueue = (name, redisUrl, cfg) => openQueue(name, redisUrl, cfg);

export class QueueHub {
  /**
   * @param {{redisUrl: string, config: import('../pipeline/config.js').Config, log: {warn: (o: any, m?: string) => void, info: (o: any, m?: string) => void}}} opts
   */
  constructor(opts) {
    this.config = opts.config;
    this.log = opts.log;
    this.redisUrl = opts.redisUrl;
    /** This turn's commands are being held for one write (batchThisTurn). */
    this.batching = false;
    this.redis = new Redis({
      ...redisOptions(opts.redisUrl),
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      // A slow Redis must not slow the match route down: past this the answer comes from a live search.
      commandTimeout: 250,
      // Auto-pipelining would hold a tick's lookups until setImmediate and answer them together when the last reply
      // is in: precomputed /v1/match p99 at 50 connections 12 ms on, 5-6 ms off (BENCHMARKS.md, REST API). The match
      // route batches its lookups' writes instead (batchThisTurn), each reply answered as it is read.
      enableAutoPipelining: false,
      retryStrategy: (/** @type {number} */ times) => Math.min(100 * times, 2000),
      lazyConnect: false,
    });
    let wasUp = true;
    // Logged once per outage, without the URL (it may carry a password).
    this.redis.on('error', (/** @type {Error} */ err) => {
      if (wasUp) this.log.warn({ code: /** @type {any} */ (err).code }, 'Redis unreachable: queue routes answer 503, reads continue');
      wasUp = false;
    });
    this.redis.on('ready', () => {
      if (!wasUp) this.log.info('Redis reachable again');
      wasUp = true;
    });
    /** @type {Record<string, import('bull').Queue>} */
    this.queues = {};
    for (const name of QUEUE_NAMES) {
      const q = openNamedQueue(name, opts.redisUrl, opts.config.queue);
      q.on('error', () => {}); // reported through the client above
      this.queues[name] = q;
    }
  }

  /**
   * Wait up to `ms` for the first connection (a server that starts with Redis down still starts).
   * @param {number} ms
   */
  async ready(ms) {
    if (this.up) return true;
    return new Promise((resolve) => {
      const done = (/** @type {boolean} */ v) => { clearTimeout(timer); this.redis.off('ready', onReady); resolve(v); };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), ms);
      this.redis.once('ready', onReady);
    });
  }

  /**
   * Send the commands issued from now to the end of this turn of the event loop in one write to Redis (the client's
   * socket corked until setImmediate). Under load a turn reads several match requests, and each write to Redis
   * costs the event loop about as much as a request's own work on the precomputed path (a system call that wakes
   * Redis). Each reply still resolves its command as soon as it is read.
   */
  batchThisTurn() {
    const stream = this.redis.stream;
    if (this.batching || !stream || stream.destroyed) return;
    this.batching = true;
    stream.cork();
    setImmediate(() => {
      this.batching = false;
      stream.uncork();
    });
  }

  /** Redis answers commands right now. */
  get up() {
    return this.redis.status === 'ready';
  }

  /** @throws 503 when Redis is down */
  requireUp() {
    if (!this.up) throw errors.QUEUE_UNAVAILABLE();
  }

  /** Jobs per queue and state, for /metrics. */
  async depths() {
    if (!this.up) return [];
    const rows = [];
    for (const [queue, q] of Object.entries(this.queues)) {
      const counts = await q.getJobCounts();
      for (const [state, count] of Object.entries(counts)) rows.push({ queue, state, count: Number(count) });
    }
    return rows;
  }

  async close() {
    await Promise.all(Object.values(this.queues).map(async (q) => {
      /** @type {any} */ (q).bclient?.disconnect();
      // Bull's close waits on Redis; with Redis down it would wait for ever.
      await Promise.race([q.close().catch(() => {}), new Promise((r) => setTimeout(r, 2000).unref())]);
    }));
    this.redis.disconnect();
  }
}
