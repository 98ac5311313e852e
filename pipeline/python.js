// Run a Python module of workers/scdv in the project's .venv and wait for its result line (the scdv.progress
// protocol: progress lines, then one result or error line on stdout). Used by `scdv eval` and the model
// analysis; the training stages run under Bull through workers/train.js instead.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { REPO_ROOT, VENV_PYTHON } from './paths.js';
import { errors } from './errors.js';

/**
 * @param {string} module e.g. scdv.eval_baselines
 * @param {string[]} args
 * @param {{onProgress?: (p: Record<string, any>) => void, fail?: (why: string) => Error}} [opts] `fail` makes the
 *   error of a failed run (default SCDV_EVAL_FAILED naming the module)
 * @returns {Promise<Record<string, any>>} the result line
 */
export function runPythonModule(module, args, opts = {}) {
  if (!fs.existsSync(VENV_PYTHON)) return Promise.reject(errors.PYTHON_MISSING(VENV_PYTHON));
  return new Promise((resolve, reject) => {
    const child = spawn(VENV_PYTHON, ['-m', module, ...args], {
      env: { ...process.env, PYTHONPATH: path.join(REPO_ROOT, 'workers'), PYTHONUNBUFFERED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    /** @type {Record<string, any> | null} */
    let result = null;
    /** @type {string | null} */
    let failure = null;
    /** @type {string[]} */
    const tail = [];
    readline.createInterface({ input: /** @type {import('node:stream').Readable} */ (child.stdout) }).on('line', (line) => {
      let msg;
      try { msg = JSON.parse(line); } catch { return; }
      if (msg.type === 'progress') opts.onProgress?.(msg);
      else if (msg.type === 'result') result = msg;
      else if (msg.type === 'error') failure = msg.message;
    });
    readline.createInterface({ input: /** @type {import('node:stream').Readable} */ (child.stderr) }).on('line', (line) => {
      tail.push(line);
      if (tail.length > 20) tail.shift();
    });
    const fail = opts.fail ?? ((/** @type {string} */ why) => errors.EVAL_FAILED(module, why));
    child.on('error', (err) => reject(fail(err.message)));
    child.on('close', (code, signal) => {
      if (code === 0 && result) return resolve(result);
      reject(fail(failure ?? `python ${signal ? `killed by ${signal}` : `exited with ${code}`}${tail.length ? `: ${tail.slice(-5).join(' | ')}` : ''}`));
    });
  });
}
