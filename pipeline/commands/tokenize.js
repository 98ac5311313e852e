// scdv tokenize: a corpus through the queue, or one text for a quick look.
import { parseArgs } from 'node:util';
import { errors } from '../errors.js';
import { createTokenizer } from '../tokenizer/index.js';
import { runTokenize } from '../stages/tokenize.js';
import { configFromFlags, intFlag, withRedis } from './common.js';

/** @param {string[]} argv */
export async function run(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      corpus: { type: 'string' }, out: { type: 'string' }, workers: { type: 'string' }, 'allow-many-workers': { type: 'boolean', default: false },
      'shard-size': { type: 'string' }, config: { type: 'string' }, text: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const shardSize = intFlag(values['shard-size'], '--shard-size', { min: 1 });
  const workers = intFlag(values.workers, '--workers');
  const config = configFromFlags(values, {
    tokenize: { ...(shardSize ? { shardSize } : {}), ...(workers !== undefined ? { workers: Math.max(1, workers) } : {}) },
    ...(values['allow-many-workers'] ? { workerProcesses: { allowMany: true } } : {}),
  });

  if (values.text !== undefined) {
    const tokenizer = await createTokenizer(config.tokenizer);
    if (values.json) process.stdout.write(JSON.stringify(tokenizer.tokenizeWithPos(values.text)) + '\n');
    else process.stdout.write(tokenizer.tokenize(values.text).join(' ') + '\n');
    return;
  }
  if (!values.corpus || !values.out) throw errors.USAGE('scdv tokenize needs --corpus FILE and --out DIR (or --text "…")');

  const { corpus, out } = values;
  await withRedis(async (redisUrl) => {
    const s = await runTokenize({ corpus, outDir: out, config, redisUrl, workers });
    printSummary(s);
  });
}

/** @param {import('../stages/tokenize.js').TokenizeSummary} s */
export function printSummary(s) {
  const byCode = Object.entries(s.rejectedByCode).map(([k, v]) => `${k} ${v}`).join(', ');
  process.stderr.write([
    `tokenized ${s.documents} documents (${s.tokens} tokens) in ${s.seconds.toFixed(1)} s` +
      (s.reusedShards ? `, ${s.reusedShards}/${s.shards} shards reused` : ''),
    `  rejected lines: ${s.rejected}${byCode ? ` (${byCode})` : ''}; warnings: ${s.warnings}; documents with no token: ${s.emptyDocuments}`,
    `  output: ${s.tokensFile}`,
    s.rejected || s.warnings ? `  details: ${s.outDir}/rejected.jsonl, ${s.outDir}/warnings.jsonl` : '',
    s.warning ? `  WARNING: ${s.warning}` : '',
  ].filter(Boolean).join('\n') + '\n');
}
