// `scdv eval --sweep`: a grid of training and embedding settings, each measured like `scdv eval` (SCDV neighbours
// through the store), with the baselines once per tokenisation. Training settings are the cartesian product of the
// grid's `train` axes (one model each, named sweep-<hash of corpus + settings>, reused when it already exists, and
// word2vec reused between models that differ only in later stages); embedding settings are the product of the
// `embed` axes, evaluated on every model without retraining. A stage coordinator: it runs training (stages/train.js).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hashOf, loadConfig } from '../config.js';
import { errors } from '../errors.js';
import { dataDir, modelsDir } from '../paths.js';
import { loadModel } from '../model/load.js';
import { createTokenizer } from '../tokenizer/index.js';
import { Embedder, embedTokenizerConfig } from '../embed/index.js';
import { runTrain } from './train.js';
import { writeFileAtomic } from '../fsutil.js';
import { readLabelledCorpus } from '../eval/corpus.js';
import { baselines, methodResult, scdvNeighbours } from '../eval/evaluate.js';

/** Train axes -> config paths. */
const TRAIN_AXES = /** @type {const} */ ({
  clusters: 'train.gmm.n_components',
  covariance: 'train.gmm.covariance_type',
  dims: 'train.word2vec.vector_size',
  epochs: 'train.word2vec.epochs',
  window: 'train.word2vec.window',
  minCount: 'train.word2vec.min_count',
  wordKeep: 'train.topics.keep_fraction',
  probThreshold: 'train.topics.prob_threshold',
  vectorNorm: 'train.topics.vector_norm',
  idfPower: 'train.topics.idf_power',
  dictionary: 'tokenizer.dictionary',
  stopwords: 'tokenizer.stopwords.families',
  keepPos: 'tokenizer.keepPos',
  dropPos: 'tokenizer.dropPos',
  foldLongVowels: 'tokenizer.foldLongVowels',
  joinNouns: 'tokenizer.joinNouns',
});
/** Embed axes -> config paths. */
const EMBED_AXES = /** @type {const} */ ({
  damping: 'embed.damping',
  keepFraction: 'embed.keepFraction',
  keepCount: 'embed.keepCount',
  alpha: 'embed.hybrid.alpha',
  maxTerms: 'embed.hybrid.maxTerms',
  lexicalDamping: 'embed.hybrid.damping',
  lexicalStopwords: 'embed.hybrid.stopwords',
  lexicalIdfPower: 'embed.hybrid.idfPower',
  feedback: 'server.rerank.relatedFeedback.enabled',
  feedbackDocs: 'server.rerank.relatedFeedback.docs',
  feedbackWeight: 'server.rerank.relatedFeedback.weight',
});
const TOKENIZER_AXES = ['dictionary', 'stopwords', 'keepPos', 'dropPos', 'foldLongVowels', 'joinNouns'];
const W2V_AXES = ['dims', 'epochs', 'window', 'minCount', ...TOKENIZER_AXES];

/** @type {Grid} */
export const DEFAULT_GRID = {
  train: { clusters: [60, 120], covariance: ['tied'], dims: [200] },
  embed: { damping: ['binary', 'log'], keepFraction: [0.02, 0.05], alpha: [1, 0.5] },
};

/**
 * @typedef {{train: Record<string, any[]>, embed: Record<string, any[]>}} Grid
 */

/**
 * @param {unknown} raw
 * @returns {Grid}
 */
export function parseGrid(raw) {
  const fail = (/** @type {string} */ m) => errors.USAGE(`sweep grid: ${m}`);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw fail('must be a JSON object {"train": {...}, "embed": {...}}');
  const g = /** @type {Record<string, any>} */ (raw);
  for (const k of Object.keys(g)) if (k !== 'train' && k !== 'embed') throw fail(`unknown section "${k}" (train, embed)`);
  /** @type {Grid} */
  const out = { train: {}, embed: {} };
  for (const [section, axes] of /** @type {const} */ ([['train', TRAIN_AXES], ['embed', EMBED_AXES]])) {
    for (const [axis, values] of Object.entries(g[section] ?? {})) {
      if (!(axis in axes)) throw fail(`unknown ${section} axis "${axis}" (known: ${Object.keys(axes).join(', ')})`);
      if (!Array.isArray(values) || values.length === 0) throw fail(`${section}.${axis} must be a non-empty array`);
      out[section][axis] = values;
    }
  }
  return out;
}

/**
 * Cartesian product of the axes.
 * @param {Record<string, any[]>} axes
 * @returns {Record<string, any>[]}
 */
export function product(axes) {
  /** @type {Record<string, any>[]} */
  let points = [{}];
  for (const [k, vs] of Object.entries(axes)) points = points.flatMap((p) => vs.map((v) => ({ ...p, [k]: v })));
  return points;
}

/**
 * Config overrides of a grid point.
 * @param {Record<string, any>} point
 * @param {Record<string, string>} axes
 */
function overridesOf(point, axes) {
  /** @type {Record<string, any>} */
  const o = {};
  for (const [k, v] of Object.entries(point)) {
    const parts = axes[k].split('.');
    let cur = o;
    for (const p of parts.slice(0, -1)) cur = cur[p] ??= {};
    cur[parts[parts.length - 1]] = v;
  }
  return o;
}

/** @param {any} a @param {any} b */
function deepMerge(a, b) {
  const out = structuredClone(a);
  for (const [k, v] of Object.entries(b)) {
    out[k] = v && typeof v === 'object' && !Array.isArray(v) && out[k] && typeof out[k] === 'object' ? deepMerge(out[k], v) : v;
  }
  return out;
}

/**
 * @param {{corpus: string, labelField: string, grid: Grid, redisUrl: string, baseOverrides?: Record<string, any>,
 *   out?: string, k?: number, searchMode?: 'fast'|'exact', log?: (m: string) => void}} options
 */
export async function runSweep(options) {
  const t0 = Date.now();
  const log = options.log ?? ((/** @type {string} */ m) => process.stderr.write(`${m}\n`));
  const k = options.k ?? 10;
  const mode = options.searchMode ?? 'fast';
  const base = options.baseOverrides ?? {};
  const corpus = await readLabelledCorpus(options.corpus, options.labelField, { maxDocumentBytes: loadConfig({ overrides: base }).corpus.maxDocumentBytes });
  const labels = corpus.docs.map((d) => d.label);
  const trainPoints = product(options.grid.train);
  const embedPoints = product(options.grid.embed);
  log(`sweep: ${trainPoints.length} model(s) x ${embedPoints.length} embedding setting(s) on ${corpus.docs.length} documents`);
  const w2vIndexFile = path.join(dataDir(), 'work', 'sweep-w2v.json');
  /** @type {Record<string, string>} */
  const w2vIndex = fs.existsSync(w2vIndexFile) ? JSON.parse(fs.readFileSync(w2vIndexFile, 'utf8')) : {};
  /** @type {Map<string, {tokens: string[][], baseline: Record<string, any>}>} */
  const byTokenizer = new Map();
  /** @type {Record<string, any>[]} */
  const rows = [];
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-sweep-'));
  const out = options.out ?? path.join(dataDir(), 'eval', `sweep-${new Date().toISOString().replace(/[:.]/g, '-')}.md`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const summary = () => ({
    format: 'scdv-sweep/1', date: new Date().toISOString(), corpus: { path: path.resolve(options.corpus), sha256: corpus.sha256, documents: corpus.docs.length },
    label_field: options.labelField, grid: options.grid, base, k, search_mode: mode, load_average: os.loadavg().map((x) => Math.round(x * 100) / 100),
    seconds: (Date.now() - t0) / 1000, rows,
  });
  // The table so far after every row: an interrupted sweep keeps what it measured.
  const save = () => writeFileAtomic(out, sweepTable(summary()));
  try {
    for (const tp of trainPoints) {
      const config = loadConfig({ overrides: deepMerge(base, overridesOf(tp, TRAIN_AXES)) });
      const name = `sweep-${hashOf({ corpus: corpus.sha256, train: config.train, tokenizer: config.tokenizer })}`;
      if (!fs.existsSync(path.join(modelsDir(), name, 'manifest.json'))) {
        const w2vKey = hashOf({ corpus: corpus.sha256, w2v: config.train.word2vec, tokenizer: config.tokenizer });
        const from = w2vIndex[w2vKey];
        const dst = path.join(dataDir(), 'work', name);
        if (from && from !== name && fs.existsSync(path.join(dataDir(), 'work', from)) && !fs.existsSync(dst)) {
          fs.cpSync(path.join(dataDir(), 'work', from), dst, { recursive: true }); // its stamps make runTrain skip to gmm
        }
        log(`sweep: training ${name} ${JSON.stringify(tp)}`);
        const tt = Date.now();
        await runTrain({ corpus: options.corpus, name, config, redisUrl: options.redisUrl, quiet: true, log: () => {} });
        log(`sweep: trained ${name} in ${((Date.now() - tt) / 1000).toFixed(0)} s (load ${os.loadavg()[0].toFixed(2)})`);
        w2vIndex[w2vKey] = name;
        writeFileAtomic(w2vIndexFile, JSON.stringify(w2vIndex, null, 2));
      }
      const model = loadModel(name, { inMemory: true });
      try {
        const tokCfg = embedTokenizerConfig(model, config); // the model's, without the stop lists when it has a lexicon
        const tokKey = hashOf(tokCfg);
        const tokenizer = await createTokenizer(tokCfg);
        if (!byTokenizer.has(tokKey)) {
          const tmpEmbedder = new Embedder(tokenizer, model, config.embed);
          /** @type {string[][]} */
          const tokens = [];
          for (let i = 0; i < corpus.docs.length; i += 256) tokens.push(...await tmpEmbedder.tokenizeDocuments(corpus.docs.slice(i, i + 256)));
          const b = await baselines(path.join(work, tokKey), tokens, labels, null, 0, { k, folds: 0, log });
          byTokenizer.set(tokKey, {
            tokens,
            baseline: { tfidf: methodResult(labels, b.tfidf.neighbours, b.tfidf.latency_ms), mlt: methodResult(labels, b.mlt.neighbours, b.mlt.latency_ms) },
          });
          rows.push({ kind: 'baseline', method: 'tfidf', train: tp, model: name, load: Math.round(os.loadavg()[0] * 100) / 100, ...byTokenizer.get(tokKey)?.baseline.tfidf });
          rows.push({ kind: 'baseline', method: 'mlt', train: tp, model: name, load: Math.round(os.loadavg()[0] * 100) / 100, ...byTokenizer.get(tokKey)?.baseline.mlt });
        }
        const { tokens } = /** @type {{tokens: string[][]}} */ (byTokenizer.get(tokKey));
        for (const ep of embedPoints) {
          const pointConfig = loadConfig({ overrides: deepMerge(base, overridesOf(ep, EMBED_AXES)) });
          const ecfg = pointConfig.embed;
          const embedder = new Embedder(tokenizer, model, ecfg);
          const r = await scdvNeighbours(embedder, corpus.docs, tokens, { k, mode, collection: null, log, server: pointConfig.server });
          const m = methodResult(labels, r.neighbours, r.latencies);
          rows.push({ kind: 'scdv', method: ecfg.hybrid.alpha < 1 ? 'hybrid' : 'scdv', train: tp, embed: ep, model: name, ...m, mean_nnz: r.meanNnz, width: embedder.width, load: Math.round(os.loadavg()[0] * 100) / 100 });
          save();
          log(`sweep: ${name} ${JSON.stringify(tp)} ${JSON.stringify(ep)}: P@10 ${(100 * m.p_at_10).toFixed(1)} (load ${os.loadavg()[0].toFixed(2)})`);
        }
      } finally {
        model.wordTopics.close();
      }
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  const scdvRows = rows.filter((r) => r.kind === 'scdv');
  const best = scdvRows.reduce((a, b) => (b.p_at_10 > a.p_at_10 ? b : a), scdvRows[0]);
  const result = { ...summary(), best };
  writeFileAtomic(out, sweepTable(result));
  writeFileAtomic(out.replace(/\.md$/, '') + '.json', JSON.stringify(result, null, 2) + '\n');
  return { ...result, file: out };
}

/**
 * The sweep as a Markdown table, best P@10 first.
 * @param {{rows: Record<string, any>[], grid: Grid, load_average: number[], corpus: {documents: number}, search_mode: string, seconds: number}} result
 */
export function sweepTable(result) {
  const trainKeys = Object.keys(result.grid.train);
  const embedKeys = Object.keys(result.grid.embed);
  const pct = (/** @type {number} */ x) => (100 * x).toFixed(1);
  const head = ['method', ...trainKeys, ...embedKeys, 'P@1', 'P@10', 'MAP@10', 'nnz', 'mean ms', 'load', 'model'];
  const sorted = [...result.rows].sort((a, b) => b.p_at_10 - a.p_at_10);
  const lines = sorted.map((x) => [
    x.method, ...trainKeys.map((key) => JSON.stringify(x.train?.[key] ?? '')), ...embedKeys.map((key) => (x.embed ? JSON.stringify(x.embed[key]) : '')),
    pct(x.p_at_1), pct(x.p_at_10), pct(x.map_at_10), x.mean_nnz ? x.mean_nnz.toFixed(0) : '', x.mean_latency_ms.toFixed(3), x.load ?? '', x.model,
  ]);
  return [
    `Sweep on ${result.corpus.documents} documents, search ${result.search_mode}, load average at the end ${result.load_average.join(' ')}, ${result.seconds.toFixed(0)} s`,
    '',
    `| ${head.join(' | ')} |`,
    `| ${head.map(() => '---').join(' | ')} |`,
    ...lines.map((l) => `| ${l.join(' | ')} |`),
  ].join('\n') + '\n';
}
