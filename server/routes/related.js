// Related documents: of an indexed document, of a page not indexed yet, and the similarity of two.
import { sparseDot } from '../../pipeline/embed/vectorizer.js';
import { errors } from '../../pipeline/errors.js';
import { answerBytes, resultItem } from '../../pipeline/match/index.js';
import { searchCollection, searchCollectionById } from '../../pipeline/match/rerank.js';
import { errorResponses } from '../error-replies.js';
import { collectionName, documentId, fromSchema, kSchema, resultsSchema, textSchema, titleSchema } from '../schemas.js';
import {
  droppedFields, droppedSchema, embedRequestText, filterProperties, filtersSchema, rerankOptions, rerankProperties, searchWindow, storeFilters,
} from '../search-request.js';
import { armFields, armParams, serveArm } from '../arm-serving.js';

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {import('../app.js').AppContext} ctx
 */
export default function relatedRoutes(app, ctx) {
  const { config, models, metrics } = ctx;
  const s = config.server;
  const mode = s.searchMode;
  const cache = ctx.relatedCache;
  const relatedSchema = {
    type: 'object',
    properties: { ...armFields, model: { type: 'string' }, collection: { type: 'string' }, id: { type: 'string' }, ...droppedSchema, results: resultsSchema },
    required: ['request_id', 'arm', 'model', 'collection', 'id', 'results'],
  };

  app.get('/v1/collections/:collection/documents/:id/related', {
    schema: {
      tags: ['search'],
      summary: 'The k documents most related to an indexed document (itself excluded)',
      params: { type: 'object', properties: { collection: collectionName, id: documentId }, required: ['collection', 'id'] },
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          k: kSchema(s),
          from: fromSchema(s),
          ...filterProperties('querystring'),
          ...armParams,
          ...rerankProperties(s, 'related'),
        },
      },
      response: { 200: relatedSchema, ...errorResponses },
    },
  }, async (request, reply) => {
    const { collection, id } = /** @type {{collection: string, id: string}} */ (request.params);
    const q = /** @type {any} */ (request.query);
    const filters = storeFilters(q, 'querystring');
    const want = searchWindow(q.from, q.k, s.maxK, 'querystring');
    // With a recency preference the answer moves with the clock: ages are taken per minute, which the cache key holds.
    const now = q.recency_half_life === undefined ? Date.now() : Math.floor(Date.now() / 60_000) * 60_000;
    const rr = rerankOptions(q, s, 'querystring', now);
    const sm = models.acquire();
    try {
      const coll = await sm.collection(collection);
      const cid = `${sm.name}\0${collection}`;
      const { user, ...params } = q;
      const arm = serveArm(ctx, sm, user ?? id);
      // The serialised reply is what is cached (per arm, not per user): a hit costs a map lookup and a socket write.
      const key = `${cid}\0${id}\0${arm.method}\0${JSON.stringify(params)}${q.recency_half_life === undefined ? '' : `\0${now}`}`;
      const { value: payload, hit } = await cache.get(key, await cache.version(cid, coll), async () => {
        // The document's vector is the query (its metadata is not part of the answer): looked up by the store itself
        // when it can. A missing document is timed by no search.
        const end = metrics.searchDuration.startTimer({ kind: 'related' });
        const r = await searchCollectionById(arm.on(coll), id, { mode, ...filters, excludeIds: [id] }, want, rr, s);
        if (!r) throw errors.DOCUMENT_NOT_FOUND(id, collection);
        end();
        // The serialised answer's UTF-8 bytes (the store may have given its items' fields as bytes): kept off the JS
        // heap in the cache, written to the socket as they are.
        return answerBytes({ model: sm.name, collection, id, ...droppedFields(rr, r) }, r.hits.slice(q.from));
      });
      metrics.relatedCache.inc({ result: hit ? 'hit' : 'miss' });
      return reply.type('application/json; charset=utf-8').send(arm.spliceBytes(payload));
    } finally {
      models.release(sm);
    }
  });

  app.post('/v1/collections/:collection/related', {
    schema: {
      tags: ['search'],
      summary: 'The k documents most related to a page that is not indexed (embedded at request time)',
      params: { type: 'object', properties: { collection: collectionName }, required: ['collection'] },
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['text'],
        properties: { title: titleSchema, text: textSchema, k: kSchema(s), from: fromSchema(s), filters: filtersSchema, ...armParams, page_id: documentId, ...rerankProperties(s, 'related') },
      },
      response: {
        200: {
          type: 'object',
          properties: {
            ...armFields, model: { type: 'string' }, collection: { type: 'string' }, known_words: { type: 'integer' }, unknown_words: { type: 'integer' },
            ...droppedSchema, results: resultsSchema,
          },
          required: ['request_id', 'arm', 'model', 'collection', 'results'],
        },
        ...errorResponses,
      },
    },
  }, async (request) => {
    const { collection } = /** @type {{collection: string}} */ (request.params);
    const b = /** @type {{title?: string, text: string, k: number, from: number, filters?: import('../search-request.js').Filters, user?: string, page_id?: string} & import('../search-request.js').RerankRequest} */ (request.body);
    const filters = storeFilters(b.filters, 'body.filters');
    const want = searchWindow(b.from, b.k, s.maxK, 'body');
    const rr = rerankOptions(b, s, 'body');
    const sm = models.acquire();
    try {
      const coll = await sm.collection(collection);
      const v = await embedRequestText(sm, b, metrics, collection, s.modelPollMs);
      const arm = serveArm(ctx, sm, b.user ?? b.page_id);
      const end = metrics.searchDuration.startTimer({ kind: 'related-text' });
      const r = await searchCollection(arm.on(coll), { indices: v.indices, values: v.values }, { mode, ...filters }, want, rr, s);
      end();
      return {
        request_id: arm.request_id, arm: arm.arm, model: sm.name, collection, known_words: v.knownWords, unknown_words: v.unknownWords, ...droppedFields(rr, r),
        results: r.hits.slice(b.from).map(resultItem),
      };
    } finally {
      models.release(sm);
    }
  });

  // Exactly one of id and text per side: the schema says so, and ajv enforces it.
  const refSchema = {
    description: 'a document: {id} of an indexed one (in `collection`, default the request\'s), or {text, title?} embedded now',
    oneOf: [
      {
        type: 'object', additionalProperties: false, required: ['id'], title: '{id, collection?} of an indexed document',
        properties: { id: documentId, collection: collectionName },
      },
      {
        type: 'object', additionalProperties: false, required: ['text'], title: '{text, title?} to embed',
        properties: { text: textSchema, title: titleSchema },
      },
    ],
  };
  app.post('/v1/similarity', {
    schema: {
      tags: ['search'],
      summary: 'SCDV similarity of two documents: the dot product of their L2-normalised vectors',
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['a', 'b'],
        properties: { a: refSchema, b: refSchema, collection: { ...collectionName, default: 'articles' } },
      },
      response: {
        200: { type: 'object', properties: { model: { type: 'string' }, similarity: { type: 'number' } }, required: ['model', 'similarity'] },
        ...errorResponses,
      },
    },
  }, async (request) => {
    const b = /** @type {{a: Ref, b: Ref, collection: string}} */ (request.body);
    const sm = models.acquire();
    try {
      const vectorOf = async (/** @type {Ref} */ r) => {
        if (r.id !== undefined) {
          const c = r.collection ?? b.collection;
          const doc = await (await sm.collection(c)).get(r.id);
          if (!doc) throw errors.DOCUMENT_NOT_FOUND(r.id, c);
          return doc.vector;
        }
        return embedRequestText(sm, { title: r.title, text: /** @type {string} */ (r.text) }, metrics, b.collection, s.modelPollMs);
      };
      const [va, vb] = await Promise.all([vectorOf(b.a), vectorOf(b.b)]);
      return { model: sm.name, similarity: sparseDot(va, vb) };
    } finally {
      models.release(sm);
    }
  });
}

/** @typedef {{id?: string, collection?: string, text?: string, title?: string}} Ref */
