// Run `python -m scdv.analysis` (workers/scdv/analysis.py) on a model folder: the numbers behind
// `scdv inspect clusters` and `scdv report` (cluster sizes and top words, NPMI coherence, the 2-D word map,
// histograms, the GMM log-likelihood per iteration), written as analysis.json.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { REPO_ROOT, VENV_PYTHON } from '../paths.js';
import { errors } from '../errors.js';

/**
 * @typedef {object} AnalysisRunOptions
 * @property {string} modelDir folder with vocab.txt, word_vectors.npy, gmm.npz
 * @property {string} out where analysis.json goes (written atomically)
 * @property {string|null} [corpusTxt] tokenised corpus, one document per line (null: no coherence)
 * @property {number} [top] top words per cluster (default 10)
 * @property {number} [mapWords] words on the 2-D map (default 2000)
 * @property {number} [maxDocs] documents read for coherence (default 200,000)
 * @property {string} [label] model name, for messages
 */

/**
 * @param {AnalysisRunOptions} o
 * @returns {Promise<Record<string, any>>} the result line
 */
export function runAnalysisPython(o) {
  if (!fs.existsSync(VENV_PYTHON)) return Promise.reject(errors.PYTHON_MISSING(VENV_PYTHON));
  const args = ['-m', 'scdv.analysis', '--model', o.modelDir, '--out', o.out];
  if (o.corpusTxt) args.push('--corpus', o.corpusTxt);
  if (o.top) args.push('--top', String(o.top));
  if (o.mapWords) args.push('--map-words', String(o.mapWords));
  if (o.maxDocs) args.push('--max-docs', String(o.maxDocs));
  return new Promise((resolve, reject) => {
    const child = spawn(VENV_PYTHON, args, {
      env: { ...process.env, PYTHONPATH: path.join(REPO_ROOT, 'workers'), PYTHONUNBUFFERED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    /** @type {Record<string, any> | null} */
    let result = null;
    /** @type {string | null} */
    let failure = null;
    /** @type {string[]} */
    const stderrTail = [];
    readline.createInterface({ input: /** @type {import('node:stream').Readable} */ (child.stdout) }).on('line', (line) => {
      try {
        const msg = JSON.parse(line);
        if (msg.type === 'result') result = msg;
        else if (msg.type === 'error') failure = msg.message;
      } catch { /* not a protocol line */ }
    });
    readline.createInterface({ input: /** @type {import('node:stream').Readable} */ (child.stderr) }).on('line', (line) => {
      stderrTail.push(line);
      if (stderrTail.length > 10) stderrTail.shift();
    });
    child.on('error', (err) => reject(errors.ANALYSIS_FAILED(o.label ?? o.modelDir, err.message)));
    child.on('close', (code, signal) => {
      if (code === 0 && result) return resolve(result);
      const why = failure ?? `python ${signal ? `killed by ${signal}` : `exited with ${code}`}${stderrTail.length ? `: ${stderrTail.slice(-3).join(' | ')}` : ''}`;
      reject(errors.ANALYSIS_FAILED(o.label ?? o.modelDir, why));
    });
  });
}
