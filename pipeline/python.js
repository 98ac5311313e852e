// The one runner of the Python modules in workers/scdv (the scdv.progress protocol: the module writes one JSON
// object per stdout line, {type: progress|result|error, ...}, and logs to stderr). Used by the training worker
// (workers/train.js, one stage per Bull job), `scdv eval` and the model analysis.
// A training stage's own parent-death signal is set by workers/scdv/train.py (PR_SET_PDEATHSIG), not here.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { REPO_ROOT, VENV_PYTHON } from './paths.js';
import { errors } from './errors.js';

/** stderr lines kept to explain a run that died without an error line. */
const STDERR_TAIL_LINES = 20;

/**
 * Why a run gave no result: the module's own error line when it wrote one, else how the process ended.
 * @typedef {object} PythonFailure
 * @property {Record<string, any> | null} errorLine the last {type: 'error', message, kind?, stage?} line
 * @property {number | null} code exit code
 * @property {NodeJS.Signals | null} signal
 * @property {string[]} stderrTail the last lines of stderr
 */

/**
 * How the process ended, for a failure without an error line: "killed by SIGKILL: <last stderr lines>".
 * @param {PythonFailure} failure
 */
export function describeExit(failure) {
  return `${failure.signal ? `killed by ${failure.signal}` : `exited with ${failure.code}`}${failure.stderrTail.length ? `: ${failure.stderrTail.slice(-5).join(' | ')}` : ''}`;
}

/**
 * Run `python -m <module> <args>` in the project's .venv and wait for its result line.
 * @param {string} module e.g. scdv.train
 * @param {string[]} args
 * @param {object} options
 * @param {(p: Record<string, any>) => void} [options.onProgress] each progress line
 * @param {AbortSignal} [options.signal] aborting kills the process (the promise rejects with the AbortError)
 * @param {(f: PythonFailure) => Error} options.fail the error of a run that ended without a result line
 * @param {(err: Error) => Error} options.spawnFailed the error of a process that could not be started (or was aborted)
 * @returns {Promise<Record<string, any>>} the result line
 */
export function runPython(module, args, options) {
  if (!fs.existsSync(VENV_PYTHON)) return Promise.reject(errors.PYTHON_MISSING(VENV_PYTHON));
  return new Promise((resolve, reject) => {
    const child = spawn(VENV_PYTHON, ['-m', module, ...args], {
      env: { ...process.env, PYTHONPATH: path.join(REPO_ROOT, 'workers'), PYTHONUNBUFFERED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      signal: options.signal,
    });
    /** @type {Record<string, any> | null} */
    let result = null;
    /** @type {Record<string, any> | null} */
    let errorLine = null;
    /** @type {string[]} */
    const stderrTail = [];
    readline.createInterface({ input: /** @type {import('node:stream').Readable} */ (child.stdout) }).on('line', (line) => {
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        return; // not a protocol line (a library printing to stdout): ignored
      }
      if (msg.type === 'progress') options.onProgress?.(msg);
      else if (msg.type === 'result') result = msg;
      else if (msg.type === 'error') errorLine = msg;
    });
    readline.createInterface({ input: /** @type {import('node:stream').Readable} */ (child.stderr) }).on('line', (line) => {
      stderrTail.push(line);
      if (stderrTail.length > STDERR_TAIL_LINES) stderrTail.shift();
    });
    child.on('error', (err) => reject(options.spawnFailed(err)));
    child.on('close', (code, signal) => {
      if (code === 0 && result) return resolve(result);
      reject(options.fail({ errorLine, code, signal, stderrTail }));
    });
  });
}

/**
 * Run a module and fail with a catalogue error naming it (`scdv eval`, the model analysis).
 * @param {string} module e.g. scdv.eval_baselines
 * @param {string[]} args
 * @param {{onProgress?: (p: Record<string, any>) => void, fail?: (why: string) => Error}} [opts] `fail` makes the
 *   error of a failed run (default SCDV_EVAL_FAILED naming the module)
 * @returns {Promise<Record<string, any>>} the result line
 */
export function runPythonModule(module, args, opts = {}) {
  const fail = opts.fail ?? ((/** @type {string} */ why) => errors.EVAL_FAILED(module, why));
  return runPython(module, args, {
    onProgress: opts.onProgress,
    spawnFailed: (err) => withCause(fail(err.message), err),
    fail: (f) => fail(f.errorLine?.message ?? `python ${describeExit(f)}`),
  });
}

/**
 * @template {Error} E
 * @param {E} err
 * @param {unknown} cause
 * @returns {E}
 */
function withCause(err, cause) {
  if (err.cause === undefined) err.cause = cause;
  return err;
}
