// `scdv eval`: how well a model's vectors retrieve documents of the same label, against lexical baselines
// computed on the very same tokens.
//
// SCDV (or hybrid) neighbours come from the product path: vectors from pipeline/embed/ (the code `scdv index`
// and the server use), written to a vector-store collection, each document's related list computed as the server's
// related route computes it (pipeline/match/rerank.js with the configured list defaults: near-duplicate collapsing
// and pseudo-relevance feedback; its own id excluded), so the latency is the store's and the re-ranking's. The baselines (TF-IDF cosine, Elasticsearch-style
// more_like_this) and the linear classifiers run in Python (workers/scdv/eval_baselines.py, scikit-learn): its
// TfidfVectorizer and LinearSVC are the reference definitions of those methods, and the classifier needs it
// anyway. Python returns neighbour lists only; every metric is computed here (pipeline/eval/relevance-metrics.js).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createEmbedder, Embedder } from '../embed/index.js';
import { indexedLayoutDifference } from '../serving/index.js';
import { openModelStore, openStore } from '../store/index.js';
import { errors } from '../errors.js';
import { DEFAULT_CONFIG } from '../config.js';
import { modelsDir, validateModelName } from '../paths.js';
import { writeFileAtomic } from '../fsutil.js';
import { latencySummary, rankingMetrics } from './relevance-metrics.js';
import { readLabelledCorpus } from './corpus.js';
import { writeExchange } from './exchange.js';
import { runPythonModule } from '../python.js';
import { defaultFeedback, searchCollection } from '../match/rerank.js';

/** Format of models/<name>/eval.json (see EvalFile). */
export const EVAL_FORMAT = 'scdv-eval/1';

/**
 * Metrics of one method, as printed on the last line and stored in eval.json.
 * @typedef {object} MethodResult
 * @property {number} p_at_1
 * @property {number} p_at_10
 * @property {number} map_at_10
 * @property {number} queries
 * @property {number} mean_latency_ms per query (SCDV: the store's search; baselines: brute force in scipy)
 * @property {number} median_latency_ms
 * @property {number} p95_latency_ms
 * @property {number} [accuracy] k-fold accuracy of a linear classifier (LinearSVC, C = 1) on the vectors
 * @property {number} [accuracy_std]
 * @property {number} [mean_nnz] non-zeros per document vector (SCDV)
 * @property {number} [width] vector width (SCDV)
 * @property {number} [no_vector] documents without a vector (no known word): queries with no answer (SCDV)
 * @property {number} [queries_without_terms] documents with no interesting term (mlt): no answer
 * @property {number} [queries_without_hits] documents OpenSearch's more_like_this answered nothing for (mlt_opensearch)
 * @property {string} [engine] the engine that ran the method, e.g. "OpenSearch 2.19.3" (mlt_opensearch)
 */

/**
 * models/<name>/eval.json, written by every `scdv eval` run (the latest run wins); the training report reads it.
 * Stable shape (add keys, never rename):
 *   {
 *     "format": "scdv-eval/1", "date": ISO 8601, "model": name,
 *     "corpus": {"path", "sha256", "documents", "labels": {label: count}, "training": the model's training corpus},
 *     "label_field": "category", "holdout": (only with --holdout) {"model", "fraction", "train_documents", "test_documents"},
 *     "settings": {"k": 10, "folds": 5, "search_mode": "fast"|"exact", "collection": null|name,
 *                  "embed": {...config.embed}, "layout": {kind, width, scdvWidth, lexicalWidth},
 *                  "train": {...model hyperparameters}, "tokenizer": {dictionary, stopwordFamilies}},
 *     "load_average": [1, 5, 15 min] at the end of the run, "seconds": total,
 *     "scdv": MethodResult, "tfidf": MethodResult, "mlt": MethodResult,
 *     "mlt_opensearch": MethodResult (only when OpenSearch scored its own more_like_this: EvalOptions.mlt),
 *     "cluster": (only with EvalOptions.cluster) {"protocol": "jmteb-clustering", "clusterers": [4 names],
 *                "documents", "labels", "split", "seeds": [int], "alpha": {method: alpha},
 *                "methods": {"hybrid"?, "scdv", "lexical", "tfidf"?: {"v_measure" (test, mean over seeds),
 *                  "v_measure_std" (sample std), "v_measure_min", "v_measure_max", "chosen": {clusterer: seeds},
 *                  "seeds": [{"seed", "k", "validation": {clusterer: {v_measure, homogeneity, completeness}},
 *                             "chosen", "test": {v_measure, homogeneity, completeness}, ...}]}}},
 *     "per_query": {"hits_at_10": {"scdv": [int], "tfidf": [int], "mlt": [int], "mlt_opensearch": [int]}}
 *   }
 * per_query.hits_at_10: for every scored query (corpus order, the same queries for every method), its relevant
 * neighbours among the first 10 (P@10 × 10); the report's verdict resamples them (a bootstrap over queries).
 * Written one array per line to keep the file small.
 * The last line `scdv eval --json` prints is {"scdv", "tfidf", "mlt"} of the same object (and "mlt_opensearch").
 * @typedef {object} EvalFile
 */

/**
 * @typedef {object} EvalOptions
 * @property {string} model
 * @property {string} corpus
 * @property {string} labelField
 * @property {import('../config.js').Config} config
 * @property {string|null} [collection] search an already indexed collection of the model's store instead
 * @property {number} [k] neighbours per query (10)
 * @property {number} [folds] k-fold classifier (5; 0 or 1: no classifier)
 * @property {'fast'|'exact'} [searchMode] default: config.server.searchMode (what the server uses)
 * @property {boolean} [baselines] false: SCDV only (sweeps)
 * @property {boolean} [write] write models/<name>/eval.json (true)
 * @property {boolean} [cluster] also run JMTEB's clustering protocol (eval.json's `cluster`; pipeline/eval/cluster.js)
 * @property {number} [clusterSeeds] seeds (stratified validation/test halves) of the clustering protocol (5)
 * @property {'auto'|'python'|'opensearch'} [mlt] also score OpenSearch's own more_like_this (row `mlt_opensearch`):
 *   'opensearch' always, 'python' never (the re-implementation's row only), 'auto' (default) when
 *   config.store.backend is 'opensearch'
 * @property {(m: string) => void} [log]
 */

/** Neighbours per query (P@k, MAP@k), folds of the k-NN classifier and seeds of --cluster, unless the caller sets them. */
export const EVAL_DEFAULTS = Object.freeze({ k: 10, folds: 5, clusterSeeds: 5 });

/**
 * @param {EvalOptions} opts
 * @returns {Promise<Record<string, any>>} the eval.json object
 */
export async function runEval(opts) {
  const t0 = Date.now();
  const log = opts.log ?? ((/** @type {string} */ m) => process.stderr.write(`${m}\n`));
  const k = opts.k ?? EVAL_DEFAULTS.k;
  const folds = opts.folds ?? EVAL_DEFAULTS.folds;
  const mode = opts.searchMode ?? opts.config.server?.searchMode ?? 'fast';
  // A missing model is said before the corpus (which may be large) is read.
  if (!fs.existsSync(path.join(modelsDir(), validateModelName(opts.model), 'manifest.json'))) throw errors.MODEL_NOT_FOUND(opts.model, modelsDir());
  const corpus = await readLabelledCorpus(opts.corpus, opts.labelField, { maxDocumentBytes: opts.config.corpus.maxDocumentBytes });
  const labels = corpus.docs.map((d) => d.label);
  log(`eval: ${corpus.docs.length} documents, ${Object.keys(corpus.labels).length} labels (${opts.labelField}); model ${opts.model}`);
  const embedder = await createEmbedder(opts.model, opts.config, { inMemory: true });
  const tokens = await tokenizeAll(embedder, corpus.docs);
  const scdv = await scdvNeighbours(embedder, corpus.docs, tokens, { k, mode, collection: opts.collection ?? null, log, config: opts.config, server: opts.config.server });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-eval-'));
  try {
    /** @type {Record<string, number[]>} */
    const hitsAt10 = {};
    const keep = (/** @type {string} */ method) => (/** @type {number[]} */ hits) => { hitsAt10[method] = hits; };
    /** @type {Record<string, any>} */
    const result = { scdv: methodResult(labels, scdv.neighbours, scdv.latencies, keep('scdv')) };
    Object.assign(result.scdv, { mean_nnz: scdv.meanNnz, width: embedder.width, no_vector: scdv.noVector });
    if (opts.baselines !== false) {
      const b = await baselines(work, tokens, labels, scdv.vectors, embedder.width, { k, folds, log });
      result.tfidf = methodResult(labels, b.tfidf.neighbours, b.tfidf.latency_ms, keep('tfidf'));
      result.mlt = { ...methodResult(labels, b.mlt.neighbours, b.mlt.latency_ms, keep('mlt')), queries_without_terms: b.mlt.queries_without_terms };
      if (wantsOpenSearchMlt(opts)) {
        const { mltOpenSearch } = await import('../store/opensearch/mlt.js'); // the client only when asked for
        const real = await mltOpenSearch(tokens, { k, opensearch: opts.config.store.opensearch, log });
        result.mlt_opensearch = { ...methodResult(labels, real.neighbours, real.latency_ms, keep('mlt_opensearch')),
          queries_without_hits: real.queries_without_hits, engine: real.engine, params: real.params };
      }
      if (b.classify_skipped) result.classify_skipped = b.classify_skipped;
      if (b.classify) {
        Object.assign(result.scdv, accuracyOf(b.classify.scdv));
        Object.assign(result.tfidf, accuracyOf(b.classify.tfidf));
      }
    }
    if (opts.cluster) {
      const { clusterEval } = await import('./cluster.js');
      result.cluster = await clusterEval(embedder, tokens, labels, {
        dir: work, seeds: opts.clusterSeeds ?? EVAL_DEFAULTS.clusterSeeds, tfidf: opts.baselines !== false, embed: opts.config.embed, log,
      });
    }
    const manifest = embedder.model.manifest;
    const out = {
      format: EVAL_FORMAT,
      date: new Date().toISOString(),
      model: opts.model,
      corpus: { path: path.resolve(opts.corpus), sha256: corpus.sha256, documents: corpus.docs.length, labels: corpus.labels,
        training: corpus.sha256 === manifest.corpus?.sha256 },
      label_field: opts.labelField,
      settings: {
        k, folds, search_mode: mode, collection: opts.collection ?? null, embed: opts.config.embed, related: relatedListOptions(opts.config.server),
        layout: { kind: embedder.layout.kind, width: embedder.layout.width, scdvWidth: embedder.layout.scdvWidth, lexicalWidth: embedder.layout.lexicalWidth },
        train: manifest.hyperparameters ?? null,
        tokenizer: { dictionary: manifest.tokenizer?.dictionary?.name ?? null, stopwordFamilies: manifest.tokenizer?.stopwordFamilies ?? null },
      },
      load_average: os.loadavg().map((x) => Math.round(x * 100) / 100),
      seconds: (Date.now() - t0) / 1000,
      ...result,
      per_query: { hits_at_10: hitsAt10 },
    };
    if (opts.write !== false) writeFileAtomic(path.join(modelsDir(), opts.model, 'eval.json'), evalFileText(out));
    return out;
  } finally {
    embedder.model.wordTopics.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Whether this run also scores OpenSearch's own more_like_this (EvalOptions.mlt).
 * @param {EvalOptions} opts
 */
export function wantsOpenSearchMlt(opts) {
  const mode = opts.mlt ?? 'auto';
  return mode === 'opensearch' || (mode === 'auto' && opts.config.store?.backend === 'opensearch');
}

/**
 * eval.json's text: indented, but each array of integers (the per-query figures) on one line.
 * @param {Record<string, any>} out
 */
export function evalFileText(out) {
  return JSON.stringify(out, null, 2).replace(/\[\s*\n([\s\d,-]+?)\n\s*\]/g, (_, inner) => `[${inner.trim().split(/\s*,\s*/).join(',')}]`) + '\n';
}

/**
 * @param {{accuracy: number, accuracy_std: number} | undefined} c
 */
const accuracyOf = (c) => (c ? { accuracy: c.accuracy, accuracy_std: c.accuracy_std } : {});

/**
 * @param {string[]} labels
 * @param {ArrayLike<number>[]} neighbours
 * @param {number[]} latencies
 * @param {(hitsAt10: number[]) => void} [onHits] receives the per-query figures (eval.json's per_query)
 */
export function methodResult(labels, neighbours, latencies, onHits) {
  const m = rankingMetrics(labels, neighbours);
  onHits?.(m.hits_at_10);
  const l = latencySummary(latencies);
  return {
    p_at_1: m.p_at_1, p_at_10: m.p_at_10, map_at_10: m.map_at_10, queries: m.queries,
    mean_latency_ms: l.mean_ms, median_latency_ms: l.median_ms, p95_latency_ms: l.p95_ms,
  };
}

/**
 * Kept tokens of every document, with the tokenizer the model was trained with.
 * @param {Embedder} embedder
 * @param {{title: string, body: string}[]} docs
 */
export async function tokenizeAll(embedder, docs) {
  /** @type {string[][]} */
  const out = [];
  for (let i = 0; i < docs.length; i += 256) out.push(...await embedder.tokenizeDocuments(docs.slice(i, i + 256)));
  return out;
}

/**
 * Embed every document (or read its vector from an indexed collection), put them in a store collection and search
 * each with its own vector, itself excluded.
 * @param {Embedder} embedder
 * @param {{id: string, title: string}[]} docs
 * @param {string[][]} tokens
 * @param {{k: number, mode: 'fast'|'exact', collection: string|null, log: (m: string) => void, config?: {store: import('../config.js').Config['store']},
 *   server?: import('../config.js').Config['server']}} options
 *   config: the store backend of an indexed `collection` (the documents' own vectors otherwise go to a scratch
 *   native store that is deleted afterwards); server: the related-list defaults (relatedListOptions), the defaults'
 *   when absent
 */
export async function scdvNeighbours(embedder, docs, tokens, options) {
  const row = new Map(docs.map((d, i) => [d.id, i]));
  /** @type {{indices: Uint32Array, values: Float32Array}[]} */
  let vectors;
  let temp = null;
  let collectionName;
  /** @type {import('../store/index.js').StoreBackend} */
  let store;
  if (options.collection) {
    const diff = await indexedLayoutDifference(embedder.model.name, options.collection, embedder.layout, options.config ?? { store: DEFAULT_CONFIG.store });
    if (diff) throw errors.EMBED_LAYOUT_MISMATCH(embedder.model.name, options.collection, diff);
    store = await openModelStore(embedder.model.name, options.config ?? { store: DEFAULT_CONFIG.store });
    collectionName = options.collection;
  } else {
    temp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-eval-store-'));
    store = openStore(temp);
    collectionName = 'eval';
  }
  try {
    const c = options.collection ? await store.collection(collectionName) : await store.collection(collectionName, { width: embedder.width });
    if (c.width !== embedder.width) throw errors.STORE_WIDTH_MISMATCH(collectionName, String(c.width), String(embedder.width));
    if (!options.collection) {
      const embedded = tokens.map((t) => embedder.embedTokens(t));
      const writes = embedded.map((v, i) => ({ id: docs[i].id, vector: { indices: v.indices, values: v.values }, meta: { title: docs[i].title } }))
        .filter((w) => w.vector.indices.length);
      for (let i = 0; i < writes.length; i += 500) await c.upsert(writes.slice(i, i + 500));
      await c.flush();
    }
    // Each query is the document's vector as stored (the store keeps values at reduced precision), as the server's
    // related list by id searches with it: a fresh and an indexed collection of the same layout rank alike.
    vectors = [];
    const empty = { indices: new Uint32Array(0), values: new Float32Array(0) };
    for (const d of docs) {
      const got = await c.get(d.id);
      if (!got && options.collection) throw errors.DOCUMENT_NOT_FOUND(d.id, collectionName);
      vectors.push(got ? { indices: Uint32Array.from(got.vector.indices), values: Float32Array.from(got.vector.values) } : empty);
    }
    /** @type {number[][]} */
    const neighbours = [];
    /** @type {number[]} */
    const latencies = [];
    let noVector = 0;
    let nnz = 0;
    const server = options.server ?? DEFAULT_CONFIG.server;
    const related = relatedListOptions(server);
    for (const [i, v] of vectors.entries()) {
      nnz += v.indices.length;
      if (!v.indices.length) { noVector++; neighbours.push([]); continue; }
      const t = performance.now();
      const { hits } = await searchCollection(c, v, { excludeIds: [docs[i].id], mode: options.mode }, options.k, related, server);
      latencies.push(performance.now() - t);
      neighbours.push(hits.map((h) => /** @type {number} */ (row.get(h.id))).filter((r) => r !== undefined));
    }
    return { neighbours, latencies, vectors, noVector, meanNnz: nnz / Math.max(1, vectors.length - noVector) };
  } finally {
    await store.close();
    if (temp) fs.rmSync(temp, { recursive: true, force: true });
  }
}

/**
 * The re-ranking options of a related list with no request option (the related routes' defaults, server/search-request.js).
 * @param {import('../config.js').Config['server']} server
 * @returns {import('../match/rerank.js').RerankOptions}
 */
export function relatedListOptions(server) {
  const r = server.rerank;
  return {
    duplicateThreshold: r.collapseRelated ? r.duplicateThreshold : null, halfLifeMs: null, recencyWeight: r.recencyWeight,
    maxPerSite: null, now: Date.now(), feedback: defaultFeedback(r.relatedFeedback),
  };
}

/**
 * TF-IDF and more_like_this neighbours, and the k-fold classifiers, on the same tokens (Python, scikit-learn).
 * @param {string} dir exchange folder
 * @param {string[][]} tokens
 * @param {string[]} labels
 * @param {{indices: Uint32Array, values: Float32Array}[] | null} vectors
 * @param {number} width
 * @param {{k: number, folds: number, log: (m: string) => void}} options
 */
export async function baselines(dir, tokens, labels, vectors, width, options) {
  writeExchange(dir, { tokens, labels, ...(vectors ? { vectors, width } : {}) });
  await runPythonModule('scdv.eval_baselines', ['rank', '--dir', dir, '--k', String(options.k), '--folds', String(options.folds)], {
    onProgress: (p) => { if (p.phase) options.log(`eval: baselines ${p.phase}…`); },
  });
  return JSON.parse(fs.readFileSync(path.join(dir, 'baselines.json'), 'utf8'));
}
