// What every search route shares: request filters -> store options, and text -> vector with the model's
// embedder (the same code path as batch indexing). Store hits -> response items: resultItem in pipeline/match/.
import { parseDate } from '../pipeline/dates.js';
import { errors } from '../pipeline/errors.js';
import { defaultFeedback, feedbackSettings, HALF_LIFE_PATTERN, parseHalfLife } from '../pipeline/match/rerank.js';
import { invalid } from './error-replies.js';
import { dateSchema } from './schemas.js';

/**
 * @typedef {object} Filters filters as the API spells them (query string and JSON bodies alike)
 * @property {string} [since] ISO 8601, inclusive
 * @property {string} [until] ISO 8601, inclusive
 * @property {string[]} [site]
 * @property {string[]} [exclude_site]
 * @property {string[]} [category]
 */

/** @param {string} description a list filter's schema */
const listFilter = (description) => ({ type: 'array', maxItems: 100, items: { type: 'string', maxLength: 200 }, description });

/**
 * Schema properties of the filters (Filters), the one definition: the filters object of POST bodies, and the query
 * string's parameters of the same names (where a list is given by repeating its parameter).
 * @param {'body' | 'querystring'} where
 */
export const filterProperties = (where) => ({
  since: dateSchema('published at or after'),
  until: dateSchema('published at or before'),
  site: listFilter(where === 'querystring' ? 'only these sites (repeat the parameter for several)' : 'only these sites'),
  exclude_site: listFilter('not these sites'),
  category: listFilter('only these categories'),
});

/** JSON schema of the filters object of POST bodies. */
export const filtersSchema = { type: 'object', additionalProperties: false, properties: filterProperties('body') };

/**
 * How many results to search for a page `from`, `k` of the ranked list (the page is hits.slice(from)): a 422
 * naming `from` when the page ends beyond maxK (each is valid alone, as with since/until).
 * @param {number} from
 * @param {number} k
 * @param {number} maxK
 * @param {string} where field prefix for errors (querystring, body)
 */
export function searchWindow(from, k, maxK, where) {
  if (from + k > maxK) {
    const e = errors.PAGE_OUT_OF_RANGE(where, from, k, maxK);
    e.details = { field: `${where}.from`, reason: 'plus k is beyond server.maxK' };
    throw e;
  }
  return from + k;
}

/**
 * Store search options from API filters.
 * @param {Filters | undefined} filters
 * @param {string} where field prefix for errors
 */
export function storeFilters(filters, where) {
  /** @type {Record<string, any>} */
  const o = {};
  if (!filters) return o;
  for (const key of /** @type {const} */ (['since', 'until'])) {
    const v = filters[key];
    if (v === undefined) continue;
    const ms = parseDate(v);
    if (Number.isNaN(ms)) throw invalid(`${where}.${key}`, 'is not a date that exists (RFC 3339, e.g. 2024-05-01 or 2024-05-01T09:00:00+09:00)');
    o[key] = ms;
  }
  // Each date is valid on its own (the schema says so); an empty range is a 422, like text without a known word.
  if (o.since !== undefined && o.until !== undefined && o.since > o.until) {
    const e = errors.FILTER_RANGE_EMPTY(where, where);
    e.details = { field: `${where}.since`, reason: 'is after until' };
    throw e;
  }
  if (filters.site?.length) o.sites = filters.site;
  if (filters.exclude_site?.length) o.excludeSites = filters.exclude_site;
  if (filters.category?.length) o.categories = filters.category;
  return o;
}

/**
 * Embed a request's text in the layout of `collection` (the one it is compared with, or the pages' collection it
 * stands for: ServingModel.collectionEmbed); 422 when no word of it is in the model.
 * @param {import('./model-state.js').ServingModel} servingModel
 * @param {{title?: string, text: string}} doc
 * @param {import('./prometheus.js').Metrics} metrics
 * @param {string} collection
 * @param {number} maxAgeMs server.modelPollMs: how old the records read may be
 */
export async function embedRequestText(servingModel, doc, metrics, collection, maxAgeMs) {
  const { embed } = await servingModel.collectionEmbed(collection, maxAgeMs);
  const end = metrics.embedDuration.startTimer();
  // On the model's embedding threads (server.embedThreads): a long text does not stall other requests.
  const [v] = await servingModel.embedDocuments([{ title: doc.title ?? '', body: doc.text }], embed);
  end();
  if (v.indices.length === 0) throw errors.NO_USABLE_WORDS(servingModel.name, v.knownWords + v.unknownWords);
  return v;
}

/**
 * Re-ranking options as the API spells them (query string and JSON bodies alike; pipeline/match/rerank.js).
 * @typedef {object} RerankRequest
 * @property {boolean} [collapse]
 * @property {number} [duplicate_threshold]
 * @property {string} [recency_half_life]
 * @property {number} [max_per_site]
 * @property {boolean} [feedback] related lists: pseudo-relevance feedback (server.rerank.relatedFeedback)
 */

/**
 * Schema properties of the re-ranking options, for a route whose lists collapse near-duplicates by default or not.
 * @param {import('../pipeline/config.js').Config['server']} settings
 * @param {'related' | 'match'} kind
 */
export function rerankProperties(settings, kind) {
  const on = kind === 'related' ? settings.rerank.collapseRelated : settings.rerank.collapseMatch;
  return {
    collapse: {
      type: 'boolean', default: on,
      description: 'drop near-duplicates: results more similar than duplicate_threshold to the query document or to a result ranked above them (listed in `dropped`)',
    },
    duplicate_threshold: {
      type: 'number', minimum: 0, maximum: 1, default: settings.rerank.duplicateThreshold, description: 'similarity above which a result is a near-duplicate (with collapse)',
    },
    recency_half_life: {
      type: 'string', pattern: HALF_LIFE_PATTERN,
      description: `prefer fresh documents: ranking_score = score − |score| · ${settings.rerank.recencyWeight} · (1 − 0.5^(age / half-life)), ` +
        'age at query time, undated documents count as infinitely old; a whole number and s, m, h, d or w: 7d, 12h, 90m, 2w',
    },
    max_per_site: { type: 'integer', minimum: 1, maximum: settings.maxK, description: 'at most this many results per site (documents without a site are not capped)' },
    ...(kind === 'related' ? {
      feedback: {
        type: 'boolean', default: defaultFeedback(settings.rerank.relatedFeedback) !== null,
        description: `pseudo-relevance feedback: the ${settings.rerank.relatedFeedback.pool} best candidates of the search are re-ranked by similarity to the ` +
          `query plus ${settings.rerank.relatedFeedback.weight} × the mean vector of its first ${settings.rerank.relatedFeedback.docs} results (scores are then ` +
          'similarities to that expanded query)',
      },
    } : {}),
  };
}

/**
 * Store-independent re-ranking options of a request (defaults filled by the schema).
 * @param {RerankRequest} request
 * @param {import('../pipeline/config.js').Config['server']} settings
 * @param {string} where field prefix for errors
 * @param {number} [now] epoch ms the ages are measured at
 * @returns {import('../pipeline/match/rerank.js').RerankOptions}
 */
export function rerankOptions(request, settings, where, now = Date.now()) {
  let halfLifeMs = null;
  if (request.recency_half_life !== undefined) {
    halfLifeMs = parseHalfLife(request.recency_half_life);
    if (Number.isNaN(halfLifeMs)) throw invalid(`${where}.recency_half_life`, 'must be a whole number above 0 and s, m, h, d or w (e.g. 7d, 12h)');
  }
  return {
    duplicateThreshold: request.collapse ? (request.duplicate_threshold ?? settings.rerank.duplicateThreshold) : null,
    halfLifeMs, recencyWeight: settings.rerank.recencyWeight, maxPerSite: request.max_per_site ?? null, now,
    feedback: request.feedback ? feedbackSettings(settings.rerank.relatedFeedback) : null,
  };
}

/** Schema of the response fields re-ranking adds. */
export const droppedSchema = {
  duplicates_dropped: { type: 'integer', description: 'near-duplicates dropped above the last result (with collapse)' },
  dropped: {
    type: 'array',
    description: 'the near-duplicates dropped: duplicate_of names the result ranked above it, absent for a duplicate of the query document',
    items: {
      type: 'object',
      properties: { id: { type: 'string' }, duplicate_of: { type: 'string' }, similarity: { type: 'number' } },
      required: ['id', 'similarity'],
    },
  },
};

/**
 * The response fields re-ranking adds: present when collapsing was on.
 * @param {import('../pipeline/match/rerank.js').RerankOptions} options
 * @param {{dropped: import('../pipeline/match/rerank.js').DroppedDuplicate[]}} result
 */
export const droppedFields = (options, result) => (options.duplicateThreshold === null ? {} : { duplicates_dropped: result.dropped.length, dropped: result.dropped });
