// Reader events: impressions (the list a widget showed) and clicks, in batches of JSON ({"events": [...]}) or
// NDJSON (one event per line). A batch is answered once it is in the event log (pipeline/events/log.js): an
// acknowledged event is never lost, a refused batch is stored not at all.
import { errors } from '../../pipeline/errors.js';
import { eventIdProblem, eventSchemas } from '../../pipeline/events/schema.js';
import { errorResponses, invalid, toScdvError } from '../errors.js';

const NDJSON_TYPES = ['application/x-ndjson', 'application/jsonl', 'application/json-lines'];

/**
 * One event per non-empty line; a line that is not a JSON object is a 400 naming its number.
 * @param {string} text
 */
export function parseNdjson(text) {
  const events = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    let ev;
    try { ev = JSON.parse(line); } catch (err) {
      const e = errors.REQUEST_INVALID(`line ${i + 1} is not valid JSON (${/** @type {Error} */ (err).message})`);
      e.details = { field: 'body', line: i + 1, reason: 'is not valid JSON' };
      throw e;
    }
    events.push(ev);
    // Where each event came from, for the error of a line the schema refuses; its text, stored as sent.
    if (ev !== null && typeof ev === 'object') sourceOf.set(ev, { line: i + 1, text: line });
  }
  return { events };
}
/** @type {WeakMap<object, {line: number, text: string}>} */
const sourceOf = new WeakMap();

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {import('../app.js').AppContext} ctx
 */
export default function eventRoutes(app, ctx) {
  const e = ctx.config.events;
  const schemas = eventSchemas(e);
  app.register(async (scope) => {
    scope.addContentTypeParser(NDJSON_TYPES, { parseAs: 'string', bodyLimit: e.bodyLimit }, (_req, body, done) => {
      try { done(null, parseNdjson(/** @type {string} */ (body))); } catch (err) { done(/** @type {Error} */ (err)); }
    });
    scope.post('/v1/events', {
      bodyLimit: e.bodyLimit,
      attachValidation: true,
      schema: {
        tags: ['events'],
        summary: 'Store a batch of reader events (impressions, clicks): answered once they are durable',
        description: 'JSON {"events": [...]} or NDJSON (one event per line). Needs a key when server.openReads is false. '
          + 'An impression names the request_id of the related/match answer it showed.',
        body: {
          content: {
            'application/json': { schema: schemas.batch },
            'application/x-ndjson': { schema: schemas.batch },
          },
        },
        response: {
          200: {
            type: 'object',
            properties: { accepted: { type: 'integer' }, impressions: { type: 'integer' }, clicks: { type: 'integer' } },
            required: ['accepted', 'impressions', 'clicks'],
          },
          ...errorResponses,
        },
      },
    }, async (request) => {
      const body = /** @type {{events: Record<string, any>[]}} */ (request.body);
      if (request.validationError) throw withLine(request.validationError, body, e.bodyLimit, request.id);
      // No body at all (no content type: Fastify picks no schema to validate with).
      if (!body || !Array.isArray(body.events)) throw invalid('body', 'is required: {"events": [...]} as JSON, or one event per line as NDJSON');
      for (const [i, ev] of body.events.entries()) {
        const bad = eventIdProblem(ev);
        if (bad) {
          const field = `body.events.${i}.${bad.field}`;
          throw Object.assign(errors.EVENT_ID_INVALID(field, bad.problem), { details: { field, reason: bad.problem } });
        }
      }
      const stamp = `,"received_at":"${new Date().toISOString()}"}`;
      let impressions = 0;
      // The stored line is the event as validated plus received_at: an NDJSON line is kept as sent (the schema
      // allows no other field, and it is a JSON object, so it ends with "}"), not serialised again.
      const lines = body.events.map((ev) => {
        if (ev.type === 'impression') impressions++;
        const text = sourceOf.get(ev)?.text ?? JSON.stringify(ev);
        return text.slice(0, text.lastIndexOf('}')) + stamp;
      });
      await /** @type {import('../../pipeline/events/log.js').EventLog} */ (ctx.events).appendLines(lines);
      ctx.metrics.events.inc({ type: 'impression' }, impressions);
      ctx.metrics.events.inc({ type: 'click' }, lines.length - impressions);
      return { accepted: lines.length, impressions, clicks: lines.length - impressions };
    });
  });
}

/**
 * A schema failure of an NDJSON body names the line (events.3 is the event on line N).
 * @param {any} err
 * @param {{events?: unknown[]} | undefined} body
 * @param {number} bodyLimit
 * @param {string} requestId
 */
function withLine(err, body, bodyLimit, requestId) {
  const e = toScdvError(err, { bodyLimit }, requestId);
  const m = /^body\.events\.(\d+)/.exec(String(/** @type {any} */ (e.details)?.field ?? ''));
  const ev = m && Array.isArray(body?.events) ? body.events[Number(m[1])] : undefined;
  const line = ev && typeof ev === 'object' ? sourceOf.get(ev)?.line : undefined;
  if (line !== undefined) {
    e.message = `${e.message} (line ${line})`;
    e.details = { ...e.details, line };
  }
  return e;
}
