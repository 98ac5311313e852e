// Reader of word_topics.bin (format SCDVWT01, written by workers/scdv/wtv_format.py, which documents it).
// Lookups read only what they need with positional reads: the file stays in the OS page cache, shared
// by every process that opens it, and no process holds a copy of the matrix in its heap.
import fs from 'node:fs';

const MAGIC = 'SCDVWT01';
const HEADER_SIZE = 128;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/**
 * FNV-1a 32-bit of a byte string.
 * @param {Uint8Array} bytes
 */
export function fnv1a32(bytes) {
  let h = FNV_OFFSET;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], FNV_PRIME) >>> 0;
  return h >>> 0;
}

/** @typedef {{indices: Uint32Array, values: Float32Array}} SparseRow */

export class WordTopics {
  /** @param {string} file */
  constructor(file) {
    this.file = file;
    this.fd = fs.openSync(file, 'r');
    const h = this.read(0, HEADER_SIZE);
    if (h.toString('latin1', 0, 8) !== MAGIC) throw new Error(`${file} is not a word-topic file (bad magic)`);
    const version = h.readUInt32LE(8);
    if (version !== 1) throw new Error(`${file}: unsupported word-topic format version ${version}`);
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
    const size = fs.fstatSync(this.fd).size;
    if (size !== total) throw new Error(`${file} is truncated or padded: ${size} bytes, header says ${total}`);
    /** Width of a word-topic vector: K clusters x d dimensions. */
    this.width = this.nClusters * this.dim;
  }

  /**
   * @param {number} offset
   * @param {number} length
   */
  read(offset, length) {
    const buf = Buffer.allocUnsafe(length);
    const n = fs.readSync(this.fd, buf, 0, length, offset);
    if (n !== length) throw new Error(`${this.file}: short read at ${offset}`);
    return buf;
  }

  /**
   * Row index of a word, or -1 when it is not in the vocabulary.
   * @param {string} word
   */
  indexOf(word) {
    const bytes = Buffer.from(word, 'utf8');
    const mask = this.hashSlots - 1;
    let slot = fnv1a32(bytes) & mask;
    for (;;) {
      const entry = this.read(this.offHash + 4 * slot, 4).readUInt32LE(0);
      if (entry === 0) return -1;
      const i = entry - 1;
      const offs = this.read(this.offWordOffsets + 8 * i, 16);
      const start = Number(offs.readBigUInt64LE(0));
      const end = Number(offs.readBigUInt64LE(8));
      if (end - start === bytes.length && this.read(this.offWordBytes + start, bytes.length).equals(bytes)) return i;
      slot = (slot + 1) & mask;
    }
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
    const ptr = this.read(this.offRowPtr + 8 * i, 16);
    const a = Number(ptr.readBigUInt64LE(0));
    const b = Number(ptr.readBigUInt64LE(8));
    const n = b - a;
    // Fresh, aligned buffers so the typed-array views are valid whatever the file offsets are.
    const indices = new Uint32Array(n);
    const values = new Float32Array(n);
    if (n > 0) {
      fs.readSync(this.fd, new Uint8Array(indices.buffer), 0, 4 * n, this.offCols + 4 * a);
      fs.readSync(this.fd, new Uint8Array(values.buffer), 0, 4 * n, this.offVals + 4 * a);
    }
    return { indices, values };
  }

  /**
   * The word of row i.
   * @param {number} i
   */
  word(i) {
    const offs = this.read(this.offWordOffsets + 8 * i, 16);
    const start = Number(offs.readBigUInt64LE(0));
    return this.read(this.offWordBytes + start, Number(offs.readBigUInt64LE(8)) - start).toString('utf8');
  }

  close() {
    fs.closeSync(this.fd);
  }
}
