// scdv index: embed a corpus with a model into a store collection.
import { CLI_DEFAULTS } from '../config.js';
import { errors } from '../errors.js';
import { runIndex } from '../stages/indexing.js';
import { plural } from '../progress.js';
import { describeThreshold } from '../match/threshold.js';
import { describeExpansion } from '../serving/ad-expansion.js';
import { configFromFlags, intFlag, withRedis, existingFileFlag } from './common.js';
import { CONFIG_OPTION, opt } from './define.js';

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: "Embed a corpus with a model into a collection of the model's store (.scdv/store/MODEL/), " +
    'through the Bull queue; re-running with the same corpus reuses finished shards.',
  options: [
    opt('--model <name>', 'the model (models/NAME/) (required)'),
    opt('--corpus <file>', 'the corpus: JSON Lines, one {"id", "body", …} per line (required)'),
    opt('--collection <name>', 'the collection to write into', { default: CLI_DEFAULTS.collection }),
    opt('--workers <n>', 'local worker processes (at most 2 per core, with a warning; 0: rely on scdv worker index)', { config: 'index.workers' }),
    opt('--allow-many-workers', 'lift the 2-per-core cap of --workers'),
    opt('--batch-size <b>', 'documents per store write (one fsynced batch; on OpenSearch one bulk request: store.opensearch.bulkDocs)', { config: 'index.writeBatchSize' }),
    opt('--shard-size <m>', 'corpus lines per queue job', { config: 'index.shardSize' }),
    CONFIG_OPTION,
  ],
  examples: ['scdv index --model news --corpus corpus.jsonl', 'scdv index --model news --corpus ads.jsonl --collection ads --batch-size 500'],
  run,
};

/** @param {Record<string, any>} values */
async function run(values) {
  if (!values.corpus || !values.model) throw errors.USAGE('scdv index needs --model NAME and --corpus FILE');
  existingFileFlag(values.corpus);
  const workers = intFlag(values.workers, '--workers');
  const writeBatchSize = intFlag(values['batch-size'], '--batch-size', { min: 1 });
  const shardSize = intFlag(values['shard-size'], '--shard-size', { min: 1 });
  const config = configFromFlags(values, {
    index: { ...(workers ? { workers } : {}), ...(writeBatchSize ? { writeBatchSize } : {}), ...(shardSize ? { shardSize } : {}) },
    ...(values['allow-many-workers'] ? { workerProcesses: { allowMany: true } } : {}),
    ...(writeBatchSize ? { store: { opensearch: { bulkDocs: writeBatchSize } } } : {}),
  });
  const { corpus, model, collection } = values;
  await withRedis(async (redisUrl) => {
    const s = await runIndex({ corpus, model, collection, config, redisUrl, workers });
    printIndexSummary(s);
  });
}

/** @param {import('../stages/indexing.js').IndexSummary} summary */
export function printIndexSummary(summary) {
  const codes = Object.entries(summary.rejectedByCode).map(([k, v]) => `${k} ${v}`).join(', ');
  process.stderr.write([
    `indexed ${plural(summary.documents, 'document')} into ${summary.model}/${summary.collection} in ${summary.seconds.toFixed(1)} s ` +
      `(${plural(summary.writes, 'store write')} of up to ${summary.writeBatchSize} documents each: --batch-size, index.writeBatchSize or on OpenSearch store.opensearch.bulkDocs)` +
      (summary.reusedShards ? `, ${summary.reusedShards} of ${plural(summary.shards, 'shard')} reused` : ''),
    `  empty (no known word, not indexed): ${summary.empty}; rejected lines: ${summary.rejected}${codes ? ` (${codes})` : ''}`,
    summary.empty || summary.rejected ? `  details: ${summary.reportFile}` : '',
    summary.warning ? `  WARNING: ${summary.warning}` : '',
    ...Object.entries(summary.expansions ?? {}).map(([target, e]) => `  ${describeExpansion(target, e)}`),
    ...Object.entries(summary.matchThresholds ?? {}).map(([target, t]) => `  ${describeThreshold(target, t)}`),
  ].filter(Boolean).join('\n') + '\n');
}
