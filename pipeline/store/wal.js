// The write-ahead log: `wal-<seq>.log` = a 32-byte header, then records appended by writers under LOCK.
//
//   header  "SCDVWAL1" | u32 version (1) | u32 0 | f64 seq | f64 created (epoch ms)
//   record  u32 payload length | u32 CRC-32 of the payload | payload
//   payload u8 type (1 upsert, 2 delete) | 3 zero bytes | u32 entries | f64 written (epoch ms) | entries
//   upsert  u32 len + id | u32 len + meta JSON | u32 len + site | u32 len + category | f64 published_at (NaN: none)
//           | u32 nnz | u32 indices[nnz] | f32 values[nnz]
//   delete  u32 len + id
// All little-endian; strings UTF-8. One record per write call, so a call is atomic: a record is either whole
// with a matching CRC or it is a torn tail, which readers ignore and the next writer truncates.
import { crc32 } from 'node:zlib';

export const WAL_HEADER_BYTES = 32;
const MAGIC = Buffer.from('SCDVWAL1', 'latin1');
const MAX_RECORD = 1 << 30;
const TYPE_UPSERT = 1;
const TYPE_DELETE = 2;

/**
 * @typedef {{type: 'upsert', time: number, docs: import('./validate.js').PreparedDoc[]}
 *         | {type: 'delete', time: number, ids: string[]}} WalRecord
 */

/** @param {number} seq */
export function encodeHeader(seq) {
  const b = Buffer.alloc(WAL_HEADER_BYTES);
  MAGIC.copy(b, 0);
  b.writeUInt32LE(1, 8);
  b.writeDoubleLE(seq, 16);
  b.writeDoubleLE(Date.now(), 24);
  return b;
}

/**
 * @param {Buffer} bytes
 * @returns {number | null} the sequence number, or null when this is not a WAL header
 */
export function decodeHeader(bytes) {
  if (bytes.length < WAL_HEADER_BYTES || !bytes.subarray(0, 8).equals(MAGIC) || bytes.readUInt32LE(8) !== 1) return null;
  return bytes.readDoubleLE(16);
}

/**
 * @param {number} type
 * @param {number} entries
 * @param {number} bodyBytes
 * @param {number} time
 */
function start(type, entries, bodyBytes, time) {
  const payload = 16 + bodyBytes;
  if (payload > MAX_RECORD) throw new RangeError(`a write of ${payload} bytes is over the WAL record limit of ${MAX_RECORD} bytes: split the batch`);
  const b = Buffer.allocUnsafe(8 + payload);
  b.writeUInt32LE(payload, 0);
  b.writeUInt8(type, 8);
  b.writeUInt8(0, 9);
  b.writeUInt16LE(0, 10);
  b.writeUInt32LE(entries, 12);
  b.writeDoubleLE(time, 16);
  return b;
}

/** @param {Buffer} b */
function seal(b) {
  b.writeUInt32LE(crc32(b.subarray(8)), 4);
  return b;
}

/**
 * @param {import('./validate.js').PreparedDoc[]} docs
 * @param {number} time
 */
export function encodeUpsert(docs, time) {
  const strs = docs.map((d) => [Buffer.from(d.id), Buffer.from(d.meta), Buffer.from(d.site), Buffer.from(d.cat)]);
  let bytes = 0;
  for (let i = 0; i < docs.length; i++) {
    for (const s of strs[i]) bytes += 4 + s.length;
    bytes += 8 + 4 + 8 * docs[i].indices.length;
  }
  const b = start(TYPE_UPSERT, docs.length, bytes, time);
  let o = 24;
  for (let i = 0; i < docs.length; i++) {
    for (const s of strs[i]) {
      b.writeUInt32LE(s.length, o);
      s.copy(b, o + 4);
      o += 4 + s.length;
    }
    const d = docs[i];
    b.writeDoubleLE(d.time, o);
    o += 8;
    const n = d.indices.length;
    b.writeUInt32LE(n, o);
    o += 4;
    Buffer.from(d.indices.buffer, d.indices.byteOffset, 4 * n).copy(b, o);
    o += 4 * n;
    Buffer.from(d.values.buffer, d.values.byteOffset, 4 * n).copy(b, o);
    o += 4 * n;
  }
  return seal(b);
}

/**
 * @param {string[]} ids
 * @param {number} time
 */
export function encodeDelete(ids, time) {
  const strs = ids.map((id) => Buffer.from(id));
  const bytes = strs.reduce((a, s) => a + 4 + s.length, 0);
  const b = start(TYPE_DELETE, ids.length, bytes, time);
  let o = 24;
  for (const s of strs) {
    b.writeUInt32LE(s.length, o);
    s.copy(b, o + 4);
    o += 4 + s.length;
  }
  return seal(b);
}

/**
 * Records from the start of buf (a slice of the log that starts at a record boundary).
 * @param {Buffer} buf
 * @returns {{records: WalRecord[], end: number, entries: number}} end: bytes of buf holding whole, valid records
 */
export function decodeRecords(buf) {
  /** @type {WalRecord[]} */
  const records = [];
  let o = 0;
  let entries = 0;
  while (buf.length - o >= 8) {
    const len = buf.readUInt32LE(o);
    if (len < 16 || len > MAX_RECORD || buf.length - o - 8 < len) break;
    const payload = buf.subarray(o + 8, o + 8 + len);
    if (crc32(payload) !== buf.readUInt32LE(o + 4)) break;
    const rec = decodePayload(payload);
    if (!rec) break;
    records.push(rec);
    entries += rec.type === 'upsert' ? rec.docs.length : rec.ids.length;
    o += 8 + len;
  }
  return { records, end: o, entries };
}

/**
 * @param {Buffer} p
 * @returns {WalRecord | null}
 */
function decodePayload(p) {
  const type = p.readUInt8(0);
  const n = p.readUInt32LE(4);
  const time = p.readDoubleLE(8);
  let o = 16;
  const str = () => {
    const len = p.readUInt32LE(o);
    const s = p.toString('utf8', o + 4, o + 4 + len);
    o += 4 + len;
    return s;
  };
  try {
    if (type === TYPE_DELETE) {
      const ids = [];
      for (let i = 0; i < n; i++) ids.push(str());
      return { type: 'delete', time, ids };
    }
    if (type !== TYPE_UPSERT) return null;
    const docs = [];
    for (let i = 0; i < n; i++) {
      const id = str();
      const meta = str();
      const site = str();
      const cat = str();
      const t = p.readDoubleLE(o);
      const nnz = p.readUInt32LE(o + 8);
      o += 12;
      if (o + 8 * nnz > p.length) return null;
      const indices = new Uint32Array(nnz);
      const values = new Float32Array(nnz);
      new Uint8Array(indices.buffer).set(p.subarray(o, o + 4 * nnz));
      o += 4 * nnz;
      new Uint8Array(values.buffer).set(p.subarray(o, o + 4 * nnz));
      o += 4 * nnz;
      docs.push({ id, meta, site, cat, time: t, indices, values });
    }
    return { type: 'upsert', time, docs };
  } catch {
    return null; // RangeError on a payload that does not parse: treated like a torn record
  }
}

/**
 * The net effect of records in order: the last operation on each id wins.
 * @param {Iterable<WalRecord>} records
 * @returns {Map<string, import('./validate.js').PreparedDoc | null>} id -> document, or null for a delete
 */
export function collapse(records) {
  /** @type {Map<string, import('./validate.js').PreparedDoc | null>} */
  const m = new Map();
  for (const r of records) {
    if (r.type === 'upsert') for (const d of r.docs) { m.delete(d.id); m.set(d.id, d); }
    else for (const id of r.ids) { m.delete(id); m.set(id, null); }
  }
  return m;
}

/**
 * Columns for the addon.
 * @param {import('./validate.js').PreparedDoc[]} docs
 * @returns {import('./native.js').PackedDocs}
 */
export function pack(docs) {
  let nnz = 0;
  for (const d of docs) nnz += d.indices.length;
  const offsets = new Float64Array(docs.length + 1);
  const indices = new Uint32Array(nnz);
  const values = new Float32Array(nnz);
  const times = new Float64Array(docs.length);
  let o = 0;
  docs.forEach((d, i) => {
    indices.set(d.indices, o);
    values.set(d.values, o);
    o += d.indices.length;
    offsets[i + 1] = o;
    times[i] = d.time;
  });
  return {
    ids: docs.map((d) => d.id),
    metas: docs.map((d) => d.meta),
    sites: docs.map((d) => d.site),
    cats: docs.map((d) => d.cat),
    times, offsets, indices, values,
  };
}
