// Schema of the sections index, store and tokenize (conventions: ./section.js).
import { section } from './section.js';

const posInt = (/** @type {number} */ d, /** @type {string} */ description, more = {}) => ({ type: 'integer', minimum: 1, default: d, description, ...more });
const count0 = (/** @type {number} */ d, /** @type {string} */ description, more = {}) => ({ type: 'integer', minimum: 0, default: d, description, ...more });

export const index = section('`scdv index`: a corpus embedded into a collection of the store.', {
  writeBatchSize: posInt(100, 'Documents per store write: each write is one durable (fsynced) batch.'),
  shardSize: posInt(1000, 'Corpus lines per queue job (a shard: the unit of reuse when re-run).'),
  workers: posInt(2, 'Local worker processes of `scdv index` (--workers).'),
  queuedShards: posInt(16, 'Shard jobs in Redis at a time when they carry their documents (store.backend "opensearch": workers may run on other hosts): each holds its shard\'s bytes, so this bounds Redis memory to about this many shards.'),
});

const nullableString = (/** @type {string} */ description, more = {}) => ({ type: ['string', 'null'], default: null, description, ...more });

export const store = section('Where document vectors live (pipeline/store/): one store per model, opened by openModelStore(model, config).', {
  backend: {
    type: 'string', enum: ['native', 'opensearch'], default: 'native',
    description: "'native': the embedded store in storeDir()/<model>/ (one machine, what `npm start` uses); 'opensearch': an OpenSearch cluster (store.opensearch), shared by servers and index workers on several hosts.",
  },
  opensearch: section('The OpenSearch cluster of store.backend "opensearch".', {
    nodes: {
      type: 'array', minItems: 1, envAliases: ['SCDV_OPENSEARCH_NODES'], default: ['http://127.0.0.1:9200'],
      items: { type: 'string', pattern: '^https?://[^/\\s]+/?$', ruleText: 'a URL such as http://127.0.0.1:9200' },
      description: 'Node URLs of the cluster.',
    },
    username: nullableString('Basic authentication: the user (a password is then needed too).', { envAliases: ['SCDV_OPENSEARCH_USERNAME'] }),
    password: nullableString('Basic authentication: the password.', { envAliases: ['SCDV_OPENSEARCH_PASSWORD'], secret: true }),
    tls: section('TLS to the cluster.', {
      ca: nullableString("PEM file of the CA that signed the cluster's certificates (null: the system's CAs)."),
      rejectUnauthorized: { type: 'boolean', default: true, description: 'Refuse a cluster whose certificate does not verify.' },
    }),
    indexPrefix: {
      type: 'string', default: 'scdv-', envAliases: ['SCDV_OPENSEARCH_INDEX_PREFIX'],
      // Index names are lower case, and the prefix must not be mistaken for a collection's index (no "--").
      pattern: '^(?!.*--)[a-z0-9][a-z0-9_.-]{0,40}$',
      ruleText: '1-41 characters a-z, 0-9, "_", "." or "-" (no "--"), starting with a letter or digit',
      description: 'Every index this project creates starts with this.',
    },
    shards: posInt(1, "Primary shards of each collection's index (fixed when the index is created)."),
    replicas: count0(1, "Replicas of each collection's index (fixed when the index is created)."),
    requestTimeoutMs: posInt(30_000, 'A request without an answer for this long fails and is retried on another node (maxRetries times), ms.'),
    maxRetries: count0(3, 'Retries of a failed request on other nodes.'),
    compression: {
      type: 'boolean', default: false, description: 'gzip request bodies.',
      why: 'worth it only over a slow link: it costs this process ~0.5 ms of CPU per indexed document (BENCHMARKS.md § Search on OpenSearch).',
    },
    bulkDocs: posInt(500, 'Documents per bulk request of `scdv index` (larger requests amortise the round trip).'),
    compactAfterDocs: count0(10_000, '`scdv index` ends by merging the collection\'s index to one segment a shard (after a commit and its retention leases: pipeline/store/opensearch/compact.js) when it wrote at least this many documents and at least half of the collection\'s; 0: never.', {
      why: 'a merge straight after a load keeps ~5 KB a document (the recovery source), this one ~3.2 KB; it waits up to 30 s for the leases and rewrites the whole index (docs/scale-out.md § Loading).',
    }),
    versionPollMs: count0(250, "How often a process asks the cluster for a collection's version (cache invalidation across hosts), ms."),
    candidates: section('Documents re-ranked exactly in the engine per shard and search. The search wants T = max(min, perK·k) candidates in all; on s shards each re-ranks its share T/s plus `spread` standard deviations of that share (the ids are spread over the shards at random), plus perShard·(s − 1); at most max. One shard: T.', {
      min: posInt(400, 'Candidates at least, in all.'),
      perK: { type: 'number', minimum: 1, default: 3, description: 'Candidates per result asked for.' },
      spread: { type: 'number', minimum: 0, default: 4, description: "Standard deviations of a shard's share of the candidates added to it (binomial: √(T/s · (1 − 1/s)))." },
      perShard: count0(0, 'Candidates added per shard beyond the first.'),
      max: posInt(10_000, 'Candidates at most (at least candidates.min).', { maximum: 10_000, note: "OpenSearch's max_result_window" }),
    }, { why: 'BENCHMARKS.md § Search on OpenSearch.' }),
    postingsBudget: section("Postings a fast search's candidate terms may reach: max(min, fraction of the collection's postings) (store/opensearch/search.js).", {
      min: posInt(20_000, 'Postings at least.'),
      fraction: { type: 'number', minimum: 0, maximum: 1, default: 0.0009, description: "Share of the collection's postings." },
    }, { why: 'BENCHMARKS.md § Search on OpenSearch.' }),
    maxQueryTerms: posInt(1024, "Query terms sent as term clauses (the largest by magnitude): the cluster's max_clause_count caps it."),
  }),
});

export const tokenize = section('`scdv tokenize` (and the tokenising of `scdv train`).', {
  shardSize: posInt(500, 'Corpus lines per queue job.'),
  workers: posInt(2, 'Local worker processes of `scdv tokenize` and `scdv train` (--workers).'),
  batchSize: posInt(64, 'Documents sent to the native tokenizer per call (one call in flight per worker keeps one core busy).'),
  hugePages: {
    type: 'boolean', default: true,
    description: "After parsing 1/32 of the MeCab dictionary's index in text, a process copies the index into 2 MB pages (Linux THP); false: only the file's shared pages.",
    why: '~20 % less CPU per parse for ~330 MB private memory with neologd (BENCHMARKS.md § Tokeniser).',
  },
});
