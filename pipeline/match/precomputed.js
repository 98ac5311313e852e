// Precomputed matches: the top-k documents of a target collection (ads) for every document of a source
// collection (articles), written to Redis by Bull jobs (coordinator pipeline/stages/precompute.js, processor
// workers/precompute.js) so that the match route (or an ad server reading Redis directly) answers with one GET
// instead of a search. This module is what both sides share: the key layout, the entry encoding, lookup and
// invalidation, and the job's data.
//
// Key layout (P = queue.prefix, "{scdv}" by default: a Redis Cluster hash tag, so every key of the server
// lives in one slot and can be read in one MGET):
//
//   P:match:<model>:<source>:<target>:<id>   string, JSON (see MatchEntry), expires after server.precompute.ttlSeconds
//   P:match-gen:<model>:<target>             integer, the target collection's generation: +1 on every write to
//                                            it through the API (absent = 0)
//   P:match-targets:<model>:<source>         set of the targets precomputed for a source collection
//
// An entry is fresh when it exists, its target_gen equals the current P:match-gen value, and it holds at
// least the k asked for (or the whole target collection: results.length < k); it is served only to a request with
// the list options it was computed with (rerank.js; entries without `rerank` were computed without any). Writing a source document
// through the API deletes its entries; writing a target document bumps the generation, which makes every
// entry for that target stale at once (they are recomputed by the next precompute run).

import { RESULT_FIELDS } from '../corpus/document.js';
import { rerankSignature } from './rerank.js';

/**
 * A search hit as the API answers it (live, or stored in an entry).
 * @typedef {object} ResultItem
 * @property {string} id
 * @property {number} score
 * @property {string} [title]
 * @property {string} [url]
 * @property {string} [published_at]
 * @property {string} [category]
 * @property {string} [site]
 * @property {import('../corpus/document.js').AdFields} [ad] an ad's advertiser, landing URL, keywords and deal id
 * @property {number} [ranking_score] the score blended with the document's age (request option recency_half_life)
 */

/** @param {{id: string, score: number, meta: any, ranking_score?: number}} hit @returns {ResultItem} */
export function resultItem(hit) {
  const meta = typeof hit.meta === 'string' ? JSON.parse(hit.meta) : (hit.meta ?? {});
  /** @type {ResultItem} */
  const item = { id: hit.id, score: hit.score };
  for (const f of RESULT_FIELDS) if (meta[f] !== undefined) item[f] = meta[f];
  if (hit.ranking_score !== undefined) item.ranking_score = hit.ranking_score;
  return item;
}

/**
 * The UTF-8 bytes of JSON.stringify({...head, results: hits.map(resultItem)}), with the items of hits that carry
 * `fields` (the UTF-8 text of their metadata fields as JSON.stringify writes them after id and score: the native
 * store's fused call gives them only where it proves them equal, src/result_fields.h) copied rather than parsed
 * and serialised: the event loop neither decodes, parses nor re-encodes those hits' metadata.
 * @param {Record<string, unknown>} head the answer's fields before `results`
 * @param {{id: string, score: number, meta: any, fields?: Uint8Array, ranking_score?: number}[]} hits
 * @returns {Buffer}
 */
export function answerBytes(head, hits) {
  const h = JSON.stringify(head);
  /** @type {(string | Uint8Array)[]} */
  const parts = [];
  let text = `${h.slice(0, -1)}${h.length > 2 ? ',' : ''}"results":[`;
  for (let i = 0; i < hits.length; i++) {
    const hit = hits[i];
    if (i) text += ',';
    if (hit.fields === undefined || hit.ranking_score !== undefined) {
      text += JSON.stringify(resultItem(hit));
      continue;
    }
    parts.push(`${text}{"id":${JSON.stringify(hit.id)},"score":${JSON.stringify(hit.score)}`, hit.fields);
    text = '}';
  }
  parts.push(`${text}]}`);
  let total = 0;
  for (const p of parts) total += typeof p === 'string' ? Buffer.byteLength(p) : p.length;
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  for (const p of parts) {
    if (typeof p === 'string') {
      at += out.write(p, at);
    } else {
      out.set(p, at);
      at += p.length;
    }
  }
  return out;
}

/**
 * @typedef {object} MatchEntry
 * @property {string} model
 * @property {string} source
 * @property {string} target
 * @property {string} id
 * @property {number} k
 * @property {number} target_gen
 * @property {string} computed_at ISO 8601
 * @property {number} count results.length
 * @property {number} [lowest_score] the lowest score among the results (so that a min_score below it passes them through unparsed)
 * @property {ReturnType<typeof rerankSignature>} [rerank] the re-ranking options it was computed with (absent: none)
 * @property {number} [duplicates_dropped] with collapsing: near-duplicates dropped above the last result
 * @property {import('./rerank.js').DroppedDuplicate[]} [dropped] with collapsing: those near-duplicates
 * @property {{seeds: string, topic: string, similarity: number}} [safety] the page's closest sensitive topic, measured
 *   against the seed list of digest `seeds` (safety.js: judged by the threshold when served; absent: not measured)
 * @property {import('./safety.js').ExcludedAd[]} [excluded_ads] ads left out because they exclude the page's site or category
 * @property {import('./safety.js').WordCounts | null} [words] the page's word counts as stored with it (null: it was written
 *   without them; absent: computed before they were recorded), for the known-word rule, judged when served (safety.js)
 * @property {number[]} [scores] each result's score, in order (absent: written by an earlier version)
 * @property {number[]} [ends] the byte offset just after each result in the results' UTF-8 JSON (entryResults)
 * @property {ResultItem[]} results best first (always the last key)
 */

/**
 * The head of an entry (every field but the results) and the results' JSON as stored (UTF-8 bytes).
 * @typedef {{head: Omit<MatchEntry, 'results'>, results: Buffer}} RawEntry
 */

const RESULTS_KEY = Buffer.from(',"results":');
/** The signature of entries computed without re-ranking (and of entries written before it existed). */
const NO_RERANK = rerankSignature({ duplicateThreshold: null, halfLifeMs: null, recencyWeight: 0, maxPerSite: null, now: 0 });

/**
 * An entry as stored: JSON (UTF-8) with `results` last, and in the head each result's score (`scores`) and the byte
 * offset just after it in the results' JSON (`ends`), so that the match route answers with a slice of the stored
 * bytes, neither decoded nor parsed, for any k and min_score that keep a prefix of the results (entryResults).
 * Entries written by earlier versions (no `ends`; non-ASCII escaped as \uXXXX) are parsed when cut, passed through
 * otherwise.
 * @param {MatchEntry} entry
 * @returns {string} the same JSON as JSON.stringify({...head, scores, ends, results})
 */
export function encodeEntry(entry) {
  const { results, ...head } = entry;
  const items = results.map((r) => JSON.stringify(r));
  /** @type {number[]} */
  const ends = [];
  let at = 1; // after '['
  for (const item of items) {
    at += Buffer.byteLength(item);
    ends.push(at);
    at += 1; // ',' or ']'
  }
  const h = JSON.stringify({ ...head, scores: results.map((r) => r.score), ends });
  return `${h.slice(0, -1)},"results":[${items.join(',')}]}`;
}

const CLOSE_BRACKET = Buffer.from(']');

/**
 * The results of an answer from a stored entry: the first k results scoring at least `min` (as JSON bytes) and how
 * many of the first k scored below it. A slice of the stored bytes when those are a prefix of the stored results
 * and the entry records its items' ends; parsed and written again otherwise.
 * @param {RawEntry} entry
 * @param {number} k
 * @param {number} min
 * @returns {{bytes: Buffer, below: number}}
 */
export function entryResults({ head, results }, k, min) {
  const { scores, ends } = head;
  if (scores && ends && scores.length === ends.length) {
    // One pass: how many of the first k are below min, how many results are kept in all, how many lead unbroken.
    let below = 0;
    let kept = 0;
    let leading = 0;
    for (let i = 0; i < scores.length; i++) {
      if (scores[i] >= min) {
        if (kept === i) leading = i + 1;
        kept++;
      } else if (i < k) {
        below++;
      }
    }
    const prefix = Math.min(leading, k);
    if (Math.min(kept, k) === prefix) {
      if (prefix === scores.length) return { bytes: results, below };
      return { bytes: Buffer.concat([results.subarray(0, prefix ? ends[prefix - 1] : 1), CLOSE_BRACKET]), below };
    }
  } else if (k >= head.count && (head.lowest_score ?? -Infinity) >= min) {
    return { bytes: results, below: 0 };
  }
  const all = /** @type {ResultItem[]} */ (JSON.parse(results.toString()));
  return {
    bytes: Buffer.from(JSON.stringify(all.filter((r) => r.score >= min).slice(0, k))),
    below: all.slice(0, k).filter((r) => r.score < min).length,
  };
}

/**
 * Split a stored entry into its parsed head and its raw results (a JSON string cannot contain the
 * sequence ,"results": unescaped, so its first occurrence is the key).
 * @param {Buffer} raw
 * @returns {RawEntry}
 */
export function splitEntry(raw) {
  const i = raw.indexOf(RESULTS_KEY);
  return { head: JSON.parse(`${raw.toString('utf8', 0, i)}}`), results: raw.subarray(i + RESULTS_KEY.length, raw.length - 1) };
}

/** @param {string} prefix */
export const keys = (prefix) => ({
  /** @param {string} model @param {string} source @param {string} target @param {string} id */
  entry: (model, source, target, id) => `${prefix}:match:${model}:${source}:${target}:${id}`,
  /** @param {string} model @param {string} target */
  gen: (model, target) => `${prefix}:match-gen:${model}:${target}`,
  /** @param {string} model @param {string} source */
  targets: (model, source) => `${prefix}:match-targets:${model}:${source}`,
});

/**
 * The precomputed entry when present and fresh, else null (also when Redis is down or slow).
 * @param {import('ioredis').Redis} redis
 * @param {string} prefix
 * @param {{model: string, source: string, target: string, id: string, k: number, rerank?: ReturnType<typeof rerankSignature>}} request
 *   rerank: the request's re-ranking options (absent: none); an entry computed with others is not served
 * @returns {Promise<{entry: RawEntry | null, reason: 'fresh' | 'missing' | 'stale' | 'other-options' | 'redis-down'}>}
 */
export async function lookupMatch(redis, prefix, request) {
  if (redis.status !== 'ready') return { entry: null, reason: 'redis-down' };
  const k = keys(prefix);
  let raw;
  try {
    // As bytes: the results are passed through to the answer undecoded.
    raw = await redis.mgetBuffer(k.entry(request.model, request.source, request.target, request.id), k.gen(request.model, request.target));
  } catch {
    return { entry: null, reason: 'redis-down' };
  }
  if (!raw[0]) return { entry: null, reason: 'missing' };
  const entry = splitEntry(raw[0]);
  const { head } = entry;
  const gen = Number(raw[1]?.toString() ?? 0);
  // Fresh: computed against the target as it is now, and holding the k asked for (or the whole target).
  if (head.target_gen !== gen || (head.k < request.k && head.count >= head.k)) return { entry: null, reason: 'stale' };
  if (JSON.stringify(head.rerank ?? NO_RERANK) !== JSON.stringify(request.rerank ?? NO_RERANK)) return { entry: null, reason: 'other-options' };
  return { entry, reason: 'fresh' };
}

/**
 * After a write through the API: drop the document's own entries (as a source) and make every entry that
 * may list it (as a target) stale. Best effort: with Redis down the entries expire by their TTL.
 * @param {import('ioredis').Redis} redis
 * @param {string} prefix
 * @param {string} model
 * @param {string} collection
 * @param {string[]} ids
 */
export async function invalidate(redis, prefix, model, collection, ids) {
  if (redis.status !== 'ready') return false;
  const k = keys(prefix);
  try {
    const targets = await redis.smembers(k.targets(model, collection));
    const multi = redis.multi().incr(k.gen(model, collection));
    for (const t of targets) for (const id of ids) multi.del(k.entry(model, collection, t, id));
    await multi.exec();
    return true;
  } catch {
    return false;
  }
}

/**
 * After a collection was deleted: no precomputed entry involving it is served any more. Entries listing its
 * documents (it was their target) are made stale by its generation; entries of its documents (it was their
 * source) by the generation of each of their targets (which also retires other sources' entries for those
 * targets until the next precompute run: they cannot be told apart without scanning Redis). Best effort, as
 * invalidate().
 * @param {import('ioredis').Redis} redis
 * @param {string} prefix
 * @param {string} model
 * @param {string} collection
 */
export async function invalidateCollection(redis, prefix, model, collection) {
  if (redis.status !== 'ready') return false;
  const k = keys(prefix);
  try {
    const targets = await redis.smembers(k.targets(model, collection));
    const multi = redis.multi().incr(k.gen(model, collection)).del(k.targets(model, collection));
    for (const t of targets) multi.incr(k.gen(model, t));
    await multi.exec();
    return true;
  } catch {
    return false;
  }
}

/**
 * One batch of source documents, as queued on `precompute` (job name `batch`).
 * @typedef {object} PrecomputeJob
 * @property {string} run
 * @property {string} model
 * @property {string} source
 * @property {string} target
 * @property {number} k
 * @property {string[]} ids source documents of this batch
 * @property {number} ttlSeconds
 * @property {string} prefix
 * @property {'fast'|'exact'} mode
 * @property {Omit<import('./rerank.js').RerankOptions, 'now'>} [rerank] re-ranking options (absent: none); ages at the job's run
 * @property {{maxK: number, rerank: {poolFactor: number, poolMin: number}}} [searchSettings] candidate pool bounds (config.server)
 * @property {{seeds: string, vectors: import('./safety.js').SeedVector[]}} [safety] the source collection's sensitive-topic seeds
 *   (digest and vectors, embedded by the coordinator): each entry records its page's similarity to them
 */
