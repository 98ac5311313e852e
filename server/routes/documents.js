// Collections and documents: list, read, write one (embedded now, searchable at once), delete, bulk (queued).
import { AD_FIELDS, META_FIELDS, parseDocument } from '../../pipeline/corpus/document.js';
import { invalidate, invalidateCollection } from '../../pipeline/match/index.js';
import { errors } from '../../pipeline/errors.js';
import { ownCollectionOf } from '../../pipeline/match/expand.js';
import { errorResponses, invalid } from '../error-replies.js';
import { allowedCorpusPath, cancelBulkJobs, createBulkJob, discardUpload, newJobId, saveUpload } from '../bulk-uploads.js';
import { adFieldsSchema, collectionListingSchema, collectionName, dateSchema, documentId, keyed } from '../schemas.js';
import { readSyncBody, syncBulk, writeDocuments } from '../writes.js';

/** Answer of a synchronous bulk (server/writes.js): one item per non-blank line, in input order. */
const syncBulkResponse = {
  type: 'object',
  properties: {
    model: { type: 'string' }, collection: { type: 'string' }, took_ms: { type: 'integer' },
    errors: { type: 'boolean', description: 'true when any item failed (as in Elasticsearch)' },
    items: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          index: { type: 'integer', description: '0-based position among the items' }, line: { type: 'integer', description: '1-based line of the body' },
          id: { type: 'string' }, status: { type: 'integer', description: '200 written, 400 line rejected, 422 no word of it in the model' },
          result: { type: 'string', enum: ['written'] }, known_words: { type: 'integer' }, unknown_words: { type: 'integer' }, nnz: { type: 'integer' },
          warnings: { type: 'array', items: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } } } },
          error: {
            type: 'object',
            description: 'code: a line-issue code (README "Corpus format"), as the queued bulk reports',
            properties: { code: { type: 'string' }, message: { type: 'string' }, line: { type: 'integer' }, field: { type: 'string' } },
            required: ['code', 'message', 'line'],
          },
        },
        required: ['index', 'line', 'status'],
      },
    },
  },
  required: ['model', 'collection', 'errors', 'items'],
};

/** Content types of a JSON Lines bulk body. */
const JSONL_TYPES = ['application/x-ndjson', 'application/jsonl', 'application/json-lines'];

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {import('../app.js').AppContext} ctx
 */
export default function documentRoutes(app, ctx) {
  const { config, models } = ctx;
  const docParams = { type: 'object', properties: { collection: collectionName, id: documentId }, required: ['collection', 'id'] };
  // The stored text fields (an ad's are in adFieldsSchema), in the order the store keeps them.
  const metaProps = Object.fromEntries(META_FIELDS.filter((f) => f !== 'ad')
    .map((f) => [f, f === 'published_at' ? { type: 'string', description: 'ISO 8601' } : { type: 'string' }]));
  /** The optional metadata fields of a corpus line, for the bulk route's description. */
  const lineMetaFields = META_FIELDS.filter((f) => f !== 'ad').map((f) => `${f}?`).join(', ');
  // Written documents: their date must be one that exists (stored as given by the corpus reader's rules).
  const metaInput = {
    ...metaProps, published_at: dateSchema('when it was published'),
    // An ad's fields: stored as its `ad` metadata (pipeline/corpus/document.js checks them as for corpus lines).
    ...adFieldsSchema.properties,
  };

  app.get('/v1/collections', {
    schema: {
      tags: ['collections'],
      summary: 'Collections of the active model, with their document counts and, for ad collections, their derived match threshold',
      response: {
        200: {
          type: 'object',
          properties: {
            model: { type: 'string' },
            collections: {
              type: 'array',
              items: collectionListingSchema,
            },
          },
        },
        ...errorResponses,
      },
    },
  }, async () => {
    const sm = models.acquire();
    try {
      return { model: sm.name, collections: await sm.collections() };
    } finally {
      models.release(sm);
    }
  });

  app.delete('/v1/collections/:collection', {
    config: { access: 'write' },
    schema: {
      tags: ['write'],
      summary: 'Delete a collection of the active model: its documents, its files, its cached and precomputed results',
      description: 'Processes that have it open see it gone at their next request. A later write to the name creates a new, empty collection.',
      security: keyed,
      params: { type: 'object', properties: { collection: collectionName }, required: ['collection'] },
      response: {
        200: { type: 'object', properties: { collection: { type: 'string' }, model: { type: 'string' }, deleted: { type: 'boolean' } } },
        ...errorResponses,
      },
    },
  }, async (request) => {
    const { collection } = /** @type {{collection: string}} */ (request.params);
    const sm = models.acquire();
    try {
      await sm.collection(collection); // 404 when absent: a job about to create it goes on
      // Bulk jobs writing to it would create it again, without the documents written before: they end failed.
      await cancelBulkJobs(ctx.hub, config, sm.name, collection, `collection "${collection}" of model ${sm.name} was deleted (DELETE /v1/collections/${collection}) while the job ran`);
      await sm.dropCollection(collection);
      ctx.relatedCache.forgetCollection(`${sm.name}\0${collection}`);
      if (ctx.hub) await invalidateCollection(ctx.hub.redis, config.queue.prefix, sm.name, collection);
      return { collection, model: sm.name, deleted: true };
    } finally {
      models.release(sm);
    }
  });

  app.get('/v1/collections/:collection/documents/:id', {
    schema: {
      tags: ['collections'],
      summary: 'A document\'s metadata',
      params: docParams,
      response: {
        200: {
          type: 'object',
          properties: { id: { type: 'string' }, collection: { type: 'string' }, model: { type: 'string' }, ...metaProps, ad: { $ref: 'AdFields#' }, nnz: { type: 'integer', description: 'non-zeros of its vector' },
            known_words: { type: 'integer', description: 'distinct words of its text found in the model when it was written (absent: written before they were counted)' },
            unknown_words: { type: 'integer', description: 'distinct words of its text not found in the model' },
          },
          required: ['id', 'collection', 'model'],
        },
        ...errorResponses,
      },
    },
  }, async (request) => {
    const { collection, id } = /** @type {{collection: string, id: string}} */ (request.params);
    const sm = models.acquire();
    try {
      const doc = await (await sm.collection(collection)).get(id);
      if (!doc) throw errors.DOCUMENT_NOT_FOUND(id, collection);
      const meta = typeof doc.meta === 'string' ? JSON.parse(doc.meta) : doc.meta;
      return { ...meta, id, collection, model: sm.name, nnz: doc.vector.indices.length };
    } finally {
      models.release(sm);
    }
  });

  app.put('/v1/collections/:collection/documents/:id', {
    config: { access: 'write' },
    schema: {
      tags: ['write'],
      summary: 'Embed and upsert one document (searchable as soon as this answers); creates the collection with its first document',
      security: keyed,
      params: docParams,
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['body'],
        properties: { ...metaInput, body: { type: 'string', minLength: 1, description: 'the article text' } },
      },
      response: {
        200: {
          type: 'object',
          properties: {
            id: { type: 'string' }, collection: { type: 'string' }, model: { type: 'string' },
            known_words: { type: 'integer' }, unknown_words: { type: 'integer' }, nnz: { type: 'integer' },
          },
        },
        ...errorResponses,
      },
    },
  }, async (request) => {
    const { collection, id } = /** @type {{collection: string, id: string}} */ (request.params);
    // The corpus reader's own validation (dates, control characters …): one document, one set of rules.
    const parsed = parseDocument(Buffer.from(JSON.stringify({ ...(/** @type {object} */ (request.body)), id })), 1);
    if ('error' in parsed) {
      const field = /field "([^"]+)"/.exec(parsed.error.reason)?.[1];
      throw invalid(field ? `body.${field}` : 'body', parsed.error.reason.replace(/^field "[^"]+" /, ''));
    }
    if (!('doc' in parsed)) throw invalid('body', 'is empty');
    const doc = parsed.doc;
    const sm = models.acquire();
    try {
      const { vectors: [v], empty } = await writeDocuments(ctx, sm, collection, [doc]);
      if (empty.size) throw errors.NO_USABLE_WORDS(sm.name, v.knownWords + v.unknownWords);
      return { id, collection, model: sm.name, known_words: v.knownWords, unknown_words: v.unknownWords, nnz: v.indices.length };
    } finally {
      models.release(sm);
    }
  });

  app.delete('/v1/collections/:collection/documents/:id', {
    config: { access: 'write' },
    schema: {
      tags: ['write'],
      summary: 'Delete one document (gone from results as soon as this answers)',
      security: keyed,
      params: docParams,
      response: {
        200: { type: 'object', properties: { id: { type: 'string' }, collection: { type: 'string' }, model: { type: 'string' }, deleted: { type: 'boolean' } } },
        ...errorResponses,
      },
    },
  }, async (request) => {
    const { collection, id } = /** @type {{collection: string, id: string}} */ (request.params);
    const sm = models.acquire();
    try {
      const coll = await sm.collection(collection);
      if (!(await coll.get(id))) throw errors.DOCUMENT_NOT_FOUND(id, collection);
      await coll.delete([id]);
      // An expanded ad's own vector goes with it (pipeline/match/expand.js).
      if (await sm.store.collectionInfo(ownCollectionOf(collection))) await (await sm.store.collection(ownCollectionOf(collection))).delete([id]);
      ctx.relatedCache.forget(`${sm.name}\0${collection}`);
      if (ctx.hub) await invalidate(ctx.hub.redis, config.queue.prefix, sm.name, collection, [id]);
      return { id, collection, model: sm.name, deleted: true };
    } finally {
      models.release(sm);
    }
  });

  // Bulk: its own plugin scope, so that the streaming JSON Lines parser applies to this route only.
  app.register(async (scope) => {
    // Hand the raw request stream to the handler: a bulk body goes to disk, never into memory.
    scope.addContentTypeParser(JSONL_TYPES, (_req, payload, done) => done(null, payload));
    scope.post('/v1/collections/:collection/documents::bulk', {
      config: { access: 'write' },
      bodyLimit: config.server.bulkBodyLimit,
      schema: {
        tags: ['write'],
        summary: 'Index many documents: queued jobs for a JSON Lines body or {"path"} of a file the server can read; with ?sync=true, a small body written now with one result per line',
        description: `Lines are corpus lines (id, body, ${lineMetaFields}; for ads ${AD_FIELDS.map((f) => `${f}?`).join(', ')}). Without sync: returns at once (202); `
          + 'follow GET /v1/jobs/{id}. With sync=true (like Elasticsearch\'s _bulk): at most server.syncBulkMaxDocuments '
          + `(${config.server.syncBulkMaxDocuments}) documents and server.bodyLimit bytes (else 413 SCDV_BULK_SYNC_TOO_LARGE), embedded and written `
          + 'before the answer (200): one item per non-blank line in input order, a bad line failing alone, `errors` true when any item failed. '
          + 'A JSON Lines body of two documents: {"id":"ad-1","title":"サッカー観戦","body":"サッカー日本代表の試合を観戦。"}⏎{"id":"ad-2","body":"映画の試写会に招待。"}',
        security: keyed,
        params: { type: 'object', properties: { collection: collectionName }, required: ['collection'] },
        querystring: {
          type: 'object', additionalProperties: false,
          properties: { sync: { type: 'boolean', default: false, description: 'write now and answer per item (small batches); false: queue a job' } },
        },
        body: {
          content: {
            'application/json': {
              schema: {
                type: 'object', additionalProperties: false, required: ['path'],
                properties: { path: { type: 'string', minLength: 1, maxLength: 4096, description: 'a JSON Lines file inside dataDir()/imports or server.bulkFileRoots' } },
              },
            },
            // Bytes as sent (the OpenAPI document says binary, see app.js): each line is checked by the corpus
            // reader, bad lines are reported by the job.
            'application/x-ndjson': { schema: { description: 'JSON Lines: one document per line' } },
            'application/jsonl': { schema: { description: 'JSON Lines: one document per line' } },
          },
        },
        response: {
          200: syncBulkResponse,
          202: {
            type: 'object',
            properties: {
              job: { type: 'string' }, status_url: { type: 'string' }, model: { type: 'string' }, collection: { type: 'string' },
              lines: { type: 'integer' }, shards: { type: 'integer' },
            },
          },
          ...errorResponses,
        },
      },
    }, async (request, reply) => {
      const { collection } = /** @type {{collection: string}} */ (request.params);
      const body = /** @type {any} */ (request.body);
      if (/** @type {{sync: boolean}} */ (request.query).sync) {
        if (!(body && typeof body.pipe === 'function')) {
          // Each part is valid alone (the schema says so), the two together are not: 422, as other such pairs.
          const reason = 'takes the documents in the body as JSON Lines (application/x-ndjson); a {"path"} file is indexed by a queued job (without sync)';
          const e = errors.BULK_SOURCE_INVALID('{"path"}', `is not taken with sync=true: sync=true ${reason}`);
          e.details = { field: 'querystring.sync', reason };
          throw e;
        }
        const t0 = Date.now();
        const lines = await readSyncBody(body, config.server.bodyLimit, Number(request.headers['content-length']));
        const sm = models.acquire();
        try {
          const r = await syncBulk(ctx, sm, collection, lines);
          return { model: sm.name, collection, took_ms: Date.now() - t0, errors: r.errors, items: r.items };
        } finally {
          models.release(sm);
        }
      }
      const hub = ctx.hub;
      if (!hub) throw errors.QUEUE_UNAVAILABLE();
      hub.requireUp();
      const id = newJobId();
      let corpus;
      let uploaded = false;
      if (body && typeof body.pipe === 'function') {
        const declared = Number(request.headers['content-length']);
        if (declared > config.server.bulkBodyLimit) throw errors.BODY_TOO_LARGE(config.server.bulkBodyLimit);
        corpus = await saveUpload(body, id, config.server.bulkBodyLimit);
        uploaded = true;
      } else if (body && typeof body === 'object' && typeof body.path === 'string') {
        corpus = allowedCorpusPath(body.path, config.server.bulkFileRoots);
      } else {
        throw errors.MEDIA_TYPE_UNSUPPORTED(String(request.headers['content-type'] ?? 'none'), 'application/x-ndjson, or application/json with {"path"}');
      }
      const sm = models.acquire();
      try {
        try {
          await sm.writableCollection(collection);
        } catch (err) {
          if (uploaded) discardUpload(corpus);
          throw err;
        }
        const rec = await createBulkJob({ id, corpus, uploaded, model: sm.name, collection, config, hub });
        reply.code(202);
        return { job: id, status_url: `/v1/jobs/${id}`, model: sm.name, collection, lines: rec.lines, shards: rec.shards.length };
      } finally {
        models.release(sm);
      }
    });
  });
}
