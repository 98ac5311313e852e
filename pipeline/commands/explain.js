// scdv explain A B: why two documents are related (shared topics and words, with their contributions).
import { parseArgs } from 'node:util';
import { errors } from '../errors.js';
import { openInspectContext } from '../inspect/context.js';
import { resolveDocuments, explainPair } from '../inspect/document.js';
import { formatExplain } from '../inspect/format.js';
import { configFromFlags, intFlag } from './common.js';

/** @param {string[]} argv */
export async function run(argv) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      model: { type: 'string' }, collection: { type: 'string', default: 'articles' }, corpus: { type: 'string' },
      text: { type: 'boolean', default: false }, json: { type: 'boolean', default: false }, top: { type: 'string' },
      config: { type: 'string' },
    },
  });
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
