// Jobs are not trusted: whoever can write to the Redis (or could once add jobs through the queue board) can queue
// any payload, so every queue processor checks its job here before doing anything. One JSON schema per job type
// (ajv); every path confined to the folders this process may use (its data folder, server.bulkFileRoots for
// corpora, and the paths its owner allowed with `scdv worker --allow-paths`); model and collection names checked
// like everywhere else. A job carries only the settings that change how text becomes vectors (jobSettings): never
// where files are read or written nor which hosts are contacted (store, queue, server, dictionary paths): the
// worker takes those from its own configuration.
import AjvModule from 'ajv';
import { DEFAULT_CONFIG } from '../config.js';
import { errors } from '../errors.js';
import { confinedPath, dataDir, validateModelName } from '../paths.js';
import { COLLECTION_NAME_RE } from '../store/names.js';

const Ajv = /** @type {typeof import('ajv').default} */ (/** @type {any} */ (AjvModule).default ?? AjvModule);

/** @typedef {import('../config.js').Config} Config */

/**
 * Documents a shard job embeds and writes at a time: index.writeBatchSize on the native store (each write one
 * fsynced batch), store.opensearch.bulkDocs on OpenSearch (each write one bulk request): the one place that picks.
 * @param {Config} config
 */
export function writeBatchSizeOf(config) {
  return config.store.backend === 'opensearch' ? config.store.opensearch.bulkDocs : config.index.writeBatchSize;
}

/** Tokenizer settings that name files (dictionary folders, user dictionaries): the worker's own are used. */
const TOKENIZER_PATH_KEYS = ['dictionary', 'userDictionaries'];

/**
 * The settings a shard job carries: how its documents are cut and embedded, and its batch sizes.
 * @param {Config} config
 */
export function jobSettings(config) {
  const tokenizer = Object.fromEntries(Object.entries(config.tokenizer).filter(([k]) => !TOKENIZER_PATH_KEYS.includes(k)));
  return {
    tokenizer, embed: config.embed, corpus: { maxDocumentBytes: config.corpus.maxDocumentBytes },
    index: { writeBatchSize: writeBatchSizeOf(config) }, tokenize: { batchSize: config.tokenize.batchSize, hugePages: config.tokenize.hugePages },
  };
}

/**
 * A JSON schema for a value shaped like `v` (a default of pipeline/config.js): the same keys, none other, the same
 * types (a number or a null default may be null, a null default also a scalar or a list of strings; the stage that
 * uses the value checks its range).
 * @param {unknown} v
 * @returns {Record<string, any>}
 */
function shapeOf(v) {
  if (v === null) return { type: ['null', 'number', 'string', 'boolean', 'array'], items: { type: 'string', maxLength: 1000 } };
  if (Array.isArray(v)) return { type: 'array', maxItems: 10_000, items: v.length ? shapeOf(v[0]) : { type: 'string', maxLength: 1000 } };
  if (typeof v === 'object') {
    return { type: 'object', additionalProperties: false, properties: Object.fromEntries(Object.entries(/** @type {object} */ (v)).map(([k, x]) => [k, shapeOf(x)])) };
  }
  if (typeof v === 'string') return { type: 'string', maxLength: 1000 };
  return typeof v === 'number' ? { type: ['number', 'null'] } : { type: typeof v }; // some numbers may be null (keep_fraction)
}

const settingsShape = shapeOf(jobSettings(/** @type {Config} */ (/** @type {unknown} */ (DEFAULT_CONFIG))));
const shard = {
  type: 'object', additionalProperties: false, required: ['index', 'start', 'end', 'firstLine'],
  properties: Object.fromEntries(['index', 'start', 'end', 'firstLine', 'lines'].map((k) => [k, { type: 'integer', minimum: 0 }])),
};
const str = (/** @type {number} */ maxLength) => ({ type: 'string', minLength: 1, maxLength });
const runKey = { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$' };
const shardJob = {
  runKey, corpus: str(4096), shard, outDir: str(4096), config: settingsShape,
  lines: { type: 'string', pattern: '^[A-Za-z0-9+/]*={0,2}$' },
};

/** One schema per queue: the payload its processor takes. */
export const JOB_SCHEMAS = {
  tokenize: { type: 'object', additionalProperties: false, required: ['runKey', 'corpus', 'shard', 'outDir', 'config'], properties: shardJob },
  index: {
    type: 'object', additionalProperties: false, required: ['runKey', 'corpus', 'shard', 'outDir', 'config', 'model', 'backend', 'collection'],
    properties: {
      ...shardJob, model: str(64), backend: { enum: ['native', 'opensearch'] }, collection: { type: 'string', pattern: COLLECTION_NAME_RE.source },
      modelFilesSha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      expand: {
        type: 'object', additionalProperties: false, required: ['from', 'neighbours', 'weight'],
        properties: { from: { type: 'string', pattern: COLLECTION_NAME_RE.source }, neighbours: { type: 'integer', minimum: 1, maximum: 100 }, weight: { type: 'number', exclusiveMinimum: 0, maximum: 10 } },
      },
      duplicates: { type: 'array', maxItems: 1_000_000, items: { type: 'array', minItems: 2, maxItems: 2, items: { type: 'integer', minimum: 1 } } },
    },
  },
  train: {
    type: 'object', additionalProperties: false, required: ['stage', 'corpus', 'workDir', 'params'],
    properties: { stage: { enum: ['word2vec', 'idf', 'gmm', 'topics'] }, corpus: str(4096), workDir: str(4096), params: shapeOf(DEFAULT_CONFIG.train) },
  },
  precompute: {
    type: 'object', additionalProperties: false, required: ['run', 'model', 'source', 'target', 'k', 'ids', 'ttlSeconds', 'mode'],
    properties: {
      run: { type: 'string', maxLength: 300 }, model: str(64),
      source: { type: 'string', pattern: COLLECTION_NAME_RE.source }, target: { type: 'string', pattern: COLLECTION_NAME_RE.source },
      k: { type: 'integer', minimum: 1 }, ids: { type: 'array', maxItems: 100_000, items: str(512) },
      ttlSeconds: { type: 'integer', minimum: 1 }, prefix: { type: 'string', maxLength: 200 }, mode: { enum: ['fast', 'exact'] },
      rerank: {
        type: 'object', additionalProperties: false,
        properties: {
          duplicateThreshold: { type: ['number', 'null'] }, halfLifeMs: { type: ['number', 'null'] }, recencyWeight: { type: 'number' },
          maxPerSite: { type: ['integer', 'null'] }, feedback: { anyOf: [{ type: 'null' }, shapeOf({ docs: 0, weight: 0, pool: 0 })] },
        },
      },
      searchSettings: {
        type: 'object', additionalProperties: false, required: ['maxK', 'rerank'],
        properties: { maxK: { type: 'integer', minimum: 1 }, rerank: shapeOf(DEFAULT_CONFIG.server.rerank) },
      },
      safety: {
        type: 'object', additionalProperties: false, required: ['seeds', 'vectors'],
        properties: {
          seeds: str(64),
          vectors: {
            type: 'array', maxItems: 100,
            items: {
              type: 'object', additionalProperties: false, required: ['topic', 'indices', 'values'],
              properties: {
                topic: str(64), indices: { type: 'array', maxItems: 1_000_000, items: { type: 'integer', minimum: 0 } },
                values: { type: 'array', maxItems: 1_000_000, items: { type: 'number' } },
              },
            },
          },
        },
      },
    },
  },
};

/** @typedef {keyof typeof JOB_SCHEMAS} JobQueue */

const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true });
const validators = Object.fromEntries(Object.entries(JOB_SCHEMAS).map(([q, s]) => [q, ajv.compile(s)]));

/**
 * @typedef {object} WorkerOwn what a worker trusts: its own configuration, and the paths its owner allowed
 * @property {Config} config
 * @property {string[]} [allowPaths] files or folders outside the data folder its jobs may use (`--allow-paths`)
 */

/**
 * The job, checked, as its processor may use it: paths resolved inside the allowed folders, and for shard jobs
 * `config` the worker's own configuration with the job's settings (jobSettings) on top.
 * @param {JobQueue} queue
 * @param {unknown} data the job's payload, as read from Redis
 * @param {WorkerOwn} own
 * @param {string | number} [jobId] for the message
 * @returns {any}
 * @throws {import('../errors.js').ScdvError} SCDV_JOB_REFUSED naming the field (never a file's content)
 */
export function checkJob(queue, data, own, jobId = '?') {
  const refuse = (/** @type {string} */ field, /** @type {string} */ reason) => errors.JOB_REFUSED(queue, String(jobId), `${field} ${reason}`);
  const validate = validators[queue];
  if (!validate) throw refuse('queue', 'has no job schema');
  if (!validate(data)) {
    const e = /** @type {import('ajv').ErrorObject} */ (validate.errors?.[0]);
    const field = e.instancePath ? e.instancePath.slice(1).replaceAll('/', '.') : 'payload';
    const extra = /** @type {any} */ (e.params).additionalProperty;
    throw refuse(field, extra === undefined ? String(e.message)
      : `has the key "${extra}", which a job may not carry (where files are read or written and which hosts are contacted are the worker's own settings)`);
  }
  const job = /** @type {any} */ (structuredClone(data));
  const cfg = own.config;
  const allow = own.allowPaths ?? [];
  const writable = [dataDir(), ...allow];
  const readable = [...writable, ...cfg.server.bulkFileRoots];
  /** @param {string} field @param {string[]} roots */
  const confine = (field, roots) => { job[field] = confinedPath(job[field], roots, (reason) => refuse(field, reason)); };
  if (queue === 'train') {
    confine('corpus', writable);
    confine('workDir', writable);
    return job;
  }
  if (queue === 'precompute') {
    validateName(() => validateModelName(job.model), refuse);
    if ((job.prefix ?? cfg.queue.prefix) !== cfg.queue.prefix) throw refuse('prefix', 'differs from this worker\'s queue.prefix');
    job.prefix = cfg.queue.prefix;
    if (job.k > cfg.server.maxK) throw refuse('k', `is above server.maxK (${cfg.server.maxK})`);
    if (job.searchSettings && job.searchSettings.maxK > cfg.server.maxK) throw refuse('searchSettings.maxK', `is above server.maxK (${cfg.server.maxK})`);
    return job;
  }
  // Shard jobs (tokenize, index). A job that carries its lines reads no corpus file; an index job that carries
  // them writes no marker either (its result goes back through the queue).
  if (job.lines === undefined) confine('corpus', readable);
  if (queue === 'tokenize' || job.lines === undefined) confine('outDir', writable);
  if (queue === 'index') {
    validateName(() => validateModelName(job.model), refuse);
    if (job.backend !== cfg.store.backend) throw refuse('backend', `is not this worker's store backend (${cfg.store.backend})`);
  }
  job.config = withSettings(cfg, job.config);
  return job;
}

/**
 * @param {() => unknown} check
 * @param {(field: string, reason: string) => Error} refuse
 */
function validateName(check, refuse) {
  try { check(); } catch { throw refuse('model', 'is not a valid model name'); }
}

/**
 * The worker's config with a job's settings on top (objects merged key by key).
 * @param {Config} own
 * @param {Record<string, any>} settings checked against settingsShape
 * @returns {Config}
 */
function withSettings(own, settings) {
  /** @type {(a: any, b: any) => any} */
  const merge = (a, b) => {
    if (b === undefined) return a;
    if (a === null || typeof a !== 'object' || Array.isArray(a) || b === null || typeof b !== 'object' || Array.isArray(b)) return b;
    return Object.fromEntries([...new Set([...Object.keys(a), ...Object.keys(b)])].map((k) => [k, merge(a[k], b[k])]));
  };
  return merge(own, settings);
}
