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
 * and no row: its position is listed in `empty`.
 * @param {import('../corpus/document.js').Document[]} docs
 * @param {{indices: Uint32Array | number[], values: Float32Array | number[]}[]} vectors one per document
 */
export function storeRows(docs, vectors) {
  /** @type {{id: string, vector: {indices: Uint32Array | number[], values: Float32Array | number[]}, meta: DocumentMeta}[]} */
  const rows = [];
  /** @type {number[]} */
  const empty = [];
  docs.forEach((doc, i) => {
    const v = vectors[i];
    if (v.indices.length === 0) empty.push(i);
    else rows.push({ id: doc.id, vector: { indices: v.indices, values: v.values }, meta: documentMeta(doc) });
  });
  return { rows, empty };
}
