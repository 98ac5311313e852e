// Reader events: impressions (the list a widget showed) and clicks, in batches of JSON ({"events": [...]}) or
// NDJSON (one event per line). A batch is answered once it is in the event log (pipeline/events/log.js): an
// acknowledged event is never lost, a refused batch is stored not at all. Large batches are bounded by the bytes
// handled at once (events.inFlightBytes, events.waitingBatches) and handled in slices that let other requests in.
import { errors } from '../../pipeline/errors.js';
import { eventIdProblem, eventSchemas } from '../../pipeline/events/event-schema.js';
import { errorResponses, invalid, toScdvError } from '../error-replies.js';
import { ByteGate, discardBody, utf8Problem } from '../bodies.js';

const NDJSON_TYPES = ['application/x-ndjson', 'application/jsonl', 'application/json-lines'];

/** Lines (NDJSON) or events (the handler's work) between turns of the event loop: a 4 MiB batch yields ~10 times. */
const SLICE = 1000;
const yieldToLoop = () => new Promise((resolve) => { setImmediate(resolve); });

/**
 * One event per non-empty line; a line that is not a JSON object is a 400 naming its number. The body is checked to
 * be UTF-8 first (the 400 names the line), and parsed in slices that let other requests in between. Each line is
 * decoded on its own: the body is never one string of several MiB (a large V8 string's memory comes back only at a
 * full collection).
 * @param {Buffer} body
 */
export async function parseNdjson(body) {
  const bad = utf8Problem(body, { lines: true });
  if (bad) throw bad;
  const events = [];
  let start = 0;
  for (let lineNo = 1; start < body.length; lineNo++) {
    let end = body.indexOf(0x0a, start);
    if (end === -1) end = body.length;
    const line = body.toString('utf8', start, end).trim();
    start = end + 1;
    if (lineNo % SLICE === 0) await yieldToLoop();
    if (line === '') continue;
    let ev;
    try { ev = JSON.parse(line); } catch (err) {
      const e = errors.REQUEST_INVALID(`line ${lineNo} is not valid JSON (${/** @type {Error} */ (err).message})`);
      e.details = { field: 'body', line: lineNo, reason: 'is not valid JSON' };
      throw e;
    }
    events.push(ev);
    // Where each event came from, for the error of a line the schema refuses; its text, stored as sent.
    if (ev !== null && typeof ev === 'object') sourceOf.set(ev, { line: lineNo, text: line });
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
  // Batches read, parsed and stored at once are bounded by their bytes; the rest wait, their bodies unread.
  const gate = new ByteGate({
    limit: e.inFlightBytes, queue: e.waitingBatches, limitName: 'events.inFlightBytes', queueName: 'events.waitingBatches', what: 'event batches', label: 'event_bodies',
  });
  ctx.metrics.readEventBodies = () => ({ bytes: gate.bytes, waiting: gate.waiting.length });
  app.register(async (scope) => {
    scope.addContentTypeParser(NDJSON_TYPES, { parseAs: 'buffer', bodyLimit: e.bodyLimit }, (/** @type {unknown} */ _req, /** @type {Buffer} */ body) => parseNdjson(body));
    scope.post('/v1/events', {
      bodyLimit: e.bodyLimit,
      attachValidation: true,
      // After the key check (onRequest): a place in the gate for the declared size, held until the answer is sent or
      // the client goes away.
      preParsing: (request, reply, payload, done) => {
        const declared = Number(request.headers['content-length']);
        /** @type {{ready: Promise<void>, leave: () => void}} */
        let place;
        try { place = gate.enter(Number.isFinite(declared) && declared >= 0 ? Math.min(declared, e.bodyLimit) : e.bodyLimit); } catch (err) {
          // The 503 follows the body (read, not kept), so that the client is sure to read it.
          discardBody(payload, e.bodyLimit, () => done(/** @type {Error} */ (err)));
          return;
        }
        reply.raw.once('close', place.leave);
        place.ready.then(() => done(null, payload));
      },
      // A turn of the event loop between parsing a body and checking it against the schema (each one piece of work).
      preValidation: (_request, _reply, done) => { setImmediate(done); },
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
      const stamp = `,"received_at":"${new Date().toISOString()}"}`;
      let impressions = 0;
      /** @type {string[]} */
      const lines = [];
      for (const [i, ev] of body.events.entries()) {
        if (i % SLICE === SLICE - 1) await yieldToLoop();
        const bad = eventIdProblem(ev);
        if (bad) {
          const field = `body.events.${i}.${bad.field}`;
          throw Object.assign(errors.EVENT_ID_INVALID(field, bad.problem), { details: { field, reason: bad.problem } });
        }
        if (ev.type === 'impression') impressions++;
        // The stored line is the event as validated plus received_at: an NDJSON line is kept as sent (the schema
        // allows no other field, and it is a JSON object, so it ends with "}"), not serialised again.
        const text = sourceOf.get(ev)?.text ?? JSON.stringify(ev);
        lines.push(text.slice(0, text.lastIndexOf('}')) + stamp);
      }
      const accepted = lines.length;
      const written = /** @type {import('../../pipeline/events/log.js').EventLog} */ (ctx.events).appendLines(lines);
      // The log holds the batch's bytes now: its events and lines are garbage while the write is under way, not live
      // objects of every batch waiting for the disk.
      body.events.length = 0;
      lines.length = 0;
      await written;
      ctx.metrics.events.inc({ type: 'impression' }, impressions);
      ctx.metrics.events.inc({ type: 'click' }, accepted - impressions);
      return { accepted, impressions, clicks: accepted - impressions };
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
