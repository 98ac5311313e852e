// Layout of a tokenise run's output folder, shared by workers (which write shards) and the
// coordinator (which merges them):
//   run.json                 the run key: corpus fingerprint + config; a different key starts over
//   shards/NNNNN.tsv         line \t id \t tokens, one document per line
//   shards/NNNNN.json        written last: the shard is complete (counts, rejections, warnings)
//   tokens.tsv               id \t space-separated tokens (duplicates removed), the stage's product
//   rejected.jsonl           {line, code, reason, id?} for every line not in tokens.tsv
//   warnings.jsonl           {line, code, reason, id} for documents kept with a remark
//   manifest.json            counts, dictionary, config, timings
import fs from 'node:fs';
import path from 'node:path';

/**
 * @typedef {object} ShardResult
 * @property {number} shard
 * @property {string} runKey
 * @property {number} lines lines read
 * @property {number} documents documents written
 * @property {number} blank blank lines skipped
 * @property {number} emptyDocuments documents with no kept token
 * @property {number} tokens
 * @property {number} bytes
 * @property {import('../corpus/document.js').LineIssue[]} rejected
 * @property {import('../corpus/document.js').LineIssue[]} warnings
 * @property {number} seconds
 * @property {string} worker host:pid that wrote it
 */

/** @param {string} outDir */
export const shardsDir = (outDir) => path.join(outDir, 'shards');
/** @param {string} outDir @param {number} index */
export const shardTsv = (outDir, index) => path.join(shardsDir(outDir), `${String(index).padStart(5, '0')}.tsv`);
/** @param {string} outDir @param {number} index */
export const shardMarker = (outDir, index) => path.join(shardsDir(outDir), `${String(index).padStart(5, '0')}.json`);

/**
 * The shard's result when it completed for this run, else null.
 * @param {string} outDir
 * @param {number} index
 * @param {string} runKey
 * @returns {ShardResult | null}
 */
export function readShardResult(outDir, index, runKey) {
  try {
    const r = JSON.parse(fs.readFileSync(shardMarker(outDir, index), 'utf8'));
    return r.runKey === runKey ? r : null;
  } catch {
    return null;
  }
}

/**
 * Write `content` to `file` atomically (temp file in the same folder, then rename).
 * @param {string} file
 * @param {string} content
 */
export function writeFileAtomic(file, content) {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, content);
  fs.renameSync(tmp, file);
}
