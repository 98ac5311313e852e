// Examples of every operation for the OpenAPI document (/docs/json, /docs): parameters, request bodies and
// responses, at least one of them an error. Keyed by "METHOD url" as the route is registered. app.js copies them
// into the documented schemas only (validation never sees them); tests/server/openapi.test.js fails when an
// operation has none or when one does not validate against its schema.
import { errors } from '../pipeline/errors.js';
import { ISSUE } from '../pipeline/line-issues.js';
import { errorBody, invalid } from './error-replies.js';

/**
 * @typedef {object} OperationExamples
 * @property {Record<string, unknown>} [params] path parameters
 * @property {Record<string, unknown>} [query] query-string parameters
 * @property {unknown} [body] the JSON request body
 * @property {Record<string, unknown>} [content] request bodies by media type (routes that take several)
 * @property {Record<string, unknown>} responses by status code
 */

const ARTICLE = 'sports-watch-4597641';
const RESULT = {
  id: 'sports-watch-4764764', score: 0.412, title: '【Sports Watch】本田圭佑、W杯予選へ「勝つしかない」',
  published_at: '2010-06-21T09:00:00.000Z', category: 'sports-watch',
};
/** The ads' derived default min_score (pipeline/match/threshold.js), as listed. */
const THRESHOLD = {
  value: 0.127, quantile: 0.99, source: 'articles', basis: 'different-category', pairs: 29376, pages: 306, ads: 108, related_kept: 0.056,
  known_share: { value: 0.216, ratio: 0.5, median: 0.433, pages: 306 }, computed_at: '2026-11-24T13:00:00.000Z',
};
const AD = {
  id: 'ad-soccer-goods', score: 0.336, title: 'サッカー日本代表のユニフォーム', category: 'sports-watch', site: 'sports-field.example',
  ad: {
    advertiser: 'スポーツショップ・フィールド', landing_url: 'https://www.sports-field.example/soccer', keywords: ['サッカー', '日本代表', 'ユニフォーム'],
    deal_id: 'deal-sports-0001',
  },
};
const ANSWER = { request_id: 'r-7f3a9c2e', arm: 'hybrid', model: 'livedoor-sample' };
// Error examples are made by the catalogue itself: their codes and messages cannot drift from what the server says.
const KEY_MISSING = errorBody(errors.UNAUTHORIZED());
const NOT_FOUND = errorBody(errors.DOCUMENT_NOT_FOUND(`${ARTICLE}-x`, 'articles'));
const NO_WORDS = errorBody(errors.NO_USABLE_WORDS('livedoor-sample', 3));
const BAD_K = errorBody(invalid('querystring.k', 'must be <= 1000'));
const NO_MODEL = errorBody(errors.SHUTTING_DOWN());
const SOCCER = 'サッカー日本代表はワールドカップ予選で勝利し、監督は選手たちの粘り強さを称えた。';

/** @type {Record<string, OperationExamples>} */
export const EXAMPLES = {
  'GET /healthz': { responses: { 200: { status: 'ok' } } },
  'GET /readyz': {
    responses: {
      200: { status: 'ready', model: 'livedoor-sample', store: true, backend: { backend: 'native', ok: true }, redis: 'up' },
      503: { status: 'not_ready', model: null, store: false, redis: 'down' },
    },
  },
  'GET /metrics': {
    responses: {
      200: '# HELP scdv_search_seconds Vector-store search time of one query, by kind of route.\n# TYPE scdv_search_seconds histogram\n'
        + 'scdv_search_seconds_bucket{le="0.0002",kind="related"} 812\n',
      500: errorBody(errors.INTERNAL('req-1a')),
    },
  },
  'GET /v1/collections': {
    responses: {
      200: { model: 'livedoor-sample', collections: [{ name: 'articles', width: 14487, count: 306 }, { name: 'ads', width: 14487, count: 108, match_min_score: THRESHOLD }] },
      503: NO_MODEL,
    },
  },
  'DELETE /v1/collections/:collection': {
    params: { collection: 'ads' },
    responses: {
      200: { collection: 'ads', model: 'livedoor-sample', deleted: true },
      404: errorBody(errors.COLLECTION_NOT_FOUND('ads', 'livedoor-sample')),
    },
  },
  'GET /v1/collections/:collection/documents/:id': {
    params: { collection: 'articles', id: ARTICLE },
    responses: {
      200: {
        id: ARTICLE, collection: 'articles', model: 'livedoor-sample', title: '【Sports Watch】本田、ザックジャパンの初陣へ', category: 'sports-watch',
        published_at: '2010-06-20T09:00:00.000Z', nnz: 328,
      },
      404: NOT_FOUND,
    },
  },
  'PUT /v1/collections/:collection/documents/:id': {
    params: { collection: 'articles', id: 'news-2026-0001' },
    body: { title: 'W杯予選 日本代表が勝利', body: SOCCER, url: 'https://news.example.com/2026/0001', site: 'news.example.com', category: 'sports', published_at: '2026-11-24T09:00:00+09:00' },
    responses: {
      200: { id: 'news-2026-0001', collection: 'articles', model: 'livedoor-sample', known_words: 14, unknown_words: 1, nnz: 262 },
      400: errorBody(invalid('body.published_at', 'must match format "date-time"')),
      401: KEY_MISSING,
      422: NO_WORDS,
    },
  },
  'DELETE /v1/collections/:collection/documents/:id': {
    params: { collection: 'articles', id: 'news-2026-0001' },
    responses: { 200: { id: 'news-2026-0001', collection: 'articles', model: 'livedoor-sample', deleted: true }, 404: NOT_FOUND },
  },
  'POST /v1/collections/:collection/documents::bulk': {
    params: { collection: 'ads' },
    query: { sync: true },
    // The JSON Lines body's example is in the operation's description: API tools (Schemathesis) cannot send an
    // example of a media type they have no serializer for.
    content: { 'application/json': { path: 'ads-2026-11.jsonl' } },
    responses: {
      200: {
        model: 'livedoor-sample', collection: 'ads', took_ms: 41, errors: true,
        items: [
          { index: 0, line: 1, id: 'ad-1', status: 200, result: 'written', known_words: 5, unknown_words: 0, nnz: 140 },
          { index: 1, line: 2, id: 'ad-2', status: 400, error: { code: ISSUE.MISSING_FIELD, message: 'field "body" is missing', line: 2, field: 'body' } },
        ],
      },
      202: { job: 'bulk-3f6c1a52-9d1e-4b7a-8f0e-2c5d7a9b1e34', status_url: '/v1/jobs/bulk-3f6c1a52-9d1e-4b7a-8f0e-2c5d7a9b1e34', model: 'livedoor-sample', collection: 'ads', lines: 2, shards: 1 },
      413: errorBody(errors.BULK_SYNC_TOO_LARGE('100 documents', 'syncBulkMaxDocuments', '250')),
    },
  },
  'POST /v1/events': {
    content: {
      'application/json': {
      events: [
        {
          type: 'impression', request_id: 'r-7f3a9c2e', page_id: ARTICLE, collection: 'articles', arm: 'hybrid', category: 'sports-watch', user: '9f86d081884c7d65',
          items: [{ id: RESULT.id, position: 1, score: 0.412 }, { id: 'sports-watch-4740435', position: 2, score: 0.377 }],
        },
        { type: 'click', request_id: 'r-7f3a9c2e', clicked_id: RESULT.id, position: 1 },
        ],
      },
    },
    responses: {
      200: { accepted: 2, impressions: 1, clicks: 1 },
      400: errorBody(invalid('body.events.1.position', 'must be >= 1')),
    },
  },
  'GET /v1/jobs/:id': {
    params: { id: 'bulk-3f6c1a52-9d1e-4b7a-8f0e-2c5d7a9b1e34' },
    responses: {
      200: {
        id: 'bulk-3f6c1a52-9d1e-4b7a-8f0e-2c5d7a9b1e34', kind: 'bulk', state: 'completed', model: 'livedoor-sample', collection: 'ads',
        created_at: '2026-11-24T13:22:43.000Z', lines: 2, lines_done: 2, progress: 1, shards: { total: 1, done: 1, failed: 0 },
        documents: 1, rejected: 1, empty: 0, issues: [{ line: 2, code: ISSUE.MISSING_FIELD, reason: 'field "body" is missing', id: 'ad-2' }], errors: [], redacted: false,
      },
      404: errorBody(errors.JOB_NOT_FOUND('bulk-0')),
    },
  },
  'GET /v1/match': {
    query: { collection: 'ads', for: ARTICLE, k: 3 },
    responses: {
      200: {
        ...ANSWER, source: 'articles', collection: 'ads', for: ARTICLE, served_from: 'precomputed', computed_at: '2026-11-24T13:00:00.000Z',
        min_score: 0.127, min_score_from: 'derived', below_min_score: 1,
        min_known_share: 0.216, min_known_share_from: 'derived', known_share: 0.4186, results: [AD, { ...AD, id: 'ad-baseball-tickets', score: 0.291, title: 'プロ野球の観戦チケット', site: 'ticket-stadium.example', ad: { advertiser: 'チケットスタジアム', landing_url: 'https://www.ticket-stadium.example/baseball', keywords: ['プロ野球', '観戦チケット', '球場'] } }],
      },
      404: NOT_FOUND,
    },
  },
  'POST /v1/match': {
    body: { collection: 'ads', title: 'W杯予選', text: SOCCER, k: 3 },
    responses: {
      200: {
        ...ANSWER, collection: 'ads', served_from: 'live', min_score: 0.127, min_score_from: 'derived', below_min_score: 2,
        min_known_share: 0.216, min_known_share_from: 'derived', known_share: 0.2857, results: [AD],
      },
      422: NO_WORDS,
    },
  },
  'GET /v1/models': {
    responses: {
      200: {
        active: 'livedoor-sample', previous: null,
        models: [{
          name: 'livedoor-sample', created_at: '2026-11-24T13:00:00.000Z', width: 14487, active: true, loaded: true,
          collections: [{ name: 'articles', width: 14487, count: 306 }, { name: 'ads', width: 14487, count: 108, match_min_score: THRESHOLD }],
        }],
      },
      503: NO_MODEL,
    },
  },
  'POST /v1/models/:name/activate': {
    params: { name: 'news' },
    body: { collections: ['articles'] },
    responses: {
      200: { active: 'news', previous: 'livedoor-sample', changed: true, unserved: ['ads'] },
      409: errorBody(errors.MODEL_NOT_BUILT('news', 'ads', 'model livedoor-sample serves', 'scdv index --model news --collection ads --corpus ads.jsonl', '; or serve only what it has: {"collections": ["articles"]}')),
    },
  },
  'GET /v1/collections/:collection/documents/:id/related': {
    params: { collection: 'articles', id: ARTICLE },
    query: { k: 2, from: 0 },
    responses: {
      200: { ...ANSWER, collection: 'articles', id: ARTICLE, results: [RESULT, { ...RESULT, id: 'sports-watch-4740435', score: 0.377, title: '【Sports Watch】なでしこ、決勝へ' }] },
      400: BAD_K,
      404: NOT_FOUND,
    },
  },
  'POST /v1/collections/:collection/related': {
    params: { collection: 'articles' },
    body: { title: 'W杯予選', text: SOCCER, k: 1, filters: { since: '2010-01-01', category: ['sports-watch'] } },
    responses: {
      200: { ...ANSWER, collection: 'articles', results: [RESULT] },
      422: NO_WORDS,
    },
  },
  'POST /v1/similarity': {
    body: { a: { id: ARTICLE }, b: { text: SOCCER }, collection: 'articles' },
    responses: {
      200: { model: 'livedoor-sample', similarity: 0.287 },
      404: NOT_FOUND,
    },
  },
};

/** An error body's schema written out (the shared one is a $ref, which cannot carry an example of its own). */
const ERROR_SCHEMA = {
  type: 'object',
  properties: { error: { type: 'string' }, message: { type: 'string' }, details: { type: 'object', additionalProperties: true } },
  required: ['error', 'message'],
};

/**
 * A route's schema with its examples, for the OpenAPI document (a copy: the route's own schema is left alone).
 * @param {any} schema
 * @param {string} method
 * @param {string} url
 */
export function withExamples(schema, method, url) {
  const ex = EXAMPLES[`${method} ${url}`];
  if (!ex || !schema) return schema;
  const out = { ...schema };
  /** @param {any} part @param {Record<string, unknown> | undefined} values */
  const props = (part, values) => (part && values ? {
    ...part,
    properties: Object.fromEntries(Object.entries(part.properties ?? {}).map(([k, p]) => [k, k in values ? { ...(/** @type {object} */ (p)), examples: [values[k]] } : p])),
  } : part);
  out.params = props(schema.params, ex.params);
  out.querystring = props(schema.querystring, ex.query);
  if (ex.body !== undefined && schema.body) out.body = { ...schema.body, examples: [ex.body] };
  const content = ex.content;
  if (content && schema.body?.content) {
    out.body = {
      ...schema.body,
      content: Object.fromEntries(Object.entries(schema.body.content).map(([type, c]) => [
        type, type in content ? { ...(/** @type {any} */ (c)), schema: { ...(/** @type {any} */ (c)).schema, examples: [content[type]] } } : c,
      ])),
    };
  }
  const response = { ...schema.response };
  for (const [status, value] of Object.entries(ex.responses)) {
    const own = response[status];
    // A success status the route does not document gets no example (the test then names the operation).
    if (!own && !/^[45]/.test(status)) continue;
    const base = own && !own.$ref ? own : { ...ERROR_SCHEMA, description: own?.description ?? 'Error' };
    response[status] = { ...base, examples: [value] };
  }
  out.response = response;
  for (const k of ['params', 'querystring']) if (out[k] === undefined) delete out[k];
  return out;
}
