// /docs (Swagger UI over the generated OpenAPI document) and /admin/queues (Bull Board) render in a real
// browser: Debian's chromium driven by playwright-core. Screenshots are kept in SCDV_SCREENSHOT_DIR when set.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { launchChromium, screenshotDir } from '../lib/browser.js';

const h = await import('./helpers.js');
const { startServer } = await import('../../server/start.js');
const { QUEUE_NAMES } = await import('../../pipeline/queue/queues.js');

/** @type {import('../../server/start.js').RunningServer} */
let srv;
before(async () => {
  const { redis } = await h.setup();
  srv = await startServer({ config: h.testConfig(), model: h.MODEL_A, redisUrl: redis.url, host: '127.0.0.1', port: 0, indexWorkers: 0 });
});
after(async () => {
  await srv?.close();
  await h.teardown();
});

test('/docs and /admin/queues render in chromium', async () => {
  const shots = screenshotDir();
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    /** @type {string[]} */
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${srv.url}/docs`);
    await page.waitForSelector('.swagger-ui .info .title', { timeout: 15_000 });
    assert.match(await page.textContent('.swagger-ui .info .title') ?? '', /scdv-recommender/);
    const operations = await page.locator('.opblock-summary-path').allTextContents();
    assert.ok(operations.some((t) => t.includes('/v1/collections/{collection}/documents/{id}/related')), operations.join(', '));
    assert.ok(operations.some((t) => t.includes('/v1/match')));
    await page.screenshot({ path: path.join(shots, 'docs.png') });
    assert.equal(errors.length, 0, errors.join('; '));

    // The board as a person opens it: no key header, the login form, then the queues; every request to this server.
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    /** @type {string[]} */
    const elsewhere = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${srv.url}/`) || url.startsWith('data:')) return route.continue();
      elsewhere.push(url);
      return route.abort();
    });
    const board = await context.newPage();
    board.on('pageerror', (e) => errors.push(e.message));
    await board.goto(`${srv.url}/admin/queues`);
    assert.equal(new URL(board.url()).pathname, '/admin/login', 'a browser without a session gets the login form');
    await board.fill('input[name=key]', 'wrong-key');
    await board.click('button[type=submit]');
    await board.waitForSelector('text=That key is not valid for the queue board');
    await board.fill('input[name=key]', h.API_KEY);
    await Promise.all([board.waitForURL(`${srv.url}/admin/queues`), board.click('button[type=submit]')]);
    await board.waitForLoadState('networkidle');
    for (const name of QUEUE_NAMES) {
      await board.waitForSelector(`text=/^${name}$/`, { timeout: 15_000 });
    }
    const cookies = await context.cookies();
    assert.deepEqual(cookies.map((c) => [c.name, c.httpOnly, c.sameSite, c.path]), [['scdv_admin', true, 'Strict', '/admin']]);
    await board.screenshot({ path: path.join(shots, 'queues.png') });
    assert.deepEqual(elsewhere, [], 'nothing is loaded from another host');
    assert.equal(errors.length, 0, errors.join('; '));
    await board.goto(`${srv.url}/admin/logout`);
    assert.equal(new URL(board.url()).pathname, '/admin/login');
    await board.goto(`${srv.url}/admin/queues`);
    assert.equal(new URL(board.url()).pathname, '/admin/login', 'logged out');

    const anonymous = await browser.newPage();
    const denied = await anonymous.goto(`${srv.url}/admin/queues/api/queues`);
    assert.equal(denied?.status(), 401);
  } finally {
    await browser.close();
    if (!process.env.SCDV_SCREENSHOT_DIR) fs.rmSync(shots, { recursive: true, force: true });
  }
});
