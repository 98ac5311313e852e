// Ad matching: the documents of a target collection (ads) that best match an article. GET answers from the
// precomputed Redis entry when it is fresh (see pipeline/match/), else searches live; POST embeds a page.
import { errors } from '../../pipeline/errors.js';
import { errorResponses } from '../errors.js';
import { lookupMatch, resultItem } from '../../pipeline/match/index.js';
import { collectionName, documentId, kSchema, resultsSchema, textSchema, titleSchema } from '../schemas.js';
import { embedRequestText } from '../search.js';

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {import('../app.js').AppContext} ctx
 */
export default function matchRoutes(app, ctx) {
  const { config, models, metrics } = ctx;
  const s = config.server;
  const mode = s.searchMode;
  const minScore = { type: 'number', minimum: -1, maximum: 1, description: 'drop results scoring below this' };
  const response = {
    200: {
      type: 'object',
      properties: {
        model: { type: 'string' }, source: { type: 'string' }, collection: { type: 'string' }, for: { type: 'string' },
        served_from: { type: 'string', enum: ['precomputed', 'live'] }, computed_at: { type: 'string' }, results: resultsSchema,
      },
      required: ['model', 'collection', 'served_from', 'results'],
    },
    ...errorResponses,
  };

  app.get('/v1/match', {
    schema: {
      tags: ['match'],
      summary: 'The documents of `collection` (e.g. ads) best matching an article of `source`: precomputed when fresh, else live',
      querystring: {
        type: 'object',
        additionalProperties: false,
        required: ['collection', 'for'],
        properties: {
          collection: collectionName, source: { ...collectionName, default: 'articles' }, for: documentId, k: kSchema(s), min_score: minScore,
        },
      },
      response,
    },
  }, async (request, reply) => {
    const q = /** @type {{collection: string, source: string, for: string, k: number, min_score?: number}} */ (request.query);
    const min = q.min_score ?? -Infinity;
    const sm = models.acquire();
    try {
      if (ctx.hub) {
        const { entry, reason } = await lookupMatch(ctx.hub.redis, config.queue.prefix, { model: sm.name, source: q.source, target: q.collection, id: q.for, k: q.k });
        if (entry) {
          metrics.precomputed.inc({ served_from: 'precomputed' });
          const { head } = entry;
          // The usual ad-server call (no min_score, k covering the entry) passes the stored results through
          // unparsed; the reply is then an ASCII string, as stored.
          const results = q.min_score === undefined && q.k >= head.count
            ? entry.results
            : JSON.stringify((/** @type {import('../../pipeline/match/index.js').ResultItem[]} */ (JSON.parse(entry.results))).filter((r) => r.score >= min).slice(0, q.k));
          return reply.type('application/json; charset=utf-8').send(
            `{"model":${JSON.stringify(sm.name)},"source":${JSON.stringify(q.source)},"collection":${JSON.stringify(q.collection)},` +
            `"for":${JSON.stringify(q.for)},"served_from":"precomputed","computed_at":${JSON.stringify(head.computed_at)},"results":${results}}`,
          );
        }
        metrics.precomputed.inc({ served_from: reason === 'redis-down' ? 'live-redis-down' : 'live' });
      } else {
        metrics.precomputed.inc({ served_from: 'live-redis-down' });
      }
      const target = await sm.collection(q.collection);
      const doc = await (await sm.collection(q.source)).get(q.for);
      if (!doc) throw errors.DOCUMENT_NOT_FOUND(q.for, q.source);
      const end = metrics.searchDuration.startTimer({ kind: 'match' });
      const hits = await target.searchAsync(doc.vector, { k: q.k, mode, ...(q.source === q.collection ? { excludeIds: [q.for] } : {}) });
      end();
      return {
        model: sm.name, source: q.source, collection: q.collection, for: q.for, served_from: 'live',
        results: hits.filter((h) => h.score >= min).map(resultItem),
      };
    } finally {
      models.release(sm);
    }
  });

  app.post('/v1/match', {
    schema: {
      tags: ['match'],
      summary: 'The documents of `collection` (e.g. ads) best matching a page\'s text (embedded at request time)',
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['collection', 'text'],
        properties: { collection: collectionName, title: titleSchema, text: textSchema, k: kSchema(s), min_score: minScore },
      },
      response,
    },
  }, async (request) => {
    const b = /** @type {{collection: string, title?: string, text: string, k: number, min_score?: number}} */ (request.body);
    const min = b.min_score ?? -Infinity;
    const sm = models.acquire();
    try {
      const target = await sm.collection(b.collection);
      const v = await embedRequestText(sm, b, metrics);
      const end = metrics.searchDuration.startTimer({ kind: 'match-text' });
      const hits = await target.searchAsync({ indices: v.indices, values: v.values }, { k: b.k, mode });
      end();
      return { model: sm.name, collection: b.collection, served_from: 'live', results: hits.filter((h) => h.score >= min).map(resultItem) };
    } finally {
      models.release(sm);
    }
  });
}
