// Two rules every API route follows, installed once for all of them:
// - a method the path does not have answers 405 with an Allow header (not 404: the resource exists);
// - numbers in the query string are decimal: ajv's coercion would read k=0x10 as 16, k=1e1 as 10.
import { errors } from '../pipeline/errors.js';
import { errorBody, invalid } from './error-replies.js';

/** Methods a 405 can be given for: the standard ones and QUERY (Fastify routes them; WebDAV's are left to the 404). */
const METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'QUERY', 'TRACE'];

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Routes that are not the API (documentation, queue board): their methods are theirs. */
const notApi = (/** @type {string} */ url) => url.startsWith('/docs') || url.startsWith('/admin') || url.includes('*');

/**
 * Hook the route table: remembers each API path's methods (for installMethodNotAllowed) and gives every route
 * with numeric query parameters the decimal check. Call before any route is added.
 * @param {import('fastify').FastifyInstance} app
 * @returns {Map<string, Set<string>>} path pattern -> its methods, filled as routes are added
 */
export function watchRoutes(app) {
  /** @type {Map<string, Set<string>>} */
  const methods = new Map();
  app.addHook('onRoute', (route) => {
    if (/** @type {any} */ (route.config)?.methodNotAllowed || notApi(route.url)) return;
    const set = methods.get(route.url) ?? new Set();
    for (const m of [route.method].flat()) set.add(m);
    methods.set(route.url, set);
    const numeric = numericQueryFields(/** @type {any} */ (route.schema)?.querystring);
    if (numeric.length) {
      const check = decimalCheck(numeric);
      route.preValidation = [check, ...[route.preValidation ?? []].flat()];
    }
  });
  return methods;
}

/**
 * For every API path, one hidden route taking the methods it lacks, answering 405 before the body is read.
 * Call after every route is added.
 * @param {import('fastify').FastifyInstance} app
 * @param {Map<string, Set<string>>} methods from watchRoutes
 * @param {{cors: boolean}} opts with CORS on, OPTIONS belongs to its preflight route
 */
export function installMethodNotAllowed(app, methods, opts) {
  for (const [url, have] of methods) {
    const others = METHODS.filter((m) => !have.has(m) && !(opts.cors && m === 'OPTIONS'));
    if (!others.length) continue;
    const allow = METHODS.filter((m) => have.has(m)).join(', ');
    const refuse = async (/** @type {import('fastify').FastifyRequest} */ request, /** @type {import('fastify').FastifyReply} */ reply) => {
      const e = errors.METHOD_NOT_ALLOWED(request.method, request.url.split('?')[0], allow);
      return reply.code(405).header('allow', allow).send(errorBody(e));
    };
    app.route({
      method: others,
      url,
      exposeHeadRoute: false,
      // Open: a wrong method is answered the same with or without a key.
      config: { access: 'open', methodNotAllowed: true },
      schema: { hide: true },
      onRequest: refuse,
      handler: refuse,
    });
  }
}

/**
 * Names and JSON types of a querystring schema's numeric properties.
 * @param {any} schema
 * @returns {{name: string, integer: boolean}[]}
 */
function numericQueryFields(schema) {
  const props = schema?.properties ?? {};
  return Object.entries(props)
    .filter(([, p]) => p?.type === 'integer' || p?.type === 'number')
    .map(([name, p]) => ({ name, integer: p.type === 'integer' }));
}

/**
 * @param {{name: string, integer: boolean}[]} fields
 * @returns {import('fastify').preValidationHookHandler}
 */
function decimalCheck(fields) {
  // Callback-style, as the app's other per-request hooks (server/app.js): an async hook costs every request a promise
  // and a microtask turn.
  return (request, _reply, done) => {
    const q = /** @type {Record<string, unknown>} */ (request.query ?? {});
    for (const { name, integer } of fields) {
      const v = q[name];
      if (v === undefined) continue;
      for (const x of [v].flat()) {
        if (typeof x === 'string' && !(integer ? INTEGER : DECIMAL).test(x)) {
          done(invalid(`querystring.${name}`, integer ? 'must be a decimal integer' : 'must be a decimal number'));
          return;
        }
      }
    }
    done();
  };
}
