// Bull processor of the `train` queue: one job = one Python training stage (word2vec, idf, gmm, topics).
// The Python worker writes one JSON object per stdout line ({type: progress|result|error, ...});
// progress goes to job.progress, an error line becomes the job's failure message.
import { describeExit, runPython } from '../pipeline/python.js';
import { runQueueWorker } from '../pipeline/queue/queue-worker.js';

/**
 * @typedef {object} TrainStageJob
 * @property {'word2vec'|'idf'|'gmm'|'topics'} stage
 * @property {string} corpus one document per line, tokens separated by spaces
 * @property {string} workDir where the stages read and write their files
 * @property {Record<string, any>} params the Python stage config (word2vec/gmm/topics sections)
 */

/**
 * Run one Python stage to completion.
 * @param {TrainStageJob} job
 * @param {(progress: Record<string, any>) => void} [onProgress]
 * @param {{signal?: AbortSignal}} [opts]
 * @returns {Promise<Record<string, any>>} the stage's result line
 */
export function runPythonStage(job, onProgress, opts = {}) {
  return runPython('scdv.train', [job.stage, '--corpus', job.corpus, '--out', job.workDir, '--config', JSON.stringify(job.params)], {
    onProgress,
    signal: opts.signal,
    spawnFailed: (err) => err,
    // The worker's own message names the stage; `kind: input` marks bad input, which fails the same way every time.
    fail: (f) => Object.assign(
      new Error(f.errorLine ? `${f.errorLine.stage ?? job.stage}: ${f.errorLine.message}` : `python worker ${describeExit(f)}`),
      { inputError: f.errorLine?.kind === 'input' },
    ),
  });
}

/**
 * Run a worker on the `train` queue until SIGTERM/SIGINT. Stopping kills the Python stage in flight:
 * stages write atomically, so only its own unfinished work is lost.
 * @param {{redisUrl: string, config: import('../pipeline/config.js').Config, allowPaths?: string[]}} opts
 */
export function runTrainWorker(opts) {
  return runQueueWorker({
    ...opts, queueName: 'train', jobName: 'stage',
    handle: async (/** @type {import('bull').Job<TrainStageJob>} */ job, progress, signal) => {
      try {
        return await runPythonStage(job.data, progress, { signal });
      } catch (err) {
        // Bad input fails the same way every time: do not retry it.
        if (/** @type {any} */ (err).inputError) job.discard();
        throw err;
      }
    },
  });
}
