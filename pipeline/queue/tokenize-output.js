// Layout of a tokenise run's output folder, shared by workers (which write shards) and the
// coordinator (which merges them):
//   run.json                 the run key: corpus fingerprint + config; a different key starts over
//   shards/NNNNN.tsv         line \t id \t tokens, one document per line
//   shards/NNNNN.json        written last: the shard is complete (counts, rejections, warnings)
//   tokens.tsv               id \t space-separated tokens (duplicates removed), the stage's product
//   rejected.jsonl           {line, code, reason, id?} for every line not in tokens.tsv
//   warnings.jsonl           {line, code, reason, id} for documents kept with a remark
//   manifest.json            counts, dictionary, config, timings
import path from 'node:path';
import { shardsDir } from './shard.js';

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

/** @param {string} outDir @param {number} index */
export const shardTsv = (outDir, index) => path.join(shardsDir(outDir), `${String(index).padStart(5, '0')}.tsv`);
