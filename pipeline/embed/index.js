// Text -> document vector, the whole way (embedder.js: tokenizer + model + vectorizer), the folder's public face.
// Batch workers and the server both build an Embedder, so a document gets the same vector in a batch job and at
// request time. The layout of a vector: layout.js; the store rows of a batch: meta.js; the embedding threads: pool.js.
export { Embedder, createEmbedder, modelLayout, loadLexicon, embedTokenizerConfig, hasLexicon } from './embedder.js';
