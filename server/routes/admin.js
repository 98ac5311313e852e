// Bull Board at /admin/queues (/admin leads there): every pipeline queue, read-only, behind the write key. Read-only
// because a job added or edited there would run with whatever payload it names (workers check every job anyway,
// pipeline/queue/job-schemas.js): jobs are queued by the API and the CLI only. Scripts send the key as a header; a
// browser logs in at /admin/login and carries a session cookie (server/admin-session.js).
// Nothing is loaded from other hosts: the board's link to Google Fonts is dropped (the page falls back to the
// system's sans-serif). Its routes are hidden from the OpenAPI document: they are a UI, not the API.
import { createBullBoard } from '@bull-board/api';
import { BullAdapter } from '@bull-board/api/bullAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { errors } from '../../pipeline/errors.js';
import { KeyFailures, keyChecker, presentedKey } from '../auth.js';
import { errorBody } from '../error-replies.js';
import { ADMIN_ROOT, AdminSessions } from '../admin-session.js';
import { loginPage } from './admin-login-page.js';

export const ADMIN_PATH = '/admin/queues';
export const LOGIN_PATH = `${ADMIN_ROOT}/login`;
export const LOGOUT_PATH = `${ADMIN_ROOT}/logout`;

/** `<link>` tags that load from another host (the board's web fonts). */
const EXTERNAL_LINK = /<link\b[^>]*\bhref="(?:https?:)?\/\/[^"]*"[^>]*>\s*/gi;

/**
 * Where to go after logging in: a page of the board only (never another site), as a Location header can carry it.
 * A control character, a space or line separator of any kind, an invisible format character or a lone surrogate
 * sends the browser to the board's first page; other non-ASCII letters (é) are percent-encoded as UTF-8.
 * @param {unknown} next
 * @returns {string}
 */
export function safeNext(next) {
  if (typeof next !== 'string' || !/^\/admin\/queues(?:[/?#][^\\]*)?$/.test(next) || next.includes('//')) return ADMIN_PATH;
  if (/[\p{Cc}\p{Z}\p{Cf}\p{Cs}]/u.test(next)) return ADMIN_PATH;
  return next.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));
}

/** A browser opening a page of the board (not its JSON API). @param {import('fastify').FastifyRequest} request */
const wantsHtml = (request) => request.method === 'GET' && /text\/html/.test(String(request.headers.accept ?? '')) &&
  !request.url.startsWith(`${ADMIN_PATH}/api/`);

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {import('../app.js').AppContext} ctx
 */
export default async function adminRoutes(app, ctx) {
  const hub = ctx.hub;
  if (!hub) return;
  const s = ctx.config.server;
  const sessions = new AdminSessions({ redis: hub.redis, prefix: ctx.config.queue.prefix, apiKeyHashes: s.apiKeyHashes, maxAgeS: s.adminSessionS });
  const checkKey = keyChecker(s.apiKeyHashes);
  const failures = ctx.keyFailures ?? new KeyFailures(s.keyFailures);
  const open = { access: 'open' };

  await app.register(async (scope) => {
    scope.addHook('onRoute', (route) => { route.schema = { ...(route.schema ?? {}), hide: true }; });
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 4096 },
      (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))));

    scope.get(LOGIN_PATH, { config: open }, async (request, reply) => {
      const next = safeNext(/** @type {any} */ (request.query)?.next);
      if (await sessions.valid(request.headers.cookie)) return reply.redirect(next, 303);
      return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(loginPage({ next, maxAgeS: s.adminSessionS }));
    });

    scope.post(LOGIN_PATH, { config: open }, async (request, reply) => {
      const body = /** @type {Record<string, unknown>} */ (request.body ?? {});
      const next = safeNext(body.next);
      const html = !String(request.headers['content-type'] ?? '').includes('json');
      const key = typeof body.key === 'string' ? body.key.trim() : '';
      // A valid key always opens a session; a wrong one counts (429 past server.keyFailures, as on the header path).
      if (!key || !checkKey(key)) {
        const e = key ? failures.refuse(request.ip, key, 'the queue board', reply) : errors.UNAUTHORIZED();
        reply.code(e.status);
        const says = !key ? 'Enter an API key.' : e.status === 429 ? e.message : 'That key is not valid for the queue board.';
        return html ? reply.type('text/html; charset=utf-8').send(loginPage({ next, maxAgeS: s.adminSessionS, error: says })) : reply.send(errorBody(e));
      }
      hub.requireUp(); // sessions live in Redis
      const id = await sessions.open(key);
      reply.header('set-cookie', sessions.cookie(id, request.protocol === 'https'));
      return html ? reply.redirect(next, 303) : reply.code(204).send();
    });

    const logout = async (/** @type {import('fastify').FastifyRequest} */ request, /** @type {import('fastify').FastifyReply} */ reply) => {
      await sessions.close(request.headers.cookie);
      reply.header('set-cookie', sessions.cookie(null, request.protocol === 'https'));
      return reply.redirect(LOGIN_PATH, 303);
    };
    scope.get(LOGOUT_PATH, { config: open }, logout);
    // The board's own root, for whoever types /admin.
    scope.get(ADMIN_ROOT, { config: open }, async (_request, reply) => reply.redirect(ADMIN_PATH, 302));
    scope.post(LOGOUT_PATH, { config: open }, logout);
  });

  const board = new FastifyAdapter();
  createBullBoard({
    queues: Object.values(hub.queues).map((q) => new BullAdapter(q, { readOnlyMode: true })),
    serverAdapter: board,
    options: { uiConfig: { boardTitle: 'scdv queues', hideDocsLink: true, miscLinks: [{ text: 'Log out', url: LOGOUT_PATH }] } },
  });
  board.setBasePath(ADMIN_PATH);
  await app.register(async (scope) => {
    // Every board route, its static files included, needs the write key: as a header (checked like every write
    // route's), or a session cookie. A browser without either is sent to the login page; a script gets 401/403.
    scope.addHook('onRequest', async (request, reply) => {
      const key = presentedKey(request.headers);
      if (key !== undefined) {
        if (checkKey(key)) return;
        const e = failures.refuse(request.ip, key, 'write and admin routes', reply);
        return reply.code(e.status).send(errorBody(e));
      }
      if (await sessions.valid(request.headers.cookie)) return;
      if (wantsHtml(request)) return reply.redirect(`${LOGIN_PATH}?next=${encodeURIComponent(safeNext(request.url))}`, 303);
      const e = errors.UNAUTHORIZED();
      return reply.code(e.status).header('www-authenticate', 'Bearer').send(errorBody(e));
    });
    // Read-only beyond the board's own readOnlyMode (which leaves some routes, such as pausing every queue, to each
    // queue's flag): no request but a read reaches its API.
    scope.addHook('onRequest', async (request, reply) => {
      if (reply.sent || request.method === 'GET' || request.method === 'HEAD' || !request.url.startsWith(`${ADMIN_PATH}/api/`)) return;
      const e = errors.BOARD_READ_ONLY(request.method, request.url.split('?')[0]);
      return reply.code(e.status).header('allow', 'GET, HEAD').send(errorBody(e));
    });
    // The board's API reads the queues: with Redis down its calls would wait for the reconnect (Bull queues
    // keep commands while offline), so they answer 503 at once, like the other queue routes.
    scope.addHook('onRequest', async (request, reply) => {
      if (reply.sent || hub.up || !request.url.startsWith(`${ADMIN_PATH}/api/`)) return;
      const e = errors.QUEUE_UNAVAILABLE();
      return reply.code(e.status).send(errorBody(e));
    });
    scope.addHook('onSend', async (_request, reply, payload) => {
      const type = String(reply.getHeader('content-type') ?? '');
      return typeof payload === 'string' && type.startsWith('text/html') ? payload.replace(EXTERNAL_LINK, '') : payload;
    });
    // The app-wide access hook lets these through: the hook above decides, cookie included.
    scope.addHook('onRoute', (route) => {
      route.schema = { ...(route.schema ?? {}), hide: true };
      route.config = /** @type {any} */ ({ ...(route.config ?? {}), access: 'open' });
    });
    await scope.register(/** @type {any} */ (board.registerPlugin()), { prefix: ADMIN_PATH });
  });
}
