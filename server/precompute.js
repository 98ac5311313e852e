// Precomputed matches: the top-k documents of a target collection (ads) for every document of a source
// collection (articles), written to Redis by Bull jobs so that the match route (or an ad server reading
// Redis directly) answers with one GET instead of a search.
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
// least the k asked for (or the whole target collection: results.length < k). Writing a source document
// through the API deletes its entries; writing a target document bumps the generation, which makes every
// entry for that target stale at once (they are recomputed by the next precompute run).
import { errors } from '../pipeline/errors.js';
import { openStore } from '../pipeline/store/index.js';
import { loadAddon } from '../pipeline/store/native.js';
import { storeDirFor } from '../pipeline/paths.js';
import { openNamedQueue } from './queues.js';
import { resultItem } from './search.js';

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
 * @property {import('./search.js').ResultItem[]} results best first (always the last key)
 */

/**
 * The head of an entry (every field but the results) and the results' JSON text as stored.
 * @typedef {{head: Omit<MatchEntry, 'results'>, results: string}} RawEntry
 */

const RESULTS_KEY = ',"results":';

/**
 * An entry as stored: JSON with `results` last and every non-ASCII character escaped (\uXXXX), so that the
 * match route can pass the results through without parsing them and answer with a one-byte string.
 * @param {MatchEntry} entry
 */
export function encodeEntry(entry) {
  return JSON.stringify(entry).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Split a stored entry into its parsed head and its raw results (a JSON string cannot contain the
 * sequence ,"results": unescaped, so its first occurrence is the key).
 * @param {string} raw
 * @returns {RawEntry}
 */
export function splitEntry(raw) {
  const i = raw.indexOf(RESULTS_KEY);
  return { head: JSON.parse(`${raw.slice(0, i)}}`), results: raw.slice(i + RESULTS_KEY.length, -1) };
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
 * @param {{model: string, source: string, target: string, id: string, k: number}} q
 * @returns {Promise<{entry: RawEntry | null, reason: 'fresh' | 'missing' | 'stale' | 'redis-down'}>}
 */
export async function lookupMatch(redis, prefix, q) {
  if (redis.status !== 'ready') return { entry: null, reason: 'redis-down' };
  const k = keys(prefix);
  let raw;
  try {
    raw = await redis.mget(k.entry(q.model, q.source, q.target, q.id), k.gen(q.model, q.target));
  } catch {
    return { entry: null, reason: 'redis-down' };
  }
  if (!raw[0]) return { entry: null, reason: 'missing' };
  const entry = splitEntry(raw[0]);
  const { head } = entry;
  const gen = Number(raw[1] ?? 0);
  // Fresh: computed against the target as it is now, and holding the k asked for (or the whole target).
  if (head.target_gen !== gen || (head.k < q.k && head.count >= head.k)) return { entry: null, reason: 'stale' };
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
 */

/** Stores by folder, opened once per worker process. */
const stores = new Map();
/** @param {string} model */
function storeOf(model) {
  const dir = storeDirFor(model);
  if (!stores.has(dir)) stores.set(dir, openStore(dir));
  return stores.get(dir);
}

/**
 * One batch: search the target for each source document and write the entries.
 * @param {PrecomputeJob} job
 * @param {import('ioredis').Redis} redis
 * @param {(done: number) => void} [onProgress]
 */
export async function processPrecompute(job, redis, onProgress) {
  const store = storeOf(job.model);
  const src = store.collection(job.source);
  const tgt = store.collection(job.target);
  const k = keys(job.prefix);
  const gen = Number((await redis.get(k.gen(job.model, job.target))) ?? 0);
  let written = 0;
  let missing = 0;
  for (let i = 0; i < job.ids.length; i += 100) {
    const multi = redis.multi();
    for (const id of job.ids.slice(i, i + 100)) {
      const doc = src.get(id);
      if (!doc) { missing++; continue; }
      const hits = await tgt.searchAsync(doc.vector, {
        k: job.k, mode: job.mode, ...(job.source === job.target ? { excludeIds: [id] } : {}),
      });
      /** @type {MatchEntry} */
      const entry = {
        model: job.model, source: job.source, target: job.target, id, k: job.k, target_gen: gen,
        computed_at: new Date().toISOString(), count: hits.length, results: hits.map(resultItem),
      };
      multi.set(k.entry(job.model, job.source, job.target, id), encodeEntry(entry), 'EX', job.ttlSeconds);
      written++;
    }
    await multi.exec();
    onProgress?.(Math.min(job.ids.length, i + 100));
  }
  await redis.sadd(k.targets(job.model, job.source), job.target);
  return { written, missing };
}

/**
 * `scdv precompute`: split the source collection into batches, queue one Bull job per batch on `precompute`,
 * process them here (server.precompute.concurrency jobs at a time, each a search per document) and wait.
 * Failed batches are retried per queue.attempts; a batch that fails for good fails the run.
 * @param {object} o
 * @param {string} o.model
 * @param {string} o.source
 * @param {string} o.target
 * @param {number} o.k
 * @param {string} o.redisUrl
 * @param {import('../pipeline/config.js').Config} o.config
 * @param {(p: {done: number, total: number}) => void} [o.onProgress]
 * @returns {Promise<{run: string, documents: number, written: number, missing: number, jobs: number, seconds: number}>}
 */
export async function runPrecompute(o) {
  const t0 = Date.now();
  const { config } = o;
  if (!(Number.isInteger(o.k) && o.k >= 1 && o.k <= config.server.maxK)) throw errors.USAGE(`--k must be 1-${config.server.maxK}, got ${o.k}`);
  const store = openStore(storeDirFor(o.model));
  let ids;
  try {
    store.collection(o.target); // SCDV_COLLECTION_NOT_FOUND when missing
    ids = await listIds(store.collection(o.source));
  } finally {
    await store.close();
  }
  const run = `precompute-${o.model}-${o.source}-${o.target}-${Date.now().toString(36)}`;
  const queue = openNamedQueue('precompute', o.redisUrl, config.queue);
  const redis = /** @type {import('ioredis').Redis} */ (/** @type {any} */ (queue).client);
  const batch = config.server.precompute.batchSize;
  const total = ids.length;
  let done = 0;
  let written = 0;
  let missing = 0;
  try {
    queue.process('batch', config.server.precompute.concurrency, async (/** @type {import('bull').Job<PrecomputeJob>} */ job) => {
      let last = 0;
      const r = await processPrecompute(job.data, redis, (n) => { done += n - last; last = n; o.onProgress?.({ done, total }); });
      return r;
    });
    const jobs = [];
    // job.finished() listens for the queue's global events, two listeners per job.
    queue.setMaxListeners(2 * Math.ceil(ids.length / batch) + 20);
    for (let i = 0; i < ids.length; i += batch) {
      /** @type {PrecomputeJob} */
      const data = {
        run, model: o.model, source: o.source, target: o.target, k: o.k, ids: ids.slice(i, i + batch),
        ttlSeconds: config.server.precompute.ttlSeconds, prefix: config.queue.prefix, mode: config.server.searchMode,
      };
      jobs.push(await queue.add('batch', data, { jobId: `${run}-${i / batch}` }));
    }
    const results = await Promise.all(jobs.map((j) => j.finished()));
    for (const r of results) { written += r.written; missing += r.missing; }
    return { run, documents: total, written, missing, jobs: jobs.length, seconds: (Date.now() - t0) / 1000 };
  } finally {
    /** @type {any} */ (queue).bclient?.disconnect();
    await queue.close();
    for (const s of stores.values()) await s.close();
    stores.clear();
  }
}

/**
 * Every live document id of a collection. The store has no id listing yet: until it has one
 * (collection.ids()), flush the write-ahead log into segments, read each segment's ids through the store's
 * addon, and keep those still live (get() resolves deletions and superseded copies).
 * @param {import('../pipeline/store/index.js').Collection} collection
 * @returns {Promise<string[]>}
 */
export async function listIds(collection) {
  const c = /** @type {any} */ (collection);
  if (typeof c.ids === 'function') return [...(await c.ids())];
  await collection.flush();
  const addon = loadAddon();
  const seen = new Set();
  for (const seg of collection.stats().segmentDetails) {
    const locals = Uint32Array.from({ length: seg.docs }, (_, i) => i);
    for (const id of addon.segmentIds(seg.path, locals)) if (!seen.has(id) && collection.get(id)) seen.add(id);
  }
  return [...seen];
}
