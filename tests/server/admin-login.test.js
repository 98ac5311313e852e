// The queue board in an ordinary browser: a login form takes the key and sets a session cookie (HttpOnly,
// SameSite=Strict, Path=/admin, Max-Age; the key never in it), wrong keys are refused and rate-limited, an expired
// session is refused, browsers without a session are sent to the login page, scripts keep the header key, and the
// board lists every pipeline queue. Real server (fastify.inject), real Redis.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

const h = await import('./helpers.js');
const { startServer } = await import('../../server/start.js');
const { QUEUE_NAMES } = await import('../../pipeline/queue/queues.js');
const { safeNext } = await import('../../server/routes/admin.js');

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

test('wrong keys are refused, then rate-limited per address; the right key still gets in, by form, header or write route', async () => {
  const limited = await startServer({ config: h.testConfig({ openReads: false, keyFailures: { perAddress: 3, perKey: 0, total: 0, windowS: 900 } }), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  try {
    const empty = await login(limited.app, '');
    assert.equal(empty.statusCode, 401);
    const wrong = await login(limited.app, 'not-the-key');
    assert.equal(wrong.statusCode, 403);
    assert.equal(wrong.headers['set-cookie'], undefined);
    assert.match(wrong.body, /That key is not valid for the queue board/);
    const json = await limited.app.inject({ method: 'POST', url: '/admin/login', payload: { key: 'not-the-key-either' } });
    assert.equal(json.statusCode, 403);
    assert.equal(json.json().error, 'SCDV_FORBIDDEN');
    assert.equal((await login(limited.app, 'wrong-3')).statusCode, 403);
    const refused = await login(limited.app, 'wrong-4');
    assert.equal(refused.statusCode, 429);
    const wait = Number(refused.headers['retry-after']);
    assert.ok(wait > 0 && wait <= 900, String(wait));
    assert.match(refused.body, /4 wrong API keys from this address/);
    const jsonRefused = await limited.app.inject({ method: 'POST', url: '/admin/login', payload: { key: 'wrong-5' } });
    assert.equal(jsonRefused.json().error, 'SCDV_LOGIN_RATE_LIMITED');
    // The header path counts the same: a wrong key on the board's API or a write route is refused too.
    assert.equal((await limited.app.inject({ url: '/admin/queues/api/queues', headers: { authorization: 'Bearer wrong-6' } })).statusCode, 429);
    const put = await limited.app.inject({ method: 'PUT', url: '/v1/collections/articles/documents/k-1', headers: { 'x-api-key': 'wrong-7' }, payload: { body: '野球' } });
    assert.equal(put.statusCode, 429, put.body);
    // Others' failures never lock out a valid key, from the same address.
    const ok = await login(limited.app, h.API_KEY);
    assert.equal(ok.statusCode, 303);
    assert.match(String(ok.headers['set-cookie']), /^scdv_admin=/);
    assert.equal((await limited.app.inject({ method: 'POST', url: '/admin/login', payload: { key: h.API_KEY } })).statusCode, 204);
    assert.equal((await limited.app.inject({ url: '/admin/queues/api/queues', headers: { authorization: `Bearer ${h.API_KEY}` } })).statusCode, 200);
    assert.equal((await limited.app.inject({ url: '/v1/collections', headers: { 'x-api-key': h.API_KEY } })).statusCode, 200);
    const metrics = (await limited.app.inject({ url: '/metrics', headers: { 'x-api-key': h.API_KEY } })).body;
    assert.match(metrics, /^scdv_key_refusals_total\{scope="address"\} 4$/m);
  } finally {
    await limited.close();
  }
});

test('wrong keys sent as a header to the board are limited like logins (defaults: 10 per address)', async () => {
  const fresh = await startServer({ config: h.testConfig(), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  try {
    const { perAddress } = h.testConfig().server.keyFailures;
    assert.equal(perAddress, 10);
    /** @type {Record<number, number>} */
    const statuses = {};
    for (let i = 0; i < 200; i++) {
      const res = await fresh.app.inject({ url: '/admin/queues/api/queues', headers: { authorization: `Bearer guess-${i}` } });
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
    }
    assert.deepEqual(statuses, { 403: perAddress, 429: 200 - perAddress });
    assert.equal((await fresh.app.inject({ url: '/admin/queues/api/queues', headers: { authorization: `Bearer ${h.API_KEY}` } })).statusCode, 200);
  } finally {
    await fresh.close();
  }
});

test('behind a trusted proxy, rotating X-Forwarded-For does not escape the limit: per key and over all addresses', async () => {
  const proxied = await startServer({
    config: h.testConfig({ trustProxy: true, keyFailures: { perAddress: 10, perKey: 10, total: 30, windowS: 900 } }), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0,
  });
  const from = (/** @type {number} */ i) => ({ 'x-forwarded-for': `10.0.${i >> 8}.${i & 255}` });
  try {
    // One stale key from ever new addresses: counted per key.
    const same = [];
    for (let i = 0; i < 11; i++) same.push(await login(proxied.app, 'stale-key', from(i)));
    assert.deepEqual(same.map((r) => r.statusCode), [...Array(10).fill(403), 429]);
    assert.match(same[10].body, /11 wrong API keys with this key/);
    // A new key from a new address each time: counted over all addresses (30 per window here).
    const statuses = [];
    for (let i = 100; i < 140; i++) statuses.push((await login(proxied.app, `guess-${i}`, from(i))).statusCode);
    assert.deepEqual(statuses, [...Array(30 - 11).fill(403), ...Array(40 - 19).fill(429)]);
    const last = await proxied.app.inject({ method: 'POST', url: '/admin/login', headers: from(999), payload: { key: 'guess-x' } });
    assert.match(last.json().message, /wrong API keys from all addresses/);
    // The owner, from any address, still gets in.
    assert.equal((await login(proxied.app, h.API_KEY, from(7))).statusCode, 303);
    assert.equal((await login(proxied.app, h.API_KEY, from(5000))).statusCode, 303);
  } finally {
    await proxied.close();
  }
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

test('a next with a line break, a line separator or a non-ASCII letter never breaks the redirect', async () => {
  const fresh = await startServer({ config: h.testConfig(), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  try {
    const cases = [
      ['/admin/queues/x\r\nSet-Cookie: a=b', '/admin/queues'], ['/admin/queues\r', '/admin/queues'], ['/admin/queues/\u2028', '/admin/queues'],
      ['/admin/queues/a b', '/admin/queues'], ['/admin/queues/\u00e9', '/admin/queues/%C3%A9'],
      ['/admin/queues/queue/train?q=日本', '/admin/queues/queue/train?q=%E6%97%A5%E6%9C%AC'],
    ];
    let cookie = '';
    for (const [next, location] of cases) {
      const res = await fresh.app.inject({ method: 'POST', url: '/admin/login', headers: { ...FORM, ...HTML }, payload: new URLSearchParams({ key: h.API_KEY, next }).toString() });
      assert.equal(res.statusCode, 303, `${JSON.stringify(next)}: ${res.body}`);
      assert.equal(res.headers.location, location, JSON.stringify(next));
      cookie = sessionCookie(res);
    }
    for (const [next, location] of cases) {
      // With a session, the login page redirects at once; without, it renders the form with next in it.
      const url = `/admin/login?next=${encodeURIComponent(next)}`;
      const again = await fresh.app.inject({ url, headers: { ...HTML, cookie } });
      assert.equal(again.statusCode, 303, `${url}: ${again.body}`);
      assert.equal(again.headers.location, location, url);
      const page = await fresh.app.inject({ url, headers: HTML });
      assert.equal(page.statusCode, 200, url);
      assert.ok(page.body.includes(`name="next" value="${location}"`), url);
    }
    // A lone surrogate cannot come through a form (it decodes to U+FFFD), but JSON or a caller could hand one over.
    assert.equal(safeNext('/admin/queues/\ud800'), '/admin/queues');
  } finally {
    await fresh.close();
  }
});
