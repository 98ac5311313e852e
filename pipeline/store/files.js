// The collection folder's small files: collection.json, CURRENT, manifests, deletion bitmaps.
// Every file is written to a temporary name, fsynced, renamed into place, and the folder fsynced:
// a reader sees the old file or the new one, never a part.
import fs from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { errors } from '../errors.js';

export const FORMAT = 1;

/**
 * @typedef {object} SegmentEntry
 * @property {string} name segment file name
 * @property {number} docs documents in the file (deleted ones included)
 * @property {number} nnz
 * @property {number} bytes
 * @property {number} postingsBytes
 * @property {string | null} del deletion bitmap file name, or null
 * @property {number} deleted
 */

/**
 * @typedef {object} Manifest
 * @property {number} format
 * @property {number} generation increases by one per published manifest
 * @property {number} wal sequence of the live WAL file; every earlier WAL is in the segments
 * @property {SegmentEntry[]} segments
 */

/**
 * @typedef {object} CollectionInfo
 * @property {string} name
 * @property {number} width
 * @property {number} format
 * @property {string} created_at
 */

/** @param {string} dir */
export function fsyncDir(dir) {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * fsyncDir on the libuv thread pool: the event loop keeps serving while the disk syncs.
 * @param {string} dir
 */
export async function fsyncDirAsync(dir) {
  const h = await fs.promises.open(dir, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

/**
 * Whether the descriptor is (still) the file at this path: false once the path is gone or names another file.
 * @param {number} fd
 * @param {string} file
 */
export function sameFile(fd, file) {
  const at = fs.statSync(file, { throwIfNoEntry: false });
  if (!at) return false;
  const held = fs.fstatSync(fd);
  return at.ino === held.ino && at.dev === held.dev;
}

/**
 * Atomic replace: temp file, fsync, rename (the caller fsyncs the folder once for several files).
 * @param {string} file
 * @param {string | Uint8Array} data
 */
export function writeFileDurable(file, data) {
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, 'w', 0o644);
  try {
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
}

/**
 * writeFileDurable with the write and the fsync on the libuv thread pool (temp file, fsync, rename; the
 * caller fsyncs the folder).
 * @param {string} file
 * @param {string | Uint8Array} data
 */
export async function writeFileDurableAsync(file, data) {
  const tmp = await writeTempDurable(file, data);
  await fs.promises.rename(tmp, file);
}

/**
 * The temp file of an atomic replace, written and fsynced on the thread pool; the caller renames it.
 * @param {string} file
 * @param {string | Uint8Array} data
 * @returns {Promise<string>} the temp file's path
 */
async function writeTempDurable(file, data) {
  const tmp = `${file}.tmp-${process.pid}`;
  const h = await fs.promises.open(tmp, 'w', 0o644);
  try {
    await h.writeFile(data);
    await h.sync();
  } finally {
    await h.close();
  }
  return tmp;
}

/** @param {number} value */
export const pad = (value) => String(value).padStart(10, '0');
/** @param {number} seq */
export const walName = (seq) => `wal-${pad(seq)}.log`;
/** @param {number} gen */
export const manifestName = (gen) => `MANIFEST-${pad(gen)}.json`;

/**
 * @param {string} dir collection folder
 * @returns {CollectionInfo}
 */
export function readCollectionInfo(dir) {
  const file = path.join(dir, 'collection.json');
  /** @type {CollectionInfo} */
  let info;
  try {
    info = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw errors.STORE_CORRUPT(file, /** @type {Error} */ (err).message).because(err);
  }
  if (info.format !== FORMAT) throw errors.STORE_FORMAT_UNSUPPORTED(dir, String(info.format), String(FORMAT));
  if (!Number.isInteger(info.width) || info.width < 1) throw errors.STORE_CORRUPT(file, `bad width ${info.width}`);
  return info;
}

/**
 * @param {string} dir
 * @returns {string} the live manifest's file name
 */
export function readCurrent(dir) {
  const name = fs.readFileSync(path.join(dir, 'CURRENT'), 'utf8').trim();
  if (!/^MANIFEST-\d+\.json$/.test(name)) throw errors.STORE_CORRUPT(path.join(dir, 'CURRENT'), `unexpected content "${name.slice(0, 60)}"`);
  return name;
}

/**
 * @param {string} dir
 * @param {string} name
 * @returns {Manifest}
 */
export function readManifest(dir, name) {
  const file = path.join(dir, name);
  const text = fs.readFileSync(file, 'utf8'); // ENOENT propagates: the caller reads CURRENT again
  /** @type {Manifest} */
  let m;
  try {
    m = JSON.parse(text);
  } catch (err) {
    throw errors.STORE_CORRUPT(file, /** @type {Error} */ (err).message).because(err);
  }
  if (m.format !== FORMAT || !Number.isInteger(m.generation) || !Number.isInteger(m.wal) || !Array.isArray(m.segments)) {
    throw errors.STORE_CORRUPT(file, 'not a manifest of this format');
  }
  return m;
}

/**
 * Writes the manifest and points CURRENT at it.
 * @param {string} dir
 * @param {Manifest} manifest
 * @returns {string} its file name
 */
export function publishManifest(dir, manifest) {
  const name = manifestName(manifest.generation);
  writeFileDurable(path.join(dir, name), JSON.stringify(manifest, null, 1));
  writeFileDurable(path.join(dir, 'CURRENT'), `${name}\n`);
  fsyncDir(dir);
  return name;
}

/**
 * publishManifest with every write and fsync on the libuv thread pool, for flushes and merges of a serving
 * process. The same order and the same durability: the manifest is durable before CURRENT names it, and the
 * folder is fsynced before this resolves (the caller removes replaced files only then). `install` runs right
 * after CURRENT's rename, in the same tick, so that this process's view never lags what CURRENT names while
 * the folder syncs (a reader of this process would otherwise load the new manifest itself, meanwhile).
 * @param {string} dir
 * @param {Manifest} manifest
 * @param {(name: string) => void} install
 * @returns {Promise<string>} its file name
 */
export async function publishManifestAsync(dir, manifest, install) {
  const name = manifestName(manifest.generation);
  const current = path.join(dir, 'CURRENT');
  // Both durable before CURRENT is replaced: the manifest it names, and its own new content.
  const [, tmp] = await Promise.all([writeFileDurableAsync(path.join(dir, name), JSON.stringify(manifest, null, 1)), writeTempDurable(current, `${name}\n`)]);
  fs.renameSync(tmp, current);
  install(name);
  await fsyncDirAsync(dir);
  return name;
}

const DEL_MAGIC = Buffer.from('SCDVDEL1', 'latin1');

/**
 * Deletion bitmap file: "SCDVDEL1" | u32 docs | u32 deleted | bitmap (bit d = local doc d) | u32 CRC-32.
 * @param {string} file
 * @param {number} docs
 * @returns {Buffer} the bitmap
 */
export function readDeletions(file, docs) {
  const b = fs.readFileSync(file);
  const nb = (docs + 7) >> 3;
  if (b.length !== 16 + nb + 4 || !b.subarray(0, 8).equals(DEL_MAGIC) || b.readUInt32LE(8) !== docs ||
      crc32(b.subarray(0, 16 + nb)) !== b.readUInt32LE(16 + nb)) {
    throw errors.STORE_CORRUPT(file, 'not a valid deletion bitmap');
  }
  return Buffer.from(b.subarray(16, 16 + nb));
}

/**
 * A new deletion file: the old bitmap (if any) plus the given local documents; written and fsynced on the
 * libuv thread pool (the caller fsyncs the folder).
 * @param {string} dir
 * @param {string} file new file name
 * @param {number} docs
 * @param {string | null} oldFile
 * @param {ArrayLike<number>} locals
 * @returns {Promise<number>} deleted documents in the new bitmap
 */
export async function writeDeletions(dir, file, docs, oldFile, locals) {
  const { out, deleted } = encodeDeletions(dir, docs, oldFile, locals);
  await writeFileDurableAsync(path.join(dir, file), out);
  return deleted;
}

/**
 * The bitmap file's bytes: the old bitmap's bits plus `locals`.
 * @param {string} dir
 * @param {number} docs
 * @param {string | null} oldFile
 * @param {ArrayLike<number>} locals
 */
function encodeDeletions(dir, docs, oldFile, locals) {
  const nb = (docs + 7) >> 3;
  const bits = oldFile ? readDeletions(path.join(dir, oldFile), docs) : Buffer.alloc(nb);
  for (let i = 0; i < locals.length; i++) bits[locals[i] >> 3] |= 1 << (locals[i] & 7);
  let deleted = 0;
  for (let i = 0; i < nb; i++) {
    let x = bits[i];
    while (x) { x &= x - 1; deleted++; }
  }
  const out = Buffer.alloc(16 + nb + 4);
  DEL_MAGIC.copy(out, 0);
  out.writeUInt32LE(docs, 8);
  out.writeUInt32LE(deleted, 12);
  bits.copy(out, 16);
  out.writeUInt32LE(crc32(out.subarray(0, 16 + nb)), 16 + nb);
  return { out, deleted };
}

/**
 * Local docs set in `now` but not in `before` (both bitmaps of the same segment).
 * @param {Buffer | null} before
 * @param {Buffer} now
 * @returns {Uint32Array}
 */
export function newlyDeleted(before, now) {
  const out = [];
  for (let i = 0; i < now.length; i++) {
    let x = now[i] & ~(before ? before[i] : 0);
    while (x) {
      const bit = 31 - Math.clz32(x & -x);
      out.push(i * 8 + bit);
      x &= x - 1;
    }
  }
  return Uint32Array.from(out);
}
