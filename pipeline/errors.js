// The catalogue of errors the pipeline raises on purpose: one code, one message template, one HTTP status.
// Anything else that escapes is a bug. Templates use %s placeholders, filled in order. An error that wraps another
// keeps it as `cause` (`errors.X(...).because(err)`). The per-line issue codes of corpora (rejected.jsonl, bulk-job
// status) are not errors: they have their own catalogue, pipeline/line-issues.js.

export class ScdvError extends Error {
  /**
   * @param {string} code stable identifier, e.g. SCDV_DICTIONARY_NOT_FOUND
   * @param {string} message what went wrong and what to change
   * @param {number} status HTTP status a server would answer with
   * @param {Record<string, unknown>} [details]
   */
  constructor(code, message, status, details) {
    super(message);
    this.name = 'ScdvError';
    this.code = code;
    this.status = status;
    this.details = details;
  }

  /**
   * Keep the error this one wraps (a file system error, a native exception), for logs and debuggers.
   * @param {unknown} cause
   * @returns {this}
   */
  because(cause) {
    this.cause = cause;
    return this;
  }
}

/**
 * @param {string} code
 * @param {number} status
 * @param {string} template
 */
function define(code, status, template) {
  /** @param {...(string|number)} args */
  const make = (...args) => {
    let i = 0;
    const message = template.replace(/%s/g, () => String(args[i++] ?? ''));
    return new ScdvError(code, message, status);
  };
  make.code = code;
  return make;
}

export const errors = {
  USAGE: define('SCDV_USAGE', 400, '%s'),
  CONFIG_INVALID: define('SCDV_CONFIG_INVALID', 400, 'invalid configuration: %s'),
  CONFIG_FILE_UNREADABLE: define('SCDV_CONFIG_FILE_UNREADABLE', 400, 'cannot read config file %s: %s'),
  ADDON_NOT_BUILT: define('SCDV_ADDON_NOT_BUILT', 500, 'the native MeCab addon is not built (%s): run `npm run setup`'),
  DICTIONARY_NOT_FOUND: define('SCDV_DICTIONARY_NOT_FOUND', 500, 'MeCab dictionary %s not found at %s: %s'),
  DICTIONARY_BROKEN: define('SCDV_DICTIONARY_BROKEN', 500, 'MeCab could not load the dictionary at %s: %s'),
  STOPWORD_FAMILY_UNKNOWN: define('SCDV_STOPWORD_FAMILY_UNKNOWN', 400, 'unknown stop-word family "%s" (known: %s)'),
  CORPUS_NOT_FOUND: define('SCDV_CORPUS_NOT_FOUND', 400, 'corpus file %s: %s'),
  CORPUS_EMPTY: define('SCDV_CORPUS_EMPTY', 400, 'corpus file %s has no lines'),
  CORPUS_UNUSABLE: define('SCDV_CORPUS_UNUSABLE', 422, 'corpus file %s has no usable document: %s'),
  REDIS_SERVER_MISSING: define('SCDV_REDIS_SERVER_MISSING', 500, 'redis-server is not installed: run `npm run setup` or set REDIS_URL (%s)'),
  REDIS_UNAVAILABLE: define('SCDV_REDIS_UNAVAILABLE', 503, 'Redis at %s is not reachable: %s'),
  WORKERS_DIED: define('SCDV_WORKERS_DIED', 500, '%s; finished shards are kept and a re-run resumes'),
  SHARD_FAILED: define('SCDV_SHARD_FAILED', 500, '%s shard(s) failed after all retries; finished shards are kept and a re-run resumes: %s'),
  JOB_REFUSED: define('SCDV_JOB_REFUSED', 422, '%s job %s refused before any work: %s'),
  OPENSEARCH_NOT_INSTALLED: define('SCDV_OPENSEARCH_NOT_INSTALLED', 500, 'OpenSearch is not installed at %s (%s): run `npm run setup -- --opensearch`'),
  OPENSEARCH_NODE_FAILED: define('SCDV_OPENSEARCH_NODE_FAILED', 500, 'local OpenSearch node %s %s'),
  PYTHON_MISSING: define('SCDV_PYTHON_MISSING', 500, 'the Python environment is missing (%s): run `npm run setup`'),
  MODEL_NAME_INVALID: define('SCDV_MODEL_NAME_INVALID', 400, 'invalid model name "%s": use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit'),
  MODEL_EXISTS: define('SCDV_MODEL_EXISTS', 409, 'model "%s" already exists at %s: pass --force to replace it, or choose another --name'),
  MODEL_BUSY: define('SCDV_MODEL_BUSY', 409, 'model "%s" is being trained by another run (pid %s, since %s; lock %s): wait for it to finish, or choose another --name'),
  MODEL_NOT_FOUND: define('SCDV_MODEL_NOT_FOUND', 404, 'model "%s" not found in %s'),
  MODEL_CORRUPT: define('SCDV_MODEL_CORRUPT', 500, 'model file %s is damaged or unreadable: %s; train the model again or restore the file'),
  TRAIN_FAILED: define('SCDV_TRAIN_FAILED', 500, 'training stage %s failed: %s'),
  OUTPUT_CONFLICT: define('SCDV_OUTPUT_CONFLICT', 409, 'output folder %s holds a run of another corpus or config (%s); choose another --out or delete it'),
  USER_DICTIONARY_INVALID: define('SCDV_USER_DICTIONARY_INVALID', 400, 'user dictionary line %s: %s'),
  // The REST server (server/): every reply with an error status carries {error: code, message, details?}.
  REQUEST_INVALID: define('SCDV_REQUEST_INVALID', 400, 'invalid request: %s'),
  UNAUTHORIZED: define('SCDV_UNAUTHORIZED', 401, 'an API key is required: send `authorization: Bearer <key>` or `x-api-key: <key>`'),
  FORBIDDEN: define('SCDV_FORBIDDEN', 403, 'the API key is not valid for %s'),
  NO_API_KEYS: define('SCDV_NO_API_KEYS', 403, 'this server has no API keys configured (server.apiKeyHashes is empty), so no key opens %s: ' +
    'add the SHA-256 digest of a key to server.apiKeyHashes (`npx scdv key hash` prints it) and restart the server'),
  LOGIN_RATE_LIMITED: define('SCDV_LOGIN_RATE_LIMITED', 429, '%s wrong API keys %s: wrong keys are refused for %s s more (a valid key is still accepted)'),
  ROUTE_NOT_FOUND: define('SCDV_ROUTE_NOT_FOUND', 404, 'no route %s %s (see /docs)'),
  METHOD_NOT_ALLOWED: define('SCDV_METHOD_NOT_ALLOWED', 405, 'method %s is not allowed on %s (allowed: %s)'),
  BOARD_READ_ONLY: define('SCDV_BOARD_READ_ONLY', 405, 'the queue board is read-only: %s %s would change a queue (jobs are queued by the API and the CLI, which check them)'),
  COLLECTION_NOT_FOUND: define('SCDV_COLLECTION_NOT_FOUND', 404, 'collection "%s" not found in the store of model %s'),
  DOCUMENT_NOT_FOUND: define('SCDV_DOCUMENT_NOT_FOUND', 404, 'document "%s" not found in collection "%s"'),
  JOB_NOT_FOUND: define('SCDV_JOB_NOT_FOUND', 404, 'job "%s" not found'),
  RUN_CANCELLED: define('SCDV_RUN_CANCELLED', 409, 'the run was cancelled: %s'),
  MODEL_NOT_BUILT: define('SCDV_MODEL_NOT_BUILT', 409, 'model "%s" cannot be activated: its store lacks collection(s) %s that %s. Index each first: %s%s'),
  SERVER_UNREACHABLE: define('SCDV_SERVER_UNREACHABLE', 503, 'no scdv server answers at %s (%s): start one (`scdv serve`), pass --server URL, or --server local to record the activation for the next start'),
  MODEL_CHANGING: define('SCDV_MODEL_CHANGING', 409, 'model %s is being activated; try again when it is done'),
  BODY_TOO_LARGE: define('SCDV_BODY_TOO_LARGE', 413, 'request body over the limit of %s bytes'),
  BODY_ENCODING_INVALID: define('SCDV_BODY_ENCODING_INVALID', 400, 'the request body is not valid UTF-8 at %s (bytes %s): send UTF-8 text (convert another encoding first, e.g. with iconv); nothing of it was taken'),
  MEDIA_TYPE_UNSUPPORTED: define('SCDV_MEDIA_TYPE_UNSUPPORTED', 415, 'content type %s is not accepted here (use %s)'),
  // A request's text: the per-line twin in corpora and bulk jobs is the line issue NO_KNOWN_WORDS (line-issues.js).
  FILTER_RANGE_EMPTY: define('SCDV_FILTER_RANGE_EMPTY', 422, '%s.since is after %s.until: no date is in the range'),
  PAGE_OUT_OF_RANGE: define('SCDV_PAGE_OUT_OF_RANGE', 422, '%s.from %s + k %s is beyond the first %s results (server.maxK): page within them'),
  NO_USABLE_WORDS: define('SCDV_NO_USABLE_WORDS', 422, 'the text has no word that model %s knows (%s distinct words after tokenising)'),
  BULK_SOURCE_INVALID: define('SCDV_BULK_SOURCE_INVALID', 422, 'bulk source %s: %s'),
  EVENT_ID_INVALID: define('SCDV_EVENT_ID_INVALID', 422, '%s %s: no document can have this id, nothing of the batch was stored'),
  BULK_SYNC_TOO_LARGE: define('SCDV_BULK_SYNC_TOO_LARGE', 413, 'a synchronous bulk (?sync=true) takes at most %s (server.%s), this body has %s: send it without sync=true (a queued job, follow GET /v1/jobs/{id}) or in smaller batches'),
  QUEUE_UNAVAILABLE: define('SCDV_QUEUE_UNAVAILABLE', 503, 'the job queue is unavailable (Redis is not reachable); reads keep working, retry writes later'),
  EMBED_WORKER_FAILED: define('SCDV_EMBED_WORKER_FAILED', 503, 'embedding the text on an embedding thread failed (%s); a stopped thread is replaced at once: retry the request'),
  SHUTTING_DOWN: define('SCDV_SHUTTING_DOWN', 503, 'the server is shutting down'),
  INTERNAL: define('SCDV_INTERNAL', 500, 'internal error (logged with request id %s)'),
  THREADS_ADDON_NOT_BUILT: define('SCDV_THREADS_ADDON_NOT_BUILT', 500, 'the native thread-scheduling addon is not built (%s): run `npm run setup`'),
  STORE_ADDON_NOT_BUILT: define('SCDV_STORE_ADDON_NOT_BUILT', 500, 'the native vector-store addon is not built (%s): run `npm run setup`'),
  STORE_NAME_INVALID: define('SCDV_STORE_NAME_INVALID', 400, 'invalid collection name "%s": use 1-64 characters a-z, 0-9, "_" or "-", starting with a letter or digit'),
  STORE_WIDTH_REQUIRED: define('SCDV_STORE_WIDTH_REQUIRED', 400, 'collection "%s" does not exist in %s: pass { width } to create it'),
  STORE_WIDTH_MISMATCH: define('SCDV_STORE_WIDTH_MISMATCH', 409, 'collection "%s" has width %s, not %s'),
  STORE_OPTION_INVALID: define('SCDV_STORE_OPTION_INVALID', 400, 'invalid vector-store option %s: %s'),
  STORE_DOC_INVALID: define('SCDV_STORE_DOC_INVALID', 400, 'document %s: %s'),
  STORE_QUERY_INVALID: define('SCDV_STORE_QUERY_INVALID', 400, 'invalid search: %s'),
  STORE_CORRUPT: define('SCDV_STORE_CORRUPT', 500, 'vector store file %s is damaged: %s'),
  STORE_FORMAT_UNSUPPORTED: define('SCDV_STORE_FORMAT_UNSUPPORTED', 500, 'collection at %s has format %s; this version reads format %s'),
  OPENSEARCH_LAYOUT_OLD: define('SCDV_STORE_FORMAT_UNSUPPORTED', 500, 'opensearch index %s has layout format %s; this version reads format %s: re-index it (`scdv collection delete %s --model %s`, then `scdv index` of its corpus into it)'),
  // Store backends other than the embedded one (pipeline/store/opensearch/).
  BACKEND_UNAVAILABLE: define('SCDV_BACKEND_UNAVAILABLE', 503, 'the %s store backend is unavailable (nodes tried: %s): %s; retry when it is back'),
  BACKEND_REJECTED: define('SCDV_BACKEND_REJECTED', 502, 'the %s store backend refused %s: %s (%s)'),
  MODEL_FILES_MISMATCH: define('SCDV_MODEL_FILES_MISMATCH', 409, 'model %s: its files on this host (sha256 %s) differ from those collection "%s" was indexed with (sha256 %s); copy models/%s/ from the host that indexed it (or a shared path), or index again'),
  STORE_CLOSED: define('SCDV_STORE_CLOSED', 409, 'the vector store at %s is closed'),
  STORE_BUSY: define('SCDV_STORE_BUSY', 409, 'collection "%s" in the store of model %s is locked by a write or a delete under way in this process: retry when it is done'),
  // Inspecting a model (scdv inspect, scdv explain, scdv report).
  ANALYSIS_FAILED: define('SCDV_ANALYSIS_FAILED', 500, 'analysing model %s failed: %s'),
  DOCUMENT_TEXT_NOT_FOUND: define('SCDV_DOCUMENT_TEXT_NOT_FOUND', 404, 'document "%s" is not in corpus %s (pass the corpus the collection was indexed from)'),
  CLUSTER_NOT_FOUND: define('SCDV_CLUSTER_NOT_FOUND', 404, 'cluster %s not found: model %s has clusters 0-%s'),
  CHART_INPUT_INVALID: define('SCDV_CHART_INPUT_INVALID', 400, 'chart "%s": %s'),
  // Vector layouts and `scdv eval` (pipeline/embed/layout.js, pipeline/serving/, pipeline/eval/).
  EMBED_LAYOUT_MISMATCH: define('SCDV_EMBED_LAYOUT_MISMATCH', 409, 'model %s, collection "%s" was indexed with another vector layout (%s): index into a new collection, or use the settings it was indexed with'),
  LAYOUTS_INCOMPARABLE: define('SCDV_LAYOUTS_INCOMPARABLE', 409, 'the pages of collection "%s" (%s vectors) cannot be matched with collection "%s" (%s vectors): their layouts differ in %s; index both hybrid (alpha below 1) or both pure SCDV (adEmbed.alpha, embed.hybrid.alpha)'),
  EMBED_INPUT_INVALID: define('SCDV_EMBED_INPUT_INVALID', 400, 'scdv embed input line %s: %s'),
  EVAL_CORPUS_INVALID: define('SCDV_EVAL_CORPUS_INVALID', 400, 'eval corpus %s: %s'),
  EVAL_FAILED: define('SCDV_EVAL_FAILED', 500, 'eval step %s failed: %s'),
  // Reader events (pipeline/events/, POST /v1/events, scdv report clicks).
  EVENTS_BACKLOG: define('SCDV_EVENTS_BACKLOG', 503, 'the event log has %s bytes waiting to be written (limit events.maxPendingBytes %s): the batch was not taken, retry shortly'),
  EVENT_LOG_FAILED: define('SCDV_EVENT_LOG_FAILED', 503, 'the event log could not store the batch (%s): nothing of it was acknowledged, retry'),
  EVENT_LOG_CLOSED: define('SCDV_EVENT_LOG_CLOSED', 503, 'the event log at %s is closed (the server is shutting down)'),
  // Bounds of the server's shared resources (server/sockets.js, the embedding lanes, event bodies): retry later.
  TOO_MANY_CONNECTIONS: define('SCDV_TOO_MANY_CONNECTIONS', 503, '%s connections are open (%s %s) and none is idle: reuse an open connection or retry shortly'),
  SERVER_BUSY: define('SCDV_SERVER_BUSY', 503, '%s are waiting already (%s %s): retry in a few seconds'),
};
