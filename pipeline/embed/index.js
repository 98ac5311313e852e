// Text -> document vector, the whole way: tokenizer + model + vectorizer. Batch workers and the server
// both build one of these, so a document gets the same vector in a batch job and at request time.
import { createTokenizer } from '../tokenizer/index.js';
import { loadModel } from '../model/load.js';
import { DocumentVectorizer } from './vectorizer.js';
import { documentText } from '../corpus/document.js';

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
    this.vectorizer = new DocumentVectorizer(model.wordTopics, cfg);
  }

  /** @param {string} text */
  embedText(text) {
    return this.vectorizer.embed(this.tokenizer.tokenize(text));
  }

  /**
   * Many documents, tokenised on the thread pool.
   * @param {{title?: string, body: string}[]} docs
   * @returns {Promise<Embedding[]>}
   */
  async embedDocuments(docs) {
    const packed = await this.tokenizer.tokenizeBatch(docs.map((d) => documentText({ id: '', title: d.title ?? '', body: d.body })));
    return packed.map((p) => this.vectorizer.embed(p === '' ? [] : p.split(' ')));
  }
}

/**
 * Build the embedder of a model with the tokenizer settings the model was trained with, so that
 * words are cut exactly as in training.
 * @param {string} modelName
 * @param {import('../config.js').Config} config
 * @param {{inMemory?: boolean}} [opts]
 */
export async function createEmbedder(modelName, config, opts = {}) {
  const model = loadModel(modelName, opts);
  const trained = model.manifest.tokenizer?.config ?? config.tokenizer;
  const tokenizer = await createTokenizer(trained);
  return new Embedder(tokenizer, model, config.embed);
}
