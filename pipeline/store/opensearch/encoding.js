// How documents and collections are laid out in OpenSearch.
//
// Signed sparse vectors: no OpenSearch field takes negative feature values, so each vector is indexed twice
// over as non-negative `rank_features` (field `f`): `p<i>` = v_i where v_i > 0 and `n<i>` = -v_i where v_i < 0.
// A query's agreeing-sign part of the dot product is then a sum of linear `rank_feature` clauses (q_i > 0 ->
// `f.p<i>` boosted q_i; q_i < 0 -> `f.n<i>` boosted -q_i): that finds candidates; the exact vector, stored
// unindexed in `_source` (`vi` indices, `vv` float32 values), re-ranks them exactly (search.js). Lucene keeps
// about 9 significant bits of a feature value, which is why the re-ranking is needed.
import crypto from 'node:crypto';

/** Format of the index layout below; recorded in each index's `_meta` and checked on open. */
export const OS_FORMAT = 1;

/** OpenSearch's limit on `_id`, in UTF-8 bytes (our ids may be 512 characters: up to 2,048 bytes). */
const MAX_OS_ID_BYTES = 512;

/**
 * The `_id` of a document: its id, or `h:` + its SHA-256 when it is longer than OpenSearch allows (the id itself
 * is kept in `_source.id`). Ids that start with `h:` are always hashed, so a digest never meets a real id.
 * @param {string} id
 */
export function osId(id) {
  if (Buffer.byteLength(id) <= MAX_OS_ID_BYTES && !id.startsWith('h:')) return id;
  return `h:${crypto.createHash('sha256').update(id).digest('hex')}`;
}

/** Smallest feature value Lucene accepts (positive normal float32); smaller magnitudes only matter to the re-ranking. */
const MIN_FEATURE = 1.1754943508222875e-38;

/**
 * The `rank_features` of a vector (split by sign).
 * @param {Uint32Array} indices
 * @param {Float32Array} values
 * @returns {Record<string, number>}
 */
export function features(indices, values) {
  /** @type {Record<string, number>} */
  const f = {};
  for (let j = 0; j < indices.length; j++) {
    const v = values[j];
    if (v >= MIN_FEATURE) f[`p${indices[j]}`] = v;
    else if (v <= -MIN_FEATURE) f[`n${indices[j]}`] = -v;
  }
  return f;
}

/**
 * The `_source` of a prepared document (validate.js's PreparedDoc).
 * @param {import('../validate.js').PreparedDoc} d
 */
export function sourceOf(d) {
  return {
    id: d.id,
    f: features(d.indices, d.values),
    vi: Array.from(d.indices),
    vv: Array.from(d.values),
    meta: JSON.parse(d.meta),
    ...(d.site ? { site: d.site } : {}),
    ...(d.cat ? { category: d.cat } : {}),
    ...(Number.isNaN(d.time) ? {} : { published_at: d.time }),
  };
}

/**
 * The mapping of a collection's index. `dynamic: strict`: a field we did not plan is refused, not guessed.
 * @param {Record<string, unknown>} meta the index's `_meta` (model, collection, width, created_at, format)
 */
export function mappingOf(meta) {
  return {
    dynamic: 'strict',
    _meta: meta,
    properties: {
      id: { type: 'keyword' },
      f: { type: 'rank_features' },
      vi: { type: 'integer', index: false, doc_values: false },
      vv: { type: 'float', index: false, doc_values: false },
      meta: { type: 'object', enabled: false },
      site: { type: 'keyword' },
      category: { type: 'keyword' },
      published_at: { type: 'date', format: 'epoch_millis' },
    },
  };
}

/**
 * A stored document back from its `_source`.
 * @param {any} src
 * @returns {import('../collection.js').StoredDoc}
 */
export function storedDoc(src) {
  return { id: src.id, meta: src.meta ?? {}, vector: { indices: Uint32Array.from(src.vi), values: Float32Array.from(src.vv) } };
}

/**
 * The names in OpenSearch of one model's store: index names are lower case, so a model name with capitals gets
 * a digest of its exact spelling (models "News" and "news" never share an index).
 * @param {string} prefix store.opensearch.indexPrefix
 * @param {string} model
 */
export function namesOf(prefix, model) {
  const lower = model.toLowerCase();
  const base = lower === model ? model : `${lower}.${crypto.createHash('sha256').update(model).digest('hex').slice(0, 8)}`;
  return {
    /** a collection's index (reads) */
    index: (/** @type {string} */ collection) => `${prefix}${base}--${collection}`,
    /** its write alias: writes name it with require_alias, so a write racing a drop cannot auto-create an index.
     * No collection name holds ".", so this never names another collection's index. */
    writeAlias: (/** @type {string} */ collection) => `${prefix}${base}--${collection}.w`,
    /** every index of this model's collections (filtered by `_meta.scdv.model` too: "--" may occur in names) */
    pattern: `${prefix}${base}--*`,
    /** the versions index: one small document per collection whose `_version` counts writes */
    versions: `${prefix}meta`,
    /** the `_id` of a collection's document in the versions index */
    versionId: (/** @type {string} */ collection) => `${model}--${collection}`,
  };
}
