// Reader of word_topics.bin (format SCDVWT01, written by workers/scdv/wtv_format.py, which documents it).
// Three ways to read the same bytes:
//  - a memory map (`WordTopics.map`, the default of loadModel): the file stays in the OS page cache, shared by
//    every process, no process holds the matrix in its heap, and lookups are plain memory reads (zero-copy
//    typed-array rows); mapped by the store's addon;
//  - positional reads (`WordTopics.open`, when the addon is not built): the same sharing, but each lookup costs
//    a few system calls (~9 a word: most of a short text's embedding; BENCHMARKS.md "Embedding");
//  - a loaded copy (`WordTopics.fromBytes`): batch jobs.
import fs from 'node:fs';
import { errors } from '../errors.js';
import { loadAddon } from '../store/native.js';

const MAGIC = 'SCDVWT01';
const HEADER_SIZE = 128;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/**
 * FNV-1a 32-bit of a byte string (its first n bytes).
 * @param {Uint8Array} bytes
 * @param {number} [n]
 */
export function fnv1a32(bytes, n = bytes.length) {
  let h = FNV_OFFSET;
  for (let i = 0; i < n; i++) h = Math.imul(h ^ bytes[i], FNV_PRIME) >>> 0;
  return h >>> 0;
}

/** @typedef {{indices: Uint32Array, values: Float32Array}} SparseRow */

/**
 * @typedef {object} ByteSource
 * @property {(offset: number, length: number) => Buffer} read bytes at an offset (may be a view)
 * @property {(offset: number, n: number) => Uint32Array} u32 n little-endian u32 values
 * @property {(offset: number, n: number) => Float32Array} f32 n little-endian f32 values
 * @property {number} size
 * @property {'file' | 'memory'} kind positional reads of an open file, or bytes in memory (mapped or loaded)
 * @property {Uint8Array} [bytes] the whole file, when it is in memory
 * @property {() => void} close
 */

/**
 * Positional reads from an open file.
 * @param {string} file
 * @returns {ByteSource}
 */
function fileSource(file) {
  let fd;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    throw errors.MODEL_CORRUPT(file, `cannot be opened (${/** @type {Error} */ (err).message})`).because(err);
  }
  const readInto = (/** @type {Uint8Array} */ dst, /** @type {number} */ offset) => {
    const n = fs.readSync(fd, dst, 0, dst.length, offset);
    if (n !== dst.length) throw errors.MODEL_CORRUPT(file, `short read at byte ${offset} (the file shrank while open)`);
  };
  return {
    read(offset, length) { const b = Buffer.allocUnsafe(length); readInto(b, offset); return b; },
    u32(offset, n) { const a = new Uint32Array(n); if (n) readInto(new Uint8Array(a.buffer), offset); return a; },
    f32(offset, n) { const a = new Float32Array(n); if (n) readInto(new Uint8Array(a.buffer), offset); return a; },
    size: fs.fstatSync(fd).size,
    kind: 'file',
    close() { fs.closeSync(fd); },
  };
}

/**
 * Reads from bytes already in memory (a memory map or a loaded file); sections are 8-byte aligned
 * in the file, so views are aligned whenever the bytes start on an 8-byte boundary.
 * @param {Uint8Array} bytes
 * @returns {ByteSource}
 */
function memorySource(bytes) {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const aligned = bytes.byteOffset % 4 === 0;
  return {
    read(offset, length) { return buf.subarray(offset, offset + length); },
    u32(offset, n) {
      return aligned ? new Uint32Array(bytes.buffer, bytes.byteOffset + offset, n)
        : new Uint32Array(new Uint8Array(buf.subarray(offset, offset + 4 * n)).buffer);
    },
    f32(offset, n) {
      return aligned ? new Float32Array(bytes.buffer, bytes.byteOffset + offset, n)
        : new Float32Array(new Uint8Array(buf.subarray(offset, offset + 4 * n)).buffer);
    },
    size: bytes.byteLength,
    kind: 'memory',
    bytes,
    close() {},
  };
}

/**
 * @typedef {object} Sections views of a word-topic file's sections (u64 tables as pairs of u32: low, high)
 * @property {Uint32Array} hash hashSlots entries: 0 empty, else row + 1
 * @property {Uint32Array} wordOffsets nWords + 1 u64 offsets into wordBytes
 * @property {Uint32Array} rowPtr nWords + 1 u64 offsets into cols / vals
 * @property {Uint32Array} cols
 * @property {Float32Array} vals
 * @property {Uint8Array} wordBytes
 */

/**
 * Views of the sections of a file held in memory, or null when one is not 8-byte aligned where it starts (then
 * lookups read field by field).
 * @param {Uint8Array} bytes
 * @param {WordTopics} wt its header's fields
 * @returns {Sections | null}
 */
function sectionViews(bytes, wt) {
  const at = (/** @type {number} */ off) => bytes.byteOffset + off;
  const offsets = [wt.offRowPtr, wt.offCols, wt.offVals, wt.offWordOffsets, wt.offHash].map(at);
  if (offsets.some((o) => o % 8 !== 0)) return null;
  try {
    const s = {
      hash: new Uint32Array(bytes.buffer, at(wt.offHash), wt.hashSlots),
      wordOffsets: new Uint32Array(bytes.buffer, at(wt.offWordOffsets), 2 * (wt.nWords + 1)),
      rowPtr: new Uint32Array(bytes.buffer, at(wt.offRowPtr), 2 * (wt.nWords + 1)),
      cols: new Uint32Array(bytes.buffer, at(wt.offCols), wt.nnz),
      vals: new Float32Array(bytes.buffer, at(wt.offVals), wt.nnz),
      wordBytes: bytes.subarray(wt.offWordBytes, wt.offHash),
    };
    if (u64At(s.rowPtr, wt.nWords) > wt.nnz || u64At(s.wordOffsets, wt.nWords) > s.wordBytes.length) throw new RangeError('a table points past its section');
    return s;
  } catch (err) {
    throw errors.MODEL_CORRUPT(wt.name, `a section lies outside the file (${/** @type {Error} */ (err).message})`).because(err);
  }
}

/**
 * Entry i of a u64 table viewed as u32 pairs (exact below 2^53).
 * @param {Uint32Array} t
 * @param {number} i
 */
const u64At = (t, i) => t[2 * i] + t[2 * i + 1] * 4294967296;

/** indexInSections' UTF-8 of the word looked up (grown on demand). */
let utf8Scratch = new Uint8Array(256);

/**
 * The UTF-8 of `s` into utf8Scratch, as Buffer.from(s, 'utf8') encodes it (a lone surrogate as U+FFFD); returns
 * its length. Plain JavaScript: for a word of a few characters cheaper than a call into the runtime.
 * @param {string} s
 */
function utf8Into(s) {
  if (utf8Scratch.length < 3 * s.length) utf8Scratch = new Uint8Array(6 * s.length);
  const b = utf8Scratch;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) { b[n++] = c; continue; }
    if (c < 0x800) { b[n++] = 0xc0 | (c >> 6); b[n++] = 0x80 | (c & 63); continue; }
    if (c >= 0xd800 && c <= 0xdfff) {
      const d = c <= 0xdbff && i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
        b[n++] = 0xf0 | (c >> 18); b[n++] = 0x80 | ((c >> 12) & 63); b[n++] = 0x80 | ((c >> 6) & 63); b[n++] = 0x80 | (c & 63);
        continue;
      }
      c = 0xfffd;
    }
    b[n++] = 0xe0 | (c >> 12); b[n++] = 0x80 | ((c >> 6) & 63); b[n++] = 0x80 | (c & 63);
  }
  return n;
}

export class WordTopics {
  /**
   * @param {ByteSource} src
   * @param {string} name for messages
   */
  constructor(src, name) {
    this.src = src;
    this.name = name;
    // A damaged file is SCDV_MODEL_CORRUPT naming it, not an internal error.
    if (src.size < HEADER_SIZE) throw errors.MODEL_CORRUPT(name, `${src.size} bytes, shorter than the ${HEADER_SIZE}-byte header`);
    const h = Buffer.from(src.read(0, HEADER_SIZE));
    if (h.toString('latin1', 0, 8) !== MAGIC) throw errors.MODEL_CORRUPT(name, `not a word-topic file (bad magic, expected ${MAGIC})`);
    const version = h.readUInt32LE(8);
    if (version !== 1) throw errors.MODEL_CORRUPT(name, `word-topic format version ${version}, this version reads 1`);
    this.nWords = h.readUInt32LE(12);
    this.nClusters = h.readUInt32LE(16);
    this.dim = h.readUInt32LE(20);
    this.nnz = Number(h.readBigUInt64LE(24));
    this.hashSlots = h.readUInt32LE(32);
    this.offRowPtr = Number(h.readBigUInt64LE(40));
    this.offCols = Number(h.readBigUInt64LE(48));
    this.offVals = Number(h.readBigUInt64LE(56));
    this.offWordOffsets = Number(h.readBigUInt64LE(64));
    this.offWordBytes = Number(h.readBigUInt64LE(72));
    this.offHash = Number(h.readBigUInt64LE(80));
    const total = Number(h.readBigUInt64LE(88));
    if (src.size !== total) throw errors.MODEL_CORRUPT(name, `truncated or padded: ${src.size} bytes, the header says ${total}`);
    /** Width of a word-topic vector: K clusters x d dimensions. */
    this.width = this.nClusters * this.dim;
    this.#checkLayout(total);
    /** Whole-section views of a file in memory (null: read field by field). */
    this.sections = src.bytes ? sectionViews(src.bytes, this) : null;
    this.#checkHashTable();
  }

  /**
   * The header's sections in the writer's order, each inside the file and large enough for its table, and a
   * hash table as the writer sizes it (a power of two, at least twice the words): bad numbers are named at load.
   * @param {number} total
   */
  #checkLayout(total) {
    const bad = (/** @type {string} */ why) => errors.MODEL_CORRUPT(this.name, `inconsistent header: ${why}`);
    const slots = this.hashSlots;
    if (slots < 1 || (slots & (slots - 1)) !== 0) throw bad(`hash_slots ${slots} is not a power of two`);
    if (slots < 2 * this.nWords) throw bad(`hash_slots ${slots} is less than twice the ${this.nWords} words (the writer keeps half the slots empty)`);
    const sections = /** @type {[string, number, number][]} */ ([
      ['row_ptr', this.offRowPtr, 8 * (this.nWords + 1)], ['cols', this.offCols, 4 * this.nnz], ['vals', this.offVals, 4 * this.nnz],
      ['word_offsets', this.offWordOffsets, 8 * (this.nWords + 1)], ['word_bytes', this.offWordBytes, 0], ['hash', this.offHash, 4 * slots],
    ]);
    let end = HEADER_SIZE;
    for (const [what, off, bytes] of sections) {
      if (!(off >= end)) throw bad(`section ${what} starts at byte ${off}, inside the header or the section before it (which ends at ${end})`);
      end = off + bytes;
    }
    if (end > total) throw bad(`section hash ends at byte ${end}, past the end of the file (${total} bytes)`);
  }

  /**
   * The hash table holds each word once (nWords used slots, each naming a row), so that it has empty slots and
   * every lookup ends: one pass over the table alone (4 bytes a slot: ~8 MB for a million words), not the file.
   */
  #checkHashTable() {
    const slots = this.hashSlots;
    const CHUNK = 1 << 18;
    let used = 0;
    for (let at = 0; at < slots; at += CHUNK) {
      const n = Math.min(CHUNK, slots - at);
      const t = this.sections ? this.sections.hash.subarray(at, at + n) : this.src.u32(this.offHash + 4 * at, n);
      for (let i = 0; i < n; i++) {
        const e = t[i];
        if (e === 0) continue;
        if (e > this.nWords) throw errors.MODEL_CORRUPT(this.name, `hash table slot ${at + i} names row ${e - 1}, past the ${this.nWords} words`);
        used++;
      }
    }
    if (used !== this.nWords) {
      throw errors.MODEL_CORRUPT(this.name, `hash table has ${used} used slots of ${slots} for ${this.nWords} words${used === slots ? ' (no empty slot: a lookup would never end)' : ''}`);
    }
  }

  /** @param {string} file */
  static open(file) {
    return new WordTopics(fileSource(file), file);
  }

  /**
   * The file memory-mapped copy-on-write (model files are replaced by renaming, never rewritten in place, so a
   * mapping stays valid), or opened for positional reads when the store's addon is not built.
   * @param {string} file
   */
  static map(file) {
    let bytes;
    try {
      bytes = new Uint8Array(loadAddon().mapFile(file));
    } catch (err) {
      if (/** @type {any} */ (err)?.code === 'SCDV_STORE_ADDON_NOT_BUILT') return WordTopics.open(file);
      const code = /** @type {any} */ (err)?.code;
      const why = `${code === 'ENOENT' ? 'ENOENT: ' : ''}${/** @type {Error} */ (err).message}`;
      throw errors.MODEL_CORRUPT(file, `cannot be opened (${why})`).because(err);
    }
    return new WordTopics(memorySource(bytes), file);
  }

  /**
   * @param {Uint8Array} bytes the whole file
   * @param {string} [name]
   */
  static fromBytes(bytes, name = 'word_topics.bin') {
    return new WordTopics(memorySource(bytes), name);
  }

  /** @param {number} i */
  wordSpan(i) {
    const offs = this.src.read(this.offWordOffsets + 8 * i, 16);
    const start = Number(offs.readBigUInt64LE(0));
    return [start, Number(offs.readBigUInt64LE(8))];
  }

  /**
   * Row index of a word, or -1 when it is not in the vocabulary.
   * @param {string} word
   */
  indexOf(word) {
    if (this.sections) return this.indexInSections(this.sections, word);
    const bytes = Buffer.from(word, 'utf8');
    const mask = this.hashSlots - 1;
    let slot = fnv1a32(bytes) & mask;
    // At most every slot once, whatever the table holds (the load checked it has empty slots).
    for (let probe = 0; probe < this.hashSlots; probe++) {
      const entry = this.src.read(this.offHash + 4 * slot, 4).readUInt32LE(0);
      if (entry === 0) return -1;
      const i = entry - 1;
      const [start, end] = this.wordSpan(i);
      if (end - start === bytes.length && this.src.read(this.offWordBytes + start, bytes.length).equals(bytes)) return i;
      slot = (slot + 1) & mask;
    }
    return -1;
  }

  /**
   * indexOf on whole-section views: the same probe sequence, with numbers read in place and the word's UTF-8 in a
   * reused buffer — no Buffer views or BigInts made per field, which were a quarter of a document vector's time.
   * @param {Sections} sec
   * @param {string} word
   */
  indexInSections(sec, word) {
    const n = utf8Into(word);
    const bytes = utf8Scratch;
    const mask = this.hashSlots - 1;
    let slot = fnv1a32(bytes, n) & mask;
    for (let probe = 0; probe < this.hashSlots; probe++) {
      const entry = sec.hash[slot];
      if (entry === 0) return -1;
      const i = entry - 1;
      const start = u64At(sec.wordOffsets, i);
      if (u64At(sec.wordOffsets, i + 1) - start === n) {
        let k = 0;
        while (k < n && sec.wordBytes[start + k] === bytes[k]) k++;
        if (k === n) return i;
      }
      slot = (slot + 1) & mask;
    }
    return -1;
  }

  /**
   * The word's sparse word-topic vector (columns increasing), or null when unknown.
   * @param {string} word
   * @returns {SparseRow | null}
   */
  lookup(word) {
    const i = this.indexOf(word);
    return i < 0 ? null : this.row(i);
  }

  /**
   * @param {number} i row index
   * @returns {SparseRow}
   */
  row(i) {
    const sec = this.sections;
    if (sec) {
      const a = u64At(sec.rowPtr, i);
      const b = u64At(sec.rowPtr, i + 1);
      return { indices: sec.cols.subarray(a, b), values: sec.vals.subarray(a, b) };
    }
    const ptr = this.src.read(this.offRowPtr + 8 * i, 16);
    const a = Number(ptr.readBigUInt64LE(0));
    const n = Number(ptr.readBigUInt64LE(8)) - a;
    return { indices: this.src.u32(this.offCols + 4 * a, n), values: this.src.f32(this.offVals + 4 * a, n) };
  }

  /**
   * The word of row i.
   * @param {number} i
   */
  word(i) {
    const [start, end] = this.wordSpan(i);
    return this.src.read(this.offWordBytes + start, end - start).toString('utf8');
  }

  close() {
    this.src.close();
  }
}
