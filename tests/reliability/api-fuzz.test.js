// Bad input to the API: every operation of the OpenAPI document (/docs/json) fuzzed with seeded, schema-driven
// cases — values that fit the schema, values that break it (wrong types, bounds, patterns, missing and unknown
// fields), hostile strings — plus fixed cases: oversized bodies, huge k, deep JSON, wrong content types,
// invalid UTF-8, path traversal in every name used as a path (collections, models, jobs, bulk files).
// Must hold: no 5xx, no hang (each answer within 10 s), every error in the documented shape
// {error: "SCDV_…", message, details?} with a JSON content type, and nothing written outside the data folders.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { rng } from '../lib/random.js';
import { report } from './lib.js';

const h = await import('../server/helpers.js');
const { startServer } = await import('../../server/start.js');
const { dataDir, storeDir, modelsDir } = await import('../../pipeline/paths.js');

/** Cases per operation (seeded: the same cases on every run). */
const CASES_PER_OPERATION = Number(process.env.SCDV_FUZZ_CASES ?? 60);
const SEED = Number(process.env.SCDV_FUZZ_SEED ?? 20261121);
const KEY = h.API_KEY;

/** @type {import('../../server/start.js').RunningServer} */
let srv;
/** @type {any} */
let openapi;
before(async () => {
  const { redis } = await h.setup();
  srv = await startServer({ config: h.testConfig({ bulkBodyLimit: 400_000 }), model: h.MODEL_A, redisUrl: redis.url, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  openapi = await (await fetch(`${srv.url}/docs/json`)).json();
});
after(async () => {
  await srv?.close();
  await h.teardown();
});

const docIds = h.sampleDocs().slice(0, 20).map((d) => d.id);

/** Strings that break things elsewhere. */
const HOSTILE = [
  '', ' ', '..', '../..', '../../../../etc/passwd', '..\\..\\windows', '%2e%2e%2f', '%252e%252e', '/etc/passwd', '.hidden', '-x',
  'a/b', 'a\\b', 'NUL\u0000byte', 'tab\tnl\n', '\r\n', '\u202e\u0000', '\ud800', '😀', '東京スカイツリー', 'Articles', 'ARTICLES',
  '<script>alert(1)</script>', "' OR 1=1 --", '${jndi:ldap://x/a}', '{{7*7}}', '__proto__', 'constructor', 'null', 'undefined',
  'true', '-1', '0', '1e309', 'NaN', 'Infinity', '9'.repeat(40), 'x'.repeat(513), 'y'.repeat(70_000),
  'articles', 'ads', h.MODEL_A, h.MODEL_B, ...docIds.slice(0, 3),
];
const NUMBERS = [0, -1, 1, 2, 10, 999, 1000, 1001, 1e6, 2 ** 31, 2 ** 53 + 2, -0.5, 0.5, 1.5, 1e308, -1e308];

/**
 * @param {() => number} r
 * @template T
 * @param {T[]} xs
 * @returns {T}
 */
const pick = (r, xs) => xs[Math.floor(r() * xs.length)];

/**
 * A value for a JSON schema: fitting it (mostly), or breaking it when `bad`.
 * @param {any} schema
 * @param {() => number} r
 * @param {boolean} bad
 * @param {number} depth
 * @returns {any}
 */
function gen(schema, r, bad, depth = 0) {
  if (!schema || depth > 6) return null;
  if (bad && r() < 0.25) {
    // the wrong type altogether
    return pick(r, [null, true, 42, -3.5, 'str', [], [1, 'a'], {}, { nested: { deep: [1] } }, pick(r, HOSTILE)]);
  }
  const type = Array.isArray(schema.type) ? pick(r, schema.type) : schema.type;
  if (schema.enum) return bad && r() < 0.5 ? pick(r, HOSTILE) : pick(r, schema.enum);
  switch (type) {
    case 'integer':
    case 'number': {
      if (bad || r() < 0.3) return pick(r, NUMBERS);
      const lo = schema.minimum ?? 0;
      const hi = schema.maximum ?? lo + 100;
      const v = lo + r() * (hi - lo);
      return type === 'integer' ? Math.round(v) : v;
    }
    case 'boolean': return r() < 0.5;
    case 'array': {
      const n = bad && r() < 0.3 ? 150 : Math.floor(r() * 4);
      return Array.from({ length: n }, () => gen(schema.items, r, bad && r() < 0.3, depth + 1));
    }
    case 'object': {
      /** @type {Record<string, any>} */
      const o = {};
      const props = schema.properties ?? {};
      const required = new Set(schema.required ?? []);
      for (const [k, s] of Object.entries(props)) {
        if (required.has(k) ? !(bad && r() < 0.2) : r() < 0.5) o[k] = gen(s, r, bad && r() < 0.4, depth + 1);
      }
      if (bad && r() < 0.2) o[pick(r, ['unknown', '__proto__', 'constructor', ''])] = pick(r, HOSTILE);
      return o;
    }
    default: { // string
      if (bad || r() < 0.25) return pick(r, HOSTILE);
      if (schema.pattern === '^[a-z0-9][a-z0-9_-]{0,63}$') return pick(r, ['articles', 'ads', 'fuzz', 'new-coll', 'x_1']);
      if (schema.format === 'date-time' || /ISO 8601/.test(schema.description ?? '')) return pick(r, ['2012-01-01', '2020-05-05T10:00:00Z', 'not a date', '']);
      return pick(r, [...docIds, 'サッカーの試合で日本代表が勝った', 'スマートフォンの新機種', 'plain ascii text', h.MODEL_A, 'srv-a']);
    }
  }
}

/**
 * Send one request; return what the checks need.
 * @param {{method: string, url: string, headers?: Record<string, string>, body?: string | Buffer}} req
 */
async function send(req) {
  const t0 = Date.now();
  let res;
  try {
    res = await fetch(srv.url + req.url, { method: req.method, headers: req.headers, body: req.body, signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    return { status: 0, error: String(/** @type {Error} */ (err).message), ms: Date.now() - t0, body: null, type: '', raw: '' };
  }
  const raw = await res.text();
  let body = null;
  try { body = JSON.parse(raw); } catch { /* not JSON */ }
  return { status: res.status, ms: Date.now() - t0, body, type: String(res.headers.get('content-type') ?? ''), raw, www: res.headers.get('www-authenticate'), error: '' };
}

/** @type {Map<string, Map<number, number>>} route -> status -> count */
const statuses = new Map();
let total = 0;

/**
 * The invariants of every answer.
 * @param {string} label
 * @param {{method: string, url: string, headers?: Record<string, string>, body?: string | Buffer}} req
 * @param {Awaited<ReturnType<typeof send>>} res
 */
function check(label, req, res) {
  total++;
  const by = statuses.get(label) ?? new Map();
  by.set(res.status, (by.get(res.status) ?? 0) + 1);
  statuses.set(label, by);
  const what = `${req.method} ${req.url.slice(0, 200)} ${String(req.body ?? '').slice(0, 200)}`;
  assert.ok(res.status > 0, `answered (no hang, no reset): ${what}: ${res.error}`);
  assert.ok(res.status < 500, `no 5xx: ${what} -> ${res.status} ${res.raw.slice(0, 300)}`);
  if (res.status >= 400) {
    assert.match(res.type, /application\/json/, `error as JSON: ${what}`);
    assert.ok(res.body && typeof res.body === 'object', `error body: ${what}`);
    assert.match(String(res.body.error), /^SCDV_[A-Z_]+$/, `error code: ${what} -> ${res.raw.slice(0, 300)}`);
    assert.equal(typeof res.body.message, 'string');
    assert.deepEqual(Object.keys(res.body).filter((k) => !['error', 'message', 'details'].includes(k)), [], `error shape: ${what}`);
    assert.ok(!/\n\s+at /.test(res.raw), `no stack trace in ${what}`);
  }
}

/** Percent-encode the UTF-8 bytes of any string (lone surrogates included, as U+FFFD). @param {string} s */
const encodePath = (s) => [...Buffer.from(s, 'utf8')].map((b) => (/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
/** @param {string} s */
const decodeSafe = (s) => { try { return decodeURIComponent(s); } catch { return s; } };

/** @param {string} p @param {Record<string, string>} params */
const fill = (p, params) => p.replace(/\{(\w+)\}/g, (_, k) => params[k]);

test('every operation of the OpenAPI document, fuzzed: no 5xx, no hang, every error in the documented shape', async (t) => {
  const r = rng(SEED);
  const ops = [];
  for (const [p, methods] of Object.entries(openapi.paths)) {
    for (const [method, op] of Object.entries(/** @type {Record<string, any>} */ (methods))) ops.push({ path: p, method: method.toUpperCase(), op });
  }
  assert.ok(ops.length >= 15, `${ops.length} operations documented`);
  const t0 = Date.now();
  let slowest = 0;
  for (const { path: p, method, op } of ops) {
    const label = `${method} ${p}`;
    for (let i = 0; i < CASES_PER_OPERATION; i++) {
      const bad = r() < 0.5;
      /** @type {Record<string, string>} */
      const params = {};
      const query = new URLSearchParams();
      for (const prm of op.parameters ?? []) {
        if (prm.in === 'path') {
          const v = gen(prm.schema, r, bad && r() < 0.5);
          params[prm.name] = r() < 0.9 ? encodePath(String(v)) : String(v).replace(/[?#\s%]/g, '');
        } else if (prm.in === 'query' && (prm.required || r() < 0.6)) {
          const v = gen(prm.schema, r, bad && r() < 0.5);
          for (const x of Array.isArray(v) ? v : [v]) query.append(prm.name, typeof x === 'object' ? JSON.stringify(x) : String(x));
        }
      }
      // Whole collections are deleted only under throw-away names: the cases below read articles and ads.
      if (method === 'DELETE' && p === '/v1/collections/{collection}' && ['articles', 'ads'].includes(decodeSafe(params.collection ?? ''))) params.collection = 'fuzz';
      if (bad && r() < 0.15) query.append(pick(r, ['unknown', 'k', '__proto__', 'x[y]']), pick(r, HOSTILE));
      const qs = query.toString();
      /** @type {Record<string, string>} */
      const headers = {};
      const auth = r();
      if (auth < 0.6) headers.authorization = `Bearer ${KEY}`;
      else if (auth < 0.75) headers['x-api-key'] = 'wrong-key';
      /** @type {string | undefined} */
      let body;
      const content = op.requestBody?.content;
      if (content) {
        const types = Object.keys(content);
        const type = pick(r, types);
        if (type === 'application/json') {
          const v = gen(content[type].schema, r, bad);
          body = JSON.stringify(v);
          if (bad && r() < 0.1) body = body.slice(0, Math.floor(body.length / 2)); // truncated
        } else {
          body = Array.from({ length: 1 + Math.floor(r() * 3) }, () => JSON.stringify(gen({ type: 'object', properties: { id: { type: 'string' }, body: { type: 'string' }, title: { type: 'string' } }, required: ['id', 'body'] }, r, bad))).join('\n');
        }
        headers['content-type'] = bad && r() < 0.15 ? pick(r, ['text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', '']) : type;
        if (headers['content-type'] === '') delete headers['content-type'];
      }
      const req = { method, url: fill(p, params) + (qs ? `?${qs}` : ''), headers, body };
      const res = await send(req);
      slowest = Math.max(slowest, res.ms);
      check(label, req, res);
    }
  }
  report(t, 'api-fuzz', {
    operations: ops.length, casesPerOperation: CASES_PER_OPERATION, requests: total, seed: SEED, slowestMs: slowest, seconds: (Date.now() - t0) / 1000,
    statuses: Object.fromEntries([...statuses].map(([k, v]) => [k, Object.fromEntries(v)])),
  });
});

test('fixed hostile requests: oversized bodies, huge k, deep JSON, wrong content types, invalid UTF-8, odd methods', async (t) => {
  const json = { 'content-type': 'application/json' };
  const auth = { authorization: `Bearer ${KEY}` };
  const deep = (/** @type {number} */ n) => '{"text":' + '['.repeat(n) + ']'.repeat(n) + '}';
  /** @type {[string, {method: string, url: string, headers?: Record<string, string>, body?: string | Buffer}, number | number[], string?][]} */
  const cases = [
    ['2 MB JSON body', { method: 'POST', url: '/v1/collections/articles/related', headers: json, body: JSON.stringify({ text: 'あ'.repeat(700_000) }) }, 413, 'SCDV_BODY_TOO_LARGE'],
    ['900 KB text (under the limit) is embedded', { method: 'POST', url: '/v1/collections/articles/related', headers: json, body: JSON.stringify({ text: 'サッカーの試合。'.repeat(40_000) }) }, 200],
    ['bulk body over its limit', { method: 'POST', url: '/v1/collections/articles/documents:bulk', headers: { ...auth, 'content-type': 'application/x-ndjson' }, body: (JSON.stringify({ id: 'x', body: 'あ'.repeat(100) }) + '\n').repeat(1500) }, 413, 'SCDV_BODY_TOO_LARGE'],
    ['k = 1001', { method: 'GET', url: `/v1/collections/articles/documents/${docIds[0]}/related?k=1001` }, 400, 'SCDV_REQUEST_INVALID'],
    ['k = 10^12', { method: 'GET', url: `/v1/collections/articles/documents/${docIds[0]}/related?k=1000000000000` }, 400, 'SCDV_REQUEST_INVALID'],
    ['k = 1e309', { method: 'GET', url: `/v1/collections/articles/documents/${docIds[0]}/related?k=1e309` }, 400],
    ['k = -1', { method: 'GET', url: `/v1/collections/articles/documents/${docIds[0]}/related?k=-1` }, 400, 'SCDV_REQUEST_INVALID'],
    ['k = 2.5', { method: 'POST', url: '/v1/collections/articles/related', headers: json, body: JSON.stringify({ text: '野球', k: 2.5 }) }, 400, 'SCDV_REQUEST_INVALID'],
    ['k as a string', { method: 'POST', url: '/v1/match', headers: json, body: JSON.stringify({ collection: 'ads', text: '野球', k: 'many' }) }, 400, 'SCDV_REQUEST_INVALID'],
    ['k = 1000 (allowed)', { method: 'GET', url: `/v1/collections/articles/documents/${docIds[0]}/related?k=1000` }, 200],
    ['JSON nested 10 deep', { method: 'POST', url: '/v1/collections/articles/related', headers: json, body: deep(10) }, 400, 'SCDV_REQUEST_INVALID'],
    ['JSON nested 100,000 deep', { method: 'POST', url: '/v1/collections/articles/related', headers: json, body: deep(100_000) }, 400, 'SCDV_REQUEST_INVALID'],
    ['JSON object nested 100,000 deep', { method: 'POST', url: '/v1/similarity', headers: json, body: '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000) }, 400, 'SCDV_REQUEST_INVALID'],
    ['__proto__ in a body', { method: 'POST', url: '/v1/collections/articles/related', headers: json, body: '{"text":"野球","__proto__":{"polluted":true}}' }, 400, 'SCDV_REQUEST_INVALID'],
    ['text/plain body', { method: 'POST', url: '/v1/collections/articles/related', headers: { 'content-type': 'text/plain' }, body: 'サッカー' }, 415, 'SCDV_MEDIA_TYPE_UNSUPPORTED'],
    ['XML body', { method: 'POST', url: '/v1/similarity', headers: { 'content-type': 'application/xml' }, body: '<a/>' }, 415, 'SCDV_MEDIA_TYPE_UNSUPPORTED'],
    ['form body to a write', { method: 'PUT', url: '/v1/collections/articles/documents/f1', headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, body: 'body=x' }, 415, 'SCDV_MEDIA_TYPE_UNSUPPORTED'],
    ['no content type', { method: 'POST', url: '/v1/match', body: '{"collection":"ads","text":"野球"}' }, [400, 415]],
    ['JSON to bulk without path', { method: 'POST', url: '/v1/collections/articles/documents:bulk', headers: { ...auth, ...json }, body: '{"id":"x","body":"y"}' }, 400, 'SCDV_REQUEST_INVALID'],
    ['empty JSON body', { method: 'POST', url: '/v1/similarity', headers: json, body: '' }, 400, 'SCDV_REQUEST_INVALID'],
    ['invalid UTF-8 in JSON', { method: 'POST', url: '/v1/collections/articles/related', headers: json, body: Buffer.concat([Buffer.from('{"text":"'), Buffer.from([0xff, 0xfe, 0xc0]), Buffer.from('"}')]) }, 400, 'SCDV_BODY_ENCODING_INVALID'],
    ['invalid UTF-8 in a write', { method: 'PUT', url: '/v1/collections/articles/documents/bad-utf8', headers: { ...auth, ...json }, body: Buffer.concat([Buffer.from('{"body":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]) }, 400, 'SCDV_BODY_ENCODING_INVALID'],
    ['invalid UTF-8 in events', { method: 'POST', url: '/v1/events', headers: { 'content-type': 'application/x-ndjson' }, body: Buffer.concat([Buffer.from('{"type":"click","page_id":"p","clicked_id":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]) }, 400, 'SCDV_BODY_ENCODING_INVALID'],
    ['control characters in a write', { method: 'PUT', url: '/v1/collections/articles/documents/ctrl', headers: { ...auth, ...json }, body: JSON.stringify({ body: '東京\u0000\u0007タワー' }) }, 200],
    ['empty body in a write', { method: 'PUT', url: '/v1/collections/articles/documents/empty', headers: { ...auth, ...json }, body: JSON.stringify({ body: '   ' }) }, 400, 'SCDV_REQUEST_INVALID'],
    ['non-Japanese text', { method: 'POST', url: '/v1/collections/articles/related', headers: json, body: JSON.stringify({ text: 'zzqx wvvk plorb' }) }, 422, 'SCDV_NO_USABLE_WORDS'],
    ['a 512-character id', { method: 'GET', url: `/v1/collections/articles/documents/${'i'.repeat(512)}` }, 404, 'SCDV_DOCUMENT_NOT_FOUND'],
    ['a 513-character id', { method: 'GET', url: `/v1/collections/articles/documents/${'i'.repeat(513)}` }, 400, 'SCDV_REQUEST_INVALID'],
    ['an 8 KB URL', { method: 'GET', url: `/v1/collections/articles/documents/${'%E3%81%82'.repeat(900)}` }, [400, 404, 414]],
    ['a 100 KB URL', { method: 'GET', url: `/v1/collections/articles/documents/${'x'.repeat(100_000)}` }, 431, 'SCDV_REQUEST_INVALID'],
    ['malformed percent-encoding', { method: 'GET', url: '/v1/collections/articles/documents/%E3%81' }, 400, 'SCDV_REQUEST_INVALID'],
    ['PATCH', { method: 'PATCH', url: '/v1/collections/articles/documents/x', headers: { ...auth, ...json }, body: '{}' }, 405, 'SCDV_METHOD_NOT_ALLOWED'],
    ['unknown route', { method: 'GET', url: '/v2/anything' }, 404, 'SCDV_ROUTE_NOT_FOUND'],
    ['HEAD of a read', { method: 'HEAD', url: '/v1/models' }, [200, 404]],
  ];
  /** @type {Record<string, string>} */
  const results = {};
  for (const [name, req, status, code] of cases) {
    const res = await send(req);
    check(`fixed: ${name}`, req, req.method === 'HEAD' ? { ...res, body: null, status: res.status } : res);
    const ok = Array.isArray(status) ? status.includes(res.status) : res.status === status;
    assert.ok(ok, `${name}: expected ${status}, got ${res.status} ${res.raw.slice(0, 300)}`);
    if (code) assert.equal(res.body?.error, code, `${name}: ${res.raw.slice(0, 300)}`);
    results[name] = `${res.status} ${res.body?.error ?? ''} ${res.ms} ms`.trim();
  }
  // The server is still fine afterwards.
  assert.equal((await send({ method: 'GET', url: '/readyz' })).status, 200);
  report(t, 'api-hostile-fixed', { cases: cases.length, results });
});

test('names used in paths: traversal attempts are rejected and nothing is created outside the data folders', async (t) => {
  const auth = { authorization: `Bearer ${KEY}` };
  const json = { 'content-type': 'application/json' };
  const outside = path.dirname(storeDir());
  fs.mkdirSync(dataDir(), { recursive: true });
  const before = new Set(fs.readdirSync(outside));
  const tries = ['..', '...', '../evil', '..%2Fevil', '%2e%2e', '%2e%2e%2fevil', '..%5Cevil', '.evil', 'evil%00', 'evil%2F..%2F..', '%2Fetc%2Fpasswd', 'EVIL', 'e'.repeat(65), '%C0%AE%C0%AE'];
  /** @type {Record<string, number[]>} */
  const seen = {};
  const note = (/** @type {string} */ k, /** @type {number} */ s) => { (seen[k] ??= []).push(s); };
  for (const name of tries) {
    const reqs = [
      { method: 'GET', url: `/v1/collections/${name}/documents/x` },
      { method: 'GET', url: `/v1/collections/${name}/documents/x/related` },
      { method: 'PUT', url: `/v1/collections/${name}/documents/x`, headers: { ...auth, ...json }, body: JSON.stringify({ body: '野球の試合' }) },
      { method: 'DELETE', url: `/v1/collections/${name}/documents/x`, headers: auth },
      { method: 'POST', url: `/v1/collections/${name}/related`, headers: json, body: JSON.stringify({ text: '野球' }) },
      { method: 'POST', url: `/v1/collections/${name}/documents:bulk`, headers: { ...auth, 'content-type': 'application/x-ndjson' }, body: '{"id":"a","body":"野球"}\n' },
      { method: 'POST', url: '/v1/match', headers: json, body: JSON.stringify({ collection: decodeSafe(name), text: '野球' }) },
      { method: 'POST', url: `/v1/models/${name}/activate`, headers: auth },
      { method: 'GET', url: `/v1/jobs/${name}` },
    ];
    for (const req of reqs) {
      const res = await send(req);
      check(`traversal: ${req.method} ${req.url.split('/').slice(0, 3).join('/')}`, req, res);
      assert.ok([400, 404].includes(res.status), `${req.method} ${req.url} -> ${res.status} ${res.raw.slice(0, 200)}`);
      note(req.url.replace(name, '{name}').split('?')[0], res.status);
    }
  }
  // A bulk request may name a file only inside dataDir()/imports (links resolved first).
  const imports = path.join(dataDir(), 'imports');
  fs.mkdirSync(imports, { recursive: true });
  const secret = path.join(dataDir(), 'secret.jsonl');
  fs.writeFileSync(secret, '{"id":"s","body":"秘密の文書"}\n');
  fs.symlinkSync(secret, path.join(imports, 'link.jsonl'));
  for (const p of ['/etc/passwd', secret, path.join(imports, '..', '..', 'secret.jsonl'), '../../secret.jsonl', 'link.jsonl', path.join(imports, 'link.jsonl'), `${imports}/../models`, modelsDir(), '\u0000', 'imports/../../x']) {
    const req = { method: 'POST', url: '/v1/collections/articles/documents:bulk', headers: { ...auth, ...json }, body: JSON.stringify({ path: p }) };
    const res = await send(req);
    check('traversal: bulk path', req, res);
    assert.ok(res.status >= 400 && res.status < 500, `bulk {path: ${p}} -> ${res.status} ${res.raw.slice(0, 200)}`);
    assert.ok(!res.raw.includes('root:'), 'no file content echoed');
    note('bulk {path}', res.status);
  }
  assert.deepEqual(new Set(fs.readdirSync(outside)), before, 'nothing created beside the store');
  assert.ok(!fs.existsSync(path.join(storeDir(), h.MODEL_A, 'evil')) && !fs.existsSync(path.join(storeDir(), 'evil')));
  report(t, 'path-traversal', { names: tries.length, requests: Object.values(seen).reduce((a, b) => a + b.length, 0), statuses: Object.fromEntries(Object.entries(seen).map(([k, v]) => [k, [...new Set(v)]])) });
});
