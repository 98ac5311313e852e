// Every error leaves the server in one shape, {error, message, details?}, with the status of the catalogue
// (pipeline/errors.js). Fastify's own errors (schema, body size, media type, bad JSON) are mapped onto the
// same codes, so clients branch on `error` and never on message text.
import { ScdvError, errors } from '../pipeline/errors.js';

/** JSON schema of an error body, referenced by every route's 4xx/5xx responses. */
export const errorSchema = {
  $id: 'Error',
  type: 'object',
  description: 'Every error: a stable code, a message for people, and sometimes details (the failing field).',
  properties: {
    error: { type: 'string', description: 'stable code, e.g. SCDV_DOCUMENT_NOT_FOUND' },
    message: { type: 'string' },
    details: { type: 'object', additionalProperties: true },
  },
  required: ['error', 'message'],
};

/** Error responses every route can give; merged into the routes' response schemas. */
export const errorResponses = {
  '4xx': { $ref: 'Error#' },
  '5xx': { $ref: 'Error#' },
};

/**
 * A 400 naming the failing field.
 * @param {string} field e.g. "body.a"
 * @param {string} reason
 */
export function invalid(field, reason) {
  const err = errors.REQUEST_INVALID(`${field} ${reason}`);
  err.details = { field, reason };
  return err;
}

/**
 * Turn one of ajv's errors (as Fastify reports them) into a dotted field name and a reason.
 * @param {any} v ajv error object
 * @param {string} context body, querystring, params or headers
 */
function describeValidation(v, context) {
  let field = context + String(v.instancePath ?? '').replace(/\//g, '.');
  if (v.keyword === 'required') field += `.${v.params.missingProperty}`;
  if (v.keyword === 'additionalProperties') return { field: `${field}.${v.params.additionalProperty}`, reason: 'is not a known field' };
  if (v.keyword === 'discriminator') {
    const tags = (v.parentSchema?.oneOf ?? []).map((/** @type {any} */ b) => b?.properties?.[v.params.tag]?.const).filter(Boolean);
    return { field: `${field}.${v.params.tag}`, reason: tags.length ? `must be one of ${tags.join(', ')}` : String(v.message) };
  }
  return { field, reason: String(v.message ?? 'is invalid') };
}

/**
 * A failed anyOf/oneOf: what each branch is (their titles, as the OpenAPI document shows them).
 * @param {any} v ajv error object (verbose: `schema` holds the branches)
 * @param {string} context
 */
function describeAlternatives(v, context) {
  const field = context + String(v.instancePath ?? '').replace(/\//g, '.');
  const branches = Array.isArray(v.schema) ? v.schema : [];
  const titles = branches.map((/** @type {any} */ b) => b?.title).filter(Boolean);
  const reason = titles.length === branches.length && titles.length > 0
    ? `must be ${v.keyword === 'oneOf' ? 'exactly one of' : 'one of'}: ${titles.join('; ')}`
    : String(v.message ?? 'is invalid');
  return { field, reason };
}

/**
 * Map anything thrown in a request onto the catalogue.
 * @param {any} err
 * @param {{bodyLimit: number, contentType?: string}} limits contentType: the request's, named by a 415
 * @param {string} requestId
 * @returns {ScdvError}
 */
export function toScdvError(err, limits, requestId) {
  if (err instanceof ScdvError) return err;
  if (err?.validation) {
    const context = err.validationContext ?? 'request';
    // ajv stops at the first failure; when that is an anyOf/oneOf, its branches' errors come before it.
    const last = err.validation.at(-1) ?? {};
    const { field, reason } = last.keyword === 'anyOf' || last.keyword === 'oneOf'
      ? describeAlternatives(last, context)
      : describeValidation(err.validation[0] ?? {}, context);
    return invalid(field, reason);
  }
  switch (err?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE': return errors.BODY_TOO_LARGE(limits.bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      // Fastify's message names no type ("Unsupported Media Type"): the request's header does.
      return errors.MEDIA_TYPE_UNSUPPORTED(limits.contentType ? `"${limits.contentType}"` : (String(err.message).replace(/^Unsupported Media Type:?\s*/i, '') || '(none)'), 'application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY': return invalid('body', 'is empty');
    case 'FST_ERR_CTP_INVALID_JSON_BODY': return invalid('body', 'is not valid JSON');
    default: break;
  }
  // Fastify's other client errors (bad URL, invalid content-length …) keep their status.
  if (typeof err?.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    if (err.statusCode === 413) return errors.BODY_TOO_LARGE(limits.bodyLimit);
    if (err instanceof SyntaxError) return invalid('body', 'is not valid JSON');
    const e = errors.REQUEST_INVALID(String(err.message));
    e.status = err.statusCode;
    return e;
  }
  return errors.INTERNAL(requestId);
}

/**
 * The reply body of an error (never a stack, a key or a Redis URL: only catalogue messages get out).
 * @param {ScdvError} err
 */
export function errorBody(err) {
  return err.details ? { error: err.code, message: err.message, details: err.details } : { error: err.code, message: err.message };
}

/**
 * Install the error and not-found handlers on an app.
 * @param {import('fastify').FastifyInstance} app
 * @param {{bodyLimit: number}} limits
 */
export function installErrorHandlers(app, limits) {
  app.addSchema(errorSchema);
  app.setErrorHandler((err, request, reply) => {
    // A route with its own body limit (events, bulk) names that one in its 413.
    const e = toScdvError(err, { bodyLimit: request.routeOptions?.bodyLimit ?? limits.bodyLimit, contentType: request.headers['content-type'] }, request.id);
    if (e.status >= 500 && e.code === 'SCDV_INTERNAL') request.log.error({ err }, 'unexpected error');
    else if (e.status >= 500) request.log.warn({ code: e.code }, e.message);
    // A bound that is full says when to come back.
    if (typeof e.details?.retry_after_s === 'number') reply.header('retry-after', String(e.details.retry_after_s));
    reply.code(e.status).send(errorBody(e));
  });
  app.setNotFoundHandler((request, reply) => {
    const e = errors.ROUTE_NOT_FOUND(request.method, request.url.split('?')[0]);
    reply.code(404).send(errorBody(e));
  });
}
