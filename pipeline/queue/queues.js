// Bull queues of the pipeline: one per stage, all under the configured (Redis-Cluster-safe) prefix.
import Queue from 'bull';
import { redisOptions } from './redis.js';

/** @typedef {import('../config.js').Config['queue']} QueueConfig */

export const QUEUE_NAMES = /** @type {const} */ (['tokenize', 'train', 'index', 'precompute']);

/**
 * Open a stage's queue.
 * @param {typeof QUEUE_NAMES[number]} name
 * @param {string} redisUrl
 * @param {QueueConfig} cfg
 * @returns {Queue.Queue}
 */
export function openQueue(name, redisUrl, cfg) {
  return new Queue(name, {
    prefix: cfg.prefix,
    redis: {
      ...redisOptions(redisUrl),
      // Reconnect forever (Redis restarts must not kill workers), backing off up to 2 s.
      retryStrategy: (times) => Math.min(100 * times, 2000),
    },
    settings: {
      lockDuration: cfg.lockDurationMs,
      lockRenewTime: Math.floor(cfg.lockDurationMs / 2),
      stalledInterval: cfg.stalledIntervalMs,
      maxStalledCount: cfg.maxStalledCount,
    },
    defaultJobOptions: {
      attempts: cfg.attempts,
      backoff: { type: 'exponential', delay: cfg.backoffMs },
      // Finished jobs stay a while (the board shows what ran), bounded by age and count; runs decide by their
      // shard markers, not by these, and replace a shard's finished job when they queue it again.
      removeOnComplete: { age: cfg.keepCompleted.ageS, count: cfg.keepCompleted.count },
      removeOnFail: { age: cfg.keepFailed.ageS, count: cfg.keepFailed.count },
    },
  });
}

/**
 * Close a worker's queue: the job in hand finishes, then the connections close.
 * Bull's own close() sends QUIT on the blocking connection, which waits behind the pending
 * BRPOPLPUSH until Bull's 500 ms timeout; dropping that connection first makes stopping immediate.
 * @param {Queue.Queue} queue
 */
export async function closeWorkerQueue(queue) {
  /** @type {any} */ (queue).bclient?.disconnect();
  await queue.close();
}
