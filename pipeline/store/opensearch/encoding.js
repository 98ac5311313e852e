// How documents and collections are laid out in OpenSearch (layout format 2).
//
// Signed sparse vectors: no OpenSearch field takes negative feature values, so each vector is indexed twice
// over as non-negative `rank_features` (field `f`): `p<i>` = v_i where v_i > 0 and `n<i>` = -v_i where v_i < 0.
// A query's agreeing-sign part of the dot product is then a sum of linear `rank_feature` clauses: that finds
// candidates (search.js). The exact vector is a `binary` doc value `v` (the n int32 indices, then the n float32
// values, little-endian): the engine's re-ranking script reads it beside the postings, and nothing of the vector
// is kept in `_source` (which holds the id, the metadata and the filter fields). Lucene keeps about 9
// significant bits of a feature value, which is why the re-ranking is needed.
// Format 1 (before): the exact vector as `vi`/`vv` arrays in `_source`, re-ranked in Node; it is refused on open
// with how to re-index (store.js).
import crypto from 'node:crypto';

/** Format of the index layout below; recorded in each index's `_meta` and checked on open. */
export const OS_FORMAT = 2;

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
    // Four significant digits: the engine keeps 9 bits of it anyway, and the request is a third of the size.
    if (v >= MIN_FEATURE) f[`p${indices[j]}`] = Math.max(MIN_FEATURE, Number(v.toPrecision(4)));
    else if (v <= -MIN_FEATURE) f[`n${indices[j]}`] = Math.max(MIN_FEATURE, Number((-v).toPrecision(4)));
  }
  return f;
}

/**
 * The doc value `v` of a vector: base64 of its int32 indices then its float32 values (little-endian).
 * @param {Uint32Array} indices
 * @param {Float32Array} values
 */
export function encodeVector(indices, values) {
  const n = indices.length;
  const buf = Buffer.allocUnsafe(8 * n);
  for (let j = 0; j < n; j++) {
    buf.writeUInt32LE(indices[j], 4 * j);
    buf.writeFloatLE(values[j], 4 * (n + j));
  }
  return buf.toString('base64');
}

/**
 * A vector back from its doc value (encodeVector).
 * @param {string} b64
 * @returns {{indices: Uint32Array, values: Float32Array}}
 */
export function decodeVector(b64) {
  const buf = Buffer.from(b64, 'base64');
  const n = buf.length >> 3;
  const indices = new Uint32Array(n);
  const values = new Float32Array(n);
  for (let j = 0; j < n; j++) {
    indices[j] = buf.readUInt32LE(4 * j);
    values[j] = buf.readFloatLE(4 * (n + j));
  }
  return { indices, values };
}

/**
 * The document of a prepared document (validate.js's PreparedDoc), as sent in a bulk request.
 * @param {import('../validate.js').PreparedDoc} d
 */
export function sourceOf(d) {
  return {
    id: d.id,
    f: features(d.indices, d.values),
    v: encodeVector(d.indices, d.values),
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
    // The vector is kept once, as the doc value `v`; the features are indexed, not kept.
    _source: { excludes: ['f', 'v'] },
    properties: {
      // Read from `_source` only (lookups by id go through `_id`).
      id: { type: 'keyword', index: false, doc_values: false },
      f: { type: 'rank_features' },
      v: { type: 'binary', doc_values: true },
      meta: { type: 'object', enabled: false },
      // Filters only (no sorting or aggregation): indexed, no doc values.
      site: { type: 'keyword', doc_values: false },
      category: { type: 'keyword', doc_values: false },
      published_at: { type: 'date', format: 'epoch_millis', doc_values: false },
    },
  };
}

/**
 * A stored document back from a search hit with `_source` (id, meta) and the doc value field `v`.
 * @param {any} hit
 * @returns {import('../collection.js').StoredDoc}
 */
export function storedDoc(hit) {
  const v = hit.fields?.v?.[0];
  return { id: String(hit._source.id), meta: hit._source.meta ?? {}, vector: v ? decodeVector(v) : { indices: new Uint32Array(0), values: new Float32Array(0) } };
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
    /** the `_id` of its feature document counts there (no collection name holds ".") */
    countsId: (/** @type {string} */ collection) => `${model}--${collection}.df`,
  };
}
