#!/usr/bin/env node
// `scdv`: the one command-line entry point. Each subcommand lives in commands/<name>.js.
import { ScdvError } from './errors.js';

const COMMANDS = {
  tokenize: () => import('./commands/tokenize.js'),
  train: () => import('./commands/train.js'),
  index: () => import('./commands/index.js'),
  worker: () => import('./commands/worker.js'),
  dict: () => import('./commands/dict.js'),
  serve: () => import('./commands/serve.js'),
  precompute: () => import('./commands/precompute.js'),
  demo: () => import('./commands/demo.js'),
  inspect: () => import('./commands/inspect.js'),
  explain: () => import('./commands/explain.js'),
  report: () => import('./commands/report.js'),
  eval: () => import('./commands/eval.js'),
  collection: () => import('./commands/collection.js'),
};

const USAGE = `scdv — SCDV document vectors for Japanese articles

Usage:
  scdv tokenize --corpus FILE --out DIR [--workers N] [--shard-size M] [--config FILE]
  scdv tokenize --text "…" [--json] [--config FILE]
  scdv train --corpus FILE [--name NAME] [--force] [--config FILE] [--clusters K] [--dims D]
             [--epochs E] [--min-count M] [--covariance tied|diag|full] [--seed S] [--workers N]
             one run per model name at a time; parameters are checked before any work
  scdv index --model NAME --corpus FILE [--collection C] [--workers N] [--batch-size B] [--config FILE]
  --workers N  local worker processes, at most 2 per core (capped with a warning) and never more than
               shards; --allow-many-workers lifts the per-core cap
  scdv worker tokenize|train|index|precompute [--concurrency N] [--config FILE]
  scdv serve [--model NAME] [--host H] [--port P] [--workers N] [--index-workers N] [--config FILE]
             the REST API (docs at /docs once running)
  scdv precompute --target T [--collection C] [--k K] [--ttl SECONDS] [--model NAME] [--config FILE]
             top-k of T for every document of C, into Redis for the match route and ad servers
  scdv collection list [--model NAME] [--json]     the collections of a model's store, with counts
  scdv collection delete NAME [--model NAME]       delete a collection (documents, files, indexed.json entry)
  scdv dict compile --csv words.csv --out words.dic   a user dictionary for tokenizer.userDictionaries
  scdv demo [--config FILE]      the main job on the bundled sample corpus (what \`npm start\` runs)
  scdv inspect clusters --model NAME [--sort cluster|coherence|size] [--cluster K] [--flagged]
             [--corpus FILE] [--refresh] [--json]   clusters: size, top words, NPMI coherence, flags
  scdv inspect doc --model NAME (--id ID [--collection C] [--corpus FILE] | --text "…") [--top N] [--json]
  scdv explain --model NAME A B [--collection C] [--corpus FILE] [--text] [--top N] [--json]
                                 why two documents (ids, or texts with --text) are related
  scdv report --model NAME [--corpus FILE] [--refresh]   write models/NAME/report.html
  scdv eval --model NAME --corpus FILE [--label-field category] [--collection C] [--json]
             [--search-mode fast|exact] [--folds 5] [--damping D] [--keep-fraction F] [--alpha A]
             P@1, P@10, MAP@10 of same-label neighbours vs TF-IDF and more_like_this; models/NAME/eval.json
  scdv eval --classify --model NAME --train FILE --test FILE [--label-field F] [--json]
             LinearSVC test accuracy on the document vectors vs on TF-IDF
  scdv eval --sweep --corpus FILE [--grid grid.json] [--out table.md] [--label-field F]
             train and evaluate a grid of settings (docs/relevance.md); writes a Markdown table
  --lang en  (scdv train, scdv eval) English text: a regex tokeniser, lower case, an English stop list

Environment:
  REDIS_URL   redis://host:port, rediss://…, or unix:///path.sock; unset: a private redis-server is started
`;

async function main() {
  const [name, ...rest] = process.argv.slice(2);
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  const load = COMMANDS[/** @type {keyof typeof COMMANDS} */ (name)];
  if (!load) {
    process.stderr.write(`scdv: unknown command "${name}"\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  const mod = await load();
  const { joinNegativeValues } = await import('./commands/common.js');
  await mod.run(joinNegativeValues(rest));
}

// Whatever escapes everything else ends the process with its stack (message and frames) only: Node's own
// report would print the error object whole, and a Redis error carries its command's arguments (AUTH's password).
const fatal = (/** @type {any} */ err) => {
  process.stderr.write(err?.name === 'ReplyError'
    ? `scdv: Redis refused a command: ${err.message}\n` // e.g. WRONGPASS: check the credentials in REDIS_URL
    : `scdv: unexpected error (a bug; please report it):\n${err?.stack ?? err}\n`);
  process.exit(1);
};
process.on('uncaughtException', fatal);
process.on('unhandledRejection', fatal);

main().catch((err) => {
  if (err instanceof ScdvError) {
    process.stderr.write(`scdv: ${err.message}\n`);
    process.exitCode = err.code === 'SCDV_USAGE' ? 2 : 1;
  } else if (err && err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || err?.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    process.stderr.write(`scdv: ${err.message}\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`scdv: unexpected error (a bug; please report it):\n${err?.stack ?? err}\n`);
    process.exitCode = 1;
  }
});
