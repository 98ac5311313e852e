// scdv index: embed a corpus with a model into a store collection.
import { parseArgs } from 'node:util';
import { errors } from '../errors.js';
import { runIndex } from '../stages/index.js';
import { configFromFlags, intFlag, withRedis } from './common.js';

/** @param {string[]} argv */
export async function run(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      corpus: { type: 'string' }, model: { type: 'string' }, collection: { type: 'string', default: 'articles' },
      workers: { type: 'string' }, 'allow-many-workers': { type: 'boolean', default: false }, 'batch-size': { type: 'string' }, 'shard-size': { type: 'string' }, config: { type: 'string' },
    },
  });
  if (!values.corpus || !values.model) throw errors.USAGE('scdv index needs --model NAME and --corpus FILE');
  const workers = intFlag(values.workers, '--workers');
  const writeBatchSize = intFlag(values['batch-size'], '--batch-size', { min: 1 });
  const shardSize = intFlag(values['shard-size'], '--shard-size', { min: 1 });
  const config = configFromFlags(values, {
    index: { ...(workers ? { workers } : {}), ...(writeBatchSize ? { writeBatchSize } : {}), ...(shardSize ? { shardSize } : {}) },
    ...(values['allow-many-workers'] ? { workerProcesses: { allowMany: true } } : {}),
  });
  const { corpus, model, collection } = values;
  await withRedis(async (redisUrl) => {
    const s = await runIndex({ corpus, model, collection, config, redisUrl, workers });
    printIndexSummary(s);
  });
}

/** @param {import('../stages/index.js').IndexSummary} s */
export function printIndexSummary(s) {
  const codes = Object.entries(s.rejectedByCode).map(([k, v]) => `${k} ${v}`).join(', ');
  process.stderr.write([
    `indexed ${s.documents} documents into ${s.model}/${s.collection} in ${s.seconds.toFixed(1)} s (${s.writes} writes)` +
      (s.reusedShards ? `, ${s.reusedShards}/${s.shards} shards reused` : ''),
    `  empty (no known word, not indexed): ${s.empty}; rejected lines: ${s.rejected}${codes ? ` (${codes})` : ''}`,
    s.empty || s.rejected ? `  details: ${s.reportFile}` : '',
    s.warning ? `  WARNING: ${s.warning}` : '',
  ].filter(Boolean).join('\n') + '\n');
}
