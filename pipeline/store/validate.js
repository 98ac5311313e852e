// Validation of what callers hand to the store: ids, vectors, metadata, search options, store options.
// Every failure is an ScdvError from the catalogue that names the document or the option.
import { parseDate } from '../dates.js';
import { errors } from '../errors.js';
import { LONE_SURROGATE } from '../corpus/document.js';

/** Longest accepted document id, in UTF-16 code units (the corpus reader's limit). */
export const MAX_ID_LENGTH = 512;
/** Largest metadata JSON per document, in bytes. */
export const MAX_META_BYTES = 1 << 20;
/** Largest k of a search. */
export const MAX_K = 1000;

/**
 * A sparse vector: strictly increasing indices below the collection's width, with their values.
 * @typedef {object} SparseVector
 * @property {Uint32Array} indices
 * @property {Float32Array} values
 */

/**
 * Vector input: typed arrays are used as they are; plain arrays and other typed arrays are converted.
 * @typedef {object} SparseVectorInput
 * @property {ArrayLike<number>} indices
 * @property {ArrayLike<number>} values
 */

/**
 * Stored metadata. Any JSON object; these fields are understood by filters.
 * @typedef {object} DocMeta
 * @property {string} [title]
 * @property {string} [url]
 * @property {string} [site] filter `sites` / `excludeSites`
 * @property {string} [category] filter `categories`
 * @property {string | number} [published_at] ISO 8601 or epoch ms; filters `since` / `until`
 */

/**
 * A document ready for the WAL and the segment builder.
 * @typedef {object} PreparedDoc
 * @property {string} id
 * @property {string} meta JSON text
 * @property {string} site '' when none
 * @property {string} cat '' when none
 * @property {number} time published_at in epoch ms, NaN when none
 * @property {Uint32Array} indices
 * @property {Float32Array} values
 */

/**
 * @param {unknown} id
 * @returns {string}
 */
export function normalizeId(id) {
  if (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0) return String(id);
  if (typeof id !== 'string' || id.length === 0) throw errors.STORE_DOC_INVALID(JSON.stringify(id) ?? String(id), 'id must be a non-empty string');
  if (id.length > MAX_ID_LENGTH) throw errors.STORE_DOC_INVALID(JSON.stringify(id.slice(0, 40) + '…'), `id is longer than ${MAX_ID_LENGTH} characters`);
  // Stored as UTF-8, where a lone surrogate becomes U+FFFD: two such ids would be one document.
  if (LONE_SURROGATE.test(id)) throw errors.STORE_DOC_INVALID(JSON.stringify(id), 'id contains a lone surrogate (not well-formed Unicode)');
  return id;
}

/**
 * @param {unknown} vector
 * @param {number} width
 * @param {(msg: string) => Error} fail
 * @returns {SparseVector}
 */
export function normalizeVector(vector, width, fail) {
  if (vector === null || typeof vector !== 'object') throw fail('vector must be an object { indices, values }');
  const { indices: ri, values: rv } = /** @type {{indices?: unknown, values?: unknown}} */ (vector);
  if (!isArrayLike(ri) || !isArrayLike(rv)) throw fail('vector.indices and vector.values must be arrays or typed arrays');
  if (ri.length !== rv.length) throw fail(`vector.indices has ${ri.length} entries but vector.values has ${rv.length}`);
  if (ri.length === 0) throw fail('the vector is empty (no non-zero value)');
  if (ri instanceof Uint32Array && rv instanceof Float32Array && validTyped(ri, rv, width)) return { indices: ri, values: rv };
  const indices = ri instanceof Uint32Array ? ri : Uint32Array.from(/** @type {ArrayLike<number>} */ (ri));
  const values = rv instanceof Float32Array ? rv : Float32Array.from(/** @type {ArrayLike<number>} */ (rv));
  let prev = -1;
  for (let j = 0; j < indices.length; j++) {
    const raw = /** @type {ArrayLike<number>} */ (ri)[j];
    const i = indices[j];
    if (raw !== i) throw fail(`vector.indices[${j}] = ${raw} is not an integer in [0, 2^32)`);
    if (i <= prev) throw fail(`vector.indices must be strictly increasing: indices[${j}] = ${i} follows ${prev}`);
    if (i >= width) throw fail(`vector.indices[${j}] = ${i} is not below the collection's width ${width}`);
    if (!Number.isFinite(values[j])) throw fail(`vector.values[${j}] = ${/** @type {ArrayLike<number>} */ (rv)[j]} is not a finite number`);
    prev = i;
  }
  return { indices, values };
}

/**
 * Whether typed arrays (the store's own vectors and the server's: integers by type) are a valid vector, in one
 * monomorphic pass: about half the cost of the general loop below on a 572-entry query. False sends them to that
 * loop, which names the first problem.
 * @param {Uint32Array} indices
 * @param {Float32Array} values
 * @param {number} width
 */
function validTyped(indices, values, width) {
  let prev = -1;
  for (let j = 0; j < indices.length; j++) {
    const i = indices[j];
    const x = values[j];
    if (i <= prev || x - x !== 0) return false; // x - x is NaN for NaN and ±Infinity
    prev = i;
  }
  return prev < width;
}

/**
 * @param {unknown} x
 * @returns {x is ArrayLike<number>}
 */
function isArrayLike(x) {
  return Array.isArray(x) || (ArrayBuffer.isView(x) && !(x instanceof DataView));
}

/**
 * Epoch ms from an ISO 8601 string, a number of ms or a Date; NaN for null/undefined.
 * @param {unknown} value
 * @param {(msg: string) => Error} fail
 * @param {string} what
 */
export function parseTime(value, fail, what) {
  if (value === undefined || value === null) return NaN;
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw fail(`${what} is an invalid Date`);
    return value.getTime();
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw fail(`${what} must be a finite number of epoch milliseconds`);
    return value;
  }
  if (typeof value === 'string') {
    const ms = parseDate(value);
    if (Number.isNaN(ms)) throw fail(`${what} "${value}" is not an ISO 8601 date (or names a day that does not exist)`);
    return ms;
  }
  throw fail(`${what} must be an ISO 8601 string or epoch milliseconds`);
}

/**
 * @param {unknown} doc
 * @param {number} width
 * @returns {PreparedDoc}
 */
export function prepareDoc(doc, width) {
  if (doc === null || typeof doc !== 'object') throw errors.STORE_DOC_INVALID('?', 'each document must be an object { id, vector, meta }');
  const d = /** @type {{id?: unknown, vector?: unknown, meta?: unknown}} */ (doc);
  const id = normalizeId(d.id);
  const name = JSON.stringify(id);
  /** @param {string} msg */
  const fail = (msg) => errors.STORE_DOC_INVALID(name, msg);
  const { indices, values } = normalizeVector(d.vector, width, fail);
  const meta = d.meta ?? {};
  if (typeof meta !== 'object' || Array.isArray(meta)) throw fail('meta must be an object');
  const m = /** @type {Record<string, unknown>} */ (meta);
  let json;
  try {
    json = JSON.stringify(m);
  } catch (err) {
    throw fail(`meta is not serialisable as JSON: ${/** @type {Error} */ (err).message}`);
  }
  if (Buffer.byteLength(json) > MAX_META_BYTES) throw fail(`meta is larger than ${MAX_META_BYTES} bytes as JSON`);
  for (const key of ['site', 'category']) {
    if (m[key] !== undefined && m[key] !== null && typeof m[key] !== 'string') throw fail(`meta.${key} must be a string`);
  }
  const time = parseTime(m.published_at, fail, 'meta.published_at');
  return {
    id,
    meta: json,
    site: typeof m.site === 'string' ? m.site : '',
    cat: typeof m.category === 'string' ? m.category : '',
    time,
    indices,
    values,
  };
}

/**
 * Search options.
 * @typedef {object} SearchOptions
 * @property {number} [k] results wanted, 1..1000 (default 10)
 * @property {'fast' | 'exact'} [mode] default 'fast' (see README: what each guarantees)
 * @property {string | number | Date} [since] keep documents with published_at >= since (documents without one are dropped)
 * @property {string | number | Date} [until] keep documents with published_at <= until
 * @property {string[]} [sites] keep documents whose meta.site is one of these
 * @property {string[]} [excludeSites] drop documents whose meta.site is one of these
 * @property {string[]} [categories] keep documents whose meta.category is one of these
 * @property {(string | number)[]} [excludeIds] drop these ids (e.g. the query document itself)
 * @property {number} [budget] 'fast' only: share of the query's contribution mass read (its posting lists by impact; 1: all), in (0, 1] (default: the collection's)
 * @property {number} [candidates] 'fast' only: documents per segment rescored exactly, at least 3k (default: the collection's)
 * @property {number} [minPostings] 'fast' only: postings read per segment at least, whatever the budget (default: the collection's)
 * @property {number} [certified] 'fast' only: the first `certified` hits (1..k, default k) are those of a search with
 *   k = certified; the rest of the k are the best of the documents it scored exactly anyway (exact scores, but a
 *   better document may be missing): for callers that re-rank a pool and need only its head certain (searchReranked)
 * @property {number} [threads] 'fast' only: threads one segment's search is split over, 0..16; 0 (default): split
 *   large segments (300,000+ postings to read) over idle cores (not used by this process's other searches, nor by
 *   other work over the last quarter second: native autoThreads); results do not depend on it
 */

const SEARCH_KEYS = new Set(['k', 'mode', 'since', 'until', 'sites', 'excludeSites', 'categories', 'excludeIds', 'budget', 'candidates', 'minPostings', 'certified', 'threads', 'stats']);

/**
 * @param {unknown} opts
 * @param {{budget: number, candidates: number, minPostings: number}} defaults
 * @returns {import('./native.js').NativeSearchOptions}
 */
export function normalizeSearchOptions(opts, defaults) {
  /** @param {string} msg */
  const fail = (msg) => errors.STORE_QUERY_INVALID(msg);
  if (opts === undefined || opts === null) opts = {};
  if (typeof opts !== 'object' || Array.isArray(opts)) throw fail('options must be an object');
  const o = /** @type {Record<string, unknown>} */ (opts);
  for (const key of Object.keys(o)) if (!SEARCH_KEYS.has(key)) throw fail(`unknown option "${key}"`);
  const k = o.k ?? 10;
  if (typeof k !== 'number' || !Number.isInteger(k) || k < 1 || k > MAX_K) throw fail(`k must be an integer from 1 to ${MAX_K}, got ${String(k)}`);
  const mode = o.mode ?? 'fast';
  if (mode !== 'fast' && mode !== 'exact') throw fail(`mode must be 'fast' or 'exact', got ${String(mode)}`);
  /** @type {import('./native.js').NativeSearchOptions} */
  const out = { k, exact: mode === 'exact', budget: defaults.budget, candidates: defaults.candidates, minPostings: defaults.minPostings };
  if (o.budget !== undefined) {
    if (typeof o.budget !== 'number' || !(o.budget > 0 && o.budget <= 1)) throw fail('budget must be a number in (0, 1]');
    out.budget = o.budget;
  }
  if (o.candidates !== undefined) {
    if (typeof o.candidates !== 'number' || !Number.isInteger(o.candidates) || o.candidates < 1 || o.candidates > 100000) {
      throw fail('candidates must be an integer from 1 to 100000');
    }
    out.candidates = o.candidates;
  }
  if (o.minPostings !== undefined) {
    if (typeof o.minPostings !== 'number' || !Number.isInteger(o.minPostings) || o.minPostings < 0) throw fail('minPostings must be a non-negative integer');
    out.minPostings = o.minPostings;
  }
  if (o.certified !== undefined) {
    if (typeof o.certified !== 'number' || !Number.isInteger(o.certified) || o.certified < 1 || o.certified > k) {
      throw fail(`certified must be an integer from 1 to k (${k}), got ${String(o.certified)}`);
    }
    out.certified = o.certified;
  }
  if (o.threads !== undefined) {
    if (typeof o.threads !== 'number' || !Number.isInteger(o.threads) || o.threads < 0 || o.threads > 16) throw fail('threads must be an integer from 0 to 16');
    out.threads = o.threads;
  }
  const since = parseTime(o.since, fail, 'since');
  const until = parseTime(o.until, fail, 'until');
  if (!Number.isNaN(since)) out.since = since;
  if (!Number.isNaN(until)) out.until = until;
  for (const key of /** @type {const} */ (['sites', 'excludeSites', 'categories'])) {
    const v = o[key];
    if (v === undefined || v === null) continue;
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw fail(`${key} must be an array of strings`);
    out[key] = v;
  }
  if (o.excludeIds !== undefined && o.excludeIds !== null) {
    if (!Array.isArray(o.excludeIds)) throw fail('excludeIds must be an array of ids');
    out.excludeIds = o.excludeIds.map((id) => {
      if (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0) return String(id);
      if (typeof id !== 'string') throw fail('excludeIds must hold strings');
      return id;
    });
  }
  if (o.stats) out.stats = true;
  return out;
}
