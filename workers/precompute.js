// Bull processor of the `precompute` queue: one job = one batch of source documents; each is searched for in
// the target collection and its top k written to Redis as a match entry (layout: pipeline/match/), without the ads
// that exclude the page, with the page's similarity to the sensitive topics when the job carries their seeds, and
// with the page's word counts as stored with it (pipeline/match/safety.js: the served entry is judged by the rules,
// the known-word rule among them, when it is served).
// `scdv precompute` runs it in its own process; `scdv worker precompute` lets more processes join.
import { encodeEntry, keys, resultItem } from '../pipeline/match/index.js';
import { rerankSignature, storedDocs } from '../pipeline/match/rerank.js';
import { searchMatches, sensitivity, storedPage } from '../pipeline/match/safety.js';
import { runQueueWorker } from '../pipeline/queue/queue-worker.js';
import { DEFAULT_CONFIG } from '../pipeline/config.js';
import { openModelStore } from '../pipeline/store/index.js';

/** @typedef {import('../pipeline/match/index.js').PrecomputeJob} PrecomputeJob */
/** @typedef {import('../pipeline/match/index.js').MatchEntry} MatchEntry */

/** Searches in flight per job: a networked store (OpenSearch) answers each after a round trip. */
const SEARCHES_IN_FLIGHT = 4;

/** Stores by model, opened once per worker process. @type {Map<string, Promise<import('../pipeline/store/index.js').StoreBackend>>} */
const stores = new Map();
/**
 * @param {string} model
 * @param {{store: import('../pipeline/config.js').Config['store']}} config
 */
function storeOf(model, config) {
  let store = stores.get(model);
  if (!store) {
    store = openModelStore(model, config);
    store.catch(() => stores.delete(model)); // a failed open (backend down) is tried again by the next job
    stores.set(model, store);
  }
  return store;
}

/** Closes the stores this process opened for precompute jobs. */
export async function closePrecomputeStores() {
  const open = [...stores.values()];
  stores.clear();
  for (const s of open) await (await s.catch(() => null))?.close();
}

/**
 * One batch: search the target for each source document and write the entries.
 * @param {PrecomputeJob} job
 * @param {import('ioredis').Redis} redis
 * @param {(done: number) => void} [onProgress]
 * @param {{store: import('../pipeline/config.js').Config['store']}} [config] this process's (which store backend)
 * @returns {Promise<{written: number, missing: number}>}
 */
export async function processPrecompute(job, redis, onProgress, config = { store: DEFAULT_CONFIG.store }) {
  const store = await storeOf(job.model, config);
  const src = await store.collection(job.source);
  const tgt = await store.collection(job.target);
  const k = keys(job.prefix);
  const gen = Number((await redis.get(k.gen(job.model, job.target))) ?? 0);
  // Jobs queued by an older coordinator carry no options: plain top-k.
  const rerank = { duplicateThreshold: null, halfLifeMs: null, recencyWeight: 0, maxPerSite: null, ...job.rerank, now: Date.now() };
  const settings = job.searchSettings ?? { maxK: job.k, rerank: { poolFactor: 1, poolMin: 1 } };
  let written = 0;
  let missing = 0;
  for (let i = 0; i < job.ids.length; i += 100) {
    const ids = job.ids.slice(i, i + 100);
    // The pages read whole, in one call where the store has it (their metadata decides which ads may follow them:
    // pipeline/match/safety.js); then a few searches in flight: a networked store answers each after a round trip.
    const docs = await storedDocs(src, ids);
    /** @type {(string | null)[]} */
    const encoded = new Array(ids.length).fill(null);
    let next = 0;
    await Promise.all(Array.from({ length: Math.min(SEARCHES_IN_FLIGHT, ids.length) }, async () => {
      while (next < ids.length) {
        const j = next++;
        const id = ids[j];
        const doc = docs[j];
        if (!doc) continue;
        const page = storedPage(doc.meta);
        const r = await searchMatches(tgt, doc.vector, { mode: job.mode, ...(job.source === job.target ? { excludeIds: [id] } : {}) }, job.k, rerank, settings, page);
        const sens = job.safety ? sensitivity(doc.vector, job.safety.vectors) : null;
        /** @type {MatchEntry} */
        const entry = {
          model: job.model, source: job.source, target: job.target, id, k: job.k, target_gen: gen,
          computed_at: new Date().toISOString(), count: r.hits.length,
          ...(r.hits.length ? { lowest_score: Math.min(...r.hits.map((h) => h.score)) } : {}),
          ...(job.rerank ? { rerank: rerankSignature(rerank) } : {}),
          ...(rerank.duplicateThreshold === null ? {} : { duplicates_dropped: r.dropped.length, dropped: r.dropped }),
          ...(job.safety && sens ? { safety: { seeds: job.safety.seeds, topic: sens.topic, similarity: sens.similarity } } : {}),
          ...(r.excluded.length ? { excluded_ads: r.excluded } : {}),
          words: page.words ?? null,
          results: r.hits.map(resultItem),
        };
        encoded[j] = encodeEntry(entry);
      }
    }));
    const multi = redis.multi();
    ids.forEach((id, j) => {
      const e = encoded[j];
      if (e === null) { missing++; return; }
      multi.set(k.entry(job.model, job.source, job.target, id), e, 'EX', job.ttlSeconds);
      written++;
    });
    await multi.exec();
    onProgress?.(Math.min(job.ids.length, i + 100));
  }
  await redis.sadd(k.targets(job.model, job.source), job.target);
  return { written, missing };
}

/** The processor as `scdv precompute` runs it in its own process (see runPrecompute's `processor`). */
export const localPrecompute = { process: processPrecompute, close: closePrecomputeStores };

/**
 * Run a worker on the `precompute` queue until SIGTERM/SIGINT.
 * @param {{redisUrl: string, config: import('../pipeline/config.js').Config, concurrency?: number, allowPaths?: string[]}} opts
 */
export function runPrecomputeWorker(opts) {
  return runQueueWorker({
    ...opts, queueName: 'precompute', jobName: 'batch',
    handle: (/** @type {import('bull').Job<PrecomputeJob>} */ job, progress) => {
      const redis = /** @type {import('ioredis').Redis} */ (/** @type {any} */ (job.queue).client);
      return processPrecompute(job.data, redis, (done) => progress({ done }), opts.config);
    },
    onStop: () => { void closePrecomputeStores(); },
  });
}
