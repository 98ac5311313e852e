// `scdv eval --classify`: the form in which SCDV results are published — a linear classifier (LinearSVC, C chosen
// by cross-validation on the train file) on the document vectors vs on TF-IDF of the same tokens, test accuracy.
// The vectors are the product's (same embedder) with the classifier's own α, keepFraction and lexical damping (`eval.classify`).
// Vectors come from pipeline/embed/ (the product's code); the classifiers run in Python (scikit-learn).
// Test accuracy comes with a 95 % bootstrap interval over the test documents, and SCDV − TF-IDF with a paired one
// (the same bootstrap and verdict words as the report's P@10 verdict, pipeline/eval/relevance-metrics.js).
// Writes models/<name>/eval-classify.json (format scdv-eval-classify/1: date, files, settings, scdv, tfidf,
// scdv_vs_tfidf, per_document: each method's 1/0 per test document).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createEmbedder } from '../embed/index.js';
import { modelsDir } from '../paths.js';
import { writeFileAtomic } from '../fsutil.js';
import { readLabelledCorpus } from './corpus.js';
import { writeExchange } from './exchange.js';
import { runPythonModule } from '../python.js';
import { BOOTSTRAP, intervalWord, pairedBootstrap } from './relevance-metrics.js';
import { tokenizeAll } from './evaluate.js';

/**
 * @param {{model: string, train: string, test: string, labelField: string, config: import('../config.js').Config,
 *   seed?: number, write?: boolean, log?: (m: string) => void}} options
 * @returns {Promise<Record<string, any>>}
 */
export async function runClassify(options) {
  const t0 = Date.now();
  const log = options.log ?? ((/** @type {string} */ m) => process.stderr.write(`${m}\n`));
  const opts = { maxDocumentBytes: options.config.corpus.maxDocumentBytes };
  const train = await readLabelledCorpus(options.train, options.labelField, opts);
  const test = await readLabelledCorpus(options.test, options.labelField, { ...opts, minDocuments: 1 });
  log(`eval --classify: train ${train.docs.length}, test ${test.docs.length} documents; model ${options.model}`);
  const embed = classifyEmbed(options.config.embed, options.config.eval.classify);
  const embedder = await createEmbedder(options.model, { ...options.config, embed }, { inMemory: true });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-classify-'));
  try {
    for (const [name, c] of /** @type {const} */ ([['train', train], ['test', test]])) {
      const tokens = await tokenizeAll(embedder, c.docs);
      const vectors = tokens.map((t) => { const e = embedder.embedTokens(t); return { indices: e.indices, values: e.values }; });
      writeExchange(path.join(work, name), { tokens, labels: c.docs.map((d) => d.label), vectors, width: embedder.width });
    }
    const r = await runPythonModule('scdv.eval_baselines', [
      'classify', '--train', path.join(work, 'train'), '--test', path.join(work, 'test'), '--seed', String(options.seed ?? 1),
    ]);
    const out = {
      format: 'scdv-eval-classify/1', date: new Date().toISOString(), model: options.model,
      train: { path: path.resolve(options.train), sha256: train.sha256 }, test: { path: path.resolve(options.test), sha256: test.sha256 },
      label_field: options.labelField, settings: { embed, classify: options.config.eval.classify, layout: embedder.layout.kind, width: embedder.width },
      load_average: os.loadavg().map((x) => Math.round(x * 100) / 100), seconds: (Date.now() - t0) / 1000,
      train_documents: r.train_documents, test_documents: r.test_documents, test_labels_unseen_in_train: r.test_labels_unseen_in_train,
      ...withIntervals(r),
    };
    if (options.write !== false) writeFileAtomic(path.join(modelsDir(), options.model, 'eval-classify.json'), JSON.stringify(out, null, 2) + '\n');
    return out;
  } finally {
    embedder.model.wordTopics.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The embed settings of the classifier's vectors: the served ones with `eval.classify`'s α, keepFraction and
 * lexical damping (a linear classifier gains from dense vectors and 1 + ln tf, a related list from sparse ones and
 * binary tf: docs/relevance.md).
 * @param {import('../config.js').Config['embed']} embed
 * @param {import('../config.js').Config['eval']['classify']} classify
 * @returns {import('../config.js').Config['embed']}
 */
export function classifyEmbed(embed, classify) {
  return {
    ...embed, keepFraction: classify.keepFraction,
    hybrid: { ...embed.hybrid, alpha: classify.alpha, damping: classify.damping, stopwords: classify.stopwords, idfPower: classify.idfPower },
  };
}

/** Classifier methods of the Python result, in the order shown. */
const METHODS = /** @type {const} */ (['scdv', 'tfidf']);

/**
 * Each method's accuracy with its bootstrap interval over the test documents, SCDV − TF-IDF with a paired interval
 * and its word (better / tied / worse), and the per-document figures (moved out of the methods' summaries).
 * @param {Record<string, any>} result the Python result: {scdv, tfidf} each with `correct`, 1 or 0 per test document
 */
export function withIntervals(result) {
  /** @type {Record<string, any>} */
  const out = {};
  /** @type {Record<string, number[]>} */
  const perDocument = {};
  for (const m of METHODS) {
    const { correct, ...summary } = result[m];
    const ci = pairedBootstrap(correct, new Array(correct.length).fill(0), BOOTSTRAP);
    out[m] = { ...summary, interval: { low: ci.low, high: ci.high, confidence: ci.confidence } };
    perDocument[m] = correct;
  }
  const d = pairedBootstrap(perDocument.scdv, perDocument.tfidf, BOOTSTRAP);
  out.scdv_vs_tfidf = { ...d, word: intervalWord(d) };
  out.per_document = perDocument;
  return out;
}
