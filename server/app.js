// Build the Fastify app: plugins, hooks and routes, no listening (server/start.js does that, tests inject).
import Fastify, { LogController } from 'fastify';
import AjvCompiler from '@fastify/ajv-compiler';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { KeyFailures, accessHook } from './auth.js';
import { STATUS_CODES } from 'node:http';
import { errors } from '../pipeline/errors.js';
import { errorBody, installErrorHandlers } from './error-replies.js';
import { utf8JsonParser } from './bodies.js';
import { OPTIONAL_BODY, adFieldsSchema, resultItemSchema } from './schemas.js';
import { withExamples } from './openapi-examples.js';
import { installMethodNotAllowed, watchRoutes } from './routing.js';
import healthRoutes from './routes/health.js';
import documentRoutes from './routes/documents.js';
import relatedRoutes from './routes/related.js';
import matchRoutes from './routes/match.js';
import modelRoutes from './routes/models.js';
import jobRoutes from './routes/jobs.js';
import adminRoutes from './routes/admin.js';
import eventRoutes from './routes/events.js';
import { EventLog } from '../pipeline/events/log.js';
import { installSocketBounds } from './sockets.js';

/**
 * What routes need, built once per process by start.js (or by a test).
 * @typedef {object} AppContext
 * @property {import('../pipeline/config.js').Config} config
 * @property {import('./model-state.js').ModelState} models
 * @property {import('./redis-queues.js').QueueHub | null} hub null: no Redis at all (queue routes answer 503)
 * @property {import('./prometheus.js').Metrics} metrics
 * @property {{shuttingDown: boolean}} status
 * @property {import('fastify').FastifyBaseLogger} [log] the app's logger, once built
 * @property {import('./cache.js').ResultCache} relatedCache related-by-id replies, per collection version
 * @property {EventLog} [events] the reader-event log of this process (made by buildApp when absent, closed with the app)
 * @property {KeyFailures} [keyFailures] wrong API keys counted (made by buildApp when absent): the header and the login form
 */

/**
 * Fastify options of the server (a logger, or none for tests).
 * @param {import('../pipeline/config.js').Config} config
 * @param {import('fastify').FastifyBaseLogger | boolean | object} [logger]
 */
function fastifyOptions(config, logger) {
  const s = config.server;
  return {
    logger: logger ?? {
      level: s.logLevel,
      // Belt and braces: request headers are not logged by default, and keys must never be.
      redact: ['req.headers.authorization', 'req.headers["x-api-key"]', 'headers.authorization', 'headers["x-api-key"]'],
    },
    // Per-request lines only at debug level: the histogram in /metrics covers latency, and a log line per
    // request costs more than a precomputed lookup.
    logController: new LogController({ disableRequestLogging: (/** @type {any} */ request) => !request.log.isLevelEnabled?.('debug') }),
    bodyLimit: s.bodyLimit,
    // Slow clients: a request (headers and body) must arrive within requestTimeoutMs, its headers within
    // headersTimeoutMs (Node answers 408 through clientErrorHandler); a silent connection closes after
    // idleTimeoutMs, an idle keep-alive one after keepAliveTimeoutMs. Node checks the first two every
    // connectionsCheckingInterval (30 s by default, too coarse for short limits).
    requestTimeout: s.requestTimeoutMs,
    connectionTimeout: s.idleTimeoutMs,
    keepAliveTimeout: s.keepAliveTimeoutMs,
    http: {
      requestTimeout: s.requestTimeoutMs,
      headersTimeout: s.headersTimeoutMs,
      connectionsCheckingInterval: Math.max(100, Math.min(5000, Math.floor(s.headersTimeoutMs / 4))),
    },
    trustProxy: s.trustProxy,
    // Document ids are up to 512 characters, percent-encoded in the path.
    routerOptions: { maxParamLength: 8192 },
    // verbose: errors carry their schema, so that a failed anyOf/oneOf can say what each branch wanted.
    // discriminator: a oneOf that names its branch by a property (events' type) checks that branch alone.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false, verbose: true, discriminator: true } },
    schemaController: { compilersFactory: { buildValidator: exactBodies } },
    return503OnClosing: true,
    // Errors raised before routing (a malformed percent-encoding, a parameter over maxParamLength) and by
    // Node's HTTP parser (headers over the limit, a malformed request) get the catalogue's shape too.
    frameworkErrors: (/** @type {Error} */ err, /** @type {any} */ _request, /** @type {import('fastify').FastifyReply} */ reply) => {
      reply.code(400).send(errorBody(errors.REQUEST_INVALID(err.message)));
    },
    clientErrorHandler,
  };
}

/**
 * A body media type whose schema has no type is handed to the route as a stream (the bulk JSON Lines upload):
 * the OpenAPI document calls it binary. Validation keeps the type-less schema (a stream is not a string).
 * @param {any} schema a route's schema
 */
function documentRawBodies(schema) {
  const content = schema?.body?.content;
  if (!content) return schema;
  const documented = Object.fromEntries(Object.entries(content).map(([type, c]) => [
    type, /** @type {any} */ (c).schema && !(/** @type {any} */ (c).schema.type) ? { ...(/** @type {any} */ (c)), schema: { type: 'string', format: 'binary', ...(/** @type {any} */ (c).schema) } } : c,
  ]));
  return { ...schema, body: { ...schema.body, content: documented } };
}

/**
 * @fastify/swagger declares every body required; an operation marked OPTIONAL_BODY says it is not.
 * @param {{openapiObject: any}} o
 */
function documentOptionalBodies({ openapiObject }) {
  for (const operations of Object.values(openapiObject.paths ?? {})) {
    for (const op of Object.values(/** @type {Record<string, any>} */ (operations))) {
      if (!op?.[OPTIONAL_BODY]) continue;
      delete op[OPTIONAL_BODY];
      if (op.requestBody) op.requestBody.required = false;
    }
  }
  return openapiObject;
}

const ajvCompilers = AjvCompiler();

/**
 * Validators: query strings, parameters and headers are text, coerced to the schema's types (k=16 is 16);
 * JSON bodies are typed already and are not ({"k": "16"} or {"k": true} is a 400, not k=16 or 1).
 * @param {any} externalSchemas
 * @param {any} options Fastify's ajv options
 */
function exactBodies(externalSchemas, options) {
  const coercing = ajvCompilers(externalSchemas, options);
  const exact = ajvCompilers(externalSchemas, { ...options, customOptions: { ...options.customOptions, coerceTypes: false } });
  return (/** @type {any} */ route) => (route.httpPart === 'body' ? exact : coercing)(route);
}

/**
 * Why Node's parser refused a request target: most often raw UTF-8 (a Japanese word typed into a query string),
 * which HTTP does not allow unencoded. Says how to send it.
 * @param {Buffer | undefined} raw the bytes the parser had
 */
function invalidUrlReason(raw) {
  const line = raw ? raw.subarray(0, Math.max(0, raw.indexOf(0x0a)) || raw.length) : Buffer.alloc(0);
  const what = line.some((b) => b >= 0x80) ? 'has raw (un-percent-encoded) UTF-8' : 'has a character HTTP does not allow in a URL (a space or a control character)';
  return `the request's path or query string ${what}: percent-encode it (encodeURIComponent in JavaScript, `
    + 'urllib.parse.quote in Python, curl -G --data-urlencode "category=スポーツ"), e.g. ?category=%E3%82%B9%E3%83%9D%E3%83%BC%E3%83%84';
}

/**
 * Answer what Node's HTTP parser refused before Fastify saw a request (as Fastify's default does, in our shape).
 * @param {NodeJS.ErrnoException} err
 * @param {import('node:net').Socket} socket
 */
function clientErrorHandler(err, socket) {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  // A reply already under way (a timeout while it is written) cannot be followed by another.
  if (/** @type {any} */ (socket)._httpMessage?.headersSent) { socket.destroy(err); return; }
  const [status, reason] = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? [408, 'the request took too long to arrive']
    : err.code === 'HPE_HEADER_OVERFLOW' ? [431, 'the request line and headers are over the size limit']
      : err.code === 'HPE_INVALID_URL' ? [400, invalidUrlReason(/** @type {any} */ (err).rawPacket)]
        : [400, 'the request is not valid HTTP'];
  const e = errors.REQUEST_INVALID(reason);
  if (err.code === 'HPE_INVALID_URL') e.details = { field: 'url', reason };
  const body = JSON.stringify(errorBody(e));
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(err);
}

/**
 * @param {AppContext} ctx
 * @param {{logger?: any}} [opts]
 * @returns {Promise<import('fastify').FastifyInstance>}
 */
export async function buildApp(ctx, opts = {}) {
  const { config, metrics } = ctx;
  const s = config.server;
  /** @type {import('fastify').FastifyInstance} */
  const app = /** @type {any} */ (Fastify(/** @type {any} */ (fastifyOptions(config, opts.logger))));
  // Per-client and per-process connection shares, one request at a time per connection (server/sockets.js).
  installSocketBounds(app, s, metrics);
  const routeMethods = watchRoutes(app);
  installErrorHandlers(app, { bodyLimit: s.bodyLimit });
  // Every body this API takes is JSON (or JSON Lines on the bulk route, which adds its own parser): a text/plain
  // body is the wrong media type (415), not a string for the schema to refuse.
  app.removeContentTypeParser('text/plain');
  // JSON bodies are checked to be UTF-8 before they are decoded: a bad byte would be read as U+FFFD and stored so.
  const jsonParser = app.getDefaultJsonParser(app.initialConfig.onProtoPoisoning ?? 'error', app.initialConfig.onConstructorPoisoning ?? 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', ...utf8JsonParser(jsonParser));
  app.addSchema(adFieldsSchema);
  app.addSchema(resultItemSchema);

  if (s.corsOrigins.length) {
    await app.register(cors, {
      origin: s.corsOrigins.includes('*') ? '*' : s.corsOrigins,
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
      allowedHeaders: ['content-type', 'authorization', 'x-api-key'],
      maxAge: 600,
    });
  }

  await app.register(swagger, {
    // Shared schemas keep their $id as their name (components.schemas.ResultItem, not def-1): generated clients
    // and types (types/api.d.ts) read these names.
    refResolver: { buildLocalReference: (/** @type {any} */ json, /** @type {any} */ _base, /** @type {any} */ _fragment, /** @type {number} */ i) => json.$id || `def-${i}` },
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'scdv-recommender',
        version: 'v1',
        description: 'Related documents and ad matching with sparse SCDV vectors. Errors: {error, message, details?}.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'authorization: Bearer <API key>' },
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        },
      },
    },
    // The API only: not the documentation's own routes nor the queue board.
    transform: ({ schema, url, route }) => ({
      schema: /** @type {any} */ (url.startsWith('/docs') || url.startsWith('/admin') ? { ...schema, hide: true } : withExamples(documentRawBodies(schema), String(route.method), url)),
      url,
    }),
    transformObject: /** @type {any} */ (documentOptionalBodies),
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: false } });

  ctx.keyFailures ??= new KeyFailures(s.keyFailures, (scope) => metrics.keyRefusals.inc({ scope }));
  const access = accessHook(s, ctx.keyFailures);
  app.addHook('onRequest', access);
  // While shutting down, every answer closes its connection: keep-alive clients reconnect elsewhere, and
  // the server's close does not wait for their idle timeout.
  // The per-request hooks are callback-style, not async: an async hook costs every request a promise and a
  // microtask turn before the reply goes on (Fastify runs a hook's callback form synchronously).
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (ctx.status.shuttingDown) reply.header('connection', 'close');
    done(null, payload);
  });
  // A bounded queue that was full (SCDV_SERVER_BUSY names which).
  app.addHook('onError', (_request, _reply, err, done) => {
    const queue = /** @type {any} */ (err)?.code === 'SCDV_SERVER_BUSY' ? /** @type {any} */ (err).details?.queue : undefined;
    if (queue) metrics.busyRefused.inc({ queue });
    done();
  });
  // Latency per route pattern (bounded label set), measured by Fastify from request to response.
  app.addHook('onResponse', (request, reply, done) => {
    // A literal colon is written '::' in a Fastify path (documents::bulk): the label shows the path as served.
    const route = request.routeOptions.url?.replaceAll('::', ':') ?? 'unmatched';
    metrics.httpDuration.observe({ method: request.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    done();
  });

  metrics.readModel = () => ctx.models.current?.name ?? null;
  metrics.readRedis = () => Boolean(ctx.hub?.up);
  metrics.readRelatedCache = () => ({ bytes: ctx.relatedCache.bytes, entries: ctx.relatedCache.map.size });
  metrics.readStore = async () => {
    const sm = ctx.models.current;
    return sm ? (await sm.collections()).map((c) => ({ model: sm.name, collection: c.name, count: c.count })) : [];
  };
  metrics.readQueues = async () => (ctx.hub ? ctx.hub.depths() : []);

  healthRoutes(app, ctx);
  documentRoutes(app, ctx);
  relatedRoutes(app, ctx);
  matchRoutes(app, ctx);
  modelRoutes(app, ctx);
  jobRoutes(app, ctx);
  const events = ctx.events ?? new EventLog(config.events);
  ctx.events = events;
  app.addHook('onClose', async () => { await events.close(); });
  eventRoutes(app, ctx);
  await app.register(async (scope) => adminRoutes(scope, ctx));
  installMethodNotAllowed(app, routeMethods, { cors: s.corsOrigins.length > 0 });
  return app;
}
