// scdv explain A B: why two documents are related (shared topics and words, with their contributions).
import { CLI_DEFAULTS } from '../config.js';
import { errors } from '../errors.js';
import { openInspectContext } from '../inspect/context.js';
import { resolveDocuments, explainPair } from '../inspect/doc-explain.js';
import { formatExplain } from '../inspect/doc-explain-format.js';
import { configFromFlags, intFlag } from './common.js';
import { CONFIG_OPTION, opt } from './define.js';

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: 'Why two documents are related: their score split over shared topics and words.',
  arguments: [['[a]', 'a document id of --collection (or a text, with --text)'], ['[b]', 'the other document']],
  options: [
    opt('--model <name>', 'the model (required)'),
    opt('--collection <name>', 'the collection holding the ids', { default: CLI_DEFAULTS.collection }),
    opt('--corpus <file>', "the corpus holding the documents' texts (for the words)"),
    opt('--text', 'A and B are texts, not ids'),
    opt('--top <n>', 'topics and words listed'),
    opt('--json', 'the result as JSON'),
    CONFIG_OPTION,
  ],
  examples: ['scdv explain --model news sports-1 sports-2 --corpus corpus.jsonl', 'scdv explain --model news --text "スマホの新機種" "カメラの性能"'],
  run,
};

/**
 * @param {Record<string, any>} values
 * @param {string[]} positionals
 */
async function run(values, positionals) {
  if (!values.model || positionals.length !== 2) {
    throw errors.USAGE('scdv explain needs --model NAME and two documents: ids of --collection C (default articles), or texts with --text');
  }
  const config = configFromFlags(values);
  const log = (/** @type {string} */ m) => process.stderr.write(`${m}\n`);
  const ctx = await openInspectContext(values.model, config, { collection: values.collection, corpus: values.corpus, log });
  try {
    const specs = positionals.map((p) => (values.text ? { text: p } : { id: p }));
    const [a, b] = await resolveDocuments(ctx, specs);
    const r = explainPair(ctx, a, b, { top: intFlag(values.top, '--top') });
    process.stdout.write(values.json ? JSON.stringify(r, null, 2) + '\n' : formatExplain(r));
  } finally {
    ctx.close();
  }
}
