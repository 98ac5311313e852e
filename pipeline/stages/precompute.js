// `scdv precompute`: split the source collection into batches, queue one Bull job per batch on `precompute`
// and wait for them. The batches are processed by the caller's processor in this process (workers/precompute.js,
// server.precompute.concurrency jobs at a time, each a search per document) and by any `scdv worker precompute`
// on the same Redis. Failed batches are retried per queue.attempts; a batch that fails for good fails the run.
import { errors } from '../errors.js';
import { closeWorkerQueue, openQueue } from '../queue/queues.js';
import { checkJob } from '../queue/job-schemas.js';
import { openModelStore } from '../store/index.js';
import { collectionEmbedConfig, deriveAndRecordThreshold, layoutRecords } from '../serving/index.js';
import { expansionIsStale, reexpandCollection } from '../serving/ad-expansion.js';
import { expandSettingsOf, ownCollectionOf } from '../match/expand.js';
import { createEmbedder } from '../embed/index.js';
import { safetySettings, seedVectors } from '../match/safety.js';

/** @typedef {import('../match/index.js').PrecomputeJob} PrecomputeJob */

/**
 * Processing of batches in this process.
 * @typedef {object} PrecomputeProcessor
 * @property {(job: PrecomputeJob, redis: import('ioredis').Redis, onProgress?: (done: number) => void, config?: import('../config.js').Config) => Promise<{written: number, missing: number}>} process
 *   config: the run's (which store backend to open)
 * @property {() => Promise<void>} close once the run is over
 */

/**
 * @param {object} options
 * @param {string} options.model
 * @param {string} options.source
 * @param {string} options.target
 * @param {number} options.k
 * @param {Omit<import('../match/rerank.js').RerankOptions, 'now'>} [options.rerank] re-ranking of each list (absent: none)
 * @param {string} options.redisUrl
 * @param {import('../config.js').Config} options.config
 * @param {PrecomputeProcessor} options.processor
 * @param {(p: {done: number, total: number}) => void} [options.onProgress]
 * @returns {Promise<{run: string, documents: number, written: number, missing: number, jobs: number, seconds: number,
 *   threshold: import('../match/threshold.js').MatchThreshold | null, reexpanded: {record: import('../serving/ad-expansion.js').ExpansionRecord | null} | null}>}
 *   threshold: the target's derived default min_score; reexpanded: the target's ads expanded again (stale, adEmbed.expand)
 */
export async function runPrecompute(options) {
  const t0 = Date.now();
  const { config } = options;
  if (!(Number.isInteger(options.k) && options.k >= 1 && options.k <= config.server.maxK)) throw errors.USAGE(`--k must be 1-${config.server.maxK}, got ${options.k}`);
  const store = await openModelStore(options.model, config);
  let ids;
  let threshold;
  /** @type {{record: import('../serving/ad-expansion.js').ExpansionRecord | null} | null} */
  let reexpanded = null;
  try {
    await store.collection(options.target); // SCDV_COLLECTION_NOT_FOUND when missing
    ids = [...(await (await store.collection(options.source)).ids())];
    // An expanded ad collection whose pages changed since (or whose settings did) is expanded again first.
    const settings = expandSettingsOf(config.adEmbed, options.target);
    const recorded = (await layoutRecords(store).read())[options.target]?.expansion;
    if ((await store.collectionInfo(ownCollectionOf(options.target))) && (await expansionIsStale(store, recorded, settings))) {
      reexpanded = { record: await reexpandCollection(store, options.target, settings) };
    }
    // The target's default min_score, measured against these pages (served entries are cut by it when read).
    threshold = await deriveAndRecordThreshold(store, options.source, options.target, config);
  } finally {
    await store.close();
  }
  const safety = await precomputeSafety(options.model, options.source, config);
  const run = `precompute-${options.model}-${options.source}-${options.target}-${Date.now().toString(36)}`;
  const queue = openQueue('precompute', options.redisUrl, config.queue);
  const redis = /** @type {import('ioredis').Redis} */ (/** @type {any} */ (queue).client);
  const batch = config.server.precompute.batchSize;
  const total = ids.length;
  let done = 0;
  let written = 0;
  let missing = 0;
  try {
    queue.process('batch', config.server.precompute.concurrency, async (/** @type {import('bull').Job<PrecomputeJob>} */ job) => {
      let last = 0;
      /** @type {PrecomputeJob} */
      let data;
      try {
        data = checkJob('precompute', job.data, { config }, job.id); // any process on the Redis may queue on `precompute`
      } catch (err) {
        job.discard();
        throw err;
      }
      const r = await options.processor.process(data, redis, (n) => { done += n - last; last = n; options.onProgress?.({ done, total }); }, config);
      return r;
    });
    const jobs = [];
    // job.finished() listens for the queue's global events, two listeners per job.
    queue.setMaxListeners(2 * Math.ceil(ids.length / batch) + 20);
    for (let i = 0; i < ids.length; i += batch) {
      /** @type {PrecomputeJob} */
      const data = {
        run, model: options.model, source: options.source, target: options.target, k: options.k, ids: ids.slice(i, i + batch),
        ttlSeconds: config.server.precompute.ttlSeconds, prefix: config.queue.prefix, mode: config.server.searchMode,
        ...(options.rerank ? { rerank: options.rerank, searchSettings: { maxK: config.server.maxK, rerank: config.server.rerank } } : {}),
        ...(safety ? { safety } : {}),
      };
      jobs.push(await queue.add('batch', data, { jobId: `${run}-${i / batch}` }));
    }
    const results = await Promise.all(jobs.map((j) => j.finished()));
    for (const r of results) { written += r.written; missing += r.missing; }
    return { run, documents: total, written, missing, jobs: jobs.length, seconds: (Date.now() - t0) / 1000, threshold, reexpanded };
  } finally {
    await closeWorkerQueue(queue);
    await options.processor.close();
  }
}

/**
 * The sensitive-topic seeds of the source collection (server.brandSafety), embedded with the embed settings its
 * pages were indexed with, for the jobs to measure each page against; null when the rule is off for it.
 * @param {string} model
 * @param {string} source
 * @param {import('../config.js').Config} config
 * @returns {Promise<NonNullable<PrecomputeJob['safety']> | null>}
 */
async function precomputeSafety(model, source, config) {
  const st = safetySettings(config.server.brandSafety, source);
  if (!st) return null;
  const embedder = await createEmbedder(model, { ...config, embed: await collectionEmbedConfig(model, source, config) });
  try {
    return { seeds: st.digest, vectors: await seedVectors(embedder, st, (docs) => embedder.embedDocuments(docs)) };
  } finally {
    embedder.model.wordTopics.close();
  }
}
