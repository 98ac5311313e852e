// /docs (Swagger UI over the generated OpenAPI document) and /admin/queues (Bull Board) render in a real
// browser: Debian's chromium driven by playwright-core. Screenshots are kept in SCDV_SCREENSHOT_DIR when set.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { launchChromium, screenshotDir } from '../lib/browser.js';

const h = await import('./helpers.js');
const { startServer } = await import('../../server/start.js');

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

    const board = await browser.newPage({ viewport: { width: 1280, height: 900 }, extraHTTPHeaders: { authorization: `Bearer ${h.API_KEY}` } });
    board.on('pageerror', (e) => errors.push(e.message));
    const res = await board.goto(`${srv.url}/admin/queues`);
    await board.waitForLoadState('networkidle');
    assert.equal(res?.status(), 200);
    await board.waitForSelector('text=precompute', { timeout: 15_000 });
    assert.ok((await board.locator('text=/^index$/').count()) > 0, 'the index queue is listed');
    await board.screenshot({ path: path.join(shots, 'queues.png') });
    assert.equal(errors.length, 0, errors.join('; '));

    const anonymous = await browser.newPage();
    const denied = await anonymous.goto(`${srv.url}/admin/queues`);
    assert.equal(denied?.status(), 401);
  } finally {
    await browser.close();
    if (!process.env.SCDV_SCREENSHOT_DIR) fs.rmSync(shots, { recursive: true, force: true });
  }
});
