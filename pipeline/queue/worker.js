// The life of a queue worker process: process jobs of one queue until SIGTERM/SIGINT, report progress
// at most a few times a second (best effort: the job's lock and its result are what count), then finish
// the job in hand and leave.
import { closeWorkerQueue, openQueue } from './queues.js';

/**
 * @template T, R
 * @param {object} opts
 * @param {import('./queues.js').QUEUE_NAMES[number]} opts.queueName
 * @param {string} opts.jobName
 * @param {string} opts.redisUrl
 * @param {import('../config.js').Config} opts.config
 * @param {number} [opts.concurrency]
 * @param {(job: import('bull').Job<T>, progress: (p: object) => void, signal: AbortSignal) => Promise<R>} opts.handle
 * @param {() => void} [opts.onStop] after the queue is closed
 * @param {(m: string) => void} [opts.log]
 */
export async function runQueueWorker(opts) {
  const log = opts.log ?? ((/** @type {string} */ m) => process.stderr.write(`[${opts.queueName} worker ${process.pid}] ${m}\n`));
  const queue = openQueue(opts.queueName, opts.redisUrl, opts.config.queue);
  queue.on('error', (err) => log(`redis: ${err.message}`));
  const abort = new AbortController();
  queue.process(opts.jobName, opts.concurrency ?? 1, async (/** @type {import('bull').Job<T>} */ job) => {
    let last = 0;
    const progress = (/** @type {object} */ p) => {
      const now = Date.now();
      if (now - last > 250) {
        last = now;
        job.progress(p).catch(() => {});
      }
    };
    return opts.handle(job, progress, abort.signal);
  });
  await new Promise((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  abort.abort();
  await closeWorkerQueue(queue);
  opts.onStop?.();
}
