// The catalogue of errors the pipeline raises on purpose: one code, one message template, one HTTP status.
// Anything else that escapes is a bug. Templates use %s placeholders, filled in order.

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
  USER_DICTIONARY_INVALID: define('SCDV_USER_DICTIONARY_INVALID', 400, 'user dictionary line %s: %s'),
  STOPWORD_FAMILY_UNKNOWN: define('SCDV_STOPWORD_FAMILY_UNKNOWN', 400, 'unknown stop-word family "%s" (known: %s)'),
  CORPUS_NOT_FOUND: define('SCDV_CORPUS_NOT_FOUND', 400, 'corpus file %s: %s'),
  CORPUS_EMPTY: define('SCDV_CORPUS_EMPTY', 400, 'corpus file %s has no lines'),
  REDIS_SERVER_MISSING: define('SCDV_REDIS_SERVER_MISSING', 500, 'redis-server is not installed: run `npm run setup` or set REDIS_URL (%s)'),
  REDIS_UNAVAILABLE: define('SCDV_REDIS_UNAVAILABLE', 503, 'Redis at %s is not reachable: %s'),
  SHARD_FAILED: define('SCDV_SHARD_FAILED', 500, '%s shard(s) failed after all retries; finished shards are kept and a re-run resumes: %s'),
  PYTHON_MISSING: define('SCDV_PYTHON_MISSING', 500, 'the Python environment is missing (%s): run `npm run setup`'),
  MODEL_NAME_INVALID: define('SCDV_MODEL_NAME_INVALID', 400, 'invalid model name "%s": use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit'),
  MODEL_EXISTS: define('SCDV_MODEL_EXISTS', 409, 'model "%s" already exists at %s: pass --force to replace it, or choose another --name'),
  MODEL_NOT_FOUND: define('SCDV_MODEL_NOT_FOUND', 404, 'model "%s" not found in %s'),
  TRAIN_FAILED: define('SCDV_TRAIN_FAILED', 500, 'training stage %s failed: %s'),
  OUTPUT_CONFLICT: define('SCDV_OUTPUT_CONFLICT', 409, 'output folder %s holds a run of another corpus or config (%s); choose another --out or delete it'),
};
