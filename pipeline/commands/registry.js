// Every `scdv` command: its name, its one-line summary (for `scdv --help`, without loading the command) and its
// module. Each module exports `command` (a CommandSpec: its options, arguments, examples, subcommands and run).
// A command added here gets --help, suggestions and completion; tests/cli/help.test.js checks every one.

/** @typedef {{summary: string, load: () => Promise<{command: import('./define.js').CommandSpec}>}} CommandEntry */

/** @type {Record<string, CommandEntry>} */
export const COMMANDS = {
  tokenize: { summary: 'tokenise a corpus through the queue, or one text for a quick look', load: () => import('./tokenize.js') },
  train: { summary: 'train a model on a corpus: word2vec, IDF, GMM, word-topic vectors (models/NAME/)', load: () => import('./train.js') },
  index: { summary: "embed a corpus with a model into a collection of the model's store", load: () => import('./indexing.js') },
  worker: { summary: 'run queue workers alone (more machines on the same Redis)', load: () => import('./worker.js') },
  dict: { summary: 'compile a user dictionary for the tokenizer', load: () => import('./dict.js') },
  serve: { summary: 'the REST API (docs at /docs once running)', load: () => import('./serve.js') },
  precompute: { summary: 'top-k of one collection for every document of another, into Redis', load: () => import('./precompute.js') },
  activate: { summary: 'switch the served model: on the running server (its activate API), or recorded for the next start', load: () => import('./activate.js') },
  embed: { summary: 'document vectors of texts: JSON Lines on stdin, one vector per line on stdout (as scdv index and the server compute them)', load: () => import('./embed.js') },
  export: { summary: "a model's word vectors in word2vec format (text or binary, for gensim and other tools)", load: () => import('./export.js') },
  key: { summary: 'print the server.apiKeyHashes digest of an API key (scdv key hash)', load: () => import('./key.js') },
  collection: { summary: "list or delete the collections of a model's store", load: () => import('./collection.js') },
  demo: { summary: 'the whole product on the bundled sample corpus (what `npm start` runs)', load: () => import('./demo.js') },
  inspect: { summary: "what a model learned: its clusters, or what carries one document's vector", load: () => import('./inspect.js') },
  explain: { summary: 'why two documents are related (shared topics and words)', load: () => import('./explain.js') },
  report: { summary: 'write models/NAME/report.html; report clicks: CTR from reader events', load: () => import('./report.js') },
  'simulate-readers': { summary: 'synthetic readers: views, impressions and clicks against a running server', load: () => import('./simulate-readers.js') },
  eval: { summary: 'relevance of a model vs TF-IDF and more_like_this; classification; parameter sweeps', load: () => import('./eval.js') },
  opensearch: { summary: 'a local OpenSearch node for trying the opensearch store backend (start, stop, status)', load: () => import('./opensearch.js') },
  completion: { summary: 'print a shell completion script (bash or zsh)', load: () => import('./completion.js') },
};
