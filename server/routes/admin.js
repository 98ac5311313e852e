// Bull Board at /admin/queues: the embed and precompute queues, behind the write key (it can retry and
// remove jobs). Its routes are hidden from the OpenAPI document: they are a UI, not the API.
import { createBullBoard } from '@bull-board/api';
import { BullAdapter } from '@bull-board/api/bullAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { errors } from '../../pipeline/errors.js';
import { accessHook } from '../auth.js';
import { errorBody } from '../errors.js';

export const ADMIN_PATH = '/admin/queues';

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {import('../app.js').AppContext} ctx
 */
export default async function adminRoutes(app, ctx) {
  const hub = ctx.hub;
  if (!hub) return;
  const board = new FastifyAdapter();
  createBullBoard({
    queues: Object.values(hub.queues).map((q) => new BullAdapter(q, { readOnlyMode: false })),
    serverAdapter: board,
    options: { uiConfig: { boardTitle: 'scdv queues' } },
  });
  board.setBasePath(ADMIN_PATH);
  await app.register(async (scope) => {
    // Every board route, its static files included, needs the write key.
    scope.addHook('onRequest', accessHook({ ...ctx.config.server, openReads: false }));
    // The board's API reads the queues: with Redis down its calls would wait for the reconnect (Bull queues
    // keep commands while offline), so they answer 503 at once, like the other queue routes.
    scope.addHook('onRequest', async (request, reply) => {
      if (reply.sent || hub.up || !request.url.startsWith(`${ADMIN_PATH}/api/`)) return;
      const e = errors.QUEUE_UNAVAILABLE();
      return reply.code(e.status).send(errorBody(e));
    });
    scope.addHook('onRoute', (route) => { route.schema = { ...(route.schema ?? {}), hide: true }; });
    await scope.register(/** @type {any} */ (board.registerPlugin()), { prefix: ADMIN_PATH });
  });
}
