// Request-time embedding off the event loop: a few worker threads, each with its own Embedder built by
// createEmbedder (the same code, model and settings as batch indexing), answer embedDocuments calls. A thread
// that dies (a crash, an out-of-memory, terminate()) fails only the calls it held, with SCDV_EMBED_WORKER_FAILED,
// and is replaced; the pool keeps serving. Calls wait here, in two lanes: a large call (more than largeChars of text)
// runs only on an idle thread and on at most size − 1 threads at once (1 when size is 1), a small call on a thread with
// no large call, before any waiting large call. A small text thus never waits behind a large one it did not start
// after; at most largeQueue large calls wait, one more is refused (SCDV_SERVER_BUSY, retry later).
import { Worker } from 'node:worker_threads';
import { ScdvError, errors } from '../errors.js';

const WORKER_FILE = new URL('./pool-worker.js', import.meta.url);

/** @typedef {import('./vectorizer.js').Embedding} Embedding */
/** @typedef {{resolve: (v: Embedding[]) => void, reject: (e: Error) => void, large: boolean}} Call */
/** @typedef {Call & {id: number, docs: {title: string, body: string}[], embed: import('../config.js').Config['embed'] | null}} Waiting */
/** Small calls a thread may hold at once (the next one posted while it embeds: no idle round trip). */
const SMALL_DEPTH = 2;
/**
 * @typedef {object} PoolOptions
 * @property {string} model
 * @property {import('../config.js').Config} config
 * @property {number} size threads
 * @property {number} [nice] the threads' niceness above the event loop's (Linux): above 0 they yield the
 *   cores to the other threads
 * @property {({busy: Int32Array} & import('../config.js').Config['server']['writePace']) | null} [pace] each
 *   embedding in slices while busy[0] > 0 (paceThisThread, pipeline/threads/)
 * @property {number} [largeChars] a call with more characters of text (titles and bodies) is large (default: none is)
 * @property {number} [largeQueue] large calls that may wait (default: no limit)
 */

/**
 * @typedef {object} Slot one thread of the pool
 * @property {Worker} worker
 * @property {Map<number, Call>} calls in flight on this thread
 * @property {Promise<void>} ready settles when the thread has built its embedder (or failed to)
 * @property {boolean} up the embedder is built
 * @property {boolean} dead the thread has exited
 */

export class EmbedPool {
  /**
   * Start `size` threads and wait until each has loaded the model (a model that cannot be loaded is the
   * catalogue error its loading raised, here, not at the first request).
   * @param {PoolOptions} opts
   */
  static async start(opts) {
    const pool = new EmbedPool(opts);
    try {
      await Promise.all(pool.slots.map((s) => s.ready));
    } catch (err) {
      await pool.close();
      throw err;
    }
    return pool;
  }

  /** @param {PoolOptions} opts */
  constructor({ model, config, size, nice = 0, pace = null, largeChars = Infinity, largeQueue = Infinity }) {
    if (!(Number.isInteger(size) && size >= 1)) throw errors.CONFIG_INVALID(`embed pool size must be a positive integer, got ${size}`);
    this.model = model;
    this.config = config;
    this.nice = nice;
    this.pace = pace;
    /** What pacing took from the embeddings so far (pace): sections paced, pauses, milliseconds paused. */
    this.paced = { sections: 0, pauses: 0, pausedMs: 0 };
    this.nextId = 1;
    this.closed = false;
    /** Threads replaced after dying (for logs and tests). */
    this.restarts = 0;
    this.largeChars = largeChars;
    this.largeQueue = largeQueue;
    /** Threads large calls may take at once. */
    this.maxLarge = Math.max(1, size - 1);
    /** @type {{small: Waiting[], large: Waiting[]}} calls not yet on a thread */
    this.lanes = { small: [], large: [] };
    /** Large calls refused because largeQueue were waiting (for metrics and tests). */
    this.refused = 0;
    /** @type {Slot[]} */
    this.slots = Array.from({ length: size }, () => this.spawn());
  }

  /** @returns {Slot} */
  spawn() {
    const worker = new Worker(WORKER_FILE, { workerData: { model: this.model, config: this.config, nice: this.nice, pace: this.pace } });
    /** @type {Slot} */
    const slot = { worker, calls: new Map(), ready: Promise.resolve(), up: false, dead: false };
    /** @type {Error | null} */
    let crash = null;
    slot.ready = new Promise((resolve, reject) => {
      worker.on('message', (/** @type {any} */ m) => {
        if (m.ready) { slot.up = true; resolve(); return; }
        if (m.startError) { crash = revive(m.startError); reject(crash); return; }
        const call = slot.calls.get(m.id);
        if (!call) return;
        slot.calls.delete(m.id);
        this.pump();
        if (m.paced?.pauses) {
          this.paced.sections++;
          this.paced.pauses += m.paced.pauses;
          this.paced.pausedMs += m.paced.pausedMs;
        }
        if (m.error) call.reject(revive(m.error)); else call.resolve(m.vectors);
      });
      worker.on('error', (err) => { crash ??= err; });
      worker.on('exit', (code) => {
        slot.dead = true;
        const reason = crash?.message ?? `exit code ${code}`;
        // Before the model was loaded: the loading's own error (SCDV_MODEL_CORRUPT …); after: the thread failed.
        const failure = () => (crash instanceof ScdvError && !slot.up ? crash : errors.EMBED_WORKER_FAILED(reason));
        reject(failure());
        for (const call of slot.calls.values()) call.reject(failure());
        slot.calls.clear();
        // A thread that had loaded the model is replaced at once; one that could not load it is retried by
        // the next call (a broken model fails each call clearly instead of restarting in a loop).
        if (!this.closed && slot.up) this.replace(slot);
        // No thread left that could take the waiting calls: they fail as the thread did.
        if (!this.closed && !this.slots.some((s) => !s.dead)) for (const w of this.lanes.small.splice(0).concat(this.lanes.large.splice(0))) w.reject(failure());
        this.pump();
      });
    });
    slot.ready.catch(() => {}); // observed by start() and by embedDocuments()
    return slot;
  }

  /** @param {Slot} slot */
  replace(slot) {
    const i = this.slots.indexOf(slot);
    if (i < 0) return;
    this.slots[i] = this.spawn();
    this.restarts++;
  }

  /**
   * Embed documents on the least busy thread: the same vectors as Embedder.embedDocuments on this thread.
   * @param {{title?: string, body: string}[]} docs
   * @param {import('../config.js').Config['embed'] | null} [embed] other settings than the pool's (a collection's layout)
   * @returns {Promise<Embedding[]>}
   */
  async embedDocuments(docs, embed = null) {
    if (this.closed) throw errors.EMBED_WORKER_FAILED('the embedding threads are closed');
    for (const s of this.slots) if (s.dead && !s.up) this.replace(s);
    let chars = 0;
    for (const d of docs) chars += (d.title?.length ?? 0) + d.body.length;
    const large = chars > this.largeChars;
    if (large && this.lanes.large.length >= this.largeQueue) {
      this.refused++;
      const e = errors.SERVER_BUSY(`${this.lanes.large.length} large texts (over ${this.largeChars} characters)`, 'server.embedLargeQueue', this.largeQueue);
      e.details = { limit: 'server.embedLargeQueue', value: this.largeQueue, queue: 'embed_large', retry_after_s: 2 };
      throw e;
    }
    const id = this.nextId++;
    const result = new Promise((/** @type {(v: Embedding[]) => void} */ resolve, reject) => {
      (large ? this.lanes.large : this.lanes.small).push({ id, docs: docs.map((d) => ({ title: d.title ?? '', body: d.body })), embed, resolve, reject, large });
    });
    this.pump();
    return result;
  }

  /** Post waiting calls to the threads that may take them (the lanes' rules above). */
  pump() {
    if (this.closed) return;
    const live = this.slots.filter((s) => !s.dead);
    const holdsLarge = (/** @type {Slot} */ s) => { for (const c of s.calls.values()) if (c.large) return true; return false; };
    while (this.lanes.small.length) {
      // The least busy thread with room and no large call: posted at once (a thread queues messages until its embedder
      // is built).
      const free = live.filter((s) => s.calls.size < SMALL_DEPTH && !holdsLarge(s));
      if (!free.length) break;
      this.post(free.reduce((a, b) => (b.calls.size < a.calls.size ? b : a)), /** @type {Waiting} */ (this.lanes.small.shift()));
    }
    while (this.lanes.large.length) {
      if (live.filter(holdsLarge).length >= this.maxLarge) break;
      // Only an idle thread, and not while small calls wait (they go first).
      const idle = this.lanes.small.length ? undefined : live.find((s) => s.calls.size === 0);
      if (!idle) break;
      this.post(idle, /** @type {Waiting} */ (this.lanes.large.shift()));
    }
  }

  /** @param {Slot} slot @param {Waiting} w */
  post(slot, w) {
    slot.calls.set(w.id, { resolve: w.resolve, reject: w.reject, large: w.large });
    slot.worker.postMessage(w.embed ? { id: w.id, docs: w.docs, embed: w.embed } : { id: w.id, docs: w.docs });
  }

  /** Calls waiting for a thread, by lane (for tests). */
  get waiting() {
    return { small: this.lanes.small.length, large: this.lanes.large.length };
  }

  /** Threads currently alive (for tests). */
  get workers() {
    return this.slots.filter((s) => !s.dead).map((s) => s.worker);
  }

  async close() {
    this.closed = true;
    for (const w of this.lanes.small.splice(0).concat(this.lanes.large.splice(0))) w.reject(errors.EMBED_WORKER_FAILED('the embedding threads are closed'));
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}

/**
 * An error sent by a thread, as the catalogue error it was (or SCDV_EMBED_WORKER_FAILED naming it).
 * @param {{code?: string, message: string, status?: number, details?: Record<string, unknown>}} e
 */
function revive(e) {
  if (e.code?.startsWith('SCDV_') && typeof e.status === 'number') return new ScdvError(e.code, e.message, e.status, e.details);
  return errors.EMBED_WORKER_FAILED(e.message);
}
