// Ad expansion: an ad's stored vector is its own vector plus weight/m × the sum of the vectors of its m nearest
// pages of a page collection (`adEmbed.expand.from`, articles), found by dot product with its own vector, not
// renormalised. Short ad copy shares few words with a page; its nearest pages carry the words and topics of the
// pages it belongs on, so a page scores its own·ad + weight/m · Σ page·neighbour (docs/matching.md § Ad expansion).
//
// The ad's own vector is kept in a companion collection (ownCollectionOf: `<ads>__own`, same width, same metadata)
// through the store interface, so that the ads can be expanded again when the pages change, on every backend (ad
// bodies are not stored). This module is the one implementation: the index workers (`scdv index`, the queued bulk),
// the API's synchronous writes and re-expansion (pipeline/serving/ad-expansion.js) all call expandRows.

/** The suffix of the companion collection that keeps an expanded ad collection's own vectors. */
export const OWN_SUFFIX = '__own';

/** @param {string} collection */
export const ownCollectionOf = (collection) => `${collection}${OWN_SUFFIX}`;

/** @param {string} collection */
export const isOwnCollection = (collection) => collection.endsWith(OWN_SUFFIX);

/**
 * @typedef {object} ExpandSettings
 * @property {string} from the page collection borrowed from
 * @property {number} neighbours m
 * @property {number} weight β
 */

/**
 * The expansion an ad collection gets from the config: null when it is no ad collection (adEmbed.collections) or
 * the weight is 0 or null (off).
 * @param {import('../config.js').Config['adEmbed']} adEmbed
 * @param {string} collection
 * @returns {ExpandSettings | null}
 */
export function expandSettingsOf(adEmbed, collection) {
  const e = adEmbed.expand;
  if (!adEmbed.collections.includes(collection) || !e || !e.weight) return null;
  if (e.from === collection) return null; // a collection cannot borrow from itself
  return { from: e.from, neighbours: e.neighbours, weight: e.weight };
}

/**
 * @typedef {{indices: ArrayLike<number>, values: ArrayLike<number>}} Sparse
 * @typedef {{id: string | number, vector: Sparse, meta?: any}} Row
 */

/**
 * own + weight/m × Σ neighbours, as a sparse vector with sorted indices.
 * @param {Sparse} own
 * @param {Sparse[]} neighbours
 * @param {number} weight
 * @param {number} m the configured m (the divisor even when the collection has fewer pages)
 * @returns {{indices: Uint32Array, values: Float32Array}}
 */
export function expandedVector(own, neighbours, weight, m) {
  /** @type {Map<number, number>} */
  const sum = new Map();
  for (let i = 0; i < own.indices.length; i++) sum.set(own.indices[i], own.values[i]);
  const w = weight / m;
  for (const n of neighbours) {
    for (let i = 0; i < n.indices.length; i++) sum.set(n.indices[i], (sum.get(n.indices[i]) ?? 0) + w * n.values[i]);
  }
  const keys = [...sum.keys()].sort((a, b) => a - b);
  const values = new Float32Array(keys.length);
  keys.forEach((k, i) => { values[i] = /** @type {number} */ (sum.get(k)); });
  return { indices: Uint32Array.from(keys), values };
}

/**
 * The rows (ads with their own vectors) expanded from `source`: each row's m nearest pages by dot product (an
 * exact search), their vectors summed in. `source` null or empty: the rows as they are, `expanded` false.
 * @param {Pick<import('../store/index.js').CollectionHandle, 'searchAsync' | 'get' | 'count' | 'capabilities' | 'vectors'> | null} source
 * @param {Row[]} rows
 * @param {ExpandSettings} settings
 * @returns {Promise<{rows: Row[], expanded: boolean}>}
 */
export async function expandRows(source, rows, settings) {
  if (!source || !rows.length || (await source.count()) === 0) return { rows, expanded: false };
  const out = [];
  for (const row of rows) {
    const hits = await source.searchAsync(row.vector, { k: settings.neighbours, mode: 'exact' });
    const ids = hits.map((h) => String(h.id));
    const vectors = source.capabilities.vectors
      ? await /** @type {NonNullable<typeof source.vectors>} */ (source.vectors)(ids)
      : await Promise.all(ids.map(async (id) => (await source.get(id))?.vector ?? null));
    const found = /** @type {Sparse[]} */ (vectors.filter((v) => v !== null));
    out.push({ ...row, vector: expandedVector(row.vector, found, settings.weight, settings.neighbours) });
  }
  return { rows: out, expanded: true };
}

/**
 * Writes ads to an expanded collection: their own vectors to the companion collection, the expanded ones to the
 * ads' collection.
 * @param {{own: Pick<import('../store/index.js').CollectionHandle, 'upsert'>, target: Pick<import('../store/index.js').CollectionHandle, 'upsert'>,
 *   source: Parameters<typeof expandRows>[0]}} collections
 * @param {Row[]} rows the ads with their own vectors
 * @param {ExpandSettings} settings
 * @param {{refresh?: boolean}} [opts]
 * @returns {Promise<boolean>} whether they were expanded (false: the source holds no page)
 */
export async function writeExpanded(collections, rows, settings, opts) {
  if (!rows.length) return false;
  await collections.own.upsert(/** @type {any} */ (rows), opts);
  const r = await expandRows(collections.source, rows, settings);
  await collections.target.upsert(/** @type {any} */ (r.rows), opts);
  return r.expanded;
}
