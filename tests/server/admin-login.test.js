// The queue board in an ordinary browser: a login form takes the key and sets a session cookie (HttpOnly,
// SameSite=Strict, Path=/admin, Max-Age; the key never in it), wrong keys are refused and rate-limited, an expired
// session is refused, browsers without a session are sent to the login page, scripts keep the header key, and the
// board lists every pipeline queue. Real server (fastify.inject), real Redis.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

const h = await import('./helpers.js');
const { startServer } = await import('../../server/start.js');
const { QUEUE_NAMES } = await import('../../pipeline/queue/queues.js');
const { LOGIN_FAILURES_ALLOWED } = await import('../../server/admin-session.js');

/** @type {import('../../server/start.js').RunningServer} */
let srv;
/** @type {string} */
let redisUrl;
const HTML = { accept: 'text/html,application/xhtml+xml' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

before(async () => {
  ({ redis: { url: redisUrl } } = await h.setup());
  srv = await startServer({ config: h.testConfig({ openReads: false }), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
});
after(async () => {
  await srv?.close();
  await h.teardown();
});

/**
 * POST the login form as a browser does; returns the response.
 * @param {import('fastify').FastifyInstance} app
 * @param {string} key
 * @param {Record<string, string>} [headers]
 */
const login = (app, key, headers = {}) => app.inject({
  method: 'POST', url: '/admin/login', headers: { ...FORM, ...HTML, ...headers }, payload: new URLSearchParams({ key, next: '/admin/queues/queue/train' }).toString(),
});

/** @param {import('light-my-request').Response} res */
const sessionCookie = (res) => {
  const c = String(res.headers['set-cookie'] ?? '');
  return c.split(';')[0];
};

test('a browser without a session is sent to the login form; scripts keep the header key and its 401/403', async () => {
  const page = await srv.app.inject({ url: '/admin/queues', headers: HTML });
  assert.equal(page.statusCode, 303);
  assert.equal(page.headers.location, '/admin/login?next=%2Fadmin%2Fqueues');
  const form = await srv.app.inject({ url: '/admin/login', headers: HTML });
  assert.equal(form.statusCode, 200);
  assert.match(form.body, /<form method="post" action="\/admin\/login">/);
  assert.match(form.body, /name="key" type="password"/);
  assert.doesNotMatch(form.body, /https?:\/\//, 'the login page loads nothing from anywhere');
  assert.equal((await srv.app.inject({ url: '/admin/queues' })).statusCode, 401);
  assert.equal((await srv.app.inject({ url: '/admin/queues', headers: { 'x-api-key': 'nope' } })).statusCode, 403);
  assert.equal((await srv.app.inject({ url: '/admin/queues/api/queues', headers: { 'x-api-key': h.API_KEY } })).statusCode, 200);
});

test('login sets a secure session cookie without the key; the board with it lists every queue; logout ends it', async () => {
  const res = await login(srv.app, h.API_KEY);
  assert.equal(res.statusCode, 303);
  assert.equal(res.headers.location, '/admin/queues/queue/train', 'back to the page asked for');
  const setCookie = String(res.headers['set-cookie']);
  const attrs = setCookie.split(';').map((a) => a.trim());
  assert.match(attrs[0], /^scdv_admin=[A-Za-z0-9_-]{43}$/);
  assert.ok(!setCookie.includes(h.API_KEY), 'never the key');
  assert.ok(attrs.includes('HttpOnly') && attrs.includes('SameSite=Strict') && attrs.includes('Path=/admin'), setCookie);
  assert.ok(attrs.includes(`Max-Age=${h.testConfig().server.adminSessionS}`), setCookie);
  assert.ok(!attrs.includes('Secure'), 'plain HTTP: a Secure cookie would never come back');
  const cookie = sessionCookie(res);

  const board = await srv.app.inject({ url: '/admin/queues', headers: { ...HTML, cookie } });
  assert.equal(board.statusCode, 200);
  assert.match(board.body, /<title>scdv queues<\/title>/);
  assert.doesNotMatch(board.body, /fonts\.googleapis|<link[^>]+href="https?:/, 'nothing loaded from another host');
  const api = await srv.app.inject({ url: '/admin/queues/api/queues', headers: { cookie } });
  assert.equal(api.statusCode, 200);
  assert.deepEqual(api.json().queues.map((/** @type {any} */ q) => q.name).sort(), [...QUEUE_NAMES].sort());
  assert.deepEqual([...QUEUE_NAMES].sort(), ['index', 'precompute', 'tokenize', 'train']);
  // A forged or unknown id is nothing.
  assert.equal((await srv.app.inject({ url: '/admin/queues/api/queues', headers: { cookie: `scdv_admin=${'A'.repeat(43)}` } })).statusCode, 401);

  const out = await srv.app.inject({ url: '/admin/logout', headers: { cookie } });
  assert.equal(out.statusCode, 303);
  assert.match(String(out.headers['set-cookie']), /^scdv_admin=; Path=\/admin; Max-Age=0; HttpOnly; SameSite=Strict/);
  assert.equal((await srv.app.inject({ url: '/admin/queues/api/queues', headers: { cookie } })).statusCode, 401, 'the session is gone server-side too');
});

test('over TLS (a trusted proxy saying https) the cookie is Secure', async () => {
  const proxied = await startServer({ config: h.testConfig({ trustProxy: true }), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  try {
    const res = await login(proxied.app, h.API_KEY, { 'x-forwarded-proto': 'https' });
    assert.equal(res.statusCode, 303);
    assert.match(String(res.headers['set-cookie']), /; Secure$/);
  } finally {
    await proxied.close();
  }
});

test('an expired session is refused (the cookie and the server-side session both expire)', async () => {
  const short = await startServer({ config: h.testConfig({ adminSessionS: 1 }), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  try {
    const res = await login(short.app, h.API_KEY);
    assert.match(String(res.headers['set-cookie']), /Max-Age=1;/);
    const cookie = sessionCookie(res);
    assert.equal((await short.app.inject({ url: '/admin/queues/api/queues', headers: { cookie } })).statusCode, 200);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal((await short.app.inject({ url: '/admin/queues/api/queues', headers: { cookie } })).statusCode, 401);
    const page = await short.app.inject({ url: '/admin/queues', headers: { ...HTML, cookie } });
    assert.equal(page.statusCode, 303, 'a browser with an expired session logs in again');
  } finally {
    await short.close();
  }
});

test('wrong keys are refused, then the address is rate-limited (even the right key waits)', async () => {
  const empty = await login(srv.app, '');
  assert.equal(empty.statusCode, 401);
  const wrong = await login(srv.app, 'not-the-key');
  assert.equal(wrong.statusCode, 403);
  assert.equal(wrong.headers['set-cookie'], undefined);
  assert.match(wrong.body, /That key is not valid for the queue board/);
  const json = await srv.app.inject({ method: 'POST', url: '/admin/login', payload: { key: 'not-the-key' } });
  assert.equal(json.statusCode, 403);
  assert.equal(json.json().error, 'SCDV_FORBIDDEN');
  for (let i = 3; i < LOGIN_FAILURES_ALLOWED; i++) assert.equal((await login(srv.app, `wrong-${i}`)).statusCode, 403);
  const limited = await login(srv.app, h.API_KEY);
  assert.equal(limited.statusCode, 429);
  assert.ok(Number(limited.headers['retry-after']) > 0);
  assert.equal(limited.headers['set-cookie'], undefined);
  assert.match(limited.body, /wrong keys from this address/);
  const jsonLimited = await srv.app.inject({ method: 'POST', url: '/admin/login', payload: { key: h.API_KEY } });
  assert.equal(jsonLimited.json().error, 'SCDV_LOGIN_RATE_LIMITED');
});

test('after login only pages of the board: never another site', async () => {
  const fresh = await startServer({ config: h.testConfig(), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  try {
    for (const next of ['https://evil.example/', '//evil.example/admin/queues', '/admin/queues//evil.example', '/docs']) {
      const res = await fresh.app.inject({ method: 'POST', url: '/admin/login', headers: { ...FORM, ...HTML }, payload: new URLSearchParams({ key: h.API_KEY, next }).toString() });
      assert.equal(res.headers.location, '/admin/queues', next);
    }
  } finally {
    await fresh.close();
  }
});
