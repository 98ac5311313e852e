// Text -> document vector, the whole way: tokenizer + model + vectorizer. Batch workers and the server
// both build one of these, so a document gets the same vector in a batch job and at request time.
import fs from 'node:fs';
import path from 'node:path';
import { createTokenizer } from '../tokenizer/index.js';
import { loadModel } from '../model/load.js';
import { DocumentVectorizer } from './vectorizer.js';
import { documentText } from '../corpus/document.js';
import { vectorLayout } from './layout.js';
import { errors } from '../errors.js';
import { LEXICON_FILE, lexicalTokenizerConfig, readLexicon } from '../model/lexicon.js';

/** @typedef {import('./vectorizer.js').Embedding} Embedding */

export class Embedder {
  /**
   * @param {import('../tokenizer/index.js').Tokenizer} tokenizer
   * @param {import('../model/load.js').LoadedModel} model
   * @param {import('../config.js').Config['embed']} cfg
   */
  constructor(tokenizer, model, cfg) {
    this.tokenizer = tokenizer;
    this.model = model;
    const { effective, lexicon } = lexicalSettings(model, cfg);
    this.vectorizer = new DocumentVectorizer(model.wordTopics, effective, lexicon);
    /** Width of the document vectors (and of the collections they go to): K·d, plus the vocabulary when hybrid. */
    this.width = this.vectorizer.width;
    /** @type {import('./layout.js').VectorLayout} */
    this.layout = vectorLayout(effective, model.width, lexicon ? lexicon.idf.length : model.wordTopics.nWords);
  }

  /**
   * An embedder of the same model and tokenizer under other embed settings (a collection's recorded layout, the ads'):
   * the vectors are those createEmbedder with these settings gives.
   * @param {import('../config.js').Config['embed']} cfg
   */
  withSettings(cfg) {
    return new Embedder(this.tokenizer, this.model, cfg);
  }

  /** @param {string} text */
  embedText(text) {
    return this.vectorizer.embed(this.tokenizer.tokenize(text));
  }

  /**
   * The kept tokens of many documents (title and body), tokenised on the thread pool.
   * @param {{title?: string, body: string}[]} docs
   * @returns {Promise<string[][]>}
   */
  async tokenizeDocuments(docs) {
    const packed = await this.tokenizer.tokenizeBatch(docs.map((d) => documentText({ id: '', title: d.title ?? '', body: d.body })));
    return packed.map((p) => (p === '' ? [] : p.split(' ')));
  }

  /**
   * @param {string[]} tokens a document's kept tokens
   * @returns {Embedding}
   */
  embedTokens(tokens) {
    return this.vectorizer.embed(tokens);
  }

  /**
   * Many documents, tokenised on the thread pool.
   * @param {{title?: string, body: string}[]} docs
   * @returns {Promise<Embedding[]>}
   */
  async embedDocuments(docs) {
    return (await this.tokenizeDocuments(docs)).map((t) => this.vectorizer.embed(t));
  }

  /**
   * embedDocuments on the calling thread, tokeniser included: for threads that are off the event loop already
   * (the server's embedding threads, pool.js), which then do not queue behind searches on the libuv pool.
   * The same tokenizer core and vectorizer: the same vectors.
   * @param {{title?: string, body: string}[]} docs
   * @returns {Embedding[]}
   */
  embedDocumentsHere(docs) {
    return docs.map((d) => this.vectorizer.embed(this.tokenizer.tokenize(documentText({ id: '', title: d.title ?? '', body: d.body }))));
  }
}

/**
 * The embed settings a model's vectors are actually built with, and the lexical block's vocabulary (none for pure
 * SCDV). embed.hybrid.stopwords 'keep' needs the model's lexicon.txt: a model without one (trained before it) keeps
 * its own vocabulary and the settings say 'drop'. A layout recorded before the option has none: the model's vocabulary.
 * @param {import('../model/load.js').LoadedModel} model
 * @param {import('../config.js').Config['embed']} cfg
 * @returns {{effective: import('../config.js').Config['embed'], lexicon: import('./vectorizer.js').Lexicon | undefined}}
 */
function lexicalSettings(model, cfg) {
  const hybrid = (cfg.hybrid?.alpha ?? 1) < 1;
  if (!hybrid) return { effective: cfg, lexicon: undefined };
  const keep = cfg.hybrid.stopwords === 'keep';
  const own = keep && hasLexicon(model) ? readLexicon(model.dir) : null;
  if (keep && hasLexicon(model) && !own) throw errors.MODEL_CORRUPT(path.join(model.dir, LEXICON_FILE), 'its manifest lists it but it is missing');
  const effective = keep && !own ? { ...cfg, hybrid: { ...cfg.hybrid, stopwords: /** @type {'keep'|'drop'} */ ('drop') } } : cfg;
  return { effective, lexicon: own ?? loadLexicon(model) };
}

/**
 * The layout of a model's vectors under embed settings (the one an Embedder of them has), without a tokenizer.
 * @param {import('../model/load.js').LoadedModel} model
 * @param {import('../config.js').Config['embed']} cfg
 */
export function modelLayout(model, cfg) {
  const { effective, lexicon } = lexicalSettings(model, cfg);
  return vectorLayout(effective, model.width, lexicon ? lexicon.idf.length : model.wordTopics.nWords);
}

/**
 * The lexical block's vocabulary: word_topics.bin rows and the idf column of vocab.txt are in the same order
 * (both written from the vocabulary, most frequent first).
 * @param {import('../model/load.js').LoadedModel} model
 * @returns {import('./vectorizer.js').Lexicon}
 */
export function loadLexicon(model) {
  const wt = model.wordTopics;
  const file = path.join(model.dir, 'vocab.txt');
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw errors.MODEL_CORRUPT(file, `cannot be read (${/** @type {Error} */ (err).message})`).because(err);
  }
  const lines = text.split('\n').filter((l) => l !== '');
  if (lines.length !== wt.nWords) throw errors.MODEL_CORRUPT(file, `${lines.length} words, word_topics.bin of model ${model.name} has ${wt.nWords}`);
  const idf = new Float32Array(lines.length);
  lines.forEach((l, i) => {
    const cols = l.split('\t');
    const v = Number(cols[2]);
    if (!(v > 0)) throw errors.MODEL_CORRUPT(file, `line ${i + 1} has no idf`);
    idf[i] = v;
  });
  for (const i of [0, lines.length - 1]) {
    if (wt.word(i) !== lines[i].split('\t')[0]) throw errors.MODEL_CORRUPT(file, `it and word_topics.bin of model ${model.name} disagree at row ${i}`);
  }
  return { indexOf: (w) => wt.indexOf(w), idf };
}

/**
 * The tokenizer settings an embedder of `model` cuts text with: those the model was trained with (so that words
 * are cut exactly as in training), without the stop lists when the model has a lexicon (lexicon.txt): stop words
 * have no word-topic vector, so the SCDV block is the same, and the lexical block may use them.
 * @param {import('../model/load.js').LoadedModel} model
 * @param {import('../config.js').Config} config
 */
export function embedTokenizerConfig(model, config) {
  const trained = model.manifest.tokenizer?.config ?? config.tokenizer;
  return hasLexicon(model) ? lexicalTokenizerConfig(trained) : trained;
}

/**
 * Whether the model was trained with a lexicon (its manifest lists lexicon.txt).
 * @param {import('../model/load.js').LoadedModel} model
 */
export function hasLexicon(model) {
  return Boolean(model.manifest.files?.includes(LEXICON_FILE));
}

/**
 * Build the embedder of a model with embedTokenizerConfig's tokenizer.
 * @param {string} modelName
 * @param {import('../config.js').Config} config
 * @param {{inMemory?: boolean}} [opts]
 */
export async function createEmbedder(modelName, config, opts = {}) {
  const model = loadModel(modelName, opts);
  const tokenizer = await createTokenizer(embedTokenizerConfig(model, config), { hugePages: config.tokenize.hugePages });
  return new Embedder(tokenizer, model, config.embed);
}
