// What every search route shares: request filters -> store options, and text -> vector with the model's
// embedder (the same code path as batch indexing). Store hits -> response items: resultItem in pipeline/match/.
import { parseDate } from '../pipeline/dates.js';
import { errors } from '../pipeline/errors.js';
import { invalid } from './errors.js';
import { dateSchema } from './schemas.js';

/**
 * @typedef {object} Filters filters as the API spells them (query string and JSON bodies alike)
 * @property {string} [since] ISO 8601, inclusive
 * @property {string} [until] ISO 8601, inclusive
 * @property {string[]} [site]
 * @property {string[]} [exclude_site]
 * @property {string[]} [category]
 */

/** JSON schema of the filters object of POST bodies (the query string carries the same names). */
export const filtersSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    since: dateSchema('published at or after'),
    until: dateSchema('published at or before'),
    site: { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 200 }, description: 'only these sites' },
    exclude_site: { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 200 }, description: 'not these sites' },
    category: { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 200 }, description: 'only these categories' },
  },
};

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
 * @param {Filters | undefined} f
 * @param {string} where field prefix for errors
 */
export function storeFilters(f, where) {
  /** @type {Record<string, any>} */
  const o = {};
  if (!f) return o;
  for (const key of /** @type {const} */ (['since', 'until'])) {
    const v = f[key];
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
  if (f.site?.length) o.sites = f.site;
  if (f.exclude_site?.length) o.excludeSites = f.exclude_site;
  if (f.category?.length) o.categories = f.category;
  return o;
}

/**
 * Embed a request's text; 422 when no word of it is in the model.
 * @param {import('./models.js').ServingModel} sm
 * @param {{title?: string, text: string}} doc
 * @param {import('./metrics.js').Metrics} metrics
 */
export async function embedRequestText(sm, doc, metrics) {
  const end = metrics.embedDuration.startTimer();
  // On the model's embedding threads (server.embedThreads): a long text does not stall other requests.
  const [v] = await sm.embedDocuments([{ title: doc.title ?? '', body: doc.text }]);
  end();
  if (v.indices.length === 0) throw errors.NO_USABLE_WORDS(sm.name, v.knownWords + v.unknownWords);
  return v;
}
