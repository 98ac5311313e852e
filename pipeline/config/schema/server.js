// Schema of the server section: `scdv serve`, the REST server (server/) (conventions: ./section.js).
import { section } from './section.js';

const posInt = (/** @type {number} */ d, /** @type {string} */ description, more = {}) => ({ type: 'integer', minimum: 1, default: d, description, ...more });
const noLimit = (/** @type {number} */ d, /** @type {string} */ description) => ({ type: 'integer', minimum: 0, default: d, description, note: '0: no limit' });
const share = (/** @type {number} */ d, /** @type {string} */ description, more = {}) => ({ type: 'number', minimum: 0, maximum: 1, default: d, description, ...more });
const strings = (/** @type {string} */ description, /** @type {Record<string, unknown>} */ items = {}) => ({ type: 'array', default: [], items: { type: 'string', ...items }, description });

/** The sensitive-topic seeds a page is compared with when server.brandSafety.threshold is set (docs/matching.md). */
const SENSITIVE_SEEDS = [
  { topic: 'disaster', text: '地震、津波、震災、被災、被災者、被災地、避難、避難所、余震、震度、台風、豪雨、洪水、土砂崩れ、噴火、災害、犠牲者、行方不明' },
  { topic: 'accident', text: '事故、交通事故、衝突事故、脱線、墜落、転落、火災、全焼、死傷者、重傷、負傷、救急搬送、意識不明、重体' },
  { topic: 'crime', text: '殺人、殺害、逮捕、容疑者、被害者、刺殺、強盗、暴行、誘拐、詐欺、事件、捜査、起訴、懲役、性犯罪、盗撮、痴漢' },
  { topic: 'death', text: '死亡、死去、訃報、逝去、急死、遺体、葬儀、告別式、追悼、遺族、死因、自殺、冥福' },
  { topic: 'terrorism-war', text: 'テロ、爆破、銃撃、銃乱射、戦争、空爆、ミサイル、紛争、武装勢力、虐殺、人質、難民' },
  { topic: 'drugs', text: '麻薬、覚醒剤、覚せい剤、大麻、薬物、密売、依存症、違法薬物' },
  { topic: 'abuse-hate', text: '虐待、児童虐待、いじめ、差別、ヘイトスピーチ、誹謗中傷、ハラスメント、パワハラ、セクハラ、暴言' },
  { topic: 'epidemic', text: '感染症、感染拡大、集団感染、パンデミック、重症者、死者、食中毒' },
];
/** A list of at most 100 seeds {topic: 1-64 characters, text: 1-2000 characters}. */
const seedList = {
  type: 'array', maxItems: 100, ruleText: 'a list of at most 100 {"topic", "text"} objects',
  items: {
    type: 'object', additionalProperties: false, required: ['topic', 'text'],
    properties: {
      topic: { type: 'string', minLength: 1, maxLength: 64, pattern: '\\S', description: "The topic's name (in answers)." },
      text: { type: 'string', minLength: 1, maxLength: 2000, pattern: '\\S', description: 'Words of the topic.' },
    },
  },
};

/** @param {number} d @param {string} description */
const wrongKeys = (d, description) => ({ type: 'integer', minimum: 0, maximum: 1e9, default: d, description, note: '0: no limit' });

export const server = section('`scdv serve`, the REST server (server/).', {
  host: { type: 'string', default: '127.0.0.1', description: 'Address to listen on.' },
  port: { type: 'integer', minimum: 0, maximum: 65535, default: 8080, description: 'Port to listen on.', note: '0: any free port' },
  workers: posInt(1, 'Processes serving the one port (node:cluster); they share the store on disk.'),
  model: { type: ['string', 'null'], default: null, ruleText: 'a model name (a folder of models/)', description: 'Model served until one is activated through the API (null: the newest model whose store has collections).' },
  apiKeyHashes: {
    ...strings('SHA-256 hex digests of the API keys allowed on write and admin routes; keys themselves are never stored.',
      { pattern: '^[0-9a-fA-F]{64}$', ruleText: 'a SHA-256 digest in hex (64 characters)', hideValue: true }),
    hideValue: true,
  },
  openReads: { type: 'boolean', default: true, description: 'Read routes answer without a key; false: reads need a key too (health checks stay open).' },
  corsOrigins: strings("Origins allowed by CORS ('*' for any); empty: no CORS headers, browsers on other origins are refused.",
    { pattern: '^(\\*|https?://[^/\\s]+)$', ruleText: '"*" or an origin such as https://example.com' }),
  bodyLimit: posInt(1 << 20, 'Largest JSON request body, bytes (413 above).'),
  bulkBodyLimit: posInt(256 << 20, 'Largest JSON Lines body of a bulk upload, bytes: it is streamed to a file, never held in memory.'),
  bulkFileRoots: strings('Folders whose files a bulk request may name by path, besides <dataDir()>/imports (links are resolved first).', { minLength: 1, ruleText: 'a folder path' }),
  bulkJobRetentionHours: noLimit(168, 'A bulk job ended this long ago, hours, has its folder (its record and shard results, what GET /v1/jobs/ID answers from) removed; its id then answers 404. Looked at on start and every hour.'),
  syncBulkMaxDocuments: posInt(100, 'Most documents of a synchronous bulk (documents:bulk?sync=true, answered per item; above: 413).'),
  maxK: posInt(1000, 'Upper bound of `k` on every route.', { maximum: 1000 }),
  defaultK: posInt(10, '`k` of a request that names none (at most maxK).'),
  matchMinScore: {
    type: ['number', 'null'], minimum: -1, maximum: 1, default: null, note: "null: each target collection's derived threshold",
    description: "/v1/match's default min_score (docs/matching.md).",
  },
  matchMinKnownShare: {
    type: ['number', 'null'], minimum: 0, maximum: 1, default: null, note: "null: each target collection's derived minimum; 0: off",
    description: "/v1/match's default min_known_share: a page knowing a smaller share of its distinct words (found in the model) gets no ads (docs/matching.md, \"The known-word rule\").",
  },
  matchThreshold: section('The derived threshold of a match target collection (docs/matching.md).', {
    quantile: { type: 'number', minimum: 0.5, maximum: 1, default: 0.99, description: 'This quantile of unrelated page–ad scores.' },
    fallback: { type: 'number', minimum: -1, maximum: 1, default: 0.1, description: 'The threshold of a collection never derived.' },
    knownShareRatio: {
      type: 'number', minimum: 0, maximum: 1, default: 0.5,
      description: "The derived min_known_share: this times the median known share of the source collection's pages (those written with their word counts).",
      why: '0.5 keeps a chemistry lesson from ads on the sample model and 1 in 1,461 held-out livedoor articles on a model of the other half (docs/matching.md, "The known-word rule").',
    },
  }),
  brandSafety: section('Brand safety of /v1/match: pages close to sensitive topics get no ads (docs/matching.md, "Brand-safety controls").', {
    threshold: {
      type: ['number', 'null'], minimum: -1, maximum: 1, default: null, note: 'null: off',
      description: 'A page whose vector scores at least this (dot product) with one of `seeds` gets no ads.',
      why: "off by default: a score's scale depends on the layout (pure SCDV scores any two texts high); 0.15 fits the default hybrid layout (docs/matching.md, \"Brand-safety controls\").",
    },
    seeds: { ...seedList, default: SENSITIVE_SEEDS, description: 'The sensitive topics: {topic, text}, each text embedded by the model as a page is (nouns: a shared verb would match any page).' },
    collections: {
      type: 'array', default: [], ruleText: 'a list of {"collection", "threshold"?, "seeds"?}',
      description: 'Page collections with settings of their own over the two above (threshold null: off for that collection); each named once.',
      tsType: '{collection: string, threshold?: number | null, seeds?: {topic: string, text: string}[]}[]',
      items: {
        type: 'object', additionalProperties: false, required: ['collection'],
        properties: {
          collection: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,63}$', ruleText: 'a collection name (1-64 of a-z, 0-9, "_", "-")', description: 'The page collection.' },
          threshold: { type: ['number', 'null'], minimum: -1, maximum: 1, description: 'Its threshold (null: off).' },
          seeds: { ...seedList, description: 'Its seeds.' },
        },
      },
    },
  }),
  embedThreads: {
    type: 'integer', minimum: 0, maximum: 64, default: 2, note: '0: embed on the event loop',
    description: 'Threads per server process that embed request texts (PUT, related for a text, similarity) with the batch embedder, so that a long text never stalls the event loop; each opens the model and a MeCab tagger of its own.',
    why: 'embedding a text for related-for-text may then use both cores of the 2-core reference machine (BENCHMARKS.md § REST API).',
  },
  writeEmbedThreads: {
    type: ['integer', 'null'], minimum: 0, maximum: 64, default: null, note: 'null: as many as embedThreads; 0: they share the request-text threads',
    description: 'Threads (when embedThreads > 0) that embed documents written through the API, at writeEmbedNice.',
    why: 'BENCHMARKS.md § Writes under read load.',
  },
  writeEmbedNice: {
    type: 'integer', minimum: 0, maximum: 19, default: 1,
    description: 'Niceness (Linux) of the writeEmbedThreads threads (SCHED_BATCH), above the event loop\'s (a server started under nice keeps the order): above 0 they yield to the event loop and the request-text threads.',
    why: 'BENCHMARKS.md § Writes under read load.',
  },
  embedLargeTextChars: posInt(20_000, 'A request text (title + body) of more characters is large: large texts take at most embedThreads − 1 threads (all when 1) and wait behind small ones.'),
  embedLargeQueue: posInt(8, 'Large texts waiting for a thread; one more is answered 503 with Retry-After.'),
  writePace: section("While searches are in flight, a written document's embedding takes at most `share` of a core (checked every sliceUs) for its first budgetMs (Linux; thread_pacing.cc).", {
    sliceUs: { type: 'number', minimum: 50, maximum: 1e6, default: 250, note: 'microseconds', description: 'How often the share is checked.' },
    share: { type: 'number', exclusiveMinimum: 0, maximum: 1, default: 0.25, description: 'Share of a core a paced embedding takes.' },
    budgetMs: { type: 'number', minimum: 0, maximum: 1e5, default: 20, note: 'milliseconds; 0: never paced', description: "The first part of an embedding that is paced." },
  }, { why: 'BENCHMARKS.md § Writes under read load.' }),
  indexWorkers: {
    type: 'integer', minimum: 0, default: 1, note: '0: rely on `scdv worker index` elsewhere',
    description: 'Local `embed` worker processes `scdv serve` starts for bulk jobs.',
  },
  modelPollMs: posInt(500, 'How often every process reads the active-model record (the file; on OpenSearch, the shared Redis, where a pub/sub message makes servers follow at once and this poll is the safety net), ms.'),
  relatedCacheEntries: noLimit(10_000, 'Related-by-id results kept per process, each valid while its collection is unchanged, kept from their second ask (0: no cache).'),
  relatedCacheBytes: noLimit(64 << 20, '… and their bytes at most (serialised answers and keys), least recently used evicted first.'),
  searchMode: { type: 'string', enum: ['fast', 'exact'], default: 'fast', description: 'Search mode passed to the store for live queries.' },
  requestTimeoutMs: posInt(60_000, 'Longest time to receive a whole request, headers and body, ms: past it the client gets 408 and the connection closes. Raise it for large bulk uploads over slow links, or send those as {"path"}.'),
  headersTimeoutMs: posInt(20_000, 'Longest time to receive the request line and headers, ms (at most requestTimeoutMs).'),
  idleTimeoutMs: noLimit(120_000, 'A connection that sends and receives nothing for this long is closed, ms.'),
  keepAliveTimeoutMs: posInt(72_000, 'An idle keep-alive connection is closed after this long without a new request, ms.'),
  maxConnections: noLimit(1024, 'Open connections per server process; at the cap, the idlest connection of the client with the most is closed to admit a new one, else the new one is answered 503.'),
  maxConnectionsPerClient: noLimit(256, '… per client address (an IPv6 /64), the same way. Behind a proxy every client is the proxy: raise it.'),
  socketBufferBytes: posInt(512 << 10, "A connection's next request waits while more bytes than this are unwritten to it (its client is not reading)."),
  socketStallMs: posInt(10_000, '… and the connection is closed when those bytes do not go down for this long, ms.'),
  maxPipelined: posInt(64, 'Pipelined requests that may wait behind the one in progress on a connection; one more closes it.'),
  shutdownTimeoutMs: posInt(10_000, 'Grace for in-flight requests on SIGTERM before connections are cut, ms.'),
  trustProxy: { type: 'boolean', default: false, description: 'Honour X-Forwarded-For behind a proxy (the logged client address).' },
  adminSessionS: posInt(8 * 3600, 'Queue board login (/admin/login): lifetime of its session cookie (Max-Age), seconds.'),
  keyFailures: section('Wrong API keys (header or login form) per windowS seconds, per process; past one of these, wrong keys get 429. A valid key is always accepted.', {
    perAddress: wrongKeys(10, 'From one address.'),
    perKey: wrongKeys(10, 'For one presented key.'),
    total: wrongKeys(100, 'From all addresses together.'),
    windowS: { type: 'integer', minimum: 1, maximum: 1e9, default: 900, note: 'seconds', description: 'The window the counts are over.' },
  }),
  logLevel: { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'silent'], default: 'info', description: 'Level of the request log.' },
  rerank: section('Re-ranking of result lists (pipeline/match/rerank.js); each route\'s request options override these: `collapse`, `duplicate_threshold`, `recency_half_life`, `max_per_site` (README "Related-list options").', {
    collapseRelated: { type: 'boolean', default: true, description: 'Near-duplicate collapsing on related lists (GET/POST …/related): the same story re-posted must not fill them.' },
    collapseMatch: { type: 'boolean', default: false, description: '… on match lists (GET/POST /v1/match, scdv precompute): off, ads are not syndicated stories.' },
    duplicateThreshold: share(0.8, 'A result more similar than this to the query document or to a result ranked above it is a near-duplicate (pure SCDV, alpha 1: raise it).', {
      why: 'measured on the hybrid layout (docs/relevance.md § Near-duplicate collapsing, `npm run bench:dups`).',
    }),
    relatedFeedback: section('Related lists (unless feedback=false) re-rank their first `pool` hits by cosine to q + weight · mean of their first `docs`.', {
      enabled: { type: 'boolean', default: true, description: 'Related lists use it unless a request says feedback=false.' },
      docs: { type: 'integer', minimum: 0, maximum: 100, default: 3, note: '0: off', description: 'Top hits averaged into the query.' },
      weight: { type: 'number', minimum: 0, maximum: 10, default: 1, description: 'Weight of their mean.' },
      pool: { type: 'integer', minimum: 1, maximum: 1000, default: 20, description: 'Candidates re-scored.' },
    }, { why: 'dev P@10 85.4 → 86.7 for ~1.2x the CPU (docs/relevance.md § Pseudo-relevance feedback).' }),
    recencyWeight: share(0.5, 'w in score − |score| · w · (1 − 0.5^(age / recency_half_life)): an article one half-life old loses w/2.'),
    poolFactor: { type: 'number', minimum: 1, maximum: 100, default: 2, description: 'Candidates searched when an option is on: poolFactor × (from + k), at least poolMin, at most maxK (doubled while short).' },
    poolMin: { type: 'integer', minimum: 1, maximum: 1000, default: 20, description: 'Candidates searched at least when an option is on.' },
  }),
  precompute: section('Precomputed match lists (`scdv precompute`).', {
    ttlSeconds: posInt(86_400, 'Lifetime of a precomputed match list in Redis; past it the API searches live.'),
    batchSize: posInt(500, 'Source documents per precompute job (jobs run in parallel on the `precompute` queue).'),
    concurrency: posInt(2, 'Concurrent searches per precompute worker.'),
  }),
});
