// Liveness, readiness and metrics: what orchestrators and Prometheus call.
import { errorResponses } from '../error-replies.js';

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {import('../app.js').AppContext} ctx
 */
export default function healthRoutes(app, ctx) {
  app.get('/healthz', {
    config: { access: 'open' },
    schema: {
      tags: ['operations'],
      summary: 'The process is alive',
      response: { 200: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] } } } },
    },
  }, async () => ({ status: 'ok' }));

  const ready = {
    type: 'object',
    properties: {
      status: { type: 'string', enum: ['ready', 'not_ready'] },
      model: { type: ['string', 'null'] },
      store: { type: 'boolean', description: 'the active model\'s store is open and its backend answers' },
      backend: {
        type: 'object',
        description: 'the store backend\'s own health (native: always ok; opensearch: reachable and not red)',
        properties: { backend: { type: 'string' }, ok: { type: 'boolean' }, detail: { type: 'string' } },
      },
      redis: { type: 'string', enum: ['up', 'down'], description: 'down: reads still work, queue routes answer 503' },
    },
  };
  app.get('/readyz', {
    config: { access: 'open' },
    schema: {
      tags: ['operations'],
      summary: 'Ready to answer: a model loaded, its store open and its backend healthy (Redis is reported, not required)',
      response: { 200: ready, 503: ready },
    },
  }, async (_request, reply) => {
    const sm = ctx.models.current;
    const open = Boolean(sm && !sm.closed);
    const backend = open && sm ? await sm.store.health() : null;
    const ok = open && Boolean(backend?.ok) && !ctx.status.shuttingDown;
    reply.code(ok ? 200 : 503);
    return {
      status: ok ? 'ready' : 'not_ready', model: sm?.name ?? null, store: open && Boolean(backend?.ok), ...(backend ? { backend } : {}),
      redis: ctx.hub?.up ? 'up' : 'down',
    };
  });

  app.get('/metrics', {
    schema: {
      tags: ['operations'],
      summary: 'Prometheus metrics (text exposition format)',
      produces: ['text/plain'],
      response: { 200: { type: 'string', description: 'Prometheus text format 0.0.4' }, ...errorResponses },
    },
  }, async (_request, reply) => {
    reply.type('text/plain; version=0.0.4; charset=utf-8');
    return ctx.metrics.text();
  });
}
