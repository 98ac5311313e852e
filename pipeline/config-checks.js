// Checks of the config sections for the embed settings (pages' and ads'), the store backend, reader events, experiments, re-ranking, training, the match
// threshold and brand safety, and the range helpers (split from config.js, which keeps the defaults and the other checks).
import { errors } from './errors.js';

/** @typedef {import('./config.js').Config} Config */
/** @typedef {import('./config.js').Range} Range */

/**
 * What a value must be, e.g. "a whole number from 1 to 1000".
 * @param {Range} r
 */
export function describeRange(r) {
  const kind = r.integer ? 'a whole number' : 'a number';
  const text = r.max === undefined
    ? (r.exclusiveMin ? `${kind} above ${r.min}` : `${kind} of at least ${r.min}`)
    : (r.exclusiveMin ? `${kind} above ${r.min} and at most ${r.max}` : `${kind} from ${r.min} to ${r.max}`);
  return r.nullable ? `${text}, or null` : text;
}

/**
 * Whether `v` is in the range (null only when the range allows it).
 * @param {unknown} v
 * @param {Range} r
 */
export function inRange(v, r) {
  if (v === null) return Boolean(r.nullable);
  if (typeof v !== 'number' || !Number.isFinite(v)) return false;
  if (r.integer && !Number.isInteger(v)) return false;
  if (r.exclusiveMin ? v <= r.min : v < r.min) return false;
  return r.max === undefined || v <= r.max;
}

/** @param {Config['server']['writePace']} pace */
export function validateWritePace(pace) {
  const bad = (/** @type {string} */ key, /** @type {string} */ range) => errors.CONFIG_INVALID(`server.writePace.${key} must be ${range}, got ${JSON.stringify(pace?.[/** @type {'share'} */ (key)])}`);
  if (!inRange(pace?.sliceUs, { min: 50, max: 1e6 })) throw bad('sliceUs', 'a number from 50 to 1000000 (microseconds)');
  if (!inRange(pace.share, { min: 0, exclusiveMin: true, max: 1 })) throw bad('share', 'a number above 0 and at most 1');
  if (!inRange(pace.budgetMs, { min: 0, max: 1e5 })) throw bad('budgetMs', 'a number from 0 to 100000 (milliseconds; 0: never paced)');
}

/** @param {Config['server']['keyFailures']} k */
export function validateKeyFailures(k) {
  for (const key of /** @type {const} */ (['perAddress', 'perKey', 'total', 'windowS'])) {
    const min = key === 'windowS' ? 1 : 0;
    if (!inRange(k[key], { min, max: 1e9, integer: true })) {
      throw errors.CONFIG_INVALID(`server.keyFailures.${key} must be a whole number from ${min} to 1000000000${min ? ' (seconds)' : ' (0: no limit)'}, got ${JSON.stringify(k[key])}`);
    }
  }
}

/** @param {Config['store']} s */
export function validateStore(s) {
  if (!['native', 'opensearch'].includes(s.backend)) throw errors.CONFIG_INVALID(`store.backend must be native or opensearch, got ${JSON.stringify(s.backend)}`);
  const o = s.opensearch;
  if (!o.nodes.length) throw errors.CONFIG_INVALID('store.opensearch.nodes must name at least one node URL');
  o.nodes.forEach((n, i) => {
    if (typeof n !== 'string' || !/^https?:\/\/[^/\s]+\/?$/.test(n)) {
      throw errors.CONFIG_INVALID(`store.opensearch.nodes[${i}] must be a URL such as http://127.0.0.1:9200, got ${JSON.stringify(n)}`);
    }
  });
  // Index names are lower case, and the prefix must not be mistaken for a collection's index (no "--").
  if (!/^[a-z0-9][a-z0-9_.-]{0,40}$/.test(o.indexPrefix) || o.indexPrefix.includes('--')) {
    throw errors.CONFIG_INVALID(`store.opensearch.indexPrefix must be 1-41 characters a-z, 0-9, "_", "." or "-" (no "--"), starting with a letter or digit, got ${JSON.stringify(o.indexPrefix)}`);
  }
  for (const [name, v, min] of /** @type {const} */ ([
    ['store.opensearch.shards', o.shards, 1], ['store.opensearch.replicas', o.replicas, 0],
    ['store.opensearch.requestTimeoutMs', o.requestTimeoutMs, 1], ['store.opensearch.maxRetries', o.maxRetries, 0],
    ['store.opensearch.bulkDocs', o.bulkDocs, 1], ['store.opensearch.versionPollMs', o.versionPollMs, 0],
    ['store.opensearch.maxQueryTerms', o.maxQueryTerms, 1], ['store.opensearch.candidates.min', o.candidates.min, 1],
    ['store.opensearch.candidates.perShard', o.candidates.perShard, 0], ['store.opensearch.candidates.max', o.candidates.max, 1],
    ['store.opensearch.postingsBudget.min', o.postingsBudget.min, 1],
  ])) {
    if (!Number.isInteger(v) || v < min) throw errors.CONFIG_INVALID(`${name} must be a whole number of at least ${min}, got ${JSON.stringify(v)}`);
  }
  if (!(o.candidates.perK >= 1)) throw errors.CONFIG_INVALID(`store.opensearch.candidates.perK must be a number of at least 1, got ${JSON.stringify(o.candidates.perK)}`);
  if (!(typeof o.postingsBudget.fraction === 'number' && o.postingsBudget.fraction >= 0 && o.postingsBudget.fraction <= 1)) {
    throw errors.CONFIG_INVALID(`store.opensearch.postingsBudget.fraction must be a number from 0 to 1, got ${JSON.stringify(o.postingsBudget.fraction)}`);
  }
  if (o.candidates.max > 10_000 || o.candidates.max < o.candidates.min) {
    throw errors.CONFIG_INVALID(`store.opensearch.candidates.max must be from candidates.min (${o.candidates.min}) to 10000 (OpenSearch's max_result_window), got ${o.candidates.max}`);
  }
  if (o.username !== null && o.password === null) {
    throw errors.CONFIG_INVALID('store.opensearch.username is set without a password (set SCDV_OPENSEARCH_PASSWORD)');
  }
}

export const ARM_METHODS = /** @type {const} */ (['hybrid', 'scdv', 'lexical']);

/**
 * @param {Config['events']} e
 * @param {Config['experiments']} x
 */
export function validateEvents(e, x) {
  for (const name of /** @type {const} */ (['segmentBytes', 'bodyLimit', 'maxBatch', 'maxItems', 'maxPendingBytes', 'inFlightBytes', 'waitingBatches', 'minImpressions'])) {
    if (!Number.isInteger(e[name]) || e[name] < 1) throw errors.CONFIG_INVALID(`events.${name} must be a positive integer, got ${e[name]}`);
  }
  for (const name of /** @type {const} */ (['maxAgeDays', 'maxBytes'])) {
    if (!(typeof e[name] === 'number' && e[name] >= 0)) throw errors.CONFIG_INVALID(`events.${name} must be 0 (no limit) or more, got ${e[name]}`);
  }
  if (!['always', 'never'].includes(e.fsync)) throw errors.CONFIG_INVALID(`events.fsync must be always or never, got ${JSON.stringify(e.fsync)}`);
  if (!(e.bandWidth > 0 && e.bandWidth <= 1)) throw errors.CONFIG_INVALID(`events.bandWidth must be in (0, 1], got ${e.bandWidth}`);
  if (e.dir !== null && (typeof e.dir !== 'string' || e.dir === '')) throw errors.CONFIG_INVALID('events.dir must be a folder path or null');
  if (typeof x.salt !== 'string') throw errors.CONFIG_INVALID(`experiments.salt must be a string, got ${JSON.stringify(x.salt)}`);
  if (!Array.isArray(x.arms) || x.arms.length === 0 || x.arms.length > 20) throw errors.CONFIG_INVALID('experiments.arms must list 1 to 20 arms');
  const seen = new Set();
  x.arms.forEach((a, i) => {
    const at = `experiments.arms[${i}]`;
    if (a === null || typeof a !== 'object') throw errors.CONFIG_INVALID(`${at} must be an object {name, method, weight}`);
    const unknown = Object.keys(a).filter((k) => !['name', 'method', 'weight'].includes(k));
    if (unknown.length) throw errors.CONFIG_INVALID(`unknown key ${at}.${unknown[0]} (known: name, method, weight)`);
    if (typeof a.name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/.test(a.name)) {
      throw errors.CONFIG_INVALID(`${at}.name must be 1-32 letters, digits, ".", "_" or "-", got ${JSON.stringify(a.name)}`);
    }
    if (seen.has(a.name)) throw errors.CONFIG_INVALID(`${at}.name "${a.name}" is used twice`);
    seen.add(a.name);
    if (!ARM_METHODS.includes(a.method)) throw errors.CONFIG_INVALID(`${at}.method must be one of ${ARM_METHODS.join(', ')}, got ${JSON.stringify(a.method)}`);
    if (!(typeof a.weight === 'number' && Number.isFinite(a.weight) && a.weight > 0)) throw errors.CONFIG_INVALID(`${at}.weight must be a number above 0, got ${JSON.stringify(a.weight)}`);
  });
}

/**
 * Pseudo-relevance feedback settings (pipeline/match/rerank.js): {enabled: related lists use it unless a request says
 * feedback=false, docs: 0-100 (0: never), weight: 0-10, pool: 1-1000 candidates re-scored}.
 * @param {{enabled: boolean, docs: number, weight: number, pool: number}} f
 * @param {string} name
 */
export function validateFeedback(f, name) {
  if (!(Number.isInteger(f.docs) && f.docs >= 0 && f.docs <= 100)) {
    throw errors.CONFIG_INVALID(`${name}.docs must be a whole number from 0 (off) to 100, got ${JSON.stringify(f.docs)}`);
  }
  if (!(typeof f.weight === 'number' && f.weight >= 0 && f.weight <= 10)) throw errors.CONFIG_INVALID(`${name}.weight must be a number from 0 to 10, got ${JSON.stringify(f.weight)}`);
  if (!(Number.isInteger(f.pool) && f.pool >= 1 && f.pool <= 1000)) {
    throw errors.CONFIG_INVALID(`${name}.pool must be a whole number from 1 to 1000, got ${JSON.stringify(f.pool)}`);
  }
}

/** @param {Config['server']['rerank']} r */
export function validateRerank(r) {
  for (const key of /** @type {const} */ (['collapseRelated', 'collapseMatch'])) {
    if (typeof r[key] !== 'boolean') throw errors.CONFIG_INVALID(`server.rerank.${key} must be true or false, got ${JSON.stringify(r[key])}`);
  }
  for (const key of /** @type {const} */ (['duplicateThreshold', 'recencyWeight'])) {
    if (!inRange(r[key], { min: 0, max: 1 })) throw errors.CONFIG_INVALID(`server.rerank.${key} must be a number from 0 to 1, got ${JSON.stringify(r[key])}`);
  }
  if (!inRange(r.poolFactor, { min: 1, max: 100 })) throw errors.CONFIG_INVALID(`server.rerank.poolFactor must be a number from 1 to 100, got ${JSON.stringify(r.poolFactor)}`);
  if (!inRange(r.poolMin, { min: 1, max: 1000, integer: true })) throw errors.CONFIG_INVALID(`server.rerank.poolMin must be a whole number from 1 to 1000, got ${JSON.stringify(r.poolMin)}`);
  validateFeedback(r.relatedFeedback, 'server.rerank.relatedFeedback');
}

/**
 * Every training parameter against TRAIN_RANGES and TRAIN_CHOICES, so that `--clusters 0` fails here and not
 * after tokenising, as a word2vec or GMM failure.
 * @param {Config['train']} t
 * @param {Record<string, Range>} ranges TRAIN_RANGES
 * @param {Record<string, readonly string[]>} choices TRAIN_CHOICES
 */
export function validateTrain(t, ranges, choices) {
  const sections = /** @type {Record<string, Record<string, unknown>>} */ (/** @type {unknown} */ (t));
  for (const [key, range] of Object.entries(ranges)) {
    const [section, name] = key.split('.');
    const v = sections[section][name];
    if (!inRange(v, range)) throw errors.CONFIG_INVALID(`train.${key} must be ${describeRange(range)}, got ${JSON.stringify(v)}`);
  }
  for (const [key, allowed] of Object.entries(choices)) {
    const [section, name] = key.split('.');
    const v = sections[section][name];
    if (!allowed.includes(/** @type {string} */ (v))) {
      throw errors.CONFIG_INVALID(`train.${key} must be one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`);
    }
  }
}

/** @param {Config['server']} s the default min_score of /v1/match and how it is derived */
export function validateMatchThreshold(s) {
  if (s.matchMinScore !== null && !inRange(s.matchMinScore, { min: -1, max: 1 })) throw errors.CONFIG_INVALID(`server.matchMinScore must be a number from -1 to 1 or null (derived), got ${JSON.stringify(s.matchMinScore)}`);
  if (!inRange(s.matchThreshold.quantile, { min: 0.5, max: 1 })) throw errors.CONFIG_INVALID(`server.matchThreshold.quantile must be a number from 0.5 to 1, got ${JSON.stringify(s.matchThreshold.quantile)}`);
  if (!inRange(s.matchThreshold.fallback, { min: -1, max: 1 })) throw errors.CONFIG_INVALID(`server.matchThreshold.fallback must be a number from -1 to 1, got ${JSON.stringify(s.matchThreshold.fallback)}`);
}

/** Most seed texts of one list, and the longest topic name and text (characters). */
export const SEED_LIMITS = Object.freeze({ seeds: 100, topic: 64, text: 2000 });

/**
 * A list of sensitive-topic seeds: at most SEED_LIMITS.seeds of {topic, text}, both non-empty strings.
 * @param {unknown} seeds
 * @param {string} name
 */
function validateSeeds(seeds, name) {
  if (!Array.isArray(seeds) || seeds.length > SEED_LIMITS.seeds) throw errors.CONFIG_INVALID(`${name} must be a list of at most ${SEED_LIMITS.seeds} {"topic", "text"} objects, got ${JSON.stringify(seeds)?.slice(0, 100)}`);
  seeds.forEach((seed, i) => {
    const ok = (/** @type {unknown} */ v, /** @type {number} */ max) => typeof v === 'string' && v.trim() !== '' && v.length <= max;
    if (!(seed && typeof seed === 'object' && ok(seed.topic, SEED_LIMITS.topic) && ok(seed.text, SEED_LIMITS.text) && Object.keys(seed).every((k) => k === 'topic' || k === 'text'))) {
      throw errors.CONFIG_INVALID(`${name}[${i}] must be {"topic": 1-${SEED_LIMITS.topic} characters, "text": 1-${SEED_LIMITS.text} characters}, got ${JSON.stringify(seed)?.slice(0, 100)}`);
    }
  });
}

/**
 * server.brandSafety: threshold -1 to 1 or null (off), seeds, and the page collections with settings of their own
 * (each named once, with a collection name as the store allows them).
 * @param {Config['server']['brandSafety']} b
 */
export function validateBrandSafety(b) {
  if (!inRange(b.threshold, { min: -1, max: 1, nullable: true })) throw errors.CONFIG_INVALID(`server.brandSafety.threshold must be a number from -1 to 1 or null (off), got ${JSON.stringify(b.threshold)}`);
  validateSeeds(b.seeds, 'server.brandSafety.seeds');
  if (!Array.isArray(b.collections)) throw errors.CONFIG_INVALID(`server.brandSafety.collections must be a list of {"collection", "threshold"?, "seeds"?}, got ${JSON.stringify(b.collections)}`);
  const seen = new Set();
  b.collections.forEach((c, i) => {
    const name = `server.brandSafety.collections[${i}]`;
    if (!c || typeof c !== 'object' || typeof c.collection !== 'string' || !/^[a-z0-9][a-z0-9_-]{0,63}$/.test(c.collection)) {
      throw errors.CONFIG_INVALID(`${name}.collection must be a collection name (1-64 of a-z, 0-9, "_", "-"), got ${JSON.stringify(c?.collection)}`);
    }
    if (seen.has(c.collection)) throw errors.CONFIG_INVALID(`${name}.collection names ${c.collection} a second time`);
    seen.add(c.collection);
    const extra = Object.keys(c).find((k) => !['collection', 'threshold', 'seeds'].includes(k));
    if (extra) throw errors.CONFIG_INVALID(`${name} has the key "${extra}": only collection, threshold and seeds`);
    if (c.threshold !== undefined && !inRange(c.threshold, { min: -1, max: 1, nullable: true })) throw errors.CONFIG_INVALID(`${name}.threshold must be a number from -1 to 1 or null (off), got ${JSON.stringify(c.threshold)}`);
    if (c.seeds !== undefined) validateSeeds(c.seeds, `${name}.seeds`);
  });
}

/**
 * The embed settings: the pages' (`embed`) and those of ad collections (`adEmbed`), whose vectors must be comparable
 * with a page's (of the same width).
 * @param {Config} cfg
 */
export function validateEmbed(cfg) {
  const { embed: e, adEmbed: a } = cfg;
  if (!(e.keepFraction > 0 && e.keepFraction <= 1)) throw errors.CONFIG_INVALID(`embed.keepFraction must be in (0, 1], got ${e.keepFraction}`);
  if (e.keepCount !== null && !inRange(e.keepCount, { min: 1, integer: true })) throw errors.CONFIG_INVALID(`embed.keepCount must be a positive integer or null, got ${e.keepCount}`);
  if (!(e.hybrid.alpha >= 0 && e.hybrid.alpha <= 1)) throw errors.CONFIG_INVALID(`embed.hybrid.alpha must be in [0, 1], got ${e.hybrid.alpha}`);
  if (e.hybrid.maxTerms !== null && !inRange(e.hybrid.maxTerms, { min: 1, integer: true })) {
    throw errors.CONFIG_INVALID(`embed.hybrid.maxTerms must be a positive integer or null, got ${e.hybrid.maxTerms}`);
  }
  // The ads' α in the hybrid layout (pure SCDV pages, embed.hybrid.alpha 1, give pure SCDV ads): 1 would give hybrid pages ads of another width.
  if (!(a.alpha >= 0 && a.alpha < 1)) throw errors.CONFIG_INVALID(`adEmbed.alpha must be in [0, 1) (a hybrid ad; pure SCDV pages give pure SCDV ads), got ${a.alpha}`);
  if (!(a.keepFraction > 0 && a.keepFraction <= 1)) throw errors.CONFIG_INVALID(`adEmbed.keepFraction must be in (0, 1], got ${a.keepFraction}`);
  a.collections.forEach((c, i) => {
    if (typeof c !== 'string' || !/^[a-z0-9][a-z0-9_-]{0,63}$/.test(c)) throw errors.CONFIG_INVALID(`adEmbed.collections[${i}] must be a collection name, got ${JSON.stringify(c)}`);
  });
}
