// The tokenise run folder's layout lives in the library (pipeline/corpus/tokenize-output.js), where the workers
// read it too; re-exported for the stage.
export { shardTsv } from '../corpus/tokenize-output.js';

/** @typedef {import('../corpus/tokenize-output.js').ShardResult} ShardResult */
