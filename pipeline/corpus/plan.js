// Split a JSON Lines corpus into shards of whole lines, and fingerprint it, in one streaming pass.
import fs from 'node:fs';
import crypto from 'node:crypto';
import { errors } from '../errors.js';

/**
 * @typedef {object} Shard
 * @property {number} index
 * @property {number} start byte offset of the shard's first line
 * @property {number} end byte offset just past its last line
 * @property {number} firstLine 1-based number of its first line
 * @property {number} lines
 */

/**
 * @param {string} file
 * @param {number} linesPerShard
 * @param {(bytesRead: number, totalBytes: number) => void} [onProgress]
 * @returns {Promise<{shards: Shard[], lines: number, bytes: number, sha256: string}>}
 */
export async function planShards(file, linesPerShard, onProgress) {
  let stat;
  try {
    stat = fs.statSync(file);
  } catch (err) {
    throw errors.CORPUS_NOT_FOUND(file, /** @type {Error} */ (err).message).because(err);
  }
  if (!stat.isFile()) throw errors.CORPUS_NOT_FOUND(file, 'not a regular file');
  const hash = crypto.createHash('sha256');
  /** @type {Shard[]} */
  const shards = [];
  let offset = 0;
  let lines = 0;
  let shardStart = 0;
  let shardFirstLine = 1;
  let lastByte = 10;
  for await (const chunk of /** @type {AsyncIterable<Buffer>} */ (fs.createReadStream(file, { highWaterMark: 1 << 20 }))) {
    hash.update(chunk);
    let pos = chunk.indexOf(10);
    while (pos !== -1) {
      lines++;
      if (lines - shardFirstLine + 1 === linesPerShard) {
        shards.push({ index: shards.length, start: shardStart, end: offset + pos + 1, firstLine: shardFirstLine, lines: linesPerShard });
        shardStart = offset + pos + 1;
        shardFirstLine = lines + 1;
      }
      pos = chunk.indexOf(10, pos + 1);
    }
    offset += chunk.length;
    lastByte = chunk[chunk.length - 1];
    onProgress?.(offset, stat.size);
  }
  if (lastByte !== 10) lines++; // a last line without a newline
  if (offset > shardStart) {
    shards.push({ index: shards.length, start: shardStart, end: offset, firstLine: shardFirstLine, lines: lines - shardFirstLine + 1 });
  }
  if (lines === 0) throw errors.CORPUS_EMPTY(file);
  return { shards, lines, bytes: offset, sha256: hash.digest('hex') };
}
