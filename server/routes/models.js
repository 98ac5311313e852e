// Models: which exist, which one answers, and switching (with rollback to the previous one).
import { errorResponses } from '../error-replies.js';
import { listModels, servingEmbedConfig, storeCollections } from '../../pipeline/serving/index.js';
import { loadModel } from '../../pipeline/model/load.js';
import { modelLayout } from '../../pipeline/embed/index.js';
import { OPTIONAL_BODY, collectionListingSchema, collectionName, keyed, modelName } from '../schemas.js';

/** Widths of models not loaded, by name and creation date (a retrained model is another entry). */
const unloadedWidths = new Map();

/**
 * The width a model's vectors have when served (its layout under the serving embed settings: K·d plus the
 * vocabulary in the hybrid layout), without keeping it loaded; the SCDV block's K·d if the model cannot be read.
 * @param {{name: string, created_at: string, manifest: Record<string, any>}} m
 * @param {import('../../pipeline/config.js').Config} config
 * @returns {Promise<number>}
 */
async function unloadedWidth(m, config) {
  const key = `${m.name}\0${m.created_at}`;
  if (!unloadedWidths.has(key)) {
    try {
      const embed = await servingEmbedConfig(m.name, config, { info: () => {} });
      const model = loadModel(m.name);
      try { unloadedWidths.set(key, modelLayout(model, embed).width); } finally { model.wordTopics.close(); }
    } catch {
      return m.manifest.counts?.dims ?? 0;
    }
  }
  return unloadedWidths.get(key);
}

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {import('../app.js').AppContext} ctx
 */
export default function modelRoutes(app, ctx) {
  const { models } = ctx;
  const collections = {
    type: 'array',
    items: collectionListingSchema,
  };
  const switchResult = {
    type: 'object',
    properties: {
      active: { type: 'string' }, previous: { type: ['string', 'null'] }, changed: { type: 'boolean' },
      unserved: {
        type: 'array', items: { type: 'string' },
        description: 'present when the body named `collections`: collections with documents the previous model served that the new one lacks (now 404)',
      },
    },
    required: ['active', 'previous', 'changed'],
  };
  const activateBody = {
    type: 'object',
    description: 'Optional. Without it, the new model must hold every collection (with documents) the active model serves.',
    properties: {
      collections: {
        type: 'array', items: collectionName, uniqueItems: true, maxItems: 1000,
        description: 'serve only these (each must hold documents in the new model); the active model\'s other collections '
          + 'stop being served and are listed in `unserved`. For a model built without some collection, e.g. a site without ads: ["articles"]',
      },
    },
    additionalProperties: false,
  };

  app.get('/v1/models', {
    schema: {
      tags: ['models'],
      summary: 'Trained models, the active one and the previous one (the rollback target), with their collections',
      response: {
        200: {
          type: 'object',
          properties: {
            active: { type: 'string' },
            previous: { type: ['string', 'null'] },
            models: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  name: { type: 'string' }, created_at: { type: 'string' }, width: { type: 'integer' },
                  active: { type: 'boolean' }, loaded: { type: 'boolean' }, collections,
                },
              },
            },
          },
        },
        ...errorResponses,
      },
    },
  }, async () => {
    const cur = /** @type {import('../model-state.js').ServingModel} */ (models.current);
    const prev = models.previous;
    const loaded = new Map([[cur.name, cur], ...(prev ? /** @type {const} */ ([[prev.name, prev]]) : [])]);
    return {
      active: cur.name,
      previous: prev?.name ?? (await models.records.read())?.previous ?? null,
      models: await Promise.all(listModels().map(async (m) => {
        const sm = loaded.get(m.name);
        const counts = m.manifest.counts ?? {};
        return {
          name: m.name, created_at: m.created_at, width: sm?.width ?? await unloadedWidth(m, models.config),
          active: m.name === cur.name, loaded: Boolean(sm), collections: sm ? await sm.collections() : await storeCollections(m.name, models.config),
        };
      })),
    };
  });

  app.post('/v1/models/:name/activate', {
    config: { access: 'write' },
    schema: {
      tags: ['models'],
      summary: 'Serve with this model from now on (every server process follows); refused (409, with the commands that fix it) '
        + 'while its store lacks a collection the active model serves, unless the body names the collections to serve',
      security: keyed,
      params: { type: 'object', properties: { name: modelName }, required: ['name'] },
      body: activateBody,
      [OPTIONAL_BODY]: true,
      response: { 200: switchResult, ...errorResponses },
    },
    // The body is optional: no body is the default activation (validated as {}).
    preValidation: async (request) => { if (request.body === undefined) request.body = {}; },
  }, async (request) => {
    const { name } = /** @type {{name: string}} */ (request.params);
    const body = /** @type {{collections?: string[]} | undefined} */ (request.body);
    return models.activate(name, { collections: body?.collections });
  });
}
