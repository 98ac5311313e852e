// A model's word vectors (word_vectors.npy, in the order of vocab.txt) and their export in word2vec's formats,
// text or binary, as gensim's KeyedVectors.load_word2vec_format and the original word2vec tools read them.
import fs from 'node:fs';
import path from 'node:path';
import { errors } from '../errors.js';

/**
 * @typedef {object} WordVectors
 * @property {string[]} words vocabulary order (most frequent first)
 * @property {number} dim
 * @property {Float32Array} vectors words.length × dim, row-major
 */

/**
 * Parse a NumPy .npy file of little-endian float32 in C order, 2-D: what workers/scdv/model_io.py writes.
 * @param {Buffer} buf
 * @param {string} file for messages
 * @returns {{rows: number, cols: number, data: Float32Array}}
 */
export function parseNpyFloat32(buf, file) {
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw errors.MODEL_CORRUPT(file, 'not a .npy file');
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLen;
  const header = buf.toString('latin1', major === 1 ? 10 : 12, start);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shape = /'shape':\s*\((\d+),\s*(\d+)\)/.exec(header);
  if (descr !== '<f4' || fortran !== 'False' || !shape) throw errors.MODEL_CORRUPT(file, `expected a 2-D little-endian float32 array in C order, header ${header.trim()}`);
  const rows = Number(shape[1]);
  const cols = Number(shape[2]);
  if (buf.length - start !== rows * cols * 4) throw errors.MODEL_CORRUPT(file, `${buf.length - start} data bytes for shape (${rows}, ${cols})`);
  // Copied: the data's offset in the file need not be a multiple of 4.
  const data = new Float32Array(rows * cols);
  Buffer.from(data.buffer).set(buf.subarray(start));
  return { rows, cols, data };
}

/**
 * The word vectors of a model folder, checked against its vocabulary.
 * @param {string} dir models/<name>/
 * @returns {WordVectors}
 */
export function readWordVectors(dir) {
  const read = (/** @type {string} */ file) => {
    try {
      return fs.readFileSync(file);
    } catch (err) {
      throw errors.MODEL_CORRUPT(file, `cannot be read (${/** @type {Error} */ (err).message})`).because(err);
    }
  };
  const vocabFile = path.join(dir, 'vocab.txt');
  const words = read(vocabFile).toString('utf8').split('\n').filter((l) => l !== '').map((l) => l.split('\t')[0]);
  const npyFile = path.join(dir, 'word_vectors.npy');
  const { rows, cols, data } = parseNpyFloat32(read(npyFile), npyFile);
  if (rows !== words.length) throw errors.MODEL_CORRUPT(npyFile, `${rows} vectors for the ${words.length} words of vocab.txt`);
  const bad = words.findIndex((w) => w === '' || /\s/.test(w));
  if (bad >= 0) throw errors.MODEL_CORRUPT(vocabFile, `line ${bad + 1}: word ${JSON.stringify(words[bad])} is empty or holds white space (word2vec formats separate by spaces)`);
  return { words, dim: cols, vectors: data };
}

/**
 * Write word vectors in word2vec's format to `file` (through a temporary file: a failed export leaves nothing).
 * Text: a "count dim" line, then "word v1 … vd" per word (each float32 as a decimal that reads back as the same float32).
 * Binary: the same header line, then per word its UTF-8 bytes, a space, dim little-endian float32 and a newline.
 * @param {WordVectors} wordVectors
 * @param {string} file
 * @param {{binary?: boolean}} [opts]
 */
export async function writeWord2vec(wordVectors, file, opts = {}) {
  const tmp = `${file}.tmp-${process.pid}`;
  let fd;
  try {
    fd = fs.openSync(tmp, 'w');
  } catch (err) {
    throw errors.USAGE(`cannot write ${file}: ${/** @type {Error} */ (err).message}`).because(err);
  }
  const out = fs.createWriteStream('', { fd });
  const failed = new Promise((_, reject) => out.once('error', reject));
  failed.catch(() => {});
  /** @param {string | Buffer} chunk */
  const write = (chunk) => (out.write(chunk) ? Promise.resolve() : Promise.race([new Promise((resolve) => out.once('drain', () => resolve(undefined))), failed]));
  const done = Promise.race([new Promise((resolve) => out.once('finish', () => resolve(undefined))), failed]);
  try {
    await write(`${wordVectors.words.length} ${wordVectors.dim}\n`);
    for (let i = 0; i < wordVectors.words.length; i++) {
      const row = wordVectors.vectors.subarray(i * wordVectors.dim, (i + 1) * wordVectors.dim);
      if (opts.binary) {
        const bytes = Buffer.alloc(wordVectors.dim * 4);
        row.forEach((v, j) => bytes.writeFloatLE(v, j * 4));
        await write(Buffer.concat([Buffer.from(`${wordVectors.words[i]} `, 'utf8'), bytes, Buffer.from('\n')]));
      } else {
        await write(`${wordVectors.words[i]} ${Array.from(row, String).join(' ')}\n`);
      }
    }
    out.end();
    await done;
    fs.renameSync(tmp, file);
  } catch (err) {
    out.destroy();
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}
