// Conventions users bring from Elasticsearch: `category` and `site` in results, `from` paging, an ES
// `_bulk` body refused at once with the way to convert it, and raw UTF-8 in a query string answered in our
// error shape with a hint to percent-encode. Real models, store and Redis (helpers.js), a listening server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

const h = await import('./helpers.js');
const { startServer } = await import('../../server/start.js');
const { dataDir } = await import('../../pipeline/paths.js');

/** @type {import('../../server/start.js').RunningServer} */
let srv;
const KEY = { authorization: `Bearer ${h.API_KEY}` };
const DOC = 'sports-watch-4597641';

before(async () => {
  const { redis } = await h.setup();
  srv = await startServer({ config: h.testConfig(), model: h.MODEL_A, redisUrl: redis.url, host: '127.0.0.1', port: 0, indexWorkers: 0 });
});
after(async () => {
  await srv?.close();
  await h.teardown();
});

/** @param {import('light-my-request').InjectOptions | string} opts */
const call = (opts) => h.inject(srv.app, opts);

test('results carry the stored category and site', async () => {
  const doc = h.sampleDocs().find((d) => d.id === DOC);
  const put = await call({
    method: 'PUT', url: '/v1/collections/articles/documents/copy-1', headers: KEY,
    payload: { title: doc?.title, body: doc?.body, category: 'sports-watch', site: 'example' },
  });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  h.assertCopyCollapsed((await call(`/v1/collections/articles/documents/${DOC}/related?k=20`)).body, 'copy-1');
  const rel = (await call(`/v1/collections/articles/documents/${DOC}/related?k=20&collapse=false&feedback=false`)).body;
  const copy = h.assertCopyOnTop(rel.results, 'copy-1');
  assert.deepEqual({ ...copy, score: 0 }, { id: 'copy-1', score: 0, title: doc?.title, category: 'sports-watch', site: 'example' });
  // The sample's documents have a category and no site.
  for (const r of rel.results.filter((/** @type {any} */ x) => x.id !== 'copy-1')) {
    assert.equal(r.category, r.id.replace(/-\d+$/, ''), JSON.stringify(r));
    assert.equal('site' in r, false);
  }
  const text = (await call({ method: 'POST', url: '/v1/collections/articles/related', payload: { text: doc?.body, k: 3 } })).body;
  assert.equal(text.results.length, 3);
  for (const r of text.results) assert.equal(r.category, r.id === 'copy-1' ? 'sports-watch' : r.id.replace(/-\d+$/, ''), JSON.stringify(r));
  const match = (await call({ method: 'POST', url: '/v1/match', payload: { collection: 'articles', text: doc?.body, k: 2 } })).body;
  assert.equal(typeof match.results[0].category, 'string', JSON.stringify(match));
  const del = await call({ method: 'DELETE', url: '/v1/collections/articles/documents/copy-1', headers: KEY });
  assert.equal(del.status, 200);
});

test('`from` pages through the ranked list; from + k is at most maxK', async () => {
  const all = (await call(`/v1/collections/articles/documents/${DOC}/related?k=12`)).body.results;
  assert.equal(all.length, 12);
  const page2 = (await call(`/v1/collections/articles/documents/${DOC}/related?k=4&from=4`)).body.results;
  assert.deepEqual(page2, all.slice(4, 8));
  const first = (await call(`/v1/collections/articles/documents/${DOC}/related?k=4&from=0`)).body.results;
  assert.deepEqual(first, all.slice(0, 4));

  const text = h.sampleDocs().find((d) => d.id === DOC)?.body;
  const tAll = (await call({ method: 'POST', url: '/v1/collections/articles/related', payload: { text, k: 10 } })).body.results;
  const tPage = (await call({ method: 'POST', url: '/v1/collections/articles/related', payload: { text, k: 3, from: 6 } })).body.results;
  assert.deepEqual(tPage, tAll.slice(6, 9));

  const over = await call(`/v1/collections/articles/documents/${DOC}/related?k=5&from=996`);
  assert.equal(over.status, 422, JSON.stringify(over.body));
  assert.equal(over.body.error, 'SCDV_PAGE_OUT_OF_RANGE');
  assert.equal(over.body.details.field, 'querystring.from');
  assert.match(over.body.message, /querystring\.from 996 \+ k 5 is beyond the first 1000 results/);
  const overBody = await call({ method: 'POST', url: '/v1/collections/articles/related', payload: { text, k: 1000, from: 1 } });
  assert.equal(overBody.status, 422);
  assert.equal(overBody.body.details.field, 'body.from');
  assert.equal((await call(`/v1/collections/articles/documents/${DOC}/related?from=-1`)).body.details.field, 'querystring.from');
});

test('an Elasticsearch _bulk body is refused at once, naming the format and how to convert it', async () => {
  const es = [
    '{"index":{"_index":"ads","_id":"ad-1"}}', '{"title":"サッカー観戦","body":"サッカー日本代表の試合を観戦。"}',
    '{"index":{"_id":"ad-2"}}', '{"body":"映画の試写会に招待。"}',
  ].join('\n') + '\n';
  const res = await call({
    method: 'POST', url: '/v1/collections/ads/documents:bulk', headers: { ...KEY, 'content-type': 'application/x-ndjson' }, payload: es,
  });
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.error, 'SCDV_REQUEST_INVALID');
  assert.deepEqual({ field: res.body.details.field, format: res.body.details.format }, { field: 'body', format: 'elasticsearch-bulk' });
  assert.match(res.body.message, /Elasticsearch _bulk body \(line 1 is the action \{"index":\{"_index":"ads","_id":"ad-1"\}\}\)/);
  assert.match(res.body.message, /jq -c -n 'inputs as \$action \| input as \$doc/);
  const uploads = path.join(dataDir(), 'server', 'uploads');
  assert.deepEqual(fs.existsSync(uploads) ? fs.readdirSync(uploads) : [], [], 'the refused upload is not kept');
  // A JSON Lines body still queues a job.
  const ok = await call({
    method: 'POST', url: '/v1/collections/ads/documents:bulk', headers: { ...KEY, 'content-type': 'application/x-ndjson' },
    payload: '{"id":"ad-1","body":"サッカー日本代表の試合を観戦。"}\n',
  });
  assert.equal(ok.status, 202, JSON.stringify(ok.body));
});

/**
 * Raw bytes to the listening server; the whole answer.
 * @param {Buffer} request
 * @returns {Promise<string>}
 */
function rawRequest(request) {
  const { hostname, port } = new URL(srv.url);
  return new Promise((resolve, reject) => {
    const chunks = /** @type {Buffer[]} */ ([]);
    const sock = net.connect(Number(port), hostname, () => sock.write(request));
    sock.on('data', (d) => chunks.push(d));
    sock.on('error', reject);
    sock.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

test('raw UTF-8 in a query string: 400 in our error shape, with the hint to percent-encode', async () => {
  const answer = await rawRequest(Buffer.from(`GET /v1/collections/articles/documents/${DOC}/related?category=スポーツ HTTP/1.1\r\nHost: x\r\n\r\n`));
  const [head, body] = answer.split('\r\n\r\n');
  assert.match(head, /^HTTP\/1\.1 400 /);
  const e = JSON.parse(body);
  assert.equal(e.error, 'SCDV_REQUEST_INVALID');
  assert.equal(e.details.field, 'url');
  assert.match(e.message, /has raw \(un-percent-encoded\) UTF-8: percent-encode it/);
  const space = JSON.parse((await rawRequest(Buffer.from('GET /v1/x?a=b\x01c HTTP/1.1\r\nHost: x\r\n\r\n'))).split('\r\n\r\n')[1]);
  assert.match(space.message, /a character HTTP does not allow in a URL/);
  // Percent-encoded, the same request is answered.
  const ok = await call(`/v1/collections/articles/documents/${DOC}/related?category=${encodeURIComponent('スポーツ')}`);
  assert.equal(ok.status, 200);
});
