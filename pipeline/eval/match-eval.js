// `scdv eval --match`: how well pages find short texts (ads) of their own label, against lexical baselines on the
// very same tokens. The ads are either an ad file (JSON Lines with the label field, as `scdv index` takes ads) or
// a proxy built from the labelled corpus itself: every third document's title is an ad (TITLE_EVERY), the other
// documents are the pages, so a page's own title is never among the ads it is matched with.
//
// The product rows come from the product path: both collections embedded by pipeline/embed/ (the code `scdv index`
// and the server use) into a scratch store, each page's stored vector searched in the ads' collection as GET
// /v1/match searches it (pipeline/match/rerank.js with the match route's defaults, min_score aside: the ranking is
// measured, not the threshold). With the hybrid layout the SCDV block alone and the lexical block alone are the
// experiment arms' queries (pipeline/events/arms.js methodQuery) against the same stored ads. TF-IDF and the
// more_like_this re-implementation run in Python (workers/scdv/eval_baselines.py `match`); OpenSearch's own
// more_like_this when asked (as for related lists). Every metric is computed here (pipeline/eval/relevance-metrics.js).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createEmbedder } from '../embed/index.js';
import { adEmbedSettings } from '../embed/layout.js';
import { openStore } from '../store/index.js';
import { errors } from '../errors.js';
import { modelsDir, validateModelName } from '../paths.js';
import { writeFileAtomic } from '../fsutil.js';
import { crossRankingMetrics, latencySummary } from './relevance-metrics.js';
import { readLabelledCorpus } from './corpus.js';
import { writeExchange } from './exchange.js';
import { runPythonModule } from '../python.js';
import { searchCollection } from '../match/rerank.js';
import { expandSettingsOf, ownCollectionOf, writeExpanded } from '../match/expand.js';
import { methodQuery } from '../events/arms.js';
import { EVAL_DEFAULTS, evalFileText, tokenizeAll, wantsOpenSearchMlt } from './evaluate.js';

/** Format of models/<name>/eval-match.json. */
export const MATCH_EVAL_FORMAT = 'scdv-eval-match/1';
/** The file a match evaluation writes in the model's folder (eval.json stays the related lists'). */
export const MATCH_EVAL_FILE = 'eval-match.json';
/** The titles-as-ads proxy: the title of every TITLE_EVERY-th document (the 3rd, 6th, … in corpus order) is an ad. */
export const TITLE_EVERY = 3;

/**
 * @typedef {object} MatchEvalOptions
 * @property {string} model
 * @property {string} corpus the labelled pages (with the proxy: the labelled corpus the ads are taken from)
 * @property {string} labelField
 * @property {string | null} [ads] an ad file (JSON Lines, the label in labelField); null: the titles-as-ads proxy
 * @property {import('../config.js').Config} config
 * @property {import('../config.js').Config['embed'] | null} [adEmbed] the ads' embed settings (default: productAdEmbed; null:
 *   the pages'), when they differ from the
 *   pages' (config.embed): a collection's layout is its own, and a dot product of two hybrid vectors of α_p and α_a
 *   weighs the SCDV cosine √(α_p·α_a) and the lexical one √((1 − α_p)(1 − α_a))
 * @property {string | null} [expandFrom] the pages the ads are expanded from (adEmbed.expand; with --holdout the training
 *   half): documents that are not among the scored pages, else an ad would find the very pages it is scored on. Absent or
 *   null: the ads are not expanded
 * @property {number} [k] ads per page (10)
 * @property {'fast'|'exact'} [searchMode]
 * @property {boolean} [baselines] false: the product rows only
 * @property {'auto'|'python'|'opensearch'} [mlt] as EvalOptions.mlt
 * @property {boolean} [write] write models/<name>/eval-match.json (true)
 * @property {(m: string) => void} [log]
 */

/**
 * @typedef {{id: string, title: string, body: string, label: string}} Text
 */

/**
 * Pages and ads of a match evaluation.
 * @param {import('./corpus.js').LabelledDocument[]} docs the labelled corpus
 * @param {import('./corpus.js').LabelledDocument[] | null} adDocs the ad file's documents (null: the proxy)
 * @param {string} file the corpus (named in errors)
 * @returns {{pages: Text[], ads: Text[], proxy: boolean}}
 */
export function matchSets(docs, adDocs, file) {
  if (adDocs) return { pages: docs, ads: adDocs, proxy: false };
  /** @type {Text[]} */ const pages = [];
  /** @type {Text[]} */ const ads = [];
  /** @type {number[]} */ const untitled = [];
  docs.forEach((d, i) => {
    if ((i + 1) % TITLE_EVERY) { pages.push(d); return; }
    if (!d.title.trim()) untitled.push(d.line);
    // The ad is the title alone, as a one-line ad would be indexed (its body; `scdv index` embeds title + body).
    ads.push({ id: `title:${d.id}`, title: '', body: d.title, label: d.label });
  });
  if (untitled.length) {
    throw errors.EVAL_CORPUS_INVALID(file, `the titles-as-ads proxy takes the title of every ${TITLE_EVERY}rd document as an ad, ` +
      `and ${untitled.length} of them have none (line${untitled.length > 1 ? 's' : ''} ${untitled.slice(0, 5).join(', ')}` +
      `${untitled.length > 5 ? ', …' : ''}); give them a title or pass an ad file with --ads`);
  }
  if (!ads.length || !pages.length) throw errors.EVAL_CORPUS_INVALID(file, `${docs.length} document(s): the titles-as-ads proxy needs at least ${TITLE_EVERY}`);
  return { pages, ads, proxy: true };
}

/**
 * The embed settings the product gives an ad collection (adEmbed over the pages' embed), null when it gives the
 * pages' (adEmbed.collections empty).
 * @param {import('../config.js').Config} config
 */
export function productAdEmbed(config) {
  return config.adEmbed?.collections.length ? adEmbedSettings(config.embed, config.adEmbed) : null;
}

/**
 * The re-ranking options of /v1/match with no request option (server/search-request.js rerankOptions with the match
 * route's schema defaults: collapsing as server.rerank.collapseMatch, no recency, no per-site cap, no feedback).
 * @param {import('../config.js').Config['server']} server
 * @returns {import('../match/rerank.js').RerankOptions}
 */
export function matchListOptions(server) {
  const r = server.rerank;
  return { duplicateThreshold: r.collapseMatch ? r.duplicateThreshold : null, halfLifeMs: null, recencyWeight: r.recencyWeight, maxPerSite: null, now: Date.now(), feedback: null };
}

/**
 * @param {MatchEvalOptions} opts
 * @returns {Promise<Record<string, any>>} the eval-match.json object
 */
export async function runMatchEval(opts) {
  const t0 = Date.now();
  const log = opts.log ?? ((/** @type {string} */ m) => process.stderr.write(`${m}\n`));
  const k = opts.k ?? EVAL_DEFAULTS.k;
  const mode = opts.searchMode ?? opts.config.server?.searchMode ?? 'fast';
  if (!fs.existsSync(path.join(modelsDir(), validateModelName(opts.model), 'manifest.json'))) throw errors.MODEL_NOT_FOUND(opts.model, modelsDir());
  const read = (/** @type {string} */ file) => readLabelledCorpus(file, opts.labelField, { maxDocumentBytes: opts.config.corpus.maxDocumentBytes });
  const corpus = await read(opts.corpus);
  const adFile = opts.ads ? await read(opts.ads) : null;
  const { pages, ads, proxy } = matchSets(corpus.docs, adFile?.docs ?? null, opts.corpus);
  const pageLabels = pages.map((d) => d.label);
  const adLabels = ads.map((d) => d.label);
  log(`eval --match: ${pages.length} pages, ${ads.length} ${proxy ? 'titles as ads' : `ads (${opts.ads})`}; label ${opts.labelField}; model ${opts.model}`);
  const embedder = await createEmbedder(opts.model, opts.config, { inMemory: true });
  // The ads as the product embeds an ad collection (adEmbed), unless told otherwise.
  const adEmbed = opts.adEmbed === undefined ? productAdEmbed(opts.config) : opts.adEmbed;
  const adEmbedder = adEmbed ? embedder.withSettings(adEmbed) : embedder;
  if (adEmbedder.width !== embedder.width) {
    throw errors.USAGE(`the ads' embed settings give vectors ${adEmbedder.width} wide, the pages' ${embedder.width}: both must be hybrid (alpha below 1) or both pure SCDV`);
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-eval-match-'));
  try {
    const pageTokens = await tokenizeAll(embedder, pages);
    const adTokens = await tokenizeAll(embedder, ads);
    // Ad expansion (adEmbed.expand) from documents that are not the scored pages, by the product's code.
    const expand = opts.expandFrom ? expandSettingsOf({ ...opts.config.adEmbed, collections: ['ads'] }, 'ads') : null;
    /** @type {{docs: Text[], tokens: string[][]} | null} */
    let from = null;
    if (expand && opts.expandFrom) {
      const docs = (await read(opts.expandFrom)).docs;
      from = { docs, tokens: await tokenizeAll(embedder, docs) };
      log(`eval --match: ads expanded from ${docs.length} documents of ${opts.expandFrom} (${expand.neighbours} nearest, weight ${expand.weight})`);
    } else if (!opts.expandFrom) {
      log('eval --match: ads not expanded (adEmbed.expand needs pages other than the scored ones: --holdout, or --expand-from FILE)');
    }
    const product = await productMatches(embedder, adEmbedder, pages, pageTokens, ads, adTokens, { k, mode, dir: path.join(work, 'store'), server: opts.config.server, expand, from });
    /** @type {Record<string, number[]>} */
    const hitsAt10 = {};
    const scored = (/** @type {string} */ name, /** @type {ArrayLike<number>[]} */ neighbours, /** @type {number[]} */ latencies) => {
      const m = crossRankingMetrics(pageLabels, adLabels, neighbours);
      hitsAt10[name] = m.hits_at_10;
      const l = latencySummary(latencies);
      return { p_at_1: m.p_at_1, p_at_10: m.p_at_10, map_at_10: m.map_at_10, queries: m.queries, mean_latency_ms: l.mean_ms, median_latency_ms: l.median_ms, p95_latency_ms: l.p95_ms };
    };
    /** @type {Record<string, any>} */
    const result = {};
    for (const [name, r] of Object.entries(product.methods)) {
      result[name] = { ...scored(name, r.neighbours, r.latencies), ...(name === 'scdv' ? { width: embedder.width, mean_nnz: product.meanNnz } : {}), pages_without_results: r.empty };
    }
    if (opts.baselines !== false) {
      writeExchange(work, { tokens: [...pageTokens, ...adTokens], labels: [...pageLabels, ...adLabels] });
      fs.writeFileSync(path.join(work, 'match.json'), JSON.stringify({ queries: pages.length }));
      await runPythonModule('scdv.eval_baselines', ['match', '--dir', work, '--k', String(k)], {
        onProgress: (p) => { if (p.phase) log(`eval --match: baselines ${p.phase}…`); },
      });
      const b = JSON.parse(fs.readFileSync(path.join(work, 'baselines.json'), 'utf8'));
      result.tfidf = { ...scored('tfidf', b.tfidf.neighbours, b.tfidf.latency_ms), features: b.tfidf.features };
      result.mlt = { ...scored('mlt', b.mlt.neighbours, b.mlt.latency_ms), queries_without_terms: b.mlt.queries_without_terms };
      if (wantsOpenSearchMlt({ ...opts, collection: null })) {
        const { mltOpenSearch } = await import('../store/opensearch/mlt.js'); // the client only when asked for
        const real = await mltOpenSearch(adTokens, { k, opensearch: opts.config.store.opensearch, log, queries: pageTokens });
        result.mlt_opensearch = { ...scored('mlt_opensearch', real.neighbours, real.latency_ms), queries_without_hits: real.queries_without_hits, engine: real.engine, params: real.params };
      }
    }
    const manifest = embedder.model.manifest;
    const out = {
      format: MATCH_EVAL_FORMAT,
      date: new Date().toISOString(),
      model: opts.model,
      corpus: { path: path.resolve(opts.corpus), sha256: corpus.sha256, documents: corpus.docs.length, labels: corpus.labels, training: corpus.sha256 === manifest.corpus?.sha256 },
      ads: proxy ? { proxy: 'titles', every: TITLE_EVERY, count: ads.length } : { path: path.resolve(/** @type {string} */ (opts.ads)), sha256: adFile?.sha256, count: ads.length, labels: adFile?.labels },
      pages: pages.length,
      label_field: opts.labelField,
      settings: {
        k, search_mode: mode, embed: opts.config.embed, ...(adEmbed ? { ads_embed: adEmbed } : {}),
        ads_expand: expand && from ? { ...expand, from: path.resolve(/** @type {string} */ (opts.expandFrom)), from_documents: from.docs.length, mean_nnz_own: product.adNnz.own, mean_nnz_expanded: product.adNnz.stored } : null, match: matchListOptions(opts.config.server),
        layout: { kind: embedder.layout.kind, width: embedder.layout.width, scdvWidth: embedder.layout.scdvWidth, lexicalWidth: embedder.layout.lexicalWidth },
        train: manifest.hyperparameters ?? null,
      },
      load_average: os.loadavg().map((x) => Math.round(x * 100) / 100),
      seconds: (Date.now() - t0) / 1000,
      ...result,
      per_query: { hits_at_10: hitsAt10 },
    };
    if (opts.write !== false) writeFileAtomic(path.join(modelsDir(), opts.model, MATCH_EVAL_FILE), evalFileText(out));
    return out;
  } finally {
    embedder.model.wordTopics.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The product's matches: pages and ads embedded into two collections of a scratch store, each page's stored vector
 * searched in the ads' collection as /v1/match searches (methods: 'scdv' the vectors as indexed; with the hybrid
 * layout also 'scdv_block' and 'lexical_block', the arms' queries).
 * @param {import('../embed/index.js').Embedder} embedder the pages'
 * @param {import('../embed/index.js').Embedder} adEmbedder the ads' (the same, or one of other embed settings)
 * @param {Text[]} pages
 * @param {string[][]} pageTokens
 * @param {Text[]} ads
 * @param {string[][]} adTokens
 * @param {{k: number, mode: 'fast'|'exact', dir: string, server: import('../config.js').Config['server'],
 *   expand: import('../match/expand.js').ExpandSettings | null, from: {docs: Text[], tokens: string[][]} | null}} o expand, from: the
 *   ads expanded from these documents (embedded as pages) by the product's code (pipeline/match/expand.js)
 */
async function productMatches(embedder, adEmbedder, pages, pageTokens, ads, adTokens, o) {
  const store = openStore(o.dir);
  try {
    const adNnz = { own: 0, stored: 0 };
    /** @param {string} name @param {import('../embed/index.js').Embedder} e @param {Text[]} docs @param {string[][]} tokens @param {import('../store/index.js').CollectionHandle | null} [source] */
    const write = async (name, e, docs, tokens, source = null) => {
      const c = await store.collection(name, { width: e.width });
      const own = source && o.expand ? await store.collection(ownCollectionOf(name), { width: e.width }) : null;
      const writes = tokens.map((t, i) => ({ id: docs[i].id, vector: e.embedTokens(t), meta: { category: docs[i].label } }))
        .filter((w) => w.vector.indices.length).map((w) => ({ ...w, vector: { indices: w.vector.indices, values: w.vector.values } }));
      for (let i = 0; i < writes.length; i += 500) {
        const batch = writes.slice(i, i + 500);
        if (own && o.expand) await writeExpanded({ own, target: c, source }, batch, o.expand);
        else await c.upsert(batch);
      }
      await c.flush();
      return c;
    };
    const pageColl = await write('pages', embedder, pages, pageTokens);
    const fromColl = o.from ? await write('from', embedder, o.from.docs, o.from.tokens) : null;
    const adColl = await write('ads', adEmbedder, ads, adTokens, fromColl);
    for (const d of ads) {
      const stored = await adColl.get(d.id);
      const own = fromColl ? await (await store.collection(ownCollectionOf('ads'))).get(d.id) : stored;
      adNnz.stored += stored?.vector.indices.length ?? 0;
      adNnz.own += own?.vector.indices.length ?? 0;
    }
    adNnz.own = Math.round(adNnz.own / Math.max(1, ads.length));
    adNnz.stored = Math.round(adNnz.stored / Math.max(1, ads.length));
    const adRow = new Map(ads.map((d, i) => [d.id, i]));
    const layout = embedder.layout;
    const alpha = layout.embed.hybrid.alpha;
    /** @type {('scdv'|'scdv_block'|'lexical_block')[]} */
    const methods = ['scdv', ...(layout.kind === 'hybrid' && alpha > 0 ? /** @type {const} */ (['scdv_block', 'lexical_block']) : [])];
    /** @type {Record<string, {neighbours: number[][], latencies: number[], empty: number}>} */
    const out = Object.fromEntries(methods.map((m) => [m, { neighbours: [], latencies: [], empty: 0 }]));
    const options = matchListOptions(o.server);
    let nnz = 0;
    let withVector = 0;
    for (const page of pages) {
      // The page's vector as stored (the match route by id searches with it).
      const got = await pageColl.get(page.id);
      const v = got ? { indices: Uint32Array.from(got.vector.indices), values: Float32Array.from(got.vector.values) } : null;
      if (v) { nnz += v.indices.length; withVector++; }
      for (const m of methods) {
        const q = v && (m === 'scdv' ? v : /** @type {{indices: Uint32Array, values: Float32Array}} */ (methodQuery(m === 'scdv_block' ? 'scdv' : 'lexical', v, layout)));
        const r = out[m];
        if (!q || !q.indices.length) { r.neighbours.push([]); r.empty++; continue; }
        const t = performance.now();
        const { hits } = await searchCollection(adColl, q, { mode: o.mode }, o.k, options, o.server);
        r.latencies.push(performance.now() - t);
        if (!hits.length) r.empty++;
        r.neighbours.push(hits.map((h) => /** @type {number} */ (adRow.get(h.id))));
      }
    }
    return { methods: out, meanNnz: nnz / Math.max(1, withVector), adNnz };
  } finally {
    await store.close();
  }
}
