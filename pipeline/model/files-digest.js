// One digest of the model files the embedder reads, so that a host serving a collection can tell that its copy
// of models/<name>/ is the one the collection was indexed with (every host needs the model's files;
// two different copies would embed queries into another space than the stored vectors, silently).
//
// The digest is SHA-256 over "<file>\0<sha256 of the file>\n" for each of MODEL_FILES present, in that order.
// Hashing word_topics.bin (hundreds of MB for large models) takes seconds, so each file's hash is cached in
// models/<name>/files-sha256.json keyed by its size, mtime, ctime and inode (a file rewritten in place with its
// mtime set back still has a new ctime, which no user call can set; a file replaced by renaming has a new inode);
// a model folder that cannot be written (a read-only shared mount) is hashed every time instead.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { modelsDir as defaultModelsDir, validateModelName } from '../paths.js';
import { errors } from '../errors.js';
import { writeFileAtomic } from '../fsutil.js';

/** The files of a model folder that createEmbedder reads (vocab.txt or lexicon.txt: the hybrid layout's lexicon). */
export const MODEL_FILES = /** @type {const} */ (['manifest.json', 'word_topics.bin', 'vocab.txt', 'lexicon.txt']);

/** The cache of per-file hashes, in the model folder. */
export const DIGEST_CACHE_FILE = 'files-sha256.json';

/**
 * @param {string} file
 * @returns {Promise<string>}
 */
function sha256OfFile(file) {
  return new Promise((resolve, reject) => {
    const h = crypto.createHash('sha256');
    fs.createReadStream(file).on('error', reject).on('data', (d) => h.update(d)).on('end', () => resolve(h.digest('hex')));
  });
}

/**
 * The digest of a model's files (see the top of this file).
 * @param {string} name
 * @param {{modelsDir?: string}} [opts]
 * @returns {Promise<string>} 64 hex digits
 */
export async function modelFilesDigest(name, opts = {}) {
  const dir = path.join(opts.modelsDir ?? defaultModelsDir(), validateModelName(name));
  const cacheFile = path.join(dir, DIGEST_CACHE_FILE);
  /** @type {Record<string, {size: number, mtimeMs: number, ctimeMs: number, ino: number, sha256: string}>} */
  let cached = {};
  try {
    cached = JSON.parse(fs.readFileSync(cacheFile, 'utf8')).files ?? {};
  } catch { /* none yet */ }
  /** @type {typeof cached} */
  const files = {};
  let changed = false;
  for (const f of MODEL_FILES) {
    const file = path.join(dir, f);
    let st;
    try {
      st = fs.statSync(file);
    } catch (err) {
      if (/** @type {NodeJS.ErrnoException} */ (err).code === 'ENOENT' && f !== 'manifest.json') continue;
      throw errors.MODEL_NOT_FOUND(name, `${path.dirname(dir)} (${file}: ${/** @type {Error} */ (err).message})`);
    }
    const c = cached[f];
    if (c && c.size === st.size && c.mtimeMs === st.mtimeMs && c.ctimeMs === st.ctimeMs && c.ino === st.ino) {
      files[f] = c;
    } else {
      files[f] = { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, sha256: await sha256OfFile(file) };
      changed = true;
    }
  }
  if (changed || Object.keys(cached).length !== Object.keys(files).length) {
    try {
      writeFileAtomic(cacheFile, JSON.stringify({ files }, null, 2) + '\n');
    } catch { /* read-only model folder: hashed again next time */ }
  }
  const h = crypto.createHash('sha256');
  for (const [f, v] of Object.entries(files)) h.update(`${f}\0${v.sha256}\n`);
  return h.digest('hex');
}
