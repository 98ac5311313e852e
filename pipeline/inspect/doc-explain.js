// `scdv inspect doc` and `scdv explain`: what carries a document's vector, and why two documents match.
//
// The store keeps a document's vector and metadata, not its text. Topics come from the vector alone (every
// dimension belongs to a cluster). Words need the text: given (--text), or found by id in the corpus the
// collection was indexed from (--corpus); the text is embedded again by pipeline/embed/ with the model's
// tokenizer and the embed settings the collection was indexed with (pipeline/serving/), and the recomputed vector is checked against the stored one (agreement =
// their cosine; below 0.999 the text or the settings are not those the document was indexed with).
// Without text, each topic is labelled with the cluster's own top words from the model's analysis.
import { sparseDot } from '../embed/vectorizer.js';
import { documentText } from '../corpus/document.js';
import { errors } from '../errors.js';
import { topicMass, dotByTopic, wordContributions, wordsOfCluster, LEXICAL } from './attribution.js';
import { openCollection, storedDocument, findCorpusDocuments } from './sources.js';

/** Below this cosine between the recomputed and the stored vector, the output warns. */
export const AGREEMENT_MIN = 0.999;

/**
 * @typedef {object} DocSpec
 * @property {string} [id] a document of the collection
 * @property {string} [text] its text (or a free text when no id)
 */

/**
 * @typedef {object} ResolvedDoc
 * @property {string|null} id
 * @property {Record<string, any>|null} meta stored metadata
 * @property {{indices: Uint32Array, values: Float32Array}} vector the vector decomposed
 * @property {'store'|'text'} vectorSource
 * @property {string[]|null} tokens when the text is known
 * @property {number|null} agreement cosine(recomputed, stored) when both exist
 * @property {number} knownWords
 * @property {number} unknownWords
 * @property {number} scdvWidth K·d of the model (dims past it: the hybrid layout's lexical block)
 * @property {boolean} hybrid the vector has the hybrid layout (embed.hybrid.alpha < 1): known from the
 *   collection's width for a stored vector, from the embedder's layout for a recomputed one
 */

/**
 * @typedef {object} InspectContext
 * @property {import('../embed/index.js').Embedder} embedder
 * @property {import('../config.js').Config['embed']} embedCfg
 * @property {string} [collection]
 * @property {string} [corpus] JSON Lines corpus to find texts by id
 * @property {Record<string, any>|null} analysis for cluster labels
 * @property {import('../config.js').Config['store']} store which store backend holds the collection
 */

/**
 * Resolve documents: stored vectors by id, texts from --text or the corpus, vectors recomputed from texts.
 * @param {InspectContext} ctx
 * @param {DocSpec[]} specs
 * @returns {Promise<ResolvedDoc[]>}
 */
export async function resolveDocuments(ctx, specs) {
  const ids = specs.filter((s) => s.id !== undefined && s.text === undefined).map((s) => /** @type {string} */ (s.id));
  const texts = ctx.corpus && ids.length ? await findCorpusDocuments(ctx.corpus, ids) : null;
  /** @type {Awaited<ReturnType<typeof openCollection>> | null} */
  let opened = null;
  try {
    if (specs.some((s) => s.id !== undefined)) {
      if (!ctx.collection) throw errors.USAGE('an id needs --collection C');
      opened = await openCollection(ctx.embedder.model.name, ctx.collection, ctx);
    }
    /** @type {ResolvedDoc[]} */
    const out = [];
    for (const s of specs) out.push(await resolveOne(ctx, s, texts, opened));
    return out;
  } finally {
    await opened?.store.close();
  }
}

/**
 * @param {InspectContext} ctx
 * @param {DocSpec} s
 * @param {Map<string, import('../corpus/document.js').Document> | null} texts
 * @param {Awaited<ReturnType<typeof openCollection>> | null} opened
 * @returns {Promise<ResolvedDoc>}
 */
async function resolveOne(ctx, s, texts, opened) {
  const stored = s.id !== undefined && opened ? await storedDocument(opened.coll, s.id, /** @type {string} */ (ctx.collection)) : null;
  let text = s.text;
  if (text === undefined && s.id !== undefined && texts) {
    const doc = texts.get(s.id);
    if (!doc) throw errors.DOCUMENT_TEXT_NOT_FOUND(s.id, /** @type {string} */ (ctx.corpus));
    text = documentText(doc);
  }
  if (text === undefined) {
    const v = /** @type {NonNullable<typeof stored>} */ (stored).vector;
    return {
      id: s.id ?? null, meta: stored?.meta ?? null, vector: { indices: Uint32Array.from(v.indices), values: Float32Array.from(v.values) },
      vectorSource: /** @type {const} */ ('store'), tokens: null, agreement: null, knownWords: 0, unknownWords: 0,
      scdvWidth: ctx.embedder.model.wordTopics.width,
      hybrid: /** @type {NonNullable<typeof opened>} */ (opened).coll.width > ctx.embedder.model.wordTopics.width,
    };
  }
  const tokens = ctx.embedder.tokenizer.tokenize(text);
  const e = ctx.embedder.vectorizer.embed(tokens);
  if (e.indices.length === 0) throw errors.NO_USABLE_WORDS(ctx.embedder.model.name, new Set(tokens).size);
  return {
    id: s.id ?? null, meta: stored?.meta ?? null, vector: { indices: e.indices, values: e.values },
    vectorSource: /** @type {const} */ ('text'), tokens,
    // A true cosine: the store keeps values as 11-bit codes (within half a unit), so a stored vector's norm is not exactly 1.
    agreement: stored ? sparseDot(e, stored.vector) / Math.sqrt(sparseDot(e, e) * sparseDot(stored.vector, stored.vector)) : null, knownWords: e.knownWords, unknownWords: e.unknownWords,
    scdvWidth: ctx.embedder.model.wordTopics.width,
    hybrid: ctx.embedder.layout.kind === 'hybrid',
  };
}

/**
 * @param {Record<string, any>|null} analysis
 * @param {number} k
 * @param {number} n
 */
function clusterLabel(analysis, k, n) {
  const c = analysis?.clusters?.[k];
  if (k === LEXICAL) return ['(lexical TF-IDF block)'];
  return c ? c.top_words.slice(0, n).map((/** @type {any} */ w) => w.word) : [];
}

/** @param {number} x */
const round = (x) => Math.round(x * 1e6) / 1e6;

/**
 * @param {ResolvedDoc} d
 */
function describe(d) {
  return {
    id: d.id, title: d.meta?.title ?? null, meta: d.meta, vectorSource: d.vectorSource, nnz: d.vector.indices.length,
    ...(d.tokens ? { knownWords: d.knownWords, unknownWords: d.unknownWords } : {}),
    ...(d.agreement !== null ? { agreementWithStored: round(d.agreement) } : {}),
  };
}

/**
 * What carries one document's vector.
 * @param {InspectContext} ctx
 * @param {ResolvedDoc} doc
 * @param {{top?: number}} [opts]
 */
export function inspectDocument(ctx, doc, opts = {}) {
  const top = opts.top ?? 10;
  const wt = ctx.embedder.model.wordTopics;
  const words = doc.tokens && !doc.hybrid ? wordContributions(doc.tokens, doc.vector, wt, ctx.embedCfg) : null;
  const topics = topicMass(doc.vector, wt.dim, wt.width);
  return {
    model: ctx.embedder.model.name,
    collection: doc.id !== null ? ctx.collection ?? null : null,
    document: describe(doc),
    warnings: warningsFor([doc]),
    topics: topics.slice(0, top).map((t) => ({
      cluster: t.cluster, share: round(t.mass), clusterWords: clusterLabel(ctx.analysis, t.cluster, 6),
      ...(words ? { words: wordsOfCluster(words.words, t.cluster, 5).map((w) => ({ word: w.word, contribution: round(w.contribution) })) } : {}),
    })),
    topicsTotal: topics.length,
    words: words ? words.words.slice(0, top * 2).map((w) => ({
      word: w.word, tf: w.tf, share: round(w.contribution),
      clusters: [...w.byCluster].sort((a, b) => b[1] - a[1]).slice(0, 2).map(([k]) => k),
    })) : null,
    wordsTotal: words ? words.words.length : null,
    unknownWords: words ? words.unknown.slice(0, 20) : null,
    check: { topicShareSum: round(topics.reduce((s, t) => s + t.mass, 0)), ...(words ? { wordShareSum: round(words.total) } : {}) },
  };
}

/**
 * The lexical block's part of a pair's score, word by word: each dimension of that block is one word of the
 * lexicon (row indexOf(word) above the SCDV block), so its contribution is the product of the two values there.
 * Named from the words of the texts at hand (null when neither side has a text, or the layout has no such block).
 * @param {InspectContext} ctx
 * @param {ResolvedDoc} a
 * @param {ResolvedDoc} b
 * @returns {{word: string, contribution: number}[] | null}
 */
function lexicalWords(ctx, a, b) {
  const lex = ctx.embedder.vectorizer.lexicon;
  if (!lex || (!a.tokens && !b.tokens)) return null;
  const at = (/** @type {ResolvedDoc} */ d) => new Map(Array.from(d.vector.indices, (i, j) => [i, d.vector.values[j]]));
  const va = at(a);
  const vb = at(b);
  const offset = ctx.embedder.model.wordTopics.width;
  /** @type {{word: string, contribution: number}[]} */
  const out = [];
  for (const word of new Set([...(a.tokens ?? []), ...(b.tokens ?? [])])) {
    const r = lex.indexOf(word);
    if (r < 0) continue;
    const c = (va.get(offset + r) ?? 0) * (vb.get(offset + r) ?? 0);
    if (c !== 0) out.push({ word, contribution: c });
  }
  return out.sort((x, y) => y.contribution - x.contribution);
}

/**
 * Why two documents are related: the score split over shared topics and over each side's words.
 * @param {InspectContext} ctx
 * @param {ResolvedDoc} a
 * @param {ResolvedDoc} b
 * @param {{top?: number}} [opts]
 */
export function explainPair(ctx, a, b, opts = {}) {
  const top = opts.top ?? 10;
  const wt = ctx.embedder.model.wordTopics;
  const { score, topics } = dotByTopic(a.vector, b.vector, wt.dim, wt.width);
  const hybrid = a.hybrid || b.hybrid;
  const wa = a.tokens && !hybrid ? wordContributions(a.tokens, a.vector, wt, ctx.embedCfg, b.vector) : null;
  const wb = b.tokens && !hybrid ? wordContributions(b.tokens, b.vector, wt, ctx.embedCfg, a.vector) : null;
  const lexical = hybrid ? lexicalWords(ctx, a, b) : null;
  const inA = new Set(a.tokens ?? []);
  const inB = new Set(b.tokens ?? []);
  /** @param {NonNullable<typeof wa>} w @param {Set<string>} other */
  const listWords = (w, other) => w.words.filter((x) => x.contribution !== 0).slice(0, top * 2)
    .map((x) => ({ word: x.word, contribution: round(x.contribution), shared: other.has(x.word) }));
  const shared = wa && wb ? wa.words.filter((x) => inB.has(x.word)).map((x) => {
    const y = wb.words.find((z) => z.word === x.word);
    return { word: x.word, a: round(x.contribution), b: round(y?.contribution ?? 0) };
  }).sort((p, q) => (q.a + q.b) - (p.a + p.b)).slice(0, top * 2) : null;
  return {
    model: ctx.embedder.model.name,
    a: describe(a), b: describe(b),
    warnings: warningsFor([a, b]),
    score: round(score),
    topics: topics.slice(0, top).map((t) => ({
      cluster: t.cluster, contribution: round(t.contribution), share: score ? round(t.contribution / score) : 0,
      clusterWords: clusterLabel(ctx.analysis, t.cluster, 6),
      ...(wa ? { wordsA: wordsOfCluster(wa.words, t.cluster, 4).map((w) => ({ word: w.word, contribution: round(w.contribution) })) } : {}),
      ...(wb ? { wordsB: wordsOfCluster(wb.words, t.cluster, 4).map((w) => ({ word: w.word, contribution: round(w.contribution) })) } : {}),
      ...(t.cluster === LEXICAL && lexical ? { lexicalWords: lexical.slice(0, top).map((w) => ({ word: w.word, contribution: round(w.contribution) })) } : {}),
    })),
    topicsTotal: topics.length,
    lexicalWords: lexical ? lexical.slice(0, top * 2).map((w) => ({ word: w.word, contribution: round(w.contribution) })) : null,
    wordsA: wa ? listWords(wa, inB) : null,
    wordsB: wb ? listWords(wb, inA) : null,
    sharedWords: shared,
    check: {
      topicSum: round(topics.reduce((s, t) => s + t.contribution, 0)),
      ...(wa ? { wordSumA: round(wa.total) } : {}), ...(wb ? { wordSumB: round(wb.total) } : {}),
      ...(lexical ? { lexicalWordSum: round(lexical.reduce((x, w) => x + w.contribution, 0)) } : {}),
    },
  };
}

/** @param {ResolvedDoc[]} docs */
function warningsFor(docs) {
  /** @type {string[]} */
  const out = [];
  for (const d of docs) {
    if (d.hybrid) {
      out.push(`document ${d.id ?? '(text)'}: hybrid vector (embed.hybrid.alpha < 1): cluster -1 is the lexical TF-IDF block, ` +
        (d.tokens ? 'split over its words (the words both texts share); the topics\' words are not decomposed for this layout'
          : 'whose words need the text (--corpus FILE); the topics\' words are not decomposed for this layout'));
    }
    if (d.agreement !== null && d.agreement < AGREEMENT_MIN) {
      out.push(`document ${d.id}: the text gives a vector with cosine ${d.agreement.toFixed(4)} to the stored one: ` +
        'it is not the text (or the embed settings) the document was indexed with; words and topics describe the text given');
    }
    if (d.vectorSource === 'store') out.push(`document ${d.id}: no text (pass --corpus FILE, the corpus the collection was indexed from): topics only, labelled with each cluster's top words`);
  }
  return out;
}
