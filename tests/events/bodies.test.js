// Request bodies that are not UTF-8 are refused naming where (not read as U+FFFD and stored so), on every JSON route
// and on the NDJSON events route; the bytes of event batches handled at once are bounded (events.inFlightBytes), a
// bounded number wait with their bodies unread (events.waitingBatches), one more is answered 503 with Retry-After.
// Real server, models, store and Redis (tests/server/helpers.js); raw sockets where a body must stay unfinished.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

const h = await import('../server/helpers.js');
const { startServer } = await import('../../server/start.js');
const { readEvents } = await import('../../pipeline/events/log.js');
const { loadConfig, DEFAULT_CONFIG } = await import('../../pipeline/config.js');
const { ByteGate, invalidUtf8At } = await import('../../server/bodies.js');

/** @type {string} */
let redisUrl;
const KEY = { authorization: `Bearer ${h.API_KEY}` };
const DOC = 'sports-watch-4597641';
/** @type {(() => Promise<void>)[]} */
const closers = [];

before(async () => { ({ redis: { url: redisUrl } } = await h.setup()); });
after(async () => {
  for (const c of closers) await c();
  await h.teardown();
});

/** @param {Record<string, any>} [events] overrides of the events section */
async function serve(events = {}) {
  const base = h.testConfig();
  const dir = fs.mkdtempSync(path.join(h.tmp, 'bodies-'));
  const config = { ...base, events: { ...base.events, dir, ...events } };
  const srv = await startServer({ config, model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  closers.push(() => srv.close());
  const call = (/** @type {import('light-my-request').InjectOptions | string} */ opts) => h.inject(srv.app, opts);
  const stored = async () => {
    /** @type {Record<string, any>[]} */
    const out = [];
    await readEvents(dir, (ev) => { out.push(ev); });
    return out;
  };
  return { srv, call, stored };
}

const click = (/** @type {string} */ id) => JSON.stringify({ type: 'click', page_id: DOC, clicked_id: id });

test('invalidUtf8At finds the first byte that does not begin a UTF-8 character, as Node decodes', () => {
  /** The longest valid prefix, by Node's own check. @param {Buffer} b */
  const reference = (b) => {
    if (isUtf8(b)) return -1;
    let n = 0;
    for (let i = 1; i <= b.length; i++) if (isUtf8(b.subarray(0, i))) n = i;
    return n;
  };
  const cases = [
    [0x61, 0xff], [0xc0, 0xaf], [0xc1, 0xbf], [0xc2], [0xe0, 0x80, 0x80], [0xe0, 0xa0, 0x80], [0xed, 0xa0, 0x80], [0xed, 0x9f, 0xbf],
    [0xef, 0xbf, 0xbd], [0xf0, 0x8f, 0xbf, 0xbf], [0xf0, 0x90, 0x80, 0x80], [0xf4, 0x8f, 0xbf, 0xbf], [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80, 0x80, 0x80],
    [0xe3, 0x81, 0x82, 0xe3, 0x81], [0xe3, 0x81, 0xff, 0xc0, 0xaf], [0x80], [0xf0, 0x9f, 0x98], [0x7b, 0x22, 0xe6, 0x97, 0xa5, 0x22, 0xfe],
  ].map((c) => Buffer.from(c));
  // And random bytes, mostly valid text with a bad byte somewhere.
  let seed = 7;
  const rnd = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x7fffffff; };
  for (let k = 0; k < 300; k++) {
    const text = Buffer.from(Array.from({ length: 1 + Math.floor(rnd() * 12) }, () => String.fromCodePoint([0x61, 0x3042, 0x1f600, 0xe9][Math.floor(rnd() * 4)])).join(''));
    const at = Math.floor(rnd() * text.length);
    cases.push(Buffer.concat([text.subarray(0, at), Buffer.from([Math.floor(rnd() * 256)]), text.subarray(at)]));
  }
  for (const b of cases) assert.equal(invalidUtf8At(b), reference(b), b.toString('hex'));
});

test('events with invalid UTF-8 are refused naming the line (NDJSON) or the byte offset (JSON); nothing is stored', async () => {
  const { call, stored } = await serve();
  const bad = Buffer.concat([Buffer.from(`${click('a1')}\n${click('a2')}\n{"type":"click","page_id":"${DOC}","clicked_id":"x`), Buffer.from([0xff, 0xfe]), Buffer.from('y"}\n')]);
  for (const type of ['application/x-ndjson', 'application/jsonl']) {
    const nd = await call({ method: 'POST', url: '/v1/events', headers: { 'content-type': type }, payload: bad });
    assert.equal(nd.status, 400, JSON.stringify(nd.body));
    assert.equal(nd.body.error, 'SCDV_BODY_ENCODING_INVALID');
    const offset = bad.indexOf(0xff);
    assert.deepEqual(nd.body.details, { field: 'body', offset, line: 3, reason: 'is not valid UTF-8' });
    assert.match(nd.body.message, new RegExp(`^the request body is not valid UTF-8 at line 3 \\(byte ${offset - bad.lastIndexOf(0x0a, offset) - 1} of the line, offset ${offset} of the body\\) \\(bytes 0xff 0xfe 0x79 0x22\\)`));
  }
  const json = Buffer.concat([Buffer.from(`{"events":[${click('a1')},{"type":"click","page_id":"${DOC}","clicked_id":"\u3042`), Buffer.from([0xe3, 0x81]), Buffer.from('"}]}')]);
  const js = await call({ method: 'POST', url: '/v1/events', headers: { 'content-type': 'application/json' }, payload: json });
  assert.equal(js.status, 400, JSON.stringify(js.body));
  assert.equal(js.body.error, 'SCDV_BODY_ENCODING_INVALID');
  assert.equal(js.body.details.offset, json.length - 6, 'the cut-short character after あ');
  assert.match(js.body.message, new RegExp(`at byte offset ${json.length - 6} \\(line 1\\)`));
  assert.equal((await stored()).length, 0, 'before: stored with U+FFFD in clicked_id');

  // Valid UTF-8 of every length is taken and stored as sent.
  const ids = ['caf\u00e9', '\u3042\u3044', 'emoji-\u{1f600}'];
  const ok = await call({ method: 'POST', url: '/v1/events', headers: { 'content-type': 'application/x-ndjson' }, payload: Buffer.from(ids.map(click).join('\n')) });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.deepEqual((await stored()).map((e) => e.clicked_id), ids);
});

test('other JSON bodies with invalid UTF-8 get the same 400: a document PUT, related for a text, similarity; a synchronous bulk names the line', async () => {
  const { call } = await serve();
  const json = { 'content-type': 'application/json' };
  const text = (/** @type {string} */ field) => Buffer.concat([Buffer.from(`{"title":"t","${field}":"\u30b5\u30c3\u30ab\u30fc`), Buffer.from([0x82, 0xa0]), Buffer.from('"}')]);
  const put = await call({ method: 'PUT', url: '/v1/collections/articles/documents/utf8-bad', headers: { ...KEY, ...json }, payload: text('body') });
  assert.equal(put.status, 400, JSON.stringify(put.body));
  assert.equal(put.body.error, 'SCDV_BODY_ENCODING_INVALID');
  assert.equal(put.body.details.offset, Buffer.from('{"title":"t","body":"\u30b5\u30c3\u30ab\u30fc').length);
  assert.equal((await call('/v1/collections/articles/documents/utf8-bad')).status, 404, 'nothing written');
  const related = await call({ method: 'POST', url: '/v1/collections/articles/related', headers: json, payload: text('text') });
  assert.equal(related.status, 400, JSON.stringify(related.body));
  assert.equal(related.body.error, 'SCDV_BODY_ENCODING_INVALID');
  const similarity = await call({ method: 'POST', url: '/v1/similarity', headers: json, payload: Buffer.concat([Buffer.from('{"a":{"id":"x"},"b":{"text":"'), Buffer.from([0xc0, 0x80]), Buffer.from('"}}')]) });
  assert.equal(similarity.status, 400, JSON.stringify(similarity.body));
  assert.equal(similarity.body.error, 'SCDV_BODY_ENCODING_INVALID');
  // A synchronous bulk reads its lines as bytes: the bad line fails alone with the corpus's line issue.
  const [a] = h.sampleDocs();
  const bulk = Buffer.concat([Buffer.from(`${JSON.stringify({ id: 'u-1', body: a.body })}\n{"id":"u-2","body":"`), Buffer.from([0xff]), Buffer.from('"}\n')]);
  const res = await call({ method: 'POST', url: '/v1/collections/utf8/documents:bulk?sync=true', headers: { ...KEY, 'content-type': 'application/x-ndjson' }, payload: bulk });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body.items.map((/** @type {any} */ i) => [i.line, i.status, i.error?.code ?? i.result]), [[1, 200, 'written'], [2, 400, 'INVALID_UTF8']]);
});

test('ByteGate: bytes in flight bounded, one request always let in, first come first in, a bounded wait, withdrawal', async () => {
  const gate = new ByteGate({ limit: 100, queue: 2, limitName: 'x.bytes', queueName: 'x.queue', what: 'batches', label: 'test' });
  const a = gate.enter(60);
  const b = gate.enter(60); // 120 > 100: waits
  const c = gate.enter(10); // would fit, but comes after b
  assert.deepEqual([gate.bytes, gate.waiting.length], [60, 2]);
  assert.throws(() => gate.enter(1), (/** @type {any} */ e) => {
    assert.equal(e.code, 'SCDV_SERVER_BUSY');
    assert.equal(e.message, '2 batches are waiting already (x.queue 2, behind 60 bytes in progress, x.bytes 100): retry in a few seconds');
    assert.deepEqual(e.details, { limit: 'x.queue', value: 2, queue: 'test', retry_after_s: 1 });
    return true;
  });
  /** @type {string[]} */
  const order = [];
  b.ready.then(() => order.push('b'));
  c.ready.then(() => order.push('c'));
  await a.ready;
  a.leave();
  a.leave(); // idempotent
  await Promise.all([b.ready, c.ready]);
  assert.deepEqual(order, ['b', 'c']);
  assert.deepEqual([gate.bytes, gate.running], [70, 2]);
  b.leave(); c.leave();
  // A request over the limit runs alone; one that leaves while waiting is withdrawn.
  const big = gate.enter(500);
  const small = gate.enter(1);
  const gone = gate.enter(1);
  gone.leave();
  assert.deepEqual([gate.bytes, gate.waiting.length], [500, 1]);
  big.leave();
  await small.ready;
  assert.deepEqual([gate.bytes, gate.running, gate.waiting.length], [1, 1, 0]);
  small.leave();
  assert.deepEqual([gate.bytes, gate.running], [0, 0]);
});

test('events.inFlightBytes and events.waitingBatches: defaults, and a config error naming each', () => {
  assert.deepEqual([DEFAULT_CONFIG.events.inFlightBytes, DEFAULT_CONFIG.events.waitingBatches], [8 << 20, 32]);
  for (const key of ['inFlightBytes', 'waitingBatches']) {
    for (const bad of [0, -1, 1.5, '8']) {
      assert.throws(() => loadConfig({ overrides: { events: { [key]: bad } } }), { code: 'SCDV_CONFIG_INVALID', message: new RegExp(`events\\.${key} must be a`) }, `${key} ${bad}`);
    }
  }
});

/**
 * A raw connection that sends `head` and the first `sendFirst` bytes of `body`; `answer` is what comes back.
 * @param {string} url @param {string} head @param {Buffer} body @param {number} sendFirst bytes of the body sent at once
 */
function rawPost(url, head, body, sendFirst) {
  const { hostname, port } = new URL(url);
  const s = net.connect(Number(port), hostname);
  s.on('error', () => {});
  let data = '';
  const answer = new Promise((resolve) => {
    s.on('data', (d) => {
      data += d.toString();
      const end = data.indexOf('\r\n\r\n');
      const len = Number(/content-length: (\d+)/i.exec(data)?.[1]);
      if (end >= 0 && data.length >= end + 4 + len) resolve({ status: Number(data.slice(9, 12)), head: data.slice(0, end), body: JSON.parse(data.slice(end + 4)) });
    });
    s.on('close', () => resolve({ status: 0, head: data, body: null }));
  });
  s.write(head);
  s.write(body.subarray(0, sendFirst));
  return { answer: /** @type {Promise<{status: number, head: string, body: any}>} */ (answer), close: () => s.destroy() };
}

test('past events.inFlightBytes a batch waits with its body unread; past events.waitingBatches it is answered 503 with Retry-After; a client gone frees its place', async () => {
  const { srv, call, stored } = await serve({ inFlightBytes: 1000, waitingBatches: 1 });
  const metric = async (/** @type {string} */ line) => Number(new RegExp(`^${line} (\\d+)`, 'm').exec(String((await call('/metrics')).body))?.[1] ?? NaN);
  const batch = (/** @type {string} */ id, /** @type {number} */ bytes) => {
    const line = click(id);
    return Buffer.from(`${line}\n${' '.repeat(bytes - line.length - 2)}\n`);
  };
  const head = (/** @type {Buffer} */ b) => `POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Length: ${b.length}\r\n\r\n`;
  const A = batch('a', 900);
  const a = rawPost(srv.url, head(A), A, 100); // in: 900 bytes, its body unfinished
  for (let i = 0; i < 100 && (await metric('scdv_event_body_bytes')) !== 900; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(await metric('scdv_event_body_bytes'), 900);
  const B = batch('b', 500);
  const b = rawPost(srv.url, head(B), B, B.length); // 900 + 500 > 1000: waits
  for (let i = 0; i < 100 && (await metric('scdv_event_batches_waiting')) !== 1; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(await metric('scdv_event_batches_waiting'), 1);
  const C = batch('c', 300);
  const c = await rawPost(srv.url, head(C), C, C.length).answer; // the queue is full
  assert.equal(c.status, 503);
  assert.match(c.head, /\r\nretry-after: 1\r\n/i);
  assert.equal(c.body.error, 'SCDV_SERVER_BUSY');
  assert.match(c.body.message, /^1 event batches are waiting already \(events\.waitingBatches 1, behind 900 bytes in progress, events\.inFlightBytes 1000\)/);
  assert.equal(await metric('scdv_busy_refused_total\\{queue="event_bodies"\\}'), 1);
  // A waiting client that goes away is withdrawn: the next one takes its place in the queue.
  const D = batch('d', 200);
  const d = rawPost(srv.url, head(D), D, D.length);
  assert.equal((await d.answer).status, 503);
  b.close();
  for (let i = 0; i < 100 && (await metric('scdv_event_batches_waiting')) !== 0; i++) await new Promise((r) => setTimeout(r, 20));
  const E = batch('e', 200);
  const e = rawPost(srv.url, head(E), E, E.length);
  for (let i = 0; i < 100 && (await metric('scdv_event_batches_waiting')) !== 1; i++) await new Promise((r) => setTimeout(r, 20));
  // A's client goes away mid-body: its place is freed, E runs.
  a.close();
  const eAnswer = await e.answer;
  assert.equal(eAnswer.status, 200, JSON.stringify(eAnswer.body));
  assert.deepEqual((await stored()).map((ev) => ev.clicked_id), ['e']);
  assert.deepEqual([await metric('scdv_event_body_bytes'), await metric('scdv_event_batches_waiting')], [0, 0]);
  // A batch sent whole runs as before.
  const f = await call({ method: 'POST', url: '/v1/events', headers: { 'content-type': 'application/x-ndjson' }, payload: click('f') });
  assert.equal(f.status, 200);
});
