// Bull Board at /admin/queues: the embed and precompute queues, behind the write key (it can retry and
// remove jobs). Its routes are hidden from the OpenAPI document: they are a UI, not the API.
import { createBullBoard } from '@bull-board/api';
import { BullAdapter } from '@bull-board/api/bullAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { accessHook } from '../auth.js';

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
    scope.addHook('onRoute', (route) => { route.schema = { ...(route.schema ?? {}), hide: true }; });
    await scope.register(/** @type {any} */ (board.registerPlugin()), { prefix: ADMIN_PATH });
  });
}
