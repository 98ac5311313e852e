// The life of a queue worker process: process jobs of one queue until SIGTERM/SIGINT, each checked first
// (job-schemas.js), report progress at most a few times a second, the last state of each phase included (best
// effort: the job's lock and its result are what count), then finish the job in hand and leave.
import { closeWorkerQueue, openQueue } from './queues.js';
import { checkJob } from './job-schemas.js';

/**
 * @template T, R
 * @param {object} opts
 * @param {import('./queues.js').QUEUE_NAMES[number]} opts.queueName
 * @param {string} opts.jobName
 * @param {string} opts.redisUrl
 * @param {import('../config.js').Config} opts.config
 * @param {number} [opts.concurrency]
 * @param {string[]} [opts.allowPaths] files or folders outside the data folder that jobs may name (checkJob)
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
    try {
      // Before anything else: a payload that fails its schema, or names a path outside the allowed folders,
      // fails at once and for good (a retry would fail the same way).
      job.data = checkJob(opts.queueName, job.data, { config: opts.config, allowPaths: opts.allowPaths }, job.id);
    } catch (err) {
      job.discard();
      log(/** @type {Error} */ (err).message);
      throw err;
    }
    const progress = progressThrottle((p) => job.progress(p).catch(() => {}));
    try {
      return await opts.handle(job, progress, abort.signal);
    } catch (err) {
      // A cancelled run's job fails for good: retrying cannot help.
      if (/** @type {any} */ (err)?.code === 'SCDV_RUN_CANCELLED') await job.discard();
      throw err;
    } finally {
      progress.flush(); // the last state before the result, not one from up to PROGRESS_MS earlier
    }
  });
  await new Promise((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  abort.abort();
  await closeWorkerQueue(queue);
  opts.onStop?.();
}

/** Least time between two progress reports of a job. */
const PROGRESS_MS = 250;

/**
 * Pass on progress at most every PROGRESS_MS, keeping the latest state for the end of the interval (so the last
 * report of a burst is never lost); a report that starts a new phase (`phase` field) goes at once, so that a short
 * phase is seen at all.
 * @param {(p: object) => void} send
 * @returns {((p: object) => void) & {flush: () => void}}
 */
export function progressThrottle(send) {
  let last = 0;
  /** @type {object | null} */
  let pending = null;
  /** @type {unknown} */
  let lastPhase;
  /** @type {NodeJS.Timeout | null} */
  let timer = null;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (pending) send(pending);
    pending = null;
    last = Date.now();
  };
  const progress = (/** @type {object} */ p) => {
    const phase = /** @type {any} */ (p).phase;
    const newPhase = phase !== lastPhase;
    lastPhase = phase;
    if (newPhase && pending) flush(); // the previous phase's last state first
    pending = p;
    const wait = last + PROGRESS_MS - Date.now();
    if (newPhase || wait <= 0) flush();
    else timer ??= setTimeout(flush, wait);
  };
  return Object.assign(progress, { flush });
}
