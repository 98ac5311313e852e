// Schema fragments shared by the routes. Names follow the store's and the model loader's rules, checked at
// the edge so that a name never reaches a path unchecked ("../x" is a 400 here, before any file is touched).
import { COLLECTION_NAME_RE } from '../pipeline/store/names.js';
import { AD_LIMITS, LANDING_URL_PATTERN, MAX_ID_LENGTH, RESULT_FIELDS } from '../pipeline/corpus/document.js';

export const collectionName = {
  type: 'string', pattern: COLLECTION_NAME_RE.source, description: 'collection: 1-64 of a-z, 0-9, "_", "-"',
};
export const modelName = {
  type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$', description: 'model: 1-64 letters, digits, ".", "_", "-"',
};
// The rest of the id rule (no tab or line break, no lone surrogate: idProblem) is checked where an id is used, not
// by a pattern here: a path or query cannot carry a lone surrogate (it decodes as U+FFFD), and OpenAPI tools outside
// JavaScript read the pattern otherwise than ajv does.
export const documentId = {
  type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH, description: 'document id (URL-encoded in paths)',
};

/**
 * A date, as the API takes it: an RFC 3339 date or date-time, a day that exists (ajv's formats check the
 * calendar; pipeline/dates.js computes exactly these).
 * @param {string} description
 */
export const dateSchema = (description) => ({
  description,
  anyOf: [
    { type: 'string', format: 'date', title: 'an RFC 3339 date (2024-05-01)' },
    { type: 'string', format: 'date-time', maxLength: 64, title: 'an RFC 3339 date-time (2024-05-01T09:00:00+09:00)' },
  ],
});

/** @param {{maxK: number, defaultK: number}} settings */
export const kSchema = (settings) => ({ type: 'integer', minimum: 1, maximum: settings.maxK, default: settings.defaultK, description: `results wanted (1-${settings.maxK})` });

/**
 * `from`, Elasticsearch's paging offset: results from + 1 … from + k of the ranked list (from + k at most maxK,
 * checked by searchWindow in server/search-request.js, since a schema cannot compare two fields).
 * @param {{maxK: number}} settings
 */
export const fromSchema = (settings) => ({
  type: 'integer', minimum: 0, maximum: settings.maxK - 1, default: 0,
  description: `offset into the ranked results, for paging: results from+1 … from+k (from + k beyond ${settings.maxK} is a 422 SCDV_PAGE_OUT_OF_RANGE)`,
});

/** An ad's fields (a document's advertiser, landing_url, keywords, deal_id), stored and returned as they were written. */
export const adFieldsSchema = {
  $id: 'AdFields',
  type: 'object',
  description: 'an ad\'s fields, when the document has any: what an ad server needs besides the copy',
  properties: {
    advertiser: { type: 'string', minLength: 1, maxLength: AD_LIMITS.advertiser },
    landing_url: { type: 'string', minLength: 1, maxLength: AD_LIMITS.landing_url, pattern: LANDING_URL_PATTERN, description: 'where the ad leads' },
    keywords: {
      type: 'array', maxItems: AD_LIMITS.keywords, items: { type: 'string', minLength: 1, maxLength: AD_LIMITS.keyword },
      description: 'the advertiser\'s keywords (returned; the match is by the ad\'s text)',
    },
    deal_id: { type: 'string', minLength: 1, maxLength: AD_LIMITS.deal_id, description: 'the deal the ad is sold under, when any' },
    exclude_sites: {
      type: 'array', maxItems: AD_LIMITS.exclusions, items: { type: 'string', minLength: 1, maxLength: AD_LIMITS.exclusion },
      description: 'sites whose pages must not show the ad (a domain covers its subdomains); matching leaves it out of their lists',
    },
    exclude_categories: {
      type: 'array', maxItems: AD_LIMITS.exclusions, items: { type: 'string', minLength: 1, maxLength: AD_LIMITS.exclusion },
      description: 'categories whose pages must not show the ad; matching leaves it out of their lists',
    },
  },
};

/** Each metadata field of a result, as answered. @type {Record<typeof RESULT_FIELDS[number], object>} */
const resultFieldSchemas = {
  title: { type: 'string' },
  url: { type: 'string' },
  published_at: { type: 'string' },
  category: { type: 'string', description: 'the stored category, when the document has one' },
  site: { type: 'string', description: 'the stored site, when the document has one' },
  ad: { $ref: 'AdFields#' },
};

/** One search result; the document itself is never among them. Its fields in RESULT_FIELDS' order (the answers' order). */
export const resultItemSchema = {
  $id: 'ResultItem',
  type: 'object',
  properties: {
    id: { type: 'string' },
    score: { type: 'number', description: 'dot product of the two L2-normalised SCDV vectors' },
    ...Object.fromEntries(RESULT_FIELDS.map((f) => [f, resultFieldSchemas[f]])),
    ranking_score: { type: 'number', description: 'score blended with the document\'s age, the order of the list (with recency_half_life)' },
  },
  required: ['id', 'score'],
};

export const resultsSchema = { type: 'array', items: { $ref: 'ResultItem#' } };

/** Route schemas mark a body a request may omit with this key (@fastify/swagger copies x- keys onto the operation; app.js documents it). */
export const OPTIONAL_BODY = 'x-optional-body';

/** Security requirement of key-protected routes, for the OpenAPI document. */
/** @type {{[scheme: string]: string[]}[]} */
export const keyed = [{ bearer: [] }, { apiKey: [] }];

/** Text to embed at request time (JSON bodies); the limit on the body bounds it too. */
export const textSchema = { type: 'string', minLength: 1, description: 'page text (title excluded), embedded at request time' };
export const titleSchema = { type: 'string', maxLength: 10_000 };

/** A collection in the listings (/v1/collections, /v1/models), with its derived match threshold when one is recorded. */
export const collectionListingSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' }, width: { type: 'integer' }, count: { type: 'integer' },
    match_min_score: {
      type: 'object',
      description: 'the default min_score of /v1/match for this target collection, derived when it was indexed or precomputed '
        + '(pipeline/match/threshold.js, docs/matching.md); used unless server.matchMinScore is a number or the request sets min_score',
      properties: {
        value: { type: 'number' }, quantile: { type: 'number', description: 'the quantile of the unrelated scores taken' },
        source: { type: 'string', description: 'the page collection it was measured against' },
        basis: { type: 'string', enum: ['different-category', 'random'], description: 'unrelated pairs: pages and ads of different `category`, or random pairs when either side has no labels' },
        pairs: { type: 'integer' }, pages: { type: 'integer' }, ads: { type: 'integer' },
        related_kept: { type: ['number', 'null'], description: 'share of same-category pairs scoring at or above value' },
        known_share: {
          type: ['object', 'null'],
          description: 'the default min_known_share of pages matched with this collection: ratio × the median known share (distinct words found in the model) '
            + 'of `pages` pages of `source` written with their word counts; null: too few such pages (the known-word rule is off); absent: derived before the rule',
          properties: { value: { type: 'number' }, ratio: { type: 'number' }, median: { type: 'number' }, pages: { type: 'integer' } },
          required: ['value', 'ratio', 'median', 'pages'],
        },
        computed_at: { type: 'string' },
      },
      required: ['value', 'quantile', 'source', 'basis', 'pairs', 'computed_at'],
    },
    expansion: {
      type: 'object',
      description: 'an expanded ad collection: what its ads were expanded against (adEmbed.expand, docs/matching.md § Ad expansion); '
        + 'stale: the source collection changed since (an API write to it), re-expanded by `scdv precompute` or a re-index of the source',
      properties: {
        from: { type: 'string' }, neighbours: { type: 'integer' }, weight: { type: 'number' },
        expanded: { type: 'boolean', description: 'false: stored unexpanded (reason says why)' }, reason: { type: 'string' },
        from_count: { type: 'integer', description: 'documents of `from` when expanded' }, from_indexed_at: { type: ['string', 'null'] },
        own_collection: { type: 'string', description: 'the companion collection keeping the ads\' own vectors' },
        computed_at: { type: 'string' }, stale: { type: 'boolean' }, stale_since: { type: 'string' },
      },
      required: ['from', 'neighbours', 'weight', 'expanded', 'computed_at', 'stale'],
    },
  },
};
