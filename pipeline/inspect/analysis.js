// analysis.json of a model: read it, or compute it (workers/scdv/analysis.py) when it is missing.
// Coherence needs the tokenised corpus the model was trained on. In order of preference: the corpus the
// training run left in its work folder (dataDir()/work/<name>/train/corpus.txt, when its run key still matches
// the model's), else a JSON Lines corpus given with --corpus, tokenised here with the model's own tokenizer
// settings; without either, clusters get no coherence (null) and the caller says how to get it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dataDir } from '../paths.js';
import { errors } from '../errors.js';
import { readLines } from '../corpus/lines.js';
import { parseDocument, documentText } from '../corpus/document.js';
import { createTokenizer } from '../tokenizer/index.js';
import { runAnalysisPython } from './run-analysis.js';

export const ANALYSIS_FILE = 'analysis.json';
export const ANALYSIS_FORMAT = 'scdv-analysis/1';

/** @typedef {{name: string, dir: string, manifest: Record<string, any>}} ModelRef */

/**
 * The tokenised training corpus left by `scdv train`, when it is the one this model was trained on.
 * @param {ModelRef} model
 * @returns {string | null}
 */
export function trainingCorpus(model) {
  const file = path.join(dataDir(), 'work', model.name, 'train', 'corpus.txt');
  try {
    const stamp = JSON.parse(fs.readFileSync(`${file}.json`, 'utf8'));
    if (stamp.runKey === model.manifest.tokens?.runKey && fs.existsSync(file)) return file;
  } catch { /* absent */ }
  return null;
}

/**
 * Tokenise a JSON Lines corpus with the model's tokenizer settings into `out` (one document per line).
 * Bad lines are skipped, as the tokenise stage skips them.
 * @param {string} corpus
 * @param {ModelRef} model
 * @param {string} out
 * @param {{maxDocumentBytes?: number, tokenizerConfig?: any}} [opts]
 * @returns {Promise<number>} documents written
 */
export async function tokenizeCorpusFile(corpus, model, out, opts = {}) {
  if (!fs.existsSync(corpus)) throw errors.CORPUS_NOT_FOUND(corpus, 'no such file');
  const tokenizer = await createTokenizer(model.manifest.tokenizer?.config ?? opts.tokenizerConfig);
  const ws = fs.createWriteStream(out);
  let documents = 0;
  /** @type {string[]} */
  let batch = [];
  const flush = async () => {
    const packed = await tokenizer.tokenizeBatch(batch);
    batch = [];
    for (const p of packed) {
      if (p === '') continue;
      documents++;
      if (!ws.write(`${p}\n`)) await new Promise((r) => ws.once('drain', () => r(undefined)));
    }
  };
  for await (const line of readLines(corpus, { maxLineBytes: opts.maxDocumentBytes ?? (1 << 20) })) {
    if (!('buf' in line)) continue;
    const r = parseDocument(line.buf, line.lineNo);
    if (!('doc' in r)) continue;
    batch.push(documentText(r.doc));
    if (batch.length >= 256) await flush();
  }
  if (batch.length) await flush();
  await new Promise((resolve, reject) => ws.end((/** @type {any} */ e) => (e ? reject(e) : resolve(undefined))));
  return documents;
}

/**
 * @typedef {object} AnalysisOptions
 * @property {string} [corpus] JSON Lines corpus for coherence, when the training corpus is gone
 * @property {string} [corpusTxt] an already tokenised corpus (one document per line)
 * @property {boolean} [refresh] recompute even when analysis.json exists
 * @property {string} [out] where to write (default: the model folder's analysis.json)
 * @property {(m: string) => void} [log]
 */

/**
 * @param {ModelRef} model
 * @param {AnalysisOptions} [opts]
 * @returns {Promise<Record<string, any>>} the analysis (see workers/scdv/analysis.py)
 */
export async function loadAnalysis(model, opts = {}) {
  const file = opts.out ?? path.join(model.dir, ANALYSIS_FILE);
  if (!opts.refresh) {
    const have = readAnalysis(file);
    // A corpus given now is a request for coherence: recompute when the stored analysis has none.
    if (have && !((opts.corpus || opts.corpusTxt) && !have.corpus)) return have;
  }
  return computeAnalysis(model, { ...opts, out: file });
}

/**
 * @param {string} file
 * @returns {Record<string, any> | null}
 */
export function readAnalysis(file) {
  try {
    const a = JSON.parse(fs.readFileSync(file, 'utf8'));
    return a.format === ANALYSIS_FORMAT ? a : null;
  } catch {
    return null;
  }
}

/**
 * @param {ModelRef} model
 * @param {AnalysisOptions & {out: string}} opts
 */
export async function computeAnalysis(model, opts) {
  const log = opts.log ?? (() => {});
  let corpusTxt = opts.corpusTxt ?? trainingCorpus(model);
  /** @type {string | null} */
  let scratch = null;
  try {
    if (!corpusTxt && opts.corpus) {
      scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-analysis-'));
      corpusTxt = path.join(scratch, 'corpus.txt');
      log(`analysis: tokenising ${opts.corpus} with the model's tokenizer for coherence`);
      await tokenizeCorpusFile(opts.corpus, model, corpusTxt);
    }
    if (!corpusTxt) log('analysis: no tokenised corpus for this model: coherence is left out (pass --corpus FILE)');
    await runAnalysisPython({ modelDir: model.dir, out: opts.out, corpusTxt, label: model.name });
  } finally {
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  }
  const a = readAnalysis(opts.out);
  if (!a) throw errors.ANALYSIS_FAILED(model.name, `${opts.out} was not written`);
  return a;
}
