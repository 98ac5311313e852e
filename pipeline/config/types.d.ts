// Generated from pipeline/config/schema.js by `npm run docs:config`; tests/config-env.test.js fails when it is stale.

/** The loaded configuration (pipeline/config.js loadConfig). */
export type Config = {
  /** How texts become tokens (pipeline/tokenizer/). */
  tokenizer: {
    /** 'ja': MeCab with the dictionary below; 'en': a plain regex tokeniser for English text (lower case, an English stop list; pipeline/tokenizer/english.js), for checks against published English benchmarks (`--lang en`). */
    lang: 'ja' | 'en';
    /** 'default' (what setup built: neologd, else ipadic), 'neologd', 'ipadic', or a compiled dictionary folder. */
    dictionary: string;
    /** Compiled user dictionaries (.dic), e.g. from `scdv dict compile`. */
    userDictionaries: string[];
    /** Feature prefixes of kept parts of speech; the longest matching prefix of keepPos ∪ dropPos decides. */
    keepPos: string[];
    /** Feature prefixes of dropped parts of speech. */
    dropPos: string[];
    /** Single-character tokens to drop: hiragana only, anything but kanji (default), all, or none. */
    singleChar: 'none' | 'hiragana' | 'non-kanji' | 'all';
    /** Drop tokens of digits only. */
    dropDigitsOnly: boolean;
    /** A number followed by one or two kanji/kana (6月, 33歳, 100万円): dates and counts, not topics. */
    dropNumberCounters: boolean;
    /** Drop tokens of symbols only. */
    dropSymbolsOnly: boolean;
    /** ASCII A-Z to a-z in tokens. */
    lowercase: boolean;
    /** Tokens longer than this (UTF-8 bytes) are dropped. */
    maxTokenBytes: number;
    /** Katakana-only tokens of 4+ characters drop a final ー: コンピューター and コンピュータ are one token. */
    foldLongVowels: boolean;
    /** Adjacent kept nouns also give their concatenation as one more token (新型 コロナ -> + 新型コロナ). */
    joinNouns: boolean;
    /** Stop words dropped from the tokens. */
    stopwords: {
      /** Families are the files dictionaries/stopwords/<family>.txt; null means all of them. */
      families: string[] | null;
      /** Further stop words of your own. */
      extra: string[];
    };
  };
  /** Reading a corpus (JSON Lines). */
  corpus: {
    /** A line longer than this is rejected (and skipped without being held in memory). */
    maxDocumentBytes: number;
    /** A run that rejects more than this fraction of the corpus's lines says so in its summary (a run that rejects every line fails whatever this is: a corpus with nothing usable is an error). */
    warnRejectedFraction: number;
  };
  /** Local worker processes of `scdv tokenize`, `scdv train` and `scdv index` (--workers, tokenize/index.workers). */
  workerProcesses: {
    /** At most this many per core (os.availableParallelism()): a larger count is capped with a warning. */
    maxPerCore: number;
    /** true (or --allow-many-workers): start the requested count however many cores there are. */
    allowMany: boolean;
  };
  /** The Bull job queues (pipeline/queue/). */
  queue: {
    /** Bull key prefix; the braces are a Redis Cluster hash tag that keeps a queue's keys in one slot. */
    prefix: string;
    /** Tries per job before it fails for good, backoffMs apart (doubling). */
    attempts: number;
    /** Wait before a failed job's first retry, ms. */
    backoffMs: number;
    /** A job whose worker stops renewing its lock for this long is taken over by another worker, ms. */
    lockDurationMs: number;
    /** How often workers look for jobs whose lock expired, ms. */
    stalledIntervalMs: number;
    /** A job taken over this many times fails (a job that kills its worker does not loop). */
    maxStalledCount: number;
    /** Completed jobs kept per queue (Bull Board shows what ran): for up to ageS seconds, at most count of them. */
    keepCompleted: {
      /** Seconds a completed job is kept. */
      ageS: number;
      /** Completed jobs kept at most. */
      count: number;
    };
    /** Failed jobs kept per queue (Bull Board shows what ran): for up to ageS seconds, at most count of them. */
    keepFailed: {
      /** Seconds a failed job is kept. */
      ageS: number;
      /** Failed jobs kept at most. */
      count: number;
    };
  };
  /** The Python training stages' parameters (workers/scdv/config.py checks them again). */
  train: {
    /** Word vectors (gensim Word2Vec parameters of the same names). */
    word2vec: {
      /** Dimensions of a word vector (--dims). */
      vector_size: number;
      /** Context window, words each side. */
      window: number;
      /** Negative samples per positive one (0: none). */
      negative: number;
      /** Down-sampling threshold of frequent words. */
      sample: number;
      /** Words seen fewer times are left out of the vocabulary. */
      min_count: number;
      /** Passes over the corpus. */
      epochs: number;
      /** Training threads. */
      workers: number;
      /** Random seed (a fixed seed and one worker train the same vectors). */
      seed: number;
      /** 1: skip-gram, 0: CBOW. */
      sg: number;
      /** 1: hierarchical softmax, 0: negative sampling. */
      hs: number;
      /** Record the training loss (shown in the training log). */
      compute_loss: boolean;
    };
    /** The Gaussian mixture that clusters the word vectors. */
    gmm: {
      /** Clusters K (--clusters; --clusters auto is null). */
      n_components: number | null;
      /** Covariance of the components. */
      covariance_type: 'tied' | 'diag' | 'full';
      /** EM iterations at most. */
      max_iter: number;
      /** EM stops when the lower bound gains less than this. */
      tol: number;
      /** Added to the covariance diagonal. */
      reg_covar: number;
      /** How the components start. */
      init_params: 'kmeans' | 'k-means++' | 'random' | 'random_from_data';
      /** Random seed of the initialisation. */
      seed: number;
      /** Words the mixture is fitted on at most (a sample of the vocabulary). */
      max_fit_words: number;
      /** Floating-point type of the fit. */
      dtype: 'float32' | 'float64';
      /** Fits from different starts; the best is kept. */
      n_init: number;
    };
    /** Word-topic vectors: each word vector spread over its clusters by P(k|w). */
    topics: {
      /** P(k|w) below this counts as 0. */
      prob_threshold: number;
      /** Entries kept per word-topic vector, as a fraction of its width (keep_count wins when set). */
      keep_fraction: number | null;
      /** Entries kept per word-topic vector (null: keep_fraction). */
      keep_count: number | null;
      /** Words computed per chunk (bounds memory). */
      chunk_words: number;
      /** Word vectors normalised to unit length first, or raw. */
      vector_norm: 'l2' | 'raw';
      /** wtv(w) = idf(w)^idf_power · P(k|w)·v_w (1 in the SCDV paper). */
      idf_power: number;
    };
  };
  /** Document vectors (pipeline/embed/): the same settings serve batch indexing and requests. */
  embed: {
    /** Term repetition damping: 'binary' (each distinct word once), 'log' (1 + ln tf), 'raw' (tf), or 'saturate' (tf (k + 1) / (tf + k), k = embed.saturationK). */
    damping: 'binary' | 'log' | 'raw' | 'saturate';
    /** k of the 'saturate' damping. */
    saturationK: number;
    /** Entries kept per document vector, by magnitude: keepCount when set, else this fraction of the width. */
    keepFraction: number;
    /** Entries kept per document vector (null: keepFraction). */
    keepCount: number | null;
    /** Hybrid layout: the SCDV block weighted α and a lexical TF-IDF block (damped tf, the model's IDF) weighted 1 − α in one sparse vector, so one dot product is α·cos(SCDV) + (1 − α)·cos(TF-IDF). alpha 1: pure SCDV (width K·d); below 1 the width grows by the vocabulary size. */
    hybrid: {
      /** The SCDV block's weight α. */
      alpha: number;
      /** Only the heaviest words of the lexical block are kept (null: all the document's known words). */
      maxTerms: number | null;
      /** The lexical block's tf damping (as embed.damping). */
      damping: 'binary' | 'log' | 'raw' | 'saturate';
      /** 'keep': the lexical block's words include the stop words (the model's lexicon.txt; 'drop' for a model without one). */
      stopwords: 'keep' | 'drop';
      /** The lexical block's weight is damp(tf) · idf^idfPower. */
      idfPower: number;
    };
  };
  /** Ad collections (short copy that /v1/match ranks for a page) get this α and keepFraction (keepCount null) over `embed` when first indexed or written, then keep their recorded layout; pages keep `embed`'s. A page–ad score weighs the SCDV cosine by √(α_page·α_ad). */
  adEmbed: {
    /** The collections that hold ads. */
    collections: string[];
    /** The ads' SCDV block weight α in the hybrid layout (below 1: an ad of a hybrid page's width). */
    alpha: number;
    /** The ads' fraction of SCDV entries kept. */
    keepFraction: number;
    /** Each ad's stored vector is its own plus weight/neighbours × the sum of the vectors of its `neighbours` nearest pages of `from` (by dot product with its own vector, not renormalised): the ad borrows the words and topics of the pages it would be shown on. Its own vector is kept in a companion collection (`<ads>__own`), so the ads are expanded again when `from` is re-indexed (docs/matching.md § Ad expansion). */
    expand: {
      /** The page collection the ads borrow from. */
      from: string;
      /** Pages borrowed from per ad. */
      neighbours: number;
      /** The borrowed pages' total weight against the ad's own vector. */
      weight: number | null;
    };
  };
  /** `scdv eval --classify`: the vectors of the linear classifier, not the served embed's. */
  eval: {
    /** Settings of the classifier's vectors (as embed.hybrid). */
    classify: {
      /** The SCDV block's weight α. */
      alpha: number;
      /** Entries kept per vector, as a fraction of the width. */
      keepFraction: number;
      /** The lexical block's tf damping (as embed.damping). */
      damping: 'binary' | 'log' | 'raw' | 'saturate';
      /** 'keep': the lexical block's words include the stop words (the model's lexicon.txt; 'drop' for a model without one). */
      stopwords: 'keep' | 'drop';
      /** The lexical block's weight is damp(tf) · idf^idfPower. */
      idfPower: number;
    };
  };
  /** `scdv index`: a corpus embedded into a collection of the store. */
  index: {
    /** Documents per store write: each write is one durable (fsynced) batch. */
    writeBatchSize: number;
    /** Corpus lines per queue job (a shard: the unit of reuse when re-run). */
    shardSize: number;
    /** Local worker processes of `scdv index` (--workers). */
    workers: number;
    /** Shard jobs in Redis at a time when they carry their documents (store.backend "opensearch": workers may run on other hosts): each holds its shard's bytes, so this bounds Redis memory to about this many shards. */
    queuedShards: number;
  };
  /** Where document vectors live (pipeline/store/): one store per model, opened by openModelStore(model, config). */
  store: {
    /** 'native': the embedded store in storeDir()/<model>/ (one machine, what `npm start` uses); 'opensearch': an OpenSearch cluster (store.opensearch), shared by servers and index workers on several hosts. */
    backend: 'native' | 'opensearch';
    /** The OpenSearch cluster of store.backend "opensearch". */
    opensearch: {
      /** Node URLs of the cluster. */
      nodes: string[];
      /** Basic authentication: the user (a password is then needed too). */
      username: string | null;
      /** Basic authentication: the password. */
      password: string | null;
      /** TLS to the cluster. */
      tls: {
        /** PEM file of the CA that signed the cluster's certificates (null: the system's CAs). */
        ca: string | null;
        /** Refuse a cluster whose certificate does not verify. */
        rejectUnauthorized: boolean;
      };
      /** Every index this project creates starts with this. */
      indexPrefix: string;
      /** Primary shards of each collection's index (fixed when the index is created). */
      shards: number;
      /** Replicas of each collection's index (fixed when the index is created). */
      replicas: number;
      /** A request without an answer for this long fails and is retried on another node (maxRetries times), ms. */
      requestTimeoutMs: number;
      /** Retries of a failed request on other nodes. */
      maxRetries: number;
      /** gzip request bodies. */
      compression: boolean;
      /** Documents per bulk request of `scdv index` (larger requests amortise the round trip). */
      bulkDocs: number;
      /** `scdv index` ends by merging the collection's index to one segment a shard (after a commit and its retention leases: pipeline/store/opensearch/compact.js) when it wrote at least this many documents and at least half of the collection's; 0: never. */
      compactAfterDocs: number;
      /** How often a process asks the cluster for a collection's version (cache invalidation across hosts), ms. */
      versionPollMs: number;
      /** Documents re-ranked exactly in the engine per shard and search. The search wants T = max(min, perK·k) candidates in all; on s shards each re-ranks its share T/s plus `spread` standard deviations of that share (the ids are spread over the shards at random), plus perShard·(s − 1); at most max. One shard: T. */
      candidates: {
        /** Candidates at least, in all. */
        min: number;
        /** Candidates per result asked for. */
        perK: number;
        /** Standard deviations of a shard's share of the candidates added to it (binomial: √(T/s · (1 − 1/s))). */
        spread: number;
        /** Candidates added per shard beyond the first. */
        perShard: number;
        /** Candidates at most (at least candidates.min). */
        max: number;
      };
      /** Postings a fast search's candidate terms may reach: max(min, fraction of the collection's postings) (store/opensearch/search.js). */
      postingsBudget: {
        /** Postings at least. */
        min: number;
        /** Share of the collection's postings. */
        fraction: number;
      };
      /** Query terms sent as term clauses (the largest by magnitude): the cluster's max_clause_count caps it. */
      maxQueryTerms: number;
    };
  };
  /** `scdv tokenize` (and the tokenising of `scdv train`). */
  tokenize: {
    /** Corpus lines per queue job. */
    shardSize: number;
    /** Local worker processes of `scdv tokenize` and `scdv train` (--workers). */
    workers: number;
    /** Documents sent to the native tokenizer per call (one call in flight per worker keeps one core busy). */
    batchSize: number;
    /** After parsing 1/32 of the MeCab dictionary's index in text, a process copies the index into 2 MB pages (Linux THP); false: only the file's shared pages. */
    hugePages: boolean;
  };
  /** `scdv serve`, the REST server (server/). */
  server: {
    /** Address to listen on. */
    host: string;
    /** Port to listen on. */
    port: number;
    /** Processes serving the one port (node:cluster); they share the store on disk. */
    workers: number;
    /** Model served until one is activated through the API (null: the newest model whose store has collections). */
    model: string | null;
    /** SHA-256 hex digests of the API keys allowed on write and admin routes; keys themselves are never stored. */
    apiKeyHashes: string[];
    /** Read routes answer without a key; false: reads need a key too (health checks stay open). */
    openReads: boolean;
    /** Origins allowed by CORS ('*' for any); empty: no CORS headers, browsers on other origins are refused. */
    corsOrigins: string[];
    /** Largest JSON request body, bytes (413 above). */
    bodyLimit: number;
    /** Largest JSON Lines body of a bulk upload, bytes: it is streamed to a file, never held in memory. */
    bulkBodyLimit: number;
    /** Folders whose files a bulk request may name by path, besides <dataDir()>/imports (links are resolved first). */
    bulkFileRoots: string[];
    /** A bulk job ended this long ago, hours, has its folder (its record and shard results, what GET /v1/jobs/ID answers from) removed; its id then answers 404. Looked at on start and every hour. */
    bulkJobRetentionHours: number;
    /** Most documents of a synchronous bulk (documents:bulk?sync=true, answered per item; above: 413). */
    syncBulkMaxDocuments: number;
    /** Upper bound of `k` on every route. */
    maxK: number;
    /** `k` of a request that names none (at most maxK). */
    defaultK: number;
    /** /v1/match's default min_score (docs/matching.md). */
    matchMinScore: number | null;
    /** /v1/match's default min_known_share: a page knowing a smaller share of its distinct words (found in the model) gets no ads (docs/matching.md, "The known-word rule"). */
    matchMinKnownShare: number | null;
    /** The derived threshold of a match target collection (docs/matching.md). */
    matchThreshold: {
      /** This quantile of unrelated page–ad scores. */
      quantile: number;
      /** The threshold of a collection never derived. */
      fallback: number;
      /** The derived min_known_share: this times the median known share of the source collection's pages (those written with their word counts). */
      knownShareRatio: number;
    };
    /** Brand safety of /v1/match: pages close to sensitive topics get no ads (docs/matching.md, "Brand-safety controls"). */
    brandSafety: {
      /** A page whose vector scores at least this (dot product) with one of `seeds` gets no ads. */
      threshold: number | null;
      /** The sensitive topics: {topic, text}, each text embedded by the model as a page is (nouns: a shared verb would match any page). */
      seeds: {
        /** The topic's name (in answers). */
        topic: string;
        /** Words of the topic. */
        text: string;
      }[];
      /** Page collections with settings of their own over the two above (threshold null: off for that collection); each named once. */
      collections: {collection: string, threshold?: number | null, seeds?: {topic: string, text: string}[]}[];
    };
    /** Threads per server process that embed request texts (PUT, related for a text, similarity) with the batch embedder, so that a long text never stalls the event loop; each opens the model and a MeCab tagger of its own. */
    embedThreads: number;
    /** Threads (when embedThreads > 0) that embed documents written through the API, at writeEmbedNice. */
    writeEmbedThreads: number | null;
    /** Niceness (Linux) of the writeEmbedThreads threads (SCHED_BATCH), above the event loop's (a server started under nice keeps the order): above 0 they yield to the event loop and the request-text threads. */
    writeEmbedNice: number;
    /** A request text (title + body) of more characters is large: large texts take at most embedThreads − 1 threads (all when 1) and wait behind small ones. */
    embedLargeTextChars: number;
    /** Large texts waiting for a thread; one more is answered 503 with Retry-After. */
    embedLargeQueue: number;
    /** While searches are in flight, a written document's embedding takes at most `share` of a core (checked every sliceUs) for its first budgetMs (Linux; thread_pacing.cc). */
    writePace: {
      /** How often the share is checked. */
      sliceUs: number;
      /** Share of a core a paced embedding takes. */
      share: number;
      /** The first part of an embedding that is paced. */
      budgetMs: number;
    };
    /** Local `embed` worker processes `scdv serve` starts for bulk jobs. */
    indexWorkers: number;
    /** How often every process reads the active-model record (the file; on OpenSearch, the shared Redis, where a pub/sub message makes servers follow at once and this poll is the safety net), ms. */
    modelPollMs: number;
    /** Related-by-id results kept per process, each valid while its collection is unchanged, kept from their second ask (0: no cache). */
    relatedCacheEntries: number;
    /** … and their bytes at most (serialised answers and keys), least recently used evicted first. */
    relatedCacheBytes: number;
    /** Search mode passed to the store for live queries. */
    searchMode: 'fast' | 'exact';
    /** Longest time to receive a whole request, headers and body, ms: past it the client gets 408 and the connection closes. Raise it for large bulk uploads over slow links, or send those as {"path"}. */
    requestTimeoutMs: number;
    /** Longest time to receive the request line and headers, ms (at most requestTimeoutMs). */
    headersTimeoutMs: number;
    /** A connection that sends and receives nothing for this long is closed, ms. */
    idleTimeoutMs: number;
    /** An idle keep-alive connection is closed after this long without a new request, ms. */
    keepAliveTimeoutMs: number;
    /** Open connections per server process; at the cap, the idlest connection of the client with the most is closed to admit a new one, else the new one is answered 503. */
    maxConnections: number;
    /** … per client address (an IPv6 /64), the same way. Behind a proxy every client is the proxy: raise it. */
    maxConnectionsPerClient: number;
    /** A connection's next request waits while more bytes than this are unwritten to it (its client is not reading). */
    socketBufferBytes: number;
    /** … and the connection is closed when those bytes do not go down for this long, ms. */
    socketStallMs: number;
    /** Pipelined requests that may wait behind the one in progress on a connection; one more closes it. */
    maxPipelined: number;
    /** Grace for in-flight requests on SIGTERM before connections are cut, ms. */
    shutdownTimeoutMs: number;
    /** Honour X-Forwarded-For behind a proxy (the logged client address). */
    trustProxy: boolean;
    /** Queue board login (/admin/login): lifetime of its session cookie (Max-Age), seconds. */
    adminSessionS: number;
    /** Wrong API keys (header or login form) per windowS seconds, per process; past one of these, wrong keys get 429. A valid key is always accepted. */
    keyFailures: {
      /** From one address. */
      perAddress: number;
      /** For one presented key. */
      perKey: number;
      /** From all addresses together. */
      total: number;
      /** The window the counts are over. */
      windowS: number;
    };
    /** Level of the request log. */
    logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'silent';
    /** Re-ranking of result lists (pipeline/match/rerank.js); each route's request options override these: `collapse`, `duplicate_threshold`, `recency_half_life`, `max_per_site` (README "Related-list options"). */
    rerank: {
      /** Near-duplicate collapsing on related lists (GET/POST …/related): the same story re-posted must not fill them. */
      collapseRelated: boolean;
      /** … on match lists (GET/POST /v1/match, scdv precompute): off, ads are not syndicated stories. */
      collapseMatch: boolean;
      /** A result more similar than this to the query document or to a result ranked above it is a near-duplicate (pure SCDV, alpha 1: raise it). */
      duplicateThreshold: number;
      /** Related lists (unless feedback=false) re-rank their first `pool` hits by cosine to q + weight · mean of their first `docs`. */
      relatedFeedback: {
        /** Related lists use it unless a request says feedback=false. */
        enabled: boolean;
        /** Top hits averaged into the query. */
        docs: number;
        /** Weight of their mean. */
        weight: number;
        /** Candidates re-scored. */
        pool: number;
      };
      /** w in score − |score| · w · (1 − 0.5^(age / recency_half_life)): an article one half-life old loses w/2. */
      recencyWeight: number;
      /** Candidates searched when an option is on: poolFactor × (from + k), at least poolMin, at most maxK (doubled while short). */
      poolFactor: number;
      /** Candidates searched at least when an option is on. */
      poolMin: number;
    };
    /** Precomputed match lists (`scdv precompute`). */
    precompute: {
      /** Lifetime of a precomputed match list in Redis; past it the API searches live. */
      ttlSeconds: number;
      /** Source documents per precompute job (jobs run in parallel on the `precompute` queue). */
      batchSize: number;
      /** Concurrent searches per precompute worker. */
      concurrency: number;
    };
  };
  /** Reader events (POST /v1/events, pipeline/events/): an append-only log of impressions and clicks. */
  events: {
    /** Folder of the log's segment files (null: <data dir>/events). */
    dir: string | null;
    /** 'always': a batch is answered only once it is on disk (write + fdatasync, one per group of batches that arrive together: group commit); 'never': once written to the OS (survives a killed server, not a power cut). */
    fsync: 'always' | 'never';
    /** A segment file is closed and a new one started past this size, bytes; retention removes whole segments. */
    segmentBytes: number;
    /** Segments whose newest event is older than this are deleted. */
    maxAgeDays: number;
    /** The log's total size: the oldest segments are deleted past it, bytes. */
    maxBytes: number;
    /** Largest events request body (JSON or NDJSON), bytes. */
    bodyLimit: number;
    /** Events per request. */
    maxBatch: number;
    /** Results per impression (the list a widget showed). */
    maxItems: number;
    /** Bytes waiting to be written before new batches are refused with 503 (memory stays bounded). */
    maxPendingBytes: number;
    /** Bytes of event batches read, parsed and stored at once per process (declared Content-Length, else bodyLimit; one batch always runs): more batches wait with their bodies unread, so that large ones neither stall other requests nor fill memory. */
    inFlightBytes: number;
    /** Batches waiting for inFlightBytes; one more is answered 503 SCDV_SERVER_BUSY with Retry-After. */
    waitingBatches: number;
    /** `scdv report clicks`: width of a similarity band (scores 0.30-0.40 with 0.1). */
    bandWidth: number;
    /** `scdv report clicks`: a cell (band, genre, arm) with fewer impressions is shown but never flagged. */
    minImpressions: number;
  };
  /** Arms: live comparison of methods. Each request goes to one arm, chosen by a hash of `user` (a hashed user id) or else the page id, so that one reader keeps one arm; weights are relative. Methods (pipeline/events/arms.js): 'hybrid' (the collection's own vectors), 'scdv' (the SCDV block alone) and 'lexical' (the TF-IDF block alone), the last two only on collections indexed with the hybrid layout. */
  experiments: {
    /** Changing the salt reshuffles every reader between arms (start a new experiment). */
    salt: string;
    /** The arms, each {name, method, weight}; names distinct. */
    arms: {
      /** The arm's name (in events and reports). */
      name: string;
      /** How its lists are searched. */
      method: 'hybrid' | 'scdv' | 'lexical';
      /** Its relative share of readers. */
      weight: number;
    }[];
  };
};

/** Options of the native store engine (pipeline/store/engine-state.js DEFAULT_ENGINE_OPTIONS). */
export type EngineOptions = {
  /** Flush when the WAL holds this many operations. */
  flushDocs: number;
  /** … or when its oldest operation is this old, ms. */
  flushAgeMs: number;
  /** Readers look at CURRENT and the WAL at most this often (on use), ms. */
  refreshMs: number;
  /** Period of the background check (refresh, age-based flush), ms. */
  maintenanceMs: number;
  /** Flush in the background by flushDocs and flushAgeMs. */
  autoFlush: boolean;
  /** Merge segments in the background by maxSegments. */
  autoMerge: boolean;
  /** More segments than this trigger a background merge. */
  maxSegments: number;
  /** Segments merged at once by the background policy (the smallest ones). */
  mergeFactor: number;
  /** Posting-list tiers of new segments (cumulative shares by |value|, increasing, ending with 1). */
  tiers: number[];
  /** Posting lists shorter than this are not split into tiers. */
  minTierList: number;
  /** Default 'fast' search budget: share of the query's contribution mass read (its lists by impact). */
  budget: number;
  /** Default 'fast' candidates rescored exactly per segment (at least 3k are). */
  candidates: number;
  /** Default 'fast' floor: postings read per segment whatever the budget. */
  minPostings: number;
  /** Called with background flush/merge failures (null: a process warning). */
  onBackgroundError: ((err: Error) => void) | null;
};

/** Defaults of command-line flags that are not config keys (pipeline/config.js CLI_DEFAULTS). */
export type CliDefaults = {
  /** scdv train --name. */
  modelName: string;
  /** --collection of scdv index, precompute, explain, inspect doc. */
  collection: string;
  /** scdv eval --label-field: the corpus field holding each document's label. */
  labelField: string;
  /** scdv inspect clusters --sort. */
  clusterSort: 'cluster' | 'coherence' | 'size';
  /** scdv inspect clusters --words: top words shown per cluster (all of them with --cluster). */
  clusterWords: number;
  /** scdv opensearch start --port (OpenSearch's own default HTTP port). */
  opensearchPort: number;
  /** scdv opensearch start --heap-mb: the JVM heap of the local node (tests use 512). */
  opensearchHeapMb: number;
};
