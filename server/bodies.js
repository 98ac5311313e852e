// Request bodies: UTF-8 is checked before a body is decoded (Node would put U+FFFD in place of a bad byte, and an
// event or a document would be stored changed without a word), and the bytes of large bodies handled at once are
// bounded (ByteGate: the event route's batches).
import { isUtf8 } from 'node:buffer';
import { errors } from '../pipeline/errors.js';

/**
 * Where the first byte sequence that is not UTF-8 starts (the rules of Node's decoder and isUtf8: no overlong form,
 * no surrogate, nothing past U+10FFFF), or -1.
 * @param {Uint8Array} buf
 */
export function invalidUtf8At(buf) {
  const n = buf.length;
  let i = 0;
  while (i < n) {
    const b = buf[i];
    if (b < 0x80) { i++; continue; }
    // Continuation bytes after the lead, and the range of the first of them (narrower where a wider one would be an
    // overlong form, a surrogate or past U+10FFFF).
    let need; let lo = 0x80; let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      else if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      else if (b === 0xf4) hi = 0x8f;
    } else return i;
    if (i + need >= n) return i; // cut short by the end of the body
    if (buf[i + 1] < lo || buf[i + 1] > hi) return i;
    for (let k = 2; k <= need; k++) if (buf[i + k] < 0x80 || buf[i + k] > 0xbf) return i;
    i += need + 1;
  }
  return -1;
}

/**
 * The 400 for a body that is not UTF-8 (undefined when it is): names the byte offset, the line and the bytes.
 * @param {Buffer} buf
 * @param {{lines?: boolean}} [o] lines: the body is one item per line (NDJSON): the line leads the message
 */
export function utf8Problem(buf, o = {}) {
  if (isUtf8(buf)) return undefined;
  const offset = Math.max(0, invalidUtf8At(buf));
  let line = 1;
  let lineStart = 0;
  for (let nl = buf.indexOf(0x0a); nl !== -1 && nl < offset; nl = buf.indexOf(0x0a, nl + 1)) { line++; lineStart = nl + 1; }
  const bytes = [...buf.subarray(offset, offset + 4)].map((b) => `0x${b.toString(16).padStart(2, '0')}`).join(' ');
  const where = o.lines ? `line ${line} (byte ${offset - lineStart} of the line, offset ${offset} of the body)` : `byte offset ${offset} (line ${line})`;
  const e = errors.BODY_ENCODING_INVALID(where, bytes);
  e.details = { field: 'body', offset, line, reason: 'is not valid UTF-8' };
  return e;
}

/**
 * Fastify content-type parser options and function for JSON bodies: Fastify's own JSON parser, after the UTF-8 check.
 * @param {(req: any, body: string, done: (err: Error | null, body?: unknown) => void) => void} parseJson
 */
export function utf8JsonParser(parseJson) {
  return /** @type {const} */ ([{ parseAs: 'buffer' }, (/** @type {any} */ req, /** @type {Buffer} */ body, /** @type {(err: Error | null, body?: unknown) => void} */ done) => {
    const bad = utf8Problem(body);
    if (bad) done(bad);
    else parseJson(req, body.toString('utf8'), done);
  }]);
}

/**
 * Read a body to its end without keeping it, then call `then`: an answer sent before the body is read, on a connection
 * that then closes, can reach the client as a reset instead (the bytes it was still sending). Past `limit` bytes,
 * `then` is called at once.
 * @param {NodeJS.ReadableStream} payload
 * @param {number} limit
 * @param {() => void} then
 */
export function discardBody(payload, limit, then) {
  let bytes = 0;
  let called = false;
  const once = () => { if (!called) { called = true; then(); } };
  payload.on('data', (/** @type {Buffer} */ chunk) => { bytes += chunk.length; if (bytes > limit) { payload.pause(); once(); } });
  payload.once('end', once);
  payload.once('error', once);
  payload.resume();
}

/**
 * Bytes of bodies handled at once, and a bounded wait for the rest: a request declares its size (Content-Length, or
 * the route's body limit) and waits, its body unread, while `limit` bytes are in flight; when `queue` requests wait
 * already it is answered 503 SCDV_SERVER_BUSY with Retry-After. One request is always let in, so a body over the
 * limit runs alone. The requests are let in in the order they came.
 */
export class ByteGate {
  /**
   * @param {{limit: number, queue: number, limitName: string, queueName: string, what: string, label: string}} options
   *   what: the kind of request, for the 503's message ("event batches"); label: the queue's name in
   *   scdv_busy_refused_total
   */
  constructor(options) {
    this.o = options;
    /** Bytes of the requests let in and not answered yet. */
    this.bytes = 0;
    this.running = 0;
    /** @type {{bytes: number, admit: () => void}[]} */
    this.waiting = [];
  }

  /**
   * A place in the gate for `bytes`: `ready` resolves once the request may read its body; `leave()` (idempotent)
   * once it is answered or its client went away, waiting or not. Throws the 503 when the queue is full.
   * @param {number} bytes
   * @returns {{ready: Promise<void>, leave: () => void}}
   */
  enter(bytes) {
    let state = /** @type {'waiting' | 'in' | 'out'} */ ('waiting');
    const admitted = () => { state = 'in'; this.bytes += bytes; this.running++; };
    /** @type {{bytes: number, admit: () => void}} */
    let entry = { bytes, admit: admitted };
    let ready = Promise.resolve();
    if (this.waiting.length === 0 && this.fits(bytes)) admitted();
    else if (this.waiting.length >= this.o.queue) {
      const e = errors.SERVER_BUSY(`${this.waiting.length} ${this.o.what}`, this.o.queueName, `${this.o.queue}, behind ${this.bytes} bytes in progress, ${this.o.limitName} ${this.o.limit}`);
      e.details = { limit: this.o.queueName, value: this.o.queue, queue: this.o.label, retry_after_s: 1 };
      throw e;
    } else {
      ready = new Promise((resolve) => { entry = { bytes, admit: () => { admitted(); resolve(); } }; });
      this.waiting.push(entry);
    }
    const leave = () => {
      if (state === 'in') {
        this.bytes -= bytes;
        this.running--;
        this.pump();
      } else if (state === 'waiting') {
        const i = this.waiting.indexOf(entry);
        if (i >= 0) this.waiting.splice(i, 1);
      }
      state = 'out';
    };
    return { ready, leave };
  }

  /** @param {number} bytes */
  fits(bytes) { return this.running === 0 || this.bytes + bytes <= this.o.limit; }

  pump() {
    while (this.waiting.length && this.fits(this.waiting[0].bytes)) /** @type {{admit: () => void}} */ (this.waiting.shift()).admit();
  }
}
