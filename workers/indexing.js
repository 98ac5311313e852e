// Bull processor of the `index` queue: one job = one shard of a corpus, embedded with a model and written
// to a store collection in batches. Every write is an upsert, so a shard redone after a crash rewrites the
// same documents instead of duplicating them; the shard's marker is written only after its last write is
// acknowledged (durable). A job that carries its shard's documents (OpenSearch backend) may come from another
// host: its result goes back through the queue, and the worker checks that its copy of the model's files is the
// one the queuing host embeds with.
import os from 'node:os';
import { createEmbedder } from '../pipeline/embed/index.js';
import { openModelStore } from '../pipeline/store/index.js';
import { runQueueWorker } from '../pipeline/queue/queue-worker.js';
import { processShardLines, refuseCancelledRun } from '../pipeline/queue/shard.js';
import { ISSUE } from '../pipeline/line-issues.js';
import { hashOf } from '../pipeline/config.js';
import { storeRows } from '../pipeline/embed/meta.js';
import { duplicateIssue } from '../pipeline/corpus/duplicates.js';
import { checkModelFiles, layoutRecords, recordLayoutIfNone } from '../pipeline/serving/index.js';
import { markExpansionsStale, recordExpansion } from '../pipeline/serving/ad-expansion.js';
import { ownCollectionOf, writeExpanded } from '../pipeline/match/expand.js';

/** @typedef {import('../pipeline/queue/index-job.js').IndexShardJob} IndexShardJob */
/** @typedef {import('../pipeline/queue/index-job.js').IndexShardResult} IndexShardResult */

/** Embedders and stores by key: loaded once per worker process. */
const embedders = new Map();
/** @type {Map<string, Promise<import('../pipeline/store/index.js').StoreBackend>>} */
const stores = new Map();

/** @param {IndexShardJob} job */
async function embedderFor(job) {
  const key = hashOf({ model: job.model, tokenizer: job.config.tokenizer, embed: job.config.embed });
  if (!embedders.has(key)) embedders.set(key, await createEmbedder(job.model, job.config, { inMemory: true }));
  return embedders.get(key);
}

/**
 * The job's model's store on the job's backend, reached with this process's own settings (its nodes, its
 * credentials, its store folder): a worker on another host writes straight to the cluster.
 * @param {IndexShardJob} job
 * @param {import('../pipeline/config.js').Config['store']} own this process's store config
 */
function storeFor(job, own) {
  const store = { ...own, backend: job.backend ?? own.backend };
  const key = `${store.backend}\u0000${job.model}`;
  let opened = stores.get(key);
  if (!opened) {
    opened = openModelStore(job.model, { store });
    opened.catch(() => stores.delete(key)); // a failed open (backend down) is tried again by the next job
    stores.set(key, opened);
  }
  return opened;
}

/**
 * @param {IndexShardJob} job
 * @param {(p: {lines: number, documents: number}) => void} [onProgress]
 * @param {import('../pipeline/config.js').Config['store']} [ownStore] this process's store config (default: the job's)
 * @returns {Promise<IndexShardResult>}
 */
export async function processIndexShard(job, onProgress, ownStore = job.config.store) {
  const startedAt = Date.now();
  if (job.modelFilesSha256) await checkModelFiles(job.model, { [job.collection]: { model_files_sha256: job.modelFilesSha256 } });
  const embedder = await embedderFor(job);
  const store = await storeFor(job, ownStore);
  const collection = await store.collection(job.collection, { width: embedder.width });
  // An expanded ad collection: own vectors kept in its companion, expanded ones written (pipeline/match/expand.js).
  const expand = job.expand
    ? {
      own: await store.collection(ownCollectionOf(job.collection), { width: embedder.width }),
      source: (await store.collectionInfo(job.expand.from)) ? await store.collection(job.expand.from) : null,
      settings: job.expand,
    }
    : null;
  const { shard, config } = job;
  const duplicates = new Map(job.duplicates ?? []);
  /** @type {IndexShardResult} */
  const result = {
    shard: shard.index, runKey: job.runKey, lines: 0, documents: 0, rejected: [], empty: [], writes: 0, seconds: 0, collectionCreated: null,
    worker: `${os.hostname()}:${process.pid}`,
  };
  // The write of a batch runs while the next batch is embedded (one write in flight): the store's engine and the
  // embedder work at the same time. The first write is awaited alone (it may create the collection and records
  // the layout); the last one, and any failure, is awaited before the shard's marker is written.
  /** @type {Promise<void> | null} */
  let pending = null;
  const settle = async () => {
    const p = pending;
    pending = null;
    if (p) await p;
  };
  /** @param {import('../pipeline/queue/shard.js').BatchItem[]} batch */
  const flush = async (batch) => {
    const vectors = await embedder.embedDocuments(batch.map((b) => b.doc));
    await settle();
    const { rows: writes, empty } = storeRows(batch.map((b) => b.doc), vectors);
    for (const i of empty) {
      const { line, doc } = batch[i];
      result.empty.push({ line, id: doc.id, code: ISSUE.NO_KNOWN_WORDS, reason: `none of its ${vectors[i].unknownWords} distinct words is in model ${job.model}` });
    }
    if (writes.length) {
      // Checked again after embedding, just before the write: a run cancelled meanwhile writes nothing.
      refuseCancelledRun(job);
      // Batch writes skip the per-request refresh of a cluster; `scdv index` flushes once at the end of the run.
      const write = async () => {
        if (expand) await writeExpanded({ own: expand.own, target: collection, source: expand.source }, writes, expand.settings, { refresh: false });
        else await collection.upsert(writes, { refresh: false });
        result.writes++;
        result.documents += writes.length;
        onProgress?.({ lines: result.lines, documents: result.documents });
      };
      if (!result.writes) {
        await write();
        // A bulk job's collection keeps the layout it was written with (`scdv index` records its own entry at the end).
        await recordLayoutIfNone(store, job.collection, embedder.layout);
        // What the ads were expanded against (a bulk job's; `scdv index` records its own at the end), and the ads
        // expanded from this collection marked stale (`scdv index` of it expands them again at its end).
        if (job.expand && !(await layoutRecords(store).read())[job.collection]?.expansion) await recordExpansion(store, job.collection, job.expand, true);
        await markExpansionsStale(store, job.collection);
      } else {
        pending = write();
        pending.catch(() => {}); // awaited by the next flush or the finish; not an unhandled rejection meanwhile
      }
    } else onProgress?.({ lines: result.lines, documents: result.documents });
  };
  return processShardLines(job, {
    result, batchSize: config.index.writeBatchSize, flush, startedAt,
    finish: async () => {
      await settle();
      result.collectionCreated = result.documents > 0 ? collection.createdAt : null;
    },
    abandon: () => { pending = null; },
    accept: (doc, line) => {
      const firstLine = duplicates.get(line);
      return firstLine === undefined ? null : duplicateIssue(line, doc.id, firstLine);
    },
  });
}

/**
 * Run a worker on the `index` queue until SIGTERM/SIGINT.
 * @param {{redisUrl: string, config: import('../pipeline/config.js').Config, concurrency?: number, allowPaths?: string[]}} opts
 */
export function runIndexWorker(opts) {
  return runQueueWorker({
    ...opts, queueName: 'index', jobName: 'shard',
    handle: async (/** @type {import('bull').Job<IndexShardJob>} */ job, progress) => {
      const r = await processIndexShard(job.data, progress, opts.config.store);
      // A job that carried its documents is answered with the whole result: the queuing host writes the marker.
      if (job.data.lines !== undefined) return r;
      return { shard: r.shard, documents: r.documents, rejected: r.rejected.length, empty: r.empty.length };
    },
    onStop: () => { for (const s of stores.values()) void s.then((store) => store.close(), () => {}); },
  });
}
