// One thread of EmbedPool (pool.js): builds the model's Embedder once, then answers each {id, docs} with the
// vectors of Embedder.embedDocumentsHere (the same as embedDocuments; their buffers moved, not copied) or with
// the error it raised.
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { createEmbedder } from './index.js';

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

/** @param {any} err */
const plain = (err) => ({ code: err?.code, message: String(err?.message ?? err), status: err?.status, details: err?.details });

// On Linux a thread's niceness is its own (setPriority(0) names the calling thread), so only this thread yields;
// elsewhere it would be the whole process's, so it is left alone. Never below the process's own: that needs privileges.
if (workerData.nice > 0 && process.platform === 'linux') os.setPriority(0, Math.max(os.getPriority(0), workerData.nice));

/** @type {import('./index.js').Embedder} */
let embedder;
try {
  embedder = await createEmbedder(workerData.model, workerData.config);
} catch (err) {
  port.postMessage({ startError: plain(err) });
  process.exit(1);
}

port.on('message', (/** @type {{id: number, docs: {title: string, body: string}[]}} */ m) => {
  try {
    // Tokenised here, not on the libuv pool: this thread is off the event loop already, and the pool is busy
    // with searches under load.
    const vectors = embedder.embedDocumentsHere(m.docs);
    /** @type {ArrayBuffer[]} */
    const moved = [];
    for (const v of vectors) {
      for (const a of [v.indices, v.values]) {
        // Only buffers the vector owns whole can be moved.
        if (a.byteOffset === 0 && a.byteLength === a.buffer.byteLength && a.buffer instanceof ArrayBuffer) moved.push(a.buffer);
      }
    }
    port.postMessage({ id: m.id, vectors }, moved);
  } catch (err) {
    port.postMessage({ id: m.id, error: plain(err) });
  }
});
port.postMessage({ ready: true });
