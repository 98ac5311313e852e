// Run `python -m scdv.analysis` (workers/scdv/analysis.py) on a model folder: the numbers behind
// `scdv inspect clusters` and `scdv report` (cluster sizes and top words, NPMI coherence, the 2-D word map,
// histograms, the GMM log-likelihood per iteration), written as analysis.json.
import { errors } from '../errors.js';
import { runPythonModule } from '../python.js';

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
 * @param {AnalysisRunOptions} options
 * @returns {Promise<Record<string, any>>} the result line
 */
export function runAnalysisPython(options) {
  const args = ['--model', options.modelDir, '--out', options.out];
  if (options.corpusTxt) args.push('--corpus', options.corpusTxt);
  if (options.top) args.push('--top', String(options.top));
  if (options.mapWords) args.push('--map-words', String(options.mapWords));
  if (options.maxDocs) args.push('--max-docs', String(options.maxDocs));
  return runPythonModule('scdv.analysis', args, { fail: (why) => errors.ANALYSIS_FAILED(options.label ?? options.modelDir, why) });
}
