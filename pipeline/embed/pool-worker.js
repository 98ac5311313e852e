// One thread of EmbedPool (pool.js): builds the model's Embedder once, then answers each {id, docs, embed?} with the
// vectors of Embedder.embedDocumentsHere (the same as embedDocuments; under `embed`, the settings of a collection's
// layout, when given; their buffers moved, not copied) or with
// the error it raised. With workerData.pace each embedding is a paced section (pauses never change a vector), and
// the answer says what it paused (`paced`).
import { parentPort, workerData } from 'node:worker_threads';
import { createEmbedder } from './embedder.js';
import { paceThisThread, yieldThisThread } from '../threads/index.js';

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

/** @param {any} err */
const plain = (err) => ({ code: err?.code, message: String(err?.message ?? err), status: err?.status, details: err?.details });

/** @type {import('./embedder.js').Embedder} */
let embedder;
/** @type {import('../threads/index.js').ThreadPacer | null} */
let pacer = null;
try {
  embedder = await createEmbedder(workerData.model, workerData.config);
  // nice above 0: this thread gives way to the event loop (SCHED_BATCH: it never takes the loop's core on waking to
  // a message) and, at that much niceness above the event loop's, to the other threads (Linux; only this thread).
  if (workerData.nice > 0) yieldThisThread(workerData.nice);
  // With `pace`: each embedding runs in slices while searches are in flight (server.writePace).
  if (workerData.pace) pacer = paceThisThread(workerData.pace.busy, workerData.pace);
} catch (err) {
  port.postMessage({ startError: plain(err) });
  process.exit(1);
}

/** Embedders of other embed settings (a collection's layout), built on first use from the same model and tokenizer. */
const others = new Map();

/** @param {import('../config.js').Config['embed'] | undefined} embed */
function embedderOf(embed) {
  if (!embed) return embedder;
  const key = JSON.stringify(embed);
  let e = others.get(key);
  if (!e) others.set(key, e = embedder.withSettings(embed));
  return e;
}

port.on('message', (/** @type {{id: number, docs: {title: string, body: string}[], embed?: import('../config.js').Config['embed']}} */ m) => {
  try {
    // Tokenised here, not on the libuv pool: this thread is off the event loop already, and the pool is busy
    // with searches under load.
    pacer?.begin();
    /** @type {import('./vectorizer.js').Embedding[]} */
    let vectors;
    /** @type {import('../threads/index.js').PacedSection | undefined} */
    let paced;
    try {
      vectors = embedderOf(m.embed).embedDocumentsHere(m.docs);
    } finally {
      paced = pacer?.end();
    }
    /** @type {ArrayBuffer[]} */
    const moved = [];
    for (const v of vectors) {
      for (const a of [v.indices, v.values]) {
        // Only buffers the vector owns whole can be moved.
        if (a.byteOffset === 0 && a.byteLength === a.buffer.byteLength && a.buffer instanceof ArrayBuffer) moved.push(a.buffer);
      }
    }
    port.postMessage({ id: m.id, vectors, paced }, moved);
  } catch (err) {
    port.postMessage({ id: m.id, error: plain(err) });
  }
});
port.postMessage({ ready: true });
