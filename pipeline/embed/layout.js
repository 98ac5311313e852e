// The layout of a model's document vectors under given embed settings, and what differs between two layouts: a
// query must be embedded with the same layout as the documents it is compared with (a hybrid and a pure SCDV
// vector, or two hybrid vectors of different α, do not mix). The layout each collection was indexed with is
// recorded and consulted by pipeline/serving/.

/**
 * @typedef {object} VectorLayout
 * @property {'scdv-vectors/1'} format
 * @property {'scdv'|'hybrid'} kind
 * @property {number} width whole vector
 * @property {number} scdvWidth the SCDV block: dims [0, scdvWidth)
 * @property {number} lexicalWidth the TF-IDF block: dims [scdvWidth, width) (0 when pure SCDV)
 * @property {import('../config.js').Config['embed']} embed the settings that shape the vectors
 */

/**
 * @param {import('../config.js').Config['embed']} embed
 * @param {number} scdvWidth
 * @param {number} vocabulary words of the model
 * @returns {VectorLayout}
 */
export function vectorLayout(embed, scdvWidth, vocabulary) {
  const hybrid = embed.hybrid.alpha < 1;
  return {
    format: 'scdv-vectors/1',
    kind: hybrid ? 'hybrid' : 'scdv',
    width: scdvWidth + (hybrid ? vocabulary : 0),
    scdvWidth,
    lexicalWidth: hybrid ? vocabulary : 0,
    embed: structuredClone(embed),
  };
}

/**
 * What differs between two layouts ('' when they are the same).
 * @param {VectorLayout} a
 * @param {VectorLayout} b
 */
export function layoutDifference(a, b) {
  /** @type {(o: any, p?: string) => [string, string][]} */
  const flat = (o, p = '') => Object.entries(o).flatMap(([k, v]) =>
    v !== null && typeof v === 'object' ? flat(v, `${p}${k}.`) : [/** @type {[string, string]} */ ([`${p}${k}`, JSON.stringify(v)])]);
  const A = new Map(flat(a));
  const B = new Map(flat(b));
  const keys = [...new Set([...A.keys(), ...B.keys()])];
  return keys.filter((k) => A.get(k) !== B.get(k)).map((k) => `${k} ${A.get(k) ?? '-'} vs ${B.get(k) ?? '-'}`).join(', ');
}

/**
 * The embed settings of an ad collection: `base` (the pages') with adEmbed's α and keepFraction, every entry the
 * fraction allows kept (keepCount null). Short ad copy has few words: its SCDV block carries more of the meaning.
 * Pure SCDV pages (α 1) give pure SCDV ads: a hybrid ad would be wider than the pages it is matched with.
 * @param {import('../config.js').Config['embed']} base
 * @param {import('../config.js').Config['adEmbed']} ad
 * @returns {import('../config.js').Config['embed']}
 */
export function adEmbedSettings(base, ad) {
  return { ...base, keepFraction: ad.keepFraction, keepCount: null, hybrid: { ...base.hybrid, alpha: base.hybrid.alpha < 1 ? ad.alpha : 1 } };
}

/**
 * The embed settings a collection gets when it is first indexed or written (afterwards its recorded layout decides):
 * adEmbedSettings for a collection named in adEmbed.collections, else `base`.
 * @param {import('../config.js').Config['embed']} base
 * @param {import('../config.js').Config['adEmbed']} ad
 * @param {string} collection
 */
export function newCollectionEmbed(base, ad, collection) {
  return ad.collections.includes(collection) ? adEmbedSettings(base, ad) : base;
}

/**
 * Why vectors of two layouts cannot be compared by a dot product ('' when they can): both hybrid or both pure SCDV,
 * with the same blocks. α, keepFraction and the damping may differ (a hybrid page at α_p and an ad at α_a score
 * √(α_p·α_a)·cos(SCDV) + √((1 − α_p)(1 − α_a))·cos(TF-IDF)).
 * @param {VectorLayout} a
 * @param {VectorLayout} b
 */
export function incomparableLayouts(a, b) {
  const keys = /** @type {const} */ (['kind', 'scdvWidth', 'lexicalWidth']);
  return keys.filter((k) => a[k] !== b[k]).map((k) => `${k} ${a[k]} vs ${b[k]}`).join(', ');
}
