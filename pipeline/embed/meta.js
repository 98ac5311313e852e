// The metadata a stored document keeps, for filters and responses.
import { META_FIELDS } from '../corpus/document.js';

/**
 * @typedef {object} DocumentMeta
 * @property {string} title
 * @property {string} [url]
 * @property {string} [site]
 * @property {string} [category]
 * @property {string} [published_at] ISO 8601
 * @property {import('../corpus/document.js').AdFields} [ad] an ad's advertiser, landing URL, keywords and deal id
 * @property {number} [known_words] distinct words of its text found in the model when it was embedded (the embedder's
 *   count; absent: written before the count was stored), for the known-word rule of ad matching (pipeline/match/safety.js)
 * @property {number} [unknown_words] distinct words of its text not found in the model
 */

/**
 * @param {import('../corpus/document.js').Document} doc
 * @returns {DocumentMeta}
 */
export function documentMeta(doc) {
  /** @type {Record<string, unknown>} */
  const meta = { title: doc.title };
  for (const f of META_FIELDS) if (f !== 'title' && doc[f] !== undefined) meta[f] = doc[f];
  return /** @type {DocumentMeta} */ (meta);
}

/**
 * Store rows of embedded documents, the one place that turns a vector and a document into what the store keeps
 * (index workers, PUT, the synchronous bulk). A document none of whose words is in the model has an empty vector
 * and no row: its position is listed in `empty`. The embedder's word counts (knownWords, unknownWords), when the
 * vector carries them, are kept in the metadata as known_words and unknown_words: what a stored page is judged by
 * when it is matched with ads (a page whose words the model mostly does not know gets none, pipeline/match/safety.js).
 * @param {import('../corpus/document.js').Document[]} docs
 * @param {{indices: Uint32Array | number[], values: Float32Array | number[], knownWords?: number, unknownWords?: number}[]} vectors one per document
 */
export function storeRows(docs, vectors) {
  /** @type {{id: string, vector: {indices: Uint32Array | number[], values: Float32Array | number[]}, meta: DocumentMeta}[]} */
  const rows = [];
  /** @type {number[]} */
  const empty = [];
  docs.forEach((doc, i) => {
    const v = vectors[i];
    if (v.indices.length === 0) empty.push(i);
    else rows.push({ id: doc.id, vector: { indices: v.indices, values: v.values }, meta: { ...documentMeta(doc), ...wordCounts(v) } });
  });
  return { rows, empty };
}

/**
 * The word counts a stored document keeps (none when the vector does not carry them).
 * @param {{knownWords?: number, unknownWords?: number}} v an embedding
 * @returns {{known_words?: number, unknown_words?: number}}
 */
export function wordCounts(v) {
  return typeof v.knownWords === 'number' && typeof v.unknownWords === 'number' ? { known_words: v.knownWords, unknown_words: v.unknownWords } : {};
}
