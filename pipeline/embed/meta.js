// The metadata a stored document keeps, for filters and responses.

/**
 * @typedef {object} DocumentMeta
 * @property {string} title
 * @property {string} [url]
 * @property {string} [site]
 * @property {string} [category]
 * @property {string} [published_at] ISO 8601
 */

/**
 * @param {import('../corpus/document.js').Document} doc
 * @returns {DocumentMeta}
 */
export function documentMeta(doc) {
  /** @type {DocumentMeta} */
  const meta = { title: doc.title };
  if (doc.url !== undefined) meta.url = doc.url;
  if (doc.site !== undefined) meta.site = doc.site;
  if (doc.category !== undefined) meta.category = doc.category;
  if (doc.published_at !== undefined) meta.published_at = doc.published_at;
  return meta;
}
