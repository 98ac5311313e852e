// Ad matching: the documents of a target collection (ads) that best match an article. GET answers from the
// precomputed Redis entry when it is fresh (see pipeline/match/), else searches live; POST embeds a page.
import { errors } from '../../pipeline/errors.js';
import { errorResponses, invalid } from '../errors.js';
import { idProblem } from '../../pipeline/corpus/document.js';
import { lookupMatch, resultItem, unescapeNonAscii } from '../../pipeline/match/index.js';
import { defaultMinScore } from '../../pipeline/match/threshold.js';
import { rerankSignature, searchCollection } from '../../pipeline/match/rerank.js';
import { collectionName, documentId, kSchema, resultsSchema, textSchema, titleSchema } from '../schemas.js';
import { droppedFields, droppedSchema, embedRequestText, rerankOptions, rerankProperties } from '../search.js';
import { armFields, armParams, serveArm } from '../arms.js';

/**
 * The results at or above min_score, and how many were cut (the answer says so).
 * @param {import('../../pipeline/store/index.js').SearchHit[]} hits
 * @param {{value: number, from: string}} min
 */
function aboveMinScore(hits, min) {
  const kept = hits.filter((h) => h.score >= min.value);
  return { min_score: min.value, min_score_from: min.from, below_min_score: hits.length - kept.length, results: kept.map(resultItem) };
}

/**
 * The min_score of a request: its own, else the default for the target collection (pipeline/match/threshold.js).
 * @param {number | undefined} asked
 * @param {import('../models.js').ServingModel} sm
 * @param {string} collection
 * @param {import('../../pipeline/config.js').Config['server']} s
 * @returns {{value: number, from: 'request' | 'config' | 'derived' | 'fallback'}}
 */
function minScoreOf(asked, sm, collection, s) {
  if (asked !== undefined) return { value: asked, from: 'request' };
  return defaultMinScore(s, s.matchMinScore === null ? sm.matchThreshold(collection, s.modelPollMs) : undefined);
}

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {import('../app.js').AppContext} ctx
 */
export default function matchRoutes(app, ctx) {
  const { config, models, metrics } = ctx;
  const s = config.server;
  const mode = s.searchMode;
  const minScore = {
    type: 'number', minimum: -1, maximum: 1,
    description: 'drop results scoring below this; -1 keeps every result. Default: ' + (s.matchMinScore === null
      ? `the collection's derived threshold (the ${s.matchThreshold.quantile * 100}th percentile of unrelated page-ad scores, `
        + `shown in /v1/collections; ${s.matchThreshold.fallback} until derived), docs/matching.md`
      : `server.matchMinScore ${s.matchMinScore}`),
  };
  const response = {
    200: {
      type: 'object',
      properties: {
        ...armFields, model: { type: 'string' }, source: { type: 'string' }, collection: { type: 'string' }, for: { type: 'string' },
        served_from: { type: 'string', enum: ['precomputed', 'live'] }, computed_at: { type: 'string' }, ...droppedSchema,
        min_score: { type: 'number', description: 'the min_score applied' },
        min_score_from: {
          type: 'string', enum: ['request', 'config', 'derived', 'fallback'],
          description: 'where min_score comes from: the request, server.matchMinScore, the collection\'s derived threshold, or the fallback (none derived yet)',
        },
        below_min_score: { type: 'integer', description: 'results among the first k cut because they scored below min_score (0: none)' },
        results: resultsSchema,
      },
      required: ['request_id', 'arm', 'model', 'collection', 'served_from', 'min_score', 'min_score_from', 'below_min_score', 'results'],
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
          ...armParams,
          ...rerankProperties(s, 'match'),
        },
      },
      response,
    },
  }, async (request, reply) => {
    const q = /** @type {{collection: string, source: string, for: string, k: number, min_score?: number, user?: string} & import('../search.js').RerankRequest} */ (request.query);
    const rr = rerankOptions(q, s, 'querystring');
    const sm = models.acquire();
    try {
      const minScore = minScoreOf(q.min_score, sm, q.collection, s);
      const min = minScore.value;
      const arm = serveArm(ctx, sm, q.user ?? q.for);
      if (ctx.hub && arm.asIndexed) {
        const { entry, reason } = await lookupMatch(ctx.hub.redis, config.queue.prefix, {
          model: sm.name, source: q.source, target: q.collection, id: q.for, k: q.k, rerank: rerankSignature(rr),
        });
        if (entry) {
          metrics.precomputed.inc({ served_from: 'precomputed' });
          const { head } = entry;
          const dropped = head.dropped === undefined ? '' : `"duplicates_dropped":${head.dropped.length},"dropped":${JSON.stringify(head.dropped)},`;
          // The usual ad-server call (k covering the entry, every result at or above min_score) passes the stored
          // results through unparsed, only their \uXXXX escapes undone: UTF-8 as a live answer.
          let results = unescapeNonAscii(entry.results);
          let below = 0;
          if (!(q.k >= head.count && (head.lowest_score ?? -Infinity) >= min)) {
            const all = /** @type {import('../../pipeline/match/index.js').ResultItem[]} */ (JSON.parse(entry.results));
            below = all.slice(0, q.k).filter((r) => r.score < min).length;
            results = JSON.stringify(all.filter((r) => r.score >= min).slice(0, q.k));
          }
          return reply.type('application/json; charset=utf-8').send(
            arm.splice(`{"model":${JSON.stringify(sm.name)},"source":${JSON.stringify(q.source)},"collection":${JSON.stringify(q.collection)},` +
            `"for":${JSON.stringify(q.for)},"served_from":"precomputed","computed_at":${JSON.stringify(head.computed_at)},${dropped}` +
            `"min_score":${min},"min_score_from":"${minScore.from}","below_min_score":${below},"results":${results}}`),
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
      const r = await searchCollection(arm.on(target), doc.vector, { mode, ...(q.source === q.collection ? { excludeIds: [q.for] } : {}) }, q.k, rr, s);
      end();
      return {
        request_id: arm.request_id, arm: arm.arm, model: sm.name, source: q.source, collection: q.collection, for: q.for, served_from: 'live', ...droppedFields(rr, r),
        ...aboveMinScore(r.hits, minScore),
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
        properties: { collection: collectionName, title: titleSchema, text: textSchema, k: kSchema(s), min_score: minScore, ...armParams, page_id: documentId, ...rerankProperties(s, 'match') },
      },
      response,
    },
  }, async (request) => {
    const b = /** @type {{collection: string, title?: string, text: string, k: number, min_score?: number, user?: string, page_id?: string} & import('../search.js').RerankRequest} */ (request.body);
    const pageProblem = b.page_id === undefined ? undefined : idProblem(b.page_id);
    if (pageProblem) throw invalid('body.page_id', pageProblem);
    const rr = rerankOptions(b, s, 'body');
    const sm = models.acquire();
    try {
      const min = minScoreOf(b.min_score, sm, b.collection, s);
      const target = await sm.collection(b.collection);
      const v = await embedRequestText(sm, b, metrics);
      const arm = serveArm(ctx, sm, b.user ?? b.page_id);
      const end = metrics.searchDuration.startTimer({ kind: 'match-text' });
      const r = await searchCollection(arm.on(target), { indices: v.indices, values: v.values }, { mode }, b.k, rr, s);
      end();
      return {
        request_id: arm.request_id, arm: arm.arm, model: sm.name, collection: b.collection, served_from: 'live', ...droppedFields(rr, r),
        ...aboveMinScore(r.hits, min),
      };
    } finally {
      models.release(sm);
    }
  });
}
