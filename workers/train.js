// Bull processor of the `train` queue: one job = one Python training stage (word2vec, idf, gmm, topics).
// The Python worker writes one JSON object per stdout line ({type: progress|result|error, ...});
// progress goes to job.progress, an error line becomes the job's failure message.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { REPO_ROOT, VENV_PYTHON } from '../pipeline/paths.js';
import { errors } from '../pipeline/errors.js';
import { runQueueWorker } from '../pipeline/queue/worker.js';

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
  if (!fs.existsSync(VENV_PYTHON)) {
    return Promise.reject(errors.PYTHON_MISSING(VENV_PYTHON));
  }
  return new Promise((resolve, reject) => {
    const child = spawn(VENV_PYTHON, [
      '-m', 'scdv.train', job.stage, '--corpus', job.corpus, '--out', job.workDir, '--config', JSON.stringify(job.params),
    ], {
      env: { ...process.env, PYTHONPATH: path.join(REPO_ROOT, 'workers'), PYTHONUNBUFFERED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      signal: opts.signal,
    });
    /** @type {Record<string, any> | null} */
    let result = null;
    /** @type {string | null} */
    let failure = null;
    let inputError = false;
    /** @type {string[]} */
    const stderrTail = [];
    readline.createInterface({ input: /** @type {import('node:stream').Readable} */ (child.stdout) }).on('line', (line) => {
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        return; // not a protocol line (a library printing to stdout): ignored
      }
      if (msg.type === 'progress') onProgress?.(msg);
      else if (msg.type === 'result') result = msg;
      else if (msg.type === 'error') {
        failure = `${msg.stage ?? job.stage}: ${msg.message}`;
        inputError = msg.kind === 'input';
      }
    });
    readline.createInterface({ input: /** @type {import('node:stream').Readable} */ (child.stderr) }).on('line', (line) => {
      stderrTail.push(line);
      if (stderrTail.length > 20) stderrTail.shift();
    });
    child.on('error', (err) => reject(err));
    child.on('close', (code, signal) => {
      if (code === 0 && result) return resolve(result);
      const why = failure ?? `python worker ${signal ? `killed by ${signal}` : `exited with ${code}`}` +
        (stderrTail.length ? `: ${stderrTail.slice(-5).join(' | ')}` : '');
      reject(Object.assign(new Error(why), { inputError }));
    });
  });
}

/**
 * Run a worker on the `train` queue until SIGTERM/SIGINT. Stopping kills the Python stage in flight:
 * stages write atomically, so only its own unfinished work is lost.
 * @param {{redisUrl: string, config: import('../pipeline/config.js').Config}} opts
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
