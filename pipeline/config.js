// One configuration object for every stage. Defaults live here; a JSON file, SCDV_… environment variables
// (config-env.js, docs/configuration.md) and CLI flags override them, in that order.
import fs from 'node:fs';
import crypto from 'node:crypto';
import { errors } from './errors.js';
import { validateModelName } from './paths.js';
import {
  inRange, validateBrandSafety, validateEmbed, validateEvents, validateKeyFailures, validateMatchThreshold, validateRerank, validateStore, validateTrain, validateWritePace,
} from './config-checks.js';

export { describeRange, inRange } from './config-checks.js';
import { envOverrides, warnUnknownEnv } from './config-env.js';

/** @typedef {'none'|'hiragana'|'non-kanji'|'all'} SingleCharRule */

export const DEFAULT_CONFIG = Object.freeze({
  tokenizer: {
    /**
     * 'ja': MeCab with the dictionary below. 'en': a plain regex tokeniser for English text (lower case, an English
     * stop list; pipeline/tokenizer/english.js), for checks against published English benchmarks (`--lang en`).
     */
    lang: /** @type {'ja'|'en'} */ ('ja'),
    /** 'default' (what setup built: neologd, else ipadic), 'neologd', 'ipadic', or a compiled dictionary folder. */
    dictionary: 'default',
    /** Compiled user dictionaries (.dic), e.g. from `scdv dict compile`. */
    userDictionaries: /** @type {string[]} */ ([]),
    /** Feature prefixes of kept parts of speech; the longest matching prefix of keepPos ∪ dropPos decides. */
    keepPos: ['名詞', '動詞,自立'],
    /** Feature prefixes of dropped parts of speech. */ dropPos: ['名詞,非自立', '名詞,数', '名詞,形容動詞語幹', '名詞,副詞可能', '名詞,代名詞', '名詞,接尾', '名詞,特殊'],
    /** Single-character tokens to drop: hiragana only, anything but kanji (default), all, or none. */
    singleChar: /** @type {SingleCharRule} */ ('non-kanji'),
    /** Drop tokens of digits only. */ dropDigitsOnly: true,
    /** A number followed by one or two kanji/kana (6月, 33歳, 100万円): dates and counts, not topics. */
    dropNumberCounters: true,
    /** Drop tokens of symbols only. */ dropSymbolsOnly: true,
    /** ASCII A-Z to a-z in tokens. */ lowercase: true,
    /** Tokens longer than this (UTF-8 bytes) are dropped. */ maxTokenBytes: 100,
    /** Katakana-only tokens of 4+ characters drop a final ー: コンピューター and コンピュータ are one token. */ foldLongVowels: false,
    /** Adjacent kept nouns also give their concatenation as one more token (新型 コロナ -> + 新型コロナ). */ joinNouns: false,
    stopwords: {
      /** Families are the files dictionaries/stopwords/<family>.txt; null means all of them. */
      families: /** @type {string[]|null} */ (null),
      /** Further stop words of your own. */ extra: /** @type {string[]} */ ([]),
    },
  },
  corpus: {
    /** A line longer than this is rejected (and skipped without being held in memory). */
    maxDocumentBytes: 1 << 20,
    /**
     * A run that rejects more than this fraction of the corpus's lines says so in its summary (a run that rejects
     * every line fails whatever this is: a corpus with nothing usable is an error).
     */
    warnRejectedFraction: 0.1,
  },
  /** Local worker processes of `scdv tokenize`, `scdv train` and `scdv index` (--workers, tokenize/index.workers). */
  workerProcesses: {
    /**
     * At most this many per core (os.availableParallelism()): a larger count is capped with a warning, since
     * each worker holds a dictionary or model (about 550 MB) and more than the cores can run only competes.
     */
    maxPerCore: 2,
    /** true (or --allow-many-workers): start the requested count however many cores there are. */
    allowMany: false,
  },
  queue: {
    /** Bull key prefix; the braces are a Redis Cluster hash tag that keeps a queue's keys in one slot. */
    prefix: '{scdv}',
    /** Tries per job before it fails for good, backoffMs apart (doubling). */ attempts: 3,
    /** Wait before a failed job's first retry, ms. */ backoffMs: 1000,
    /** A job whose worker stops renewing its lock for this long is taken over by another worker. */
    lockDurationMs: 30_000,
    /** How often workers look for jobs whose lock expired, ms. */ stalledIntervalMs: 15_000,
    /** A job taken over this many times fails (a job that kills its worker does not loop). */ maxStalledCount: 3,
    /** Finished jobs kept per queue (Bull Board shows what ran): for up to ageS seconds, at most count of them. */
    keepCompleted: { ageS: 86_400, count: 1000 }, keepFailed: { ageS: 30 * 86_400, count: 10_000 },
  },
  /** The Python training stages' parameters (workers/scdv/config.py validates them again; a test keeps both in step). */
  train: {
    word2vec: {
      vector_size: 200, window: 10, negative: 10, sample: 1e-3, min_count: 5, epochs: 10, workers: 2, seed: 1,
      sg: 1, hs: 0, compute_loss: true,
    },
    gmm: {
      n_components: 60, covariance_type: 'tied', max_iter: 100, tol: 1e-3, reg_covar: 1e-6, init_params: 'kmeans',
      seed: 1, max_fit_words: 200_000, dtype: 'float32', n_init: 1,
    },
    topics: {
      prob_threshold: 0.0, keep_fraction: /** @type {number|null} */ (0.03), keep_count: /** @type {number|null} */ (null),
      chunk_words: 2000, vector_norm: 'l2',
      /** wtv(w) = idf(w)^idf_power · P(k|w)·v_w: 1 in the paper, -2 by measurement (docs/relevance.md: rare names outweighed topical words). */
      idf_power: -2,
    },
  },
  /** Document vectors (pipeline/embed/): the same settings serve batch indexing and requests. */
  embed: {
    /**
     * Term repetition damping: 'binary' (each distinct word once), 'log' (1 + ln tf), 'raw' (tf), or
     * 'saturate' (tf (k + 1) / (tf + k), k = saturationK). Binary is the default: on held-out news it beat raw
     * counts by 3.5 points of precision@10 (a brand repeated ten times must not become the whole vector).
     */
    damping: /** @type {'binary'|'log'|'raw'|'saturate'} */ ('binary'),
    saturationK: 1.2,
    /** Entries kept per document vector, by magnitude: keepCount when set, else keepFraction of the width. */
    keepFraction: 0.02,
    keepCount: /** @type {number|null} */ (null),
    /**
     * Hybrid layout: the SCDV block weighted α and a lexical TF-IDF block (damped tf, the model's IDF) weighted
     * 1 − α in one sparse vector, so one dot product is α·cos(SCDV) + (1 − α)·cos(TF-IDF). alpha 1: pure SCDV
     * (width K·d); below 1 the width grows by the vocabulary size. maxTerms: keep only the heaviest words of the
     * lexical block (null: all the document's known words).
     */
    hybrid: {
      /** 0.05 by measurement (docs/relevance.md; 0.1 before the stop-word lexicon, 0.2 with 'log' damping): SCDV cosines are compressed. */
      alpha: 0.05,
      maxTerms: /** @type {number|null} */ (null),
      /** The lexical block's tf damping (as embed.damping; 'log' = 1 + ln tf before 2026-11-24): binary won +1.3 P@10 held out. */
      damping: /** @type {'binary'|'log'|'raw'|'saturate'} */ ('binary'),
      /** 'keep': the lexical block's words include the stop words (the model's lexicon.txt; 'drop' for a model without one): with idfPower +3.3 P@10 held out (docs/relevance.md). */
      stopwords: /** @type {'keep'|'drop'} */ ('keep'),
      /** The lexical block's weight is damp(tf) · idf^idfPower (1 before 2026-11-25): 0.25 with the stop words kept, by measurement. */ idfPower: 0.25,
    },
  },
  /** Ad collections (short copy that /v1/match ranks for a page) get this α and keepFraction (keepCount null) over `embed` when first indexed
   * or written, then keep their recorded layout; pages keep `embed`'s. A page–ad score weighs the SCDV cosine √(α_page·α_ad). Held out: +3.2
   * P@10 (titles as ads), +7 (108 ads); keepFraction 0.1 scores as 1 with half the entries (docs/matching.md, "Ads' own layout"). */
  adEmbed: { collections: /** @type {string[]} */ (['ads']), alpha: 0.5, keepFraction: 0.1 },
  /** `scdv eval --classify`: the vectors' α, keepFraction and lexical damping for a linear classifier (docs/relevance.md), not the served embed's. */
  eval: { classify: { alpha: 0.1, keepFraction: 1, damping: /** @type {'binary'|'log'|'raw'|'saturate'} */ ('log'), stopwords: /** @type {'keep'|'drop'} */ ('drop'), idfPower: 1 } },
  index: {
    /** Documents per store write: each write is one durable (fsynced) batch. */
    writeBatchSize: 100,
    /** Corpus lines per queue job (a shard: the unit of reuse when re-run). */ shardSize: 1000,
    /** Local worker processes of `scdv index` (--workers). */ workers: 2,
    /** Shard jobs in Redis at a time when they carry their documents (store.backend "opensearch": workers may
     * run on other hosts): each holds its shard's bytes, so this bounds Redis memory to about this many shards. */
    queuedShards: 16,
  },
  /** Where document vectors live (pipeline/store/): one store per model, opened by openModelStore(model, config). */
  store: {
    /**
     * 'native': the embedded store in storeDir()/<model>/ (one machine, the default that `npm start` uses).
     * 'opensearch': an OpenSearch cluster (below), shared by servers and index workers on several hosts.
     * Env: SCDV_STORE_BACKEND.
     */
    backend: /** @type {'native'|'opensearch'} */ ('native'),
    opensearch: {
      /** Node URLs of the cluster (env SCDV_OPENSEARCH_NODES, comma-separated). */
      nodes: ['http://127.0.0.1:9200'],
      /** Basic authentication (env SCDV_OPENSEARCH_USERNAME, SCDV_OPENSEARCH_PASSWORD: keep the password out of files). */
      username: /** @type {string|null} */ (null),
      password: /** @type {string|null} */ (null),
      tls: {
        /** PEM file of the CA that signed the cluster's certificates (null: the system's CAs). */
        ca: /** @type {string|null} */ (null),
        rejectUnauthorized: true,
      },
      /** Every index this project creates starts with this (env SCDV_OPENSEARCH_INDEX_PREFIX): lower case. */
      indexPrefix: 'scdv-',
      /** Primary shards and replicas of each collection's index (fixed when the index is created). */
      shards: 1,
      replicas: 1,
      /** A request without an answer for this long fails and is retried on another node (maxRetries times). */
      requestTimeoutMs: 30_000,
      maxRetries: 3,
      /** gzip request bodies: for a slow link to the cluster; costs this process ~0.5 ms of CPU per indexed document. */
      compression: false,
      /** Documents per bulk request of `scdv index` (larger requests amortise the round trip). */
      bulkDocs: 500,
      /** How often a process asks the cluster for a collection's version (cache invalidation across hosts), ms. */
      versionPollMs: 250,
      /** Documents re-ranked exactly in the engine per shard and search: max(min, perK·k) + perShard·(shards − 1), at most max. */
      candidates: { min: 400, perK: 3, perShard: 10, max: 10_000 },
      /** Postings a fast search's candidate terms may reach: max(min, fraction of the collection's postings) (search.js). */
      postingsBudget: { min: 20_000, fraction: 0.0009 },
      /** Query terms sent as rank_feature clauses (the largest by magnitude): the cluster's max_clause_count caps it. */
      maxQueryTerms: 1024,
    },
  },
  tokenize: {
    /** Corpus lines per queue job. */ shardSize: 500,
    /** Local worker processes of `scdv tokenize` and `scdv train` (--workers). */ workers: 2,
    /** Documents sent to the native tokenizer per call (one call in flight per worker keeps one core busy). */
    batchSize: 64,
    /** After parsing 1/32 of the MeCab dictionary's index in text, a process copies the index into 2 MB pages (Linux
     * THP): ~20 % less CPU per parse for ~330 MB private memory with neologd. false: only the file's shared pages. */
    hugePages: true,
  },  /** `scdv serve`, the REST server (server/). */
  server: {
    host: '127.0.0.1',
    port: 8080,
    /** Processes serving the one port (node:cluster); they share the store on disk. */
    workers: 1,
    /** Model served until one is activated through the API (null: the newest model whose store has collections). */
    model: /** @type {string|null} */ (null),
    /** SHA-256 hex digests of the API keys allowed on write and admin routes; keys themselves are never stored. */
    apiKeyHashes: /** @type {string[]} */ ([]),
    /** Read routes answer without a key; false: reads need a key too (health checks stay open). */
    openReads: true,
    /** Origins allowed by CORS ('*' for any); empty: no CORS headers, browsers on other origins are refused. */
    corsOrigins: /** @type {string[]} */ ([]),
    /** Largest JSON request body, bytes (413 above). */
    bodyLimit: 1 << 20,
    /** Largest JSON Lines body of a bulk upload, bytes: it is streamed to a file, never held in memory. */
    bulkBodyLimit: 256 << 20,
    /** Folders whose files a bulk request may name by path, besides <dataDir()>/imports (links are resolved first). */
    bulkFileRoots: /** @type {string[]} */ ([]),
    /** Most documents of a synchronous bulk (documents:bulk?sync=true, answered per item; above: 413). */ syncBulkMaxDocuments: 100,
    /** Upper bound of `k` on every route (at most 1000). */
    maxK: 1000,
    defaultK: 10,
    /** /v1/match's default min_score; null: each target collection's derived threshold (docs/matching.md). */ matchMinScore: /** @type {number|null} */ (null),
    /** The derived threshold: this quantile of unrelated page–ad scores; `fallback` for a collection never derived. */
    matchThreshold: { quantile: 0.99, fallback: 0.1 },
    /** Brand safety of /v1/match: pages close to sensitive topics get no ads (docs/matching.md, "Brand-safety controls"). */
    brandSafety: {
      /** A page whose vector scores at least this (dot product) with one of `seeds` gets no ads; null: off (a score's scale depends on
       * the layout: pure SCDV scores any two texts high). 0.15 fits the default hybrid layout, measured in docs/matching.md. */
      threshold: /** @type {number|null} */ (null),
      /** The sensitive topics: {topic, text}, each text embedded by the model as a page is (nouns: a shared verb would match any page). */
      seeds: [
        { topic: 'disaster', text: '地震、津波、震災、被災、被災者、被災地、避難、避難所、余震、震度、台風、豪雨、洪水、土砂崩れ、噴火、災害、犠牲者、行方不明' },
        { topic: 'accident', text: '事故、交通事故、衝突事故、脱線、墜落、転落、火災、全焼、死傷者、重傷、負傷、救急搬送、意識不明、重体' },
        { topic: 'crime', text: '殺人、殺害、逮捕、容疑者、被害者、刺殺、強盗、暴行、誘拐、詐欺、事件、捜査、起訴、懲役、性犯罪、盗撮、痴漢' },
        { topic: 'death', text: '死亡、死去、訃報、逝去、急死、遺体、葬儀、告別式、追悼、遺族、死因、自殺、冥福' },
        { topic: 'terrorism-war', text: 'テロ、爆破、銃撃、銃乱射、戦争、空爆、ミサイル、紛争、武装勢力、虐殺、人質、難民' },
        { topic: 'drugs', text: '麻薬、覚醒剤、覚せい剤、大麻、薬物、密売、依存症、違法薬物' },
        { topic: 'abuse-hate', text: '虐待、児童虐待、いじめ、差別、ヘイトスピーチ、誹謗中傷、ハラスメント、パワハラ、セクハラ、暴言' },
        { topic: 'epidemic', text: '感染症、感染拡大、集団感染、パンデミック、重症者、死者、食中毒' },
      ],
      /** Page collections with settings of their own: [{"collection", "threshold"? (null: off), "seeds"?}] over the two above. */
      collections: /** @type {{collection: string, threshold?: number | null, seeds?: {topic: string, text: string}[]}[]} */ ([]),
    },
    /**
     * Threads per server process that embed request texts (PUT, related for a text, similarity) with the same
     * embedder as batch indexing, so that tokenising and embedding a long text never stall the event loop
     * (0: embed on the event loop, as before). Each thread opens the model and a MeCab tagger of its own.
     * 2: embedding a text for related-for-text may use both cores of the 2-core reference machine, as it could when
     * tokenising ran on the libuv pool (one thread would cap it at one core's worth).
     */
    embedThreads: 2,
    /** Threads (when embedThreads > 0) that embed documents written through the API, at writeEmbedNice; null: as many
     * as embedThreads; 0: they share the request-text threads (BENCHMARKS.md). */
    writeEmbedThreads: /** @type {number | null} */ (null),
    /** Niceness (Linux) of the writeEmbedThreads threads (SCHED_BATCH): above 0 they yield to the event loop and the
     * request-text threads; 1 by measurement (BENCHMARKS.md). */
    writeEmbedNice: 1,
    /** A request text (title + body) of more characters is large: large texts take at most embedThreads − 1 threads
     * (all when 1) and wait behind small ones, so that a small text is not held up behind them. */
    embedLargeTextChars: 20_000,
    /** Large texts waiting for a thread; one more is answered 503 with Retry-After. */ embedLargeQueue: 8,
    /** While searches are in flight, a written document's embedding takes at most `share` of a core (checked every
     * sliceUs) for its first budgetMs (Linux; thread_pacing.cc, BENCHMARKS.md). budgetMs 0: never paced. */
    writePace: { sliceUs: 250, share: 0.25, budgetMs: 20 },
    /** Local `embed` worker processes `scdv serve` starts for bulk jobs (0: rely on `scdv worker index` elsewhere). */
    indexWorkers: 1,
    /** How often every process reads the active-model record (the file; on OpenSearch, the shared Redis, where a
     * pub/sub message makes servers follow at once and this poll is the safety net), so that all follow an activation. */
    modelPollMs: 500,
    /** Related-by-id results kept per process, each valid while its collection is unchanged, kept from their second ask (0: no cache). */
    relatedCacheEntries: 10_000,
    /** … and their bytes at most (serialised answers and keys), least recently used evicted first. */ relatedCacheBytes: 64 << 20,
    /** Search mode passed to the store for live queries. */
    searchMode: /** @type {'fast'|'exact'} */ ('fast'),
    /** Longest time to receive a whole request, headers and body, ms: past it the client gets 408 and the
     * connection closes (a client trickling a body cannot hold it open). Raise it for large bulk uploads over
     * slow links, or send those as {"path"}. */
    requestTimeoutMs: 60_000,
    /** Longest time to receive the request line and headers, ms (at most requestTimeoutMs). */
    headersTimeoutMs: 20_000,
    /** A connection that sends and receives nothing for this long is closed, ms (0: never). */
    idleTimeoutMs: 120_000,
    /** An idle keep-alive connection is closed after this long without a new request, ms. */
    keepAliveTimeoutMs: 72_000,
    /** Open connections per server process (0: no limit); at the cap, the idlest connection of the client with the most
     * is closed to admit a new one, else the new one is answered 503. */
    maxConnections: 1024,
    /** … per client address (an IPv6 /64), the same way (0: no share). Behind a proxy every client is the proxy: raise it. */
    maxConnectionsPerClient: 256,
    /** A connection's next request waits while more bytes than this are unwritten to it (its client is not reading). */
    socketBufferBytes: 512 << 10,
    /** … and the connection is closed when those bytes do not go down for this long, ms. */ socketStallMs: 10_000,
    /** Pipelined requests that may wait behind the one in progress on a connection; one more closes it. */ maxPipelined: 64,
    /** Grace for in-flight requests on SIGTERM before connections are cut. */
    shutdownTimeoutMs: 10_000,
    /** Honour X-Forwarded-For behind a proxy (the logged client address). */
    trustProxy: false,
    /** Queue board login (/admin/login): lifetime of its session cookie (Max-Age), seconds. */ adminSessionS: 8 * 3600,
    /** Wrong API keys (header or login form) per windowS seconds, per process, from one address, for one presented key and
     * from all addresses together; past one, wrong keys get 429 (0: no limit). A valid key is always accepted. */ keyFailures: { perAddress: 10, perKey: 10, total: 100, windowS: 900 },
    logLevel: /** @type {'fatal'|'error'|'warn'|'info'|'debug'|'silent'} */ ('info'),
    /**
     * Re-ranking of result lists (pipeline/match/rerank.js); each route's request options override these:
     * `collapse`, `duplicate_threshold`, `recency_half_life`, `max_per_site` (README "Related-list options").
     */
    rerank: {
      /** Near-duplicate collapsing on related lists (GET/POST …/related): the same story re-posted must not fill them. */
      collapseRelated: true,
      /** … on match lists (GET/POST /v1/match, scdv precompute): off, ads are not syndicated stories. */
      collapseMatch: false,
      /**
       * A result more similar than this to the query document or to a result ranked above it is a near-duplicate;
       * 0.8 measured on the hybrid layout (docs/relevance.md, `npm run bench:dups`). Pure SCDV (alpha 1): raise it.
       */
      duplicateThreshold: 0.8,
      /** Related lists (unless feedback=false) re-rank their first `pool` hits by cosine to q + weight · mean of their first `docs`: dev P@10 85.4 → 86.7 for ~1.2x the CPU (docs/relevance.md). */ relatedFeedback: { enabled: true, docs: 3, weight: 1, pool: 20 },
      /** w in score − |score| · w · (1 − 0.5^(age / recency_half_life)): an article one half-life old loses w/2. */
      recencyWeight: 0.5,
      /** Candidates searched when an option is on: poolFactor × (from + k), at least poolMin, at most maxK (doubled while short). */
      poolFactor: 2,
      poolMin: 20,
    },
    precompute: {
      /** Lifetime of a precomputed match list in Redis; past it the API searches live. */
      ttlSeconds: 86_400,
      /** Source documents per precompute job (jobs run in parallel on the `precompute` queue). */
      batchSize: 500,
      /** Concurrent searches per precompute worker. */
      concurrency: 2,
    },
  },
  /** Reader events (POST /v1/events, pipeline/events/): an append-only log of impressions and clicks. */
  events: {
    /** Folder of the log's segment files (null: <data dir>/events). */
    dir: /** @type {string|null} */ (null),
    /**
     * 'always': a batch is answered only once it is on disk (write + fdatasync, one per group of batches that
     * arrive together: group commit). 'never': answered once written to the OS (survives a killed server, not
     * a power cut). Measured in BENCHMARKS.md ("Reader events").
     */
    fsync: /** @type {'always'|'never'} */ ('always'),
    /** A segment file is closed and a new one started past this size, bytes; retention removes whole segments. */
    segmentBytes: 64 << 20,
    /** Segments whose newest event is older than this are deleted (0: keep by age forever). */
    maxAgeDays: 90,
    /** The log's total size: the oldest segments are deleted past it, bytes (0: no limit). */
    maxBytes: 4 * 1024 ** 3,
    /** Largest events request body (JSON or NDJSON), bytes. */
    bodyLimit: 4 << 20,
    /** Events per request. */
    maxBatch: 10_000,
    /** Results per impression (the list a widget showed). */
    maxItems: 100,
    /** Bytes waiting to be written before new batches are refused with 503 (memory stays bounded). */
    maxPendingBytes: 64 << 20,
    /** Bytes of event batches read, parsed and stored at once per process (declared Content-Length, else bodyLimit; one batch
     * always runs): more batches wait, their bodies unread, so that large ones neither stall other requests nor fill memory. */
    inFlightBytes: 8 << 20,
    /** Batches waiting for inFlightBytes; one more is answered 503 SCDV_SERVER_BUSY with Retry-After. */ waitingBatches: 32,
    /** `scdv report clicks`: width of a similarity band (scores 0.30-0.40 with 0.1). */
    bandWidth: 0.1,
    /** `scdv report clicks`: a cell (band, genre, arm) with fewer impressions is shown but never flagged. */
    minImpressions: 100,
  },
  /**
   * Arms: live comparison of methods. Each request goes to one arm, chosen by a hash of `user` (a hashed user id)
   * or else the page id, so that one reader keeps one arm; weights are relative. Methods (pipeline/events/arms.js):
   * 'hybrid' (the collection's own vectors), 'scdv' (the SCDV block alone) and 'lexical' (the TF-IDF block alone),
   * the last two only on collections indexed with the hybrid layout.
   */
  experiments: {
    /** Changing the salt reshuffles every reader between arms (start a new experiment). */
    salt: 'scdv-1',
    arms: /** @type {{name: string, method: 'hybrid'|'scdv'|'lexical', weight: number}[]} */ ([{ name: 'hybrid', method: 'hybrid', weight: 1 }]),
  },
});

/** @typedef {typeof DEFAULT_CONFIG} Config */

/** Defaults of `scdv` flags that are not config keys (shown by each command's --help). */
export const CLI_DEFAULTS = Object.freeze({
  /** scdv train --name */
  modelName: 'default',
  /** --collection of scdv index, precompute, explain, inspect doc */
  collection: 'articles',
  /** scdv eval --label-field: the corpus field holding each document's label */
  labelField: 'category',
  /** scdv inspect clusters --sort */
  clusterSort: 'cluster',
  /** scdv inspect clusters --words: top words shown per cluster (all of them with --cluster) */
  clusterWords: 8,
  /** scdv opensearch start --port (OpenSearch's own default HTTP port) */
  opensearchPort: 9200,
  /** scdv opensearch start --heap-mb: the JVM heap of the local node (tests use 512) */
  opensearchHeapMb: 1024,
});

/**
 * @typedef {object} Range
 * @property {number} min
 * @property {number} [max]
 * @property {boolean} [integer]
 * @property {boolean} [exclusiveMin] min itself is not allowed
 * @property {boolean} [nullable]
 */

/**
 * Allowed values of the training parameters, in one place: config validation and the CLI flags that set them
 * (--dims, --clusters, …) both check against this, so a bad value fails before any work, with one message.
 * workers/scdv/config.py checks the same parameters again on the Python side.
 * @type {Record<string, Range>}
 */
export const TRAIN_RANGES = {
  'word2vec.vector_size': { min: 1, max: 1000, integer: true },
  'word2vec.window': { min: 1, max: 100, integer: true },
  'word2vec.negative': { min: 0, max: 100, integer: true },
  'word2vec.sample': { min: 0, max: 1 },
  'word2vec.min_count': { min: 1, integer: true },
  'word2vec.epochs': { min: 1, max: 1000, integer: true },
  'word2vec.workers': { min: 1, max: 256, integer: true },
  'word2vec.seed': { min: 0, max: 2 ** 32 - 1, integer: true },
  'word2vec.sg': { min: 0, max: 1, integer: true },
  'word2vec.hs': { min: 0, max: 1, integer: true },
  'gmm.n_components': { min: 1, max: 1000, integer: true },
  'gmm.max_iter': { min: 1, integer: true },
  'gmm.tol': { min: 0, exclusiveMin: true },
  'gmm.reg_covar': { min: 0 },
  'gmm.seed': { min: 0, max: 2 ** 32 - 1, integer: true },
  'gmm.max_fit_words': { min: 1, integer: true },
  'gmm.n_init': { min: 1, max: 100, integer: true },
  'topics.prob_threshold': { min: 0, max: 1 },
  'topics.keep_fraction': { min: 0, max: 1, exclusiveMin: true, nullable: true },
  'topics.keep_count': { min: 1, integer: true, nullable: true },
  'topics.chunk_words': { min: 1, integer: true },
  'topics.idf_power': { min: -10, max: 10 },
};

/** @type {Record<string, string[]>} */
const TRAIN_CHOICES = {
  'gmm.covariance_type': ['tied', 'diag', 'full'],
  'gmm.init_params': ['kmeans', 'k-means++', 'random', 'random_from_data'],
  'gmm.dtype': ['float32', 'float64'],
  'topics.vector_norm': ['l2', 'raw'],
};

/** Keys of earlier versions, named in the error a config file that still uses them gets. */
const RENAMED_KEYS = /** @type {Record<string, string>} */ ({ 'server.embedWorkers': 'server.indexWorkers' });

/**
 * Deep-merge `override` into a copy of `base`, rejecting keys the base does not know.
 * @param {any} base
 * @param {any} override
 * @param {string} where dotted path, for error messages
 * @returns {any}
 */
function merge(base, override, where) {
  if (override === undefined) return structuredClone(base);
  const isPlain = (/** @type {any} */ v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isPlain(base)) {
    if (base !== null && override !== null && typeof base !== typeof override) {
      throw errors.CONFIG_INVALID(`${where} must be ${Array.isArray(base) ? 'an array' : `a ${typeof base}`}, got ${JSON.stringify(override)}`);
    }
    return structuredClone(override);
  }
  if (!isPlain(override)) throw errors.CONFIG_INVALID(`${where || 'config'} must be an object`);
  const out = structuredClone(base);
  for (const [k, v] of Object.entries(override)) {
    const key = `${where ? `${where}.` : ''}${k}`;
    if (!(k in base)) throw errors.CONFIG_INVALID(`unknown key ${key}${RENAMED_KEYS[key] ? ` (renamed to ${RENAMED_KEYS[key]})` : ''} (known: ${Object.keys(base).join(', ')})`);
    out[k] = merge(base[k], v, where ? `${where}.${k}` : k);
  }
  return out;
}

/**
 * Build the effective config: defaults <- JSON file <- overrides.
 * @param {{file?: string, overrides?: Record<string, any>}} [opts]
 * @returns {Config}
 */
export function loadConfig(opts = {}) {
  let cfg = merge(DEFAULT_CONFIG, undefined, '');
  if (opts.file) {
    let parsed;
    try {
      parsed = JSON.parse(fs.readFileSync(opts.file, 'utf8'));
    } catch (err) {
      throw errors.CONFIG_FILE_UNREADABLE(opts.file, /** @type {Error} */ (err).message).because(err);
    }
    cfg = merge(cfg, parsed, '');
  }
  const env = envOverrides(DEFAULT_CONFIG);
  if (env) cfg = merge(cfg, env, '');
  warnUnknownEnv(DEFAULT_CONFIG);
  if (opts.overrides) cfg = merge(cfg, opts.overrides, '');
  validate(cfg);
  return cfg;
}

/** @param {Config} cfg */
function validate(cfg) {
  const positive = /** @type {const} */ ([
    ['corpus.maxDocumentBytes', cfg.corpus.maxDocumentBytes], ['tokenize.shardSize', cfg.tokenize.shardSize],
    ['tokenize.workers', cfg.tokenize.workers], ['tokenize.batchSize', cfg.tokenize.batchSize],
    ['queue.attempts', cfg.queue.attempts], ['tokenizer.maxTokenBytes', cfg.tokenizer.maxTokenBytes],
    ['index.writeBatchSize', cfg.index.writeBatchSize], ['index.shardSize', cfg.index.shardSize], ['index.workers', cfg.index.workers],
    ['index.queuedShards', cfg.index.queuedShards], ['queue.keepCompleted.ageS', cfg.queue.keepCompleted.ageS], ['queue.keepCompleted.count', cfg.queue.keepCompleted.count],
    ['queue.keepFailed.ageS', cfg.queue.keepFailed.ageS], ['queue.keepFailed.count', cfg.queue.keepFailed.count],
  ]);
  for (const [name, v] of positive) {
    if (!Number.isInteger(v) || v < 1) throw errors.CONFIG_INVALID(`${name} must be a positive integer, got ${v}`);
  }
  for (const [name, v] of [['embed.damping', cfg.embed.damping], ['embed.hybrid.damping', cfg.embed.hybrid.damping], ['eval.classify.damping', cfg.eval.classify.damping]]) {
    if (!['binary', 'log', 'raw', 'saturate'].includes(v)) throw errors.CONFIG_INVALID(`${name} must be binary, log, raw or saturate, got ${v}`);
  }
  validateEmbed(cfg);
  for (const [k, v] of /** @type {[string, {stopwords: string, idfPower: number}][]} */ ([['embed.hybrid', cfg.embed.hybrid], ['eval.classify', cfg.eval.classify]])) if (!['keep', 'drop'].includes(v.stopwords)) throw errors.CONFIG_INVALID(`${k}.stopwords must be keep or drop, got ${v.stopwords}`);
  for (const [k, v] of /** @type {[string, {idfPower: number}][]} */ ([['embed.hybrid', cfg.embed.hybrid], ['eval.classify', cfg.eval.classify]])) if (!Number.isFinite(v.idfPower)) throw errors.CONFIG_INVALID(`${k}.idfPower must be a finite number, got ${v.idfPower}`);
  const cls = cfg.eval.classify;
  if (!(cls.alpha >= 0 && cls.alpha <= 1)) throw errors.CONFIG_INVALID(`eval.classify.alpha must be in [0, 1], got ${cls.alpha}`);
  if (!(cls.keepFraction > 0 && cls.keepFraction <= 1)) throw errors.CONFIG_INVALID(`eval.classify.keepFraction must be in (0, 1], got ${cls.keepFraction}`);
  if (!(cfg.embed.saturationK > 0)) throw errors.CONFIG_INVALID(`embed.saturationK must be > 0, got ${cfg.embed.saturationK}`);
  if (!['ja', 'en'].includes(cfg.tokenizer.lang)) throw errors.CONFIG_INVALID(`tokenizer.lang must be ja or en, got ${cfg.tokenizer.lang}`);
  if (!['none', 'hiragana', 'non-kanji', 'all'].includes(cfg.tokenizer.singleChar)) {
    throw errors.CONFIG_INVALID(`tokenizer.singleChar must be none, hiragana, non-kanji or all, got ${cfg.tokenizer.singleChar}`);
  }
  if (!(cfg.corpus.warnRejectedFraction >= 0 && cfg.corpus.warnRejectedFraction <= 1)) {
    throw errors.CONFIG_INVALID(`corpus.warnRejectedFraction must be in [0, 1], got ${cfg.corpus.warnRejectedFraction}`);
  }
  if (!inRange(cfg.workerProcesses.maxPerCore, { min: 1, integer: true })) {
    throw errors.CONFIG_INVALID(`workerProcesses.maxPerCore must be a positive integer, got ${cfg.workerProcesses.maxPerCore}`);
  }
  validateTrain(cfg.train, TRAIN_RANGES, TRAIN_CHOICES);
  validateServer(cfg.server);
  validateEvents(cfg.events, cfg.experiments);
  validateStore(cfg.store);
}

/** @param {Config['server']} s */
function validateServer(s) {
  const positive = /** @type {const} */ ([
    ['server.workers', s.workers], ['server.bodyLimit', s.bodyLimit], ['server.bulkBodyLimit', s.bulkBodyLimit],
    ['server.maxK', s.maxK], ['server.defaultK', s.defaultK], ['server.modelPollMs', s.modelPollMs],
    ['server.shutdownTimeoutMs', s.shutdownTimeoutMs], ['server.precompute.ttlSeconds', s.precompute.ttlSeconds],
    ['server.precompute.batchSize', s.precompute.batchSize], ['server.precompute.concurrency', s.precompute.concurrency],
    ['server.requestTimeoutMs', s.requestTimeoutMs], ['server.headersTimeoutMs', s.headersTimeoutMs],
    ['server.keepAliveTimeoutMs', s.keepAliveTimeoutMs], ['server.syncBulkMaxDocuments', s.syncBulkMaxDocuments],
    ['server.socketBufferBytes', s.socketBufferBytes], ['server.socketStallMs', s.socketStallMs], ['server.maxPipelined', s.maxPipelined],
    ['server.embedLargeTextChars', s.embedLargeTextChars], ['server.embedLargeQueue', s.embedLargeQueue],
  ]);
  for (const [name, v] of positive) {
    if (!Number.isInteger(v) || v < 1) throw errors.CONFIG_INVALID(`${name} must be a positive integer, got ${v}`);
  }
  if (!Number.isInteger(s.port) || s.port < 0 || s.port > 65535) throw errors.CONFIG_INVALID(`server.port must be 0-65535, got ${s.port}`);
  validateMatchThreshold(s);
  validateBrandSafety(s.brandSafety);
  for (const [name, v] of /** @type {const} */ ([['server.idleTimeoutMs', s.idleTimeoutMs], ['server.maxConnections', s.maxConnections],
    ['server.maxConnectionsPerClient', s.maxConnectionsPerClient], ['server.relatedCacheEntries', s.relatedCacheEntries], ['server.relatedCacheBytes', s.relatedCacheBytes]])) {
    if (!Number.isInteger(v) || v < 0) throw errors.CONFIG_INVALID(`${name} must be 0 (no limit) or more, got ${v}`);
  }
  if (s.headersTimeoutMs > s.requestTimeoutMs) {
    throw errors.CONFIG_INVALID(`server.headersTimeoutMs (${s.headersTimeoutMs}) must not exceed server.requestTimeoutMs (${s.requestTimeoutMs})`);
  }
  if (!Number.isInteger(s.indexWorkers) || s.indexWorkers < 0) throw errors.CONFIG_INVALID(`server.indexWorkers must be 0 or more, got ${s.indexWorkers}`);
  if (!Number.isInteger(s.embedThreads) || s.embedThreads < 0 || s.embedThreads > 64) throw errors.CONFIG_INVALID(`server.embedThreads must be an integer 0-64, got ${s.embedThreads}`);
  if (s.writeEmbedThreads !== null && !inRange(s.writeEmbedThreads, { min: 0, max: 64, integer: true })) throw errors.CONFIG_INVALID(`server.writeEmbedThreads must be a whole number from 0 to 64 or null, got ${JSON.stringify(s.writeEmbedThreads)}`);
  if (!inRange(s.writeEmbedNice, { min: 0, max: 19, integer: true })) throw errors.CONFIG_INVALID(`server.writeEmbedNice must be a whole number from 0 to 19, got ${JSON.stringify(s.writeEmbedNice)}`);
  validateWritePace(s.writePace);
  validateKeyFailures(s.keyFailures);
  if (s.maxK > 1000) throw errors.CONFIG_INVALID(`server.maxK must be at most 1000, got ${s.maxK}`);
  if (s.defaultK > s.maxK) throw errors.CONFIG_INVALID(`server.defaultK (${s.defaultK}) must not exceed server.maxK (${s.maxK})`);
  s.apiKeyHashes.forEach((h, i) => {
    // The value itself stays out of the message: it is a secret's digest.
    if (typeof h !== 'string' || !/^[0-9a-f]{64}$/i.test(h)) throw errors.CONFIG_INVALID(`server.apiKeyHashes[${i}] must be a SHA-256 digest in hex (64 characters)`);
  });
  s.bulkFileRoots.forEach((r, i) => {
    if (typeof r !== 'string' || r === '') throw errors.CONFIG_INVALID(`server.bulkFileRoots[${i}] must be a folder path`);
  });
  s.corsOrigins.forEach((o, i) => {
    if (typeof o !== 'string' || !(o === '*' || /^https?:\/\/[^/\s]+$/.test(o))) {
      throw errors.CONFIG_INVALID(`server.corsOrigins[${i}] must be "*" or an origin such as https://example.com, got ${JSON.stringify(o)}`);
    }
  });
  validateRerank(s.rerank);
  if (!['fast', 'exact'].includes(s.searchMode)) throw errors.CONFIG_INVALID(`server.searchMode must be fast or exact, got ${s.searchMode}`);
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'silent'].includes(s.logLevel)) {
    throw errors.CONFIG_INVALID(`server.logLevel must be fatal, error, warn, info, debug or silent, got ${s.logLevel}`);
  }
  if (s.model !== null) validateModelName(s.model);
}

/**
 * Stable short hash of any JSON-able value (key order independent), used to key reusable outputs.
 * @param {unknown} value
 */
export function hashOf(value) {
  /** @type {(v: any) => any} */
  const canon = (v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])]))
      : Array.isArray(v) ? v.map(canon) : v;
  return crypto.createHash('sha256').update(JSON.stringify(canon(value))).digest('hex').slice(0, 16);
}
