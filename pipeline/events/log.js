// The reader-event log: append-only NDJSON segment files, one writer per process (each process its own segment,
// so that lines of two processes never interleave). A batch is acknowledged once written, and with
// events.fsync 'always' once fdatasync'ed: batches that arrive while a write is under way are written together
// with the next one (group commit), so a disk sync is shared by every batch waiting for it.
// Retention deletes whole segments, oldest first, by age and by the log's total size.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { errors } from '../errors.js';
import { dataDir } from '../paths.js';

/** A writer that never fills a segment still applies retention this often. */
const RETENTION_EVERY_MS = 3_600_000;
const SEGMENT_RE = /^events-(\d{8}T\d{6}\d{3}Z)-(\d+)-([0-9a-f]{6})\.ndjson$/;
const RAW_BREAK = /[\r\n]/;
const RAW_BREAKS = /[\r\n]/g;

/**
 * @param {import('../config.js').Config['events']} events
 * @returns {string} the log's folder
 */
export const eventsDir = (events) => events.dir ?? path.join(dataDir(), 'events');

/** @param {Date} d */
const stamp = (d) => d.toISOString().replace(/[-:.]/g, '');

/**
 * The segments of a log, oldest first (by their creation stamp, then name).
 * @param {string} dir
 * @returns {{file: string, name: string, size: number, mtimeMs: number}[]}
 */
export function listSegments(dir) {
  let names;
  try { names = fs.readdirSync(dir); } catch (err) {
    if (/** @type {NodeJS.ErrnoException} */ (err).code === 'ENOENT') return [];
    throw err;
  }
  return names.filter((n) => SEGMENT_RE.test(n)).sort().flatMap((name) => {
    const file = path.join(dir, name);
    try {
      const st = fs.statSync(file);
      return [{ file, name, size: st.size, mtimeMs: st.mtimeMs }];
    } catch { return []; } // removed meanwhile by another process's retention
  });
}

/**
 * Delete segments past the retention limits, never `keep` (the segment being written).
 * @param {string} dir
 * @param {{maxAgeDays: number, maxBytes: number}} limits
 * @param {string} [keep]
 * @param {number} [now]
 * @returns {string[]} deleted segment names
 */
export function applyRetention(dir, limits, keep, now = Date.now()) {
  const segments = listSegments(dir);
  let total = segments.reduce((n, s) => n + s.size, 0);
  const deleted = [];
  for (const s of segments) {
    if (s.file === keep) continue;
    const old = limits.maxAgeDays > 0 && now - s.mtimeMs > limits.maxAgeDays * 86_400_000;
    const over = limits.maxBytes > 0 && total > limits.maxBytes;
    if (!old && !over) continue;
    try { fs.unlinkSync(s.file); } catch (err) { if (/** @type {NodeJS.ErrnoException} */ (err).code !== 'ENOENT') throw err; }
    total -= s.size;
    deleted.push(s.name);
  }
  return deleted;
}

/**
 * Lines as the log's bytes: UTF-8, each followed by LF, a raw CR or LF inside a line dropped (see appendLines). Written
 * into one buffer, not joined into a string first: a batch's text of several MiB would be a large V8 string, whose memory
 * comes back only at a full collection, where a buffer's goes with its small handle.
 * @param {string[]} lines
 * @returns {Buffer}
 */
function linesBytes(lines) {
  const clean = lines.map((l) => (RAW_BREAK.test(l) ? l.replace(RAW_BREAKS, '') : l));
  let total = 0;
  for (const line of clean) total += Buffer.byteLength(line) + 1;
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  for (const line of clean) {
    at += out.write(line, at);
    out[at++] = 0x0a;
  }
  return out;
}

export class EventLog {
  /**
   * @param {import('../config.js').Config['events']} options
   */
  constructor(options) {
    this.options = options;
    this.dir = eventsDir(options);
    /** @type {Buffer[]} batches of lines (UTF-8, each line ending in LF) waiting for the next write */
    this.pending = [];
    this.pendingBytes = 0;
    /** Lines in pending. */
    this.pendingLines = 0;
    /** @type {{resolve: () => void, reject: (e: Error) => void}[]} batches waiting for the next write */
    this.waiters = [];
    this.writing = false;
    this.closed = false;
    /** @type {fs.promises.FileHandle | null} */
    this.handle = null;
    this.segment = '';
    this.segmentSize = 0;
    /** Events written by this process. */
    this.written = 0;
    /** When retention last ran (at each new segment, and at least hourly while writing). */
    this.retainedAt = 0;
  }

  /**
   * Append records (one JSON line each). Resolves once they are written (and synced with fsync 'always');
   * rejects with nothing of the batch acknowledged.
   * @param {object[]} records
   */
  append(records) {
    return this.appendLines(records.map((r) => JSON.stringify(r)));
  }

  /**
   * Append lines that are JSON objects already, e.g. the NDJSON lines of a request. A raw CR or LF in JSON text can
   * only be whitespace between tokens (inside a string it must be escaped), so it is dropped: the file's lines are
   * framed by LF alone and each reads back as the event that was acknowledged. The lines are copied before this
   * returns: the caller need not keep them.
   * @param {string[]} lines
   */
  appendLines(lines) {
    if (this.closed) return Promise.reject(errors.EVENT_LOG_CLOSED(this.dir));
    if (this.pendingBytes > this.options.maxPendingBytes) {
      const e = errors.EVENTS_BACKLOG(this.pendingBytes, this.options.maxPendingBytes);
      e.details = { limit: 'events.maxPendingBytes', value: this.options.maxPendingBytes, retry_after_s: 1 };
      return Promise.reject(e);
    }
    const bytes = linesBytes(lines);
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    this.pendingLines += lines.length;
    const done = new Promise((resolve, reject) => { this.waiters.push({ resolve: () => resolve(undefined), reject }); });
    if (!this.writing) this.flush();
    return done;
  }

  async flush() {
    this.writing = true;
    while (this.pending.length) {
      const buf = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending);
      const waiters = this.waiters;
      const lines = this.pendingLines;
      this.pending = [];
      this.pendingBytes = 0;
      this.pendingLines = 0;
      this.waiters = [];
      try {
        let fh = await this.open();
        // Another process's retention (server.workers > 1) may have deleted this segment: never acknowledge
        // lines written to a file no longer in the folder (one fstat per group commit).
        if ((await fh.stat()).nlink === 0) {
          await this.rotate();
          fh = await this.open();
        }
        let off = 0;
        while (off < buf.length) off += (await fh.write(buf, off, buf.length - off)).bytesWritten;
        if (this.options.fsync === 'always') await fh.datasync();
        this.segmentSize += buf.length;
        this.written += lines;
        for (const w of waiters) w.resolve();
        if (this.segmentSize >= this.options.segmentBytes) await this.rotate();
        else if (Date.now() - this.retainedAt > RETENTION_EVERY_MS) this.retain();
      } catch (err) {
        // A failed write may have left part of the batch in the file: start a new segment, so the next batch
        // never follows a torn line (readers skip it and count it).
        await this.rotate().catch(() => {});
        const e = errors.EVENT_LOG_FAILED(/** @type {Error} */ (err).message).because(err);
        for (const w of waiters) w.reject(e);
      }
    }
    this.writing = false;
  }

  /** The segment being written, opened (and the folder created, retention applied) on first use. */
  async open() {
    if (this.handle) return this.handle;
    fs.mkdirSync(this.dir, { recursive: true });
    const name = `events-${stamp(new Date())}-${process.pid}-${crypto.randomBytes(3).toString('hex')}.ndjson`;
    this.segment = path.join(this.dir, name);
    this.handle = await fs.promises.open(this.segment, 'a');
    this.segmentSize = 0;
    this.retain();
    return this.handle;
  }

  retain() {
    this.retainedAt = Date.now();
    applyRetention(this.dir, this.options, this.segment);
  }

  async rotate() {
    const fh = this.handle;
    this.handle = null;
    await fh?.close();
  }

  /** Write what is pending, then close. Later appends are refused. */
  async close() {
    this.closed = true;
    while (this.writing || this.pending.length) {
      if (!this.writing) this.flush();
      await new Promise((r) => setTimeout(r, 5));
    }
    await this.rotate();
  }
}

/**
 * @typedef {object} ReadSummary
 * @property {number} lines event lines read
 * @property {number} torn lines that are not whole JSON objects (a write cut by a crash or a full disk), skipped
 * @property {number} segments
 */

/**
 * The lines of a file, split at LF alone (a CR before it is dropped; any other CR is JSON whitespace and stays):
 * the framing the writer uses. Splitting the bytes at 0x0A is safe in UTF-8 (no multi-byte sequence holds it).
 * @param {string} file
 * @returns {AsyncGenerator<string>}
 */
async function* linesOf(file) {
  /** @type {Buffer} */
  let rest = Buffer.alloc(0);
  for await (const chunk of fs.createReadStream(file)) {
    const buf = rest.length ? Buffer.concat([rest, /** @type {Buffer} */ (chunk)]) : /** @type {Buffer} */ (chunk);
    let start = 0;
    for (let nl = buf.indexOf(0x0a); nl !== -1; nl = buf.indexOf(0x0a, start)) {
      const end = nl > start && buf[nl - 1] === 0x0d ? nl - 1 : nl;
      yield buf.toString('utf8', start, end);
      start = nl + 1;
    }
    rest = buf.subarray(start);
  }
  if (rest.length) yield rest.toString('utf8', 0, rest[rest.length - 1] === 0x0d ? rest.length - 1 : rest.length);
}

/**
 * Every event of a log, oldest segment first, as parsed objects.
 * @param {string} dir
 * @param {(event: Record<string, any>) => void} onEvent
 * @returns {Promise<ReadSummary>}
 */
export async function readEvents(dir, onEvent) {
  const summary = { lines: 0, torn: 0, segments: 0 };
  for (const seg of listSegments(dir)) {
    summary.segments++;
    try {
      for await (const line of linesOf(seg.file)) {
        if (line.trim() === '') continue;
        let ev;
        try { ev = JSON.parse(line); } catch { summary.torn++; continue; }
        if (ev === null || typeof ev !== 'object' || Array.isArray(ev)) { summary.torn++; continue; }
        summary.lines++;
        onEvent(ev);
      }
    } catch (err) {
      if (/** @type {NodeJS.ErrnoException} */ (err).code !== 'ENOENT') throw err;
    }
  }
  return summary;
}
