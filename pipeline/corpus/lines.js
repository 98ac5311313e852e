// Streaming line reader over a byte range of a file. Lines over a size limit are skipped without
// ever being held in memory whole (a 50 MB single-line document costs one read buffer).
import fs from 'node:fs';

/**
 * @typedef {{lineNo: number, buf: Buffer} | {lineNo: number, tooLongBytes: number}} Line
 */

/**
 * Yield the lines of `file` in [start, end), numbered from `firstLine` (1-based); '\r\n' is accepted.
 * @param {string | Buffer} file a path, or the bytes themselves (a shard carried by its queue job)
 * @param {{start?: number, end?: number, firstLine?: number, maxLineBytes: number}} opts
 * @returns {AsyncGenerator<Line>}
 */
export async function* readLines(file, opts) {
  const { start = 0, end = Infinity, maxLineBytes } = opts;
  let lineNo = opts.firstLine ?? 1;
  if (end <= start) return;
  const stream = typeof file === 'string'
    ? fs.createReadStream(file, { start, end: end === Infinity ? undefined : end - 1, highWaterMark: 1 << 20 })
    : [file.subarray(start, end === Infinity ? file.length : end)];
  /** @type {Buffer[]} */
  let parts = [];
  let pendingBytes = 0;
  let skipping = 0; // > 0: bytes of an over-long line seen so far
  for await (const chunk of /** @type {AsyncIterable<Buffer>} */ (stream)) {
    let pos = 0;
    while (pos < chunk.length) {
      const nl = chunk.indexOf(10, pos);
      const stop = nl === -1 ? chunk.length : nl;
      if (skipping > 0 || pendingBytes + (stop - pos) > maxLineBytes) {
        skipping += pendingBytes + (stop - pos);
        parts = [];
        pendingBytes = 0;
      } else {
        parts.push(chunk.subarray(pos, stop));
        pendingBytes += stop - pos;
      }
      if (nl === -1) break;
      if (skipping > 0) {
        yield { lineNo, tooLongBytes: skipping };
        skipping = 0;
      } else {
        yield { lineNo, buf: stripCr(parts.length === 1 ? parts[0] : Buffer.concat(parts, pendingBytes)) };
      }
      lineNo++;
      parts = [];
      pendingBytes = 0;
      pos = nl + 1;
    }
  }
  if (skipping > 0) yield { lineNo, tooLongBytes: skipping };
  else if (pendingBytes > 0) yield { lineNo, buf: stripCr(Buffer.concat(parts, pendingBytes)) };
}

/** @param {Buffer} b */
function stripCr(b) {
  return b.length > 0 && b[b.length - 1] === 13 ? b.subarray(0, b.length - 1) : b;
}
