// scdv tokenize: a corpus through the queue, or one text for a quick look.
import { errors } from '../errors.js';
import { createTokenizer } from '../tokenizer/index.js';
import { runTokenize } from '../stages/tokenize.js';
import { plural } from '../progress.js';
import { configFromFlags, intFlag, withRedis, existingFileFlag } from './common.js';
import { CONFIG_OPTION, opt } from './define.js';

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: 'Tokenise a corpus through the Bull queue into DIR/tokens.tsv (with rejected and warned lines ' +
    'reported), or one text (--text) for a quick look at what the tokenizer keeps.',
  options: [
    opt('--corpus <file>', 'the corpus: JSON Lines, one {"id", "body", …} per line'),
    opt('--out <dir>', 'output folder (tokens.tsv, rejected.jsonl, warnings.jsonl)'),
    opt('--text <text>', 'tokenise this text instead of a corpus'),
    opt('--json', 'with --text: tokens with their part of speech, as JSON'),
    opt('--workers <n>', 'local worker processes (at most 2 per core, with a warning; 0: rely on scdv worker tokenize)', { config: 'tokenize.workers' }),
    opt('--allow-many-workers', 'lift the 2-per-core cap of --workers'),
    opt('--shard-size <m>', 'corpus lines per queue job', { config: 'tokenize.shardSize' }),
    CONFIG_OPTION,
  ],
  examples: ['scdv tokenize --text "きゃりーぱみゅぱみゅが東京スカイツリーを見た"', 'scdv tokenize --corpus corpus.jsonl --out out/tokens --workers 2'],
  run,
};

/** @param {Record<string, any>} values */
async function run(values) {
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
  existingFileFlag(values.corpus);

  const { corpus, out } = values;
  await withRedis(async (redisUrl) => {
    const s = await runTokenize({ corpus, outDir: out, config, redisUrl, workers });
    printSummary(s);
  });
}

/** @param {import('../stages/tokenize.js').TokenizeSummary} summary */
export function printSummary(summary) {
  const byCode = Object.entries(summary.rejectedByCode).map(([k, v]) => `${k} ${v}`).join(', ');
  process.stderr.write([
    `tokenized ${plural(summary.documents, 'document')} (${plural(summary.tokens, 'token')}) in ${summary.seconds.toFixed(1)} s` +
      (summary.reusedShards ? `, ${summary.reusedShards} of ${plural(summary.shards, 'shard')} reused` : ''),
    `  rejected lines: ${summary.rejected}${byCode ? ` (${byCode})` : ''}; warnings: ${summary.warnings}; documents with no token: ${summary.emptyDocuments}`,
    `  output: ${summary.tokensFile}`,
    summary.rejected || summary.warnings ? `  details: ${summary.outDir}/rejected.jsonl, ${summary.outDir}/warnings.jsonl` : '',
    summary.warning ? `  WARNING: ${summary.warning}` : '',
  ].filter(Boolean).join('\n') + '\n');
}
