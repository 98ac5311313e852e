// The request-text threads' two lanes (pipeline/embed/pool.js): a small text is not held up behind large ones
// (server.embedLargeTextChars), and at most server.embedLargeQueue large texts wait, one more is refused with 503 and
// Retry-After (counted in scdv_busy_refused_total).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

const h = await import('./helpers.js');
const { EmbedPool } = await import('../../pipeline/embed/pool.js');
const { DEFAULT_CONFIG } = await import('../../pipeline/config.js');
const { startServer } = await import('../../server/start.js');

before(async () => { await h.setup(); });
after(async () => { await h.teardown(); });

/** A large text: sample articles' bodies, repeated to `chars` characters. @param {number} chars */
function largeText(chars) {
  const bodies = h.sampleDocs().map((d) => d.body).join('\n');
  return bodies.repeat(Math.ceil(chars / bodies.length)).slice(0, chars);
}

test('the defaults: texts over 20,000 characters are large, 8 of them may wait', () => {
  assert.deepEqual([DEFAULT_CONFIG.server.embedLargeTextChars, DEFAULT_CONFIG.server.embedLargeQueue], [20_000, 8]);
});

test('a small text sent after 12 large ones is embedded before almost all of them', async () => {
  const pool = await EmbedPool.start({ model: h.MODEL_A, config: h.testConfig(), size: 2, largeChars: 20_000, largeQueue: 100 });
  try {
    const big = largeText(120_000);
    let largeDone = 0;
    const larges = Array.from({ length: 12 }, () => pool.embedDocuments([{ body: big }]).then(() => { largeDone++; }));
    const t0 = performance.now();
    await pool.embedDocuments([{ title: '野球', body: 'プロ野球の試合で投手が完封した' }]);
    const smallMs = performance.now() - t0;
    const doneBefore = largeDone;
    await Promise.all(larges);
    const allMs = performance.now() - t0;
    // Large texts take one of the two threads at a time: the small one goes on the other at once.
    assert.ok(doneBefore <= 1, `${doneBefore} of 12 large texts were embedded before the small one (${smallMs.toFixed(0)} ms of ${allMs.toFixed(0)} ms)`);
    assert.deepEqual(pool.waiting, { small: 0, large: 0 });
  } finally {
    await pool.close();
  }
});

test('with one thread, a small text waits for at most the large text in progress', async () => {
  const pool = await EmbedPool.start({ model: h.MODEL_A, config: h.testConfig(), size: 1, largeChars: 20_000 });
  try {
    const big = largeText(60_000);
    let largeDone = 0;
    const larges = Array.from({ length: 6 }, () => pool.embedDocuments([{ body: big }]).then(() => { largeDone++; }));
    await pool.embedDocuments([{ body: '映画が劇場で公開された' }]);
    assert.ok(largeDone <= 1, `${largeDone} of 6 large texts before the small one`);
    await Promise.all(larges);
  } finally {
    await pool.close();
  }
});

test('past server.embedLargeQueue waiting large texts, related-for-text answers 503 with Retry-After, counted', async () => {
  const srv = await startServer({ config: h.testConfig({ embedThreads: 2, embedLargeQueue: 2 }), model: h.MODEL_A, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  try {
    const big = largeText(150_000);
    const ask = () => fetch(`${srv.url}/v1/collections/articles/related`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: big, k: 3 }),
    }).then(async (r) => ({ status: r.status, retry: r.headers.get('retry-after'), body: /** @type {any} */ (await r.json()) }));
    // One runs (large texts take one of the two threads), two wait, the others are refused.
    const answers = await Promise.all(Array.from({ length: 6 }, ask));
    const refused = answers.filter((a) => a.status === 503);
    assert.equal(answers.filter((a) => a.status === 200).length + refused.length, 6, JSON.stringify(answers.map((a) => a.status)));
    assert.ok(refused.length >= 1 && refused.length <= 3, JSON.stringify(answers.map((a) => a.status)));
    assert.equal(refused[0].retry, '2');
    assert.equal(refused[0].body.error, 'SCDV_SERVER_BUSY');
    assert.match(refused[0].body.message, /server\.embedLargeQueue 2/);
    const m = await (await fetch(`${srv.url}/metrics`)).text();
    assert.match(m, new RegExp(`scdv_busy_refused_total\\{queue="embed_large"\\} ${refused.length}\\b`));
  } finally {
    await srv.close();
  }
});
