// The OpenAPI document for adopters: every operation carries examples (its path parameters, its request
// body, its success answer and one of the errors it documents), each example validates against its own schema (ajv, with
// formats), and an error example names a code of the catalogue (pipeline/errors.js).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import AjvModule from 'ajv';
import formatsModule from 'ajv-formats';

// CommonJS packages: their ES-module default is the module object.
const Ajv = /** @type {typeof import('ajv').default} */ (/** @type {any} */ (AjvModule).default ?? AjvModule);
const addFormats = /** @type {typeof import('ajv-formats').default} */ (/** @type {any} */ (formatsModule).default ?? formatsModule);

const h = await import('./helpers.js');
const { startServer } = await import('../../server/start.js');
const { errors } = await import('../../pipeline/errors.js');

/** @type {import('../../server/start.js').RunningServer} */
let srv;
/** @type {any} */
let doc;

before(async () => {
  const { redis } = await h.setup();
  srv = await startServer({ config: h.testConfig(), model: h.MODEL_A, redisUrl: redis.url, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  doc = (await srv.app.inject('/docs/json')).json();
});
after(async () => {
  await srv?.close();
  await h.teardown();
});

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head'];

/** Every operation of the document: [label, JSON pointer of the operation, the operation]. */
function operations() {
  /** @type {[string, string, any][]} */
  const out = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const m of METHODS) {
      const op = /** @type {any} */ (item)[m];
      if (op) out.push([`${m.toUpperCase()} ${p}`, `#/paths/${p.replace(/~/g, '~0').replace(/\//g, '~1')}/${m}`, op]);
    }
  }
  return out;
}

/** Examples of a media type or a parameter (OpenAPI: `example`, or `examples` holding {value}). */
const examplesOf = (/** @type {any} */ o) => [
  ...(o.example !== undefined ? [o.example] : []),
  ...Object.values(o.examples ?? {}).map((/** @type {any} */ e) => e.value),
];

/** @param {string} pointer @param {string} field */
const at = (pointer, field) => `${pointer}/${field}`;

test('every operation has examples: path parameters, request body, a success answer and an error', () => {
  const ops = operations();
  assert.ok(ops.length >= 18, `operations found: ${ops.map((o) => o[0]).join(', ')}`);
  const missing = [];
  for (const [label, , op] of ops) {
    for (const p of op.parameters ?? []) if (p.in === 'path' && examplesOf(p).length === 0) missing.push(`${label}: path parameter ${p.name}`);
    const bodies = Object.values(op.requestBody?.content ?? {});
    if (bodies.length && !bodies.some((media) => examplesOf(media).length > 0)) missing.push(`${label}: request body`);
    const statuses = Object.keys(op.responses);
    const withExample = statuses.filter((s) => Object.values(op.responses[s].content ?? {}).some((m) => examplesOf(m).length > 0));
    if (!withExample.some((s) => s.startsWith('2'))) missing.push(`${label}: no success response example`);
    // An operation that documents errors shows one (/healthz documents none: it answers or the process is gone).
    if (statuses.some((s) => /^[45]/i.test(s)) && !withExample.some((s) => /^[45]/.test(s))) missing.push(`${label}: no error response example`);
  }
  assert.deepEqual(missing, [], 'operations lacking examples');
});

test('every example validates against its schema; error examples use catalogue codes', () => {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'openapi');
  const codes = new Set(Object.values(errors).map((make) => /** @type {any} */ (make)().code));
  const failures = [];
  let checked = 0;
  /** @param {string} label @param {string} pointer @param {unknown} value */
  const check = (label, pointer, value) => {
    const validate = ajv.compile({ $ref: `openapi${pointer}` });
    checked++;
    if (!validate(value)) failures.push(`${label}: ${JSON.stringify(value).slice(0, 120)} — ${ajv.errorsText(validate.errors)}`);
  };
  for (const [label, pointer, op] of operations()) {
    (op.parameters ?? []).forEach((/** @type {any} */ p, /** @type {number} */ i) => {
      for (const v of examplesOf(p)) check(`${label} parameter ${p.name}`, at(pointer, `parameters/${i}/schema`), v);
    });
    for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
      const key = type.replace(/~/g, '~0').replace(/\//g, '~1');
      for (const v of examplesOf(media)) check(`${label} body ${type}`, at(pointer, `requestBody/content/${key}/schema`), v);
    }
    for (const [status, r] of Object.entries(op.responses)) {
      for (const [type, media] of Object.entries(/** @type {any} */ (r).content ?? {})) {
        const key = type.replace(/~/g, '~0').replace(/\//g, '~1');
        for (const v of examplesOf(media)) {
          check(`${label} ${status}`, at(pointer, `responses/${status}/content/${key}/schema`), v);
          if (/^[45]/.test(status) && v && typeof v === 'object' && 'error' in v && !codes.has(/** @type {any} */ (v).error)) {
            failures.push(`${label} ${status}: ${/** @type {any} */ (v).error} is not a code of pipeline/errors.js`);
          }
        }
      }
    }
  }
  assert.ok(checked > 50, `examples checked: ${checked}`);
  assert.deepEqual(failures, []);
});
