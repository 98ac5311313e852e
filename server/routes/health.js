// Liveness, readiness and metrics: what orchestrators and Prometheus call.
import { errorResponses } from '../errors.js';

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
      store: { type: 'boolean', description: 'the active model\'s store is open' },
      redis: { type: 'string', enum: ['up', 'down'], description: 'down: reads still work, queue routes answer 503' },
    },
  };
  app.get('/readyz', {
    config: { access: 'open' },
    schema: {
      tags: ['operations'],
      summary: 'Ready to answer: a model loaded and its store open (Redis is reported, not required)',
      response: { 200: ready, 503: ready },
    },
  }, async (_request, reply) => {
    const sm = ctx.models.current;
    const ok = Boolean(sm && !sm.closed) && !ctx.status.shuttingDown;
    reply.code(ok ? 200 : 503);
    return { status: ok ? 'ready' : 'not_ready', model: sm?.name ?? null, store: Boolean(sm && !sm.closed), redis: ctx.hub?.up ? 'up' : 'down' };
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
