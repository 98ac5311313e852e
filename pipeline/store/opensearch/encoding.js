// How documents and collections are laid out in OpenSearch (layout format 3).
//
// Signed sparse vectors: no OpenSearch field takes negative feature values, so each vector is indexed twice
// over as non-negative term weights in the text field `f`: term `p<i>` weighs v_i where v_i > 0 and `n<i>`
// weighs -v_i where v_i < 0. The weight travels as the term's frequency (`p12|17032`, split off by the
// `delimited_term_freq` filter): the top 16 bits of its float32, as Lucene's own feature fields keep it, so a
// scripted similarity turns it back into the value and a query's agreeing-sign part of the dot product is a sum
// of boosted `term` clauses: that finds candidates (search.js). The exact vector is a `binary` doc value `v`
// (the n int32 indices, then the n float32 values, little-endian): the engine's re-ranking script reads it beside
// the postings, and nothing of the vector is kept in `_source` (which holds the id, the metadata and the filter
// fields). The feature field's value is one string, not an object of ~300 keys: the engine parses field names
// through an interning symbol table that many distinct keys overflow, which made `rank_features` (format 2)
// cost ~1.5 ms of the engine's CPU per document against ~0.4 ms for this field.
// Formats 1 (the vector in `_source`, re-ranked in Node) and 2 (`f` as `rank_features`) are refused on open
// with how to re-index (store.js).
import crypto from 'node:crypto';

/** Format of the index layout below; recorded in each index's `_meta` and checked on open. */
export const OS_FORMAT = 3;

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

/** A float32's top 16 bits (sign, exponent, 7 mantissa bits): the weight a term carries as its frequency. */
const FEATURE_SHIFT = 15;
/** The smallest term frequency written: the top bits of the smallest normal float32 (2^-126), as Lucene's features. */
const MIN_FEATURE_FREQ = 0x00800000 >>> FEATURE_SHIFT;
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * The value of `f`: the split-sign terms of a vector with their weights as term frequencies (`p3|16250 n7|15872`),
 * each weight the top 16 bits of |v| as a float32 (truncated, as Lucene's feature fields keep ~9 significant bits),
 * at least the smallest normal float32's.
 * @param {Uint32Array} indices
 * @param {Float32Array} values
 */
export function featureTerms(indices, values) {
  const need = 18 * indices.length; // "p" + 10 digits + "|" + 5 digits + " " at most a term
  if (termBytes.length < need) termBytes = Buffer.allocUnsafe(Math.max(need, 2 * termBytes.length));
  const b = termBytes;
  let p = 0;
  for (let j = 0; j < indices.length; j++) {
    const v = values[j];
    if (v === 0 || v !== v) continue;
    f32[0] = v < 0 ? -v : v;
    const q = Math.max(MIN_FEATURE_FREQ, u32[0] >>> FEATURE_SHIFT);
    if (p > 0) b[p++] = 32; // ' '
    b[p++] = v > 0 ? 112 : 110; // 'p' | 'n'
    p = writeDigits(b, p, indices[j]);
    b[p++] = 124; // '|'
    p = writeDigits(b, p, q);
  }
  // Digits and ASCII letters written as bytes: ~4x faster than concatenating ~300 template strings a document.
  return b.toString('latin1', 0, p);
}

/** The bytes of featureTerms, reused (grown as needed). */
let termBytes = Buffer.allocUnsafe(18 * 1024);

/**
 * Writes the decimal digits of a non-negative integer below 2^32 at `p`; returns the position after them.
 * @param {Buffer} b
 * @param {number} p
 * @param {number} x
 */
function writeDigits(b, p, x) {
  let end = p + 1;
  for (let t = x; t >= 10; t = Math.floor(t / 10)) end++;
  for (let i = end - 1; i > p; i--) {
    const t = Math.floor(x / 10);
    b[i] = 48 + (x - 10 * t);
    x = t;
  }
  b[p] = 48 + x;
  return end;
}

/** The similarity of `f`: a clause's boost (the query's weight) times the term's weight, decoded from its frequency. */
export const FEATURE_SIMILARITY = `return query.boost * Float.intBitsToFloat(((int) doc.freq) << ${FEATURE_SHIFT});`;

/**
 * The doc value `v` of a vector: base64 of its int32 indices then its float32 values (little-endian).
 * @param {Uint32Array} indices
 * @param {Float32Array} values
 */
export function encodeVector(indices, values) {
  const n = indices.length;
  const buf = Buffer.allocUnsafe(8 * n);
  if (LITTLE_ENDIAN && buf.byteOffset % 4 === 0) {
    new Uint32Array(buf.buffer, buf.byteOffset, n).set(indices);
    new Float32Array(buf.buffer, buf.byteOffset + 4 * n, n).set(values);
  } else {
    for (let j = 0; j < n; j++) {
      buf.writeUInt32LE(indices[j], 4 * j);
      buf.writeFloatLE(values[j], 4 * (n + j));
    }
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
 * A bulk request's lines (ndjson, newline-terminated) that index a prepared document (validate.js's PreparedDoc)
 * through `alias`, built as text: the terms and the base64 doc value need no escaping and `meta` is already JSON,
 * so nothing of the document is parsed or serialised again (an object per document and JSON.stringify of it cost
 * the client about twice as much).
 * @param {string} alias
 * @param {import('../validate.js').PreparedDoc} d
 */
export function indexOperation(alias, d) {
  let s = `{"index":{"_index":${JSON.stringify(alias)},"_id":${JSON.stringify(osId(d.id))},"require_alias":true}}\n`;
  s += `{"id":${JSON.stringify(d.id)},"f":"${featureTerms(d.indices, d.values)}","v":"${encodeVector(d.indices, d.values)}","meta":${d.meta}`;
  if (d.site) s += `,"site":${JSON.stringify(d.site)}`;
  if (d.cat) s += `,"category":${JSON.stringify(d.cat)}`;
  if (!Number.isNaN(d.time)) s += `,"published_at":${JSON.stringify(d.time)}`;
  return `${s}}\n`;
}

/**
 * A bulk request's line that deletes a document by id through `alias`.
 * @param {string} alias
 * @param {string} id
 */
export function deleteOperation(alias, id) {
  return `${JSON.stringify({ delete: { _index: alias, _id: osId(id), require_alias: true } })}\n`;
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
      // Terms only (no positions: their frequencies are the weights), scored by the similarity above.
      f: { type: 'text', analyzer: 'scdv_features', index_options: 'freqs', norms: false, similarity: 'scdv_features' },
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
 * The index settings the mapping needs (given when the index is created): the analyzer of `f` (whitespace-split
 * terms, each `term|frequency`) and its similarity (FEATURE_SIMILARITY, a Painless script).
 */
export function analysisSettings() {
  return {
    analysis: { analyzer: { scdv_features: { type: 'custom', tokenizer: 'whitespace', filter: ['delimited_term_freq'] } } },
    similarity: { scdv_features: { type: 'scripted', script: { lang: 'painless', source: FEATURE_SIMILARITY } } },
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
