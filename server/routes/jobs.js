// Progress and errors of a bulk job. Its counts are a read; what it names (model, collection) and what it quotes
// (line issues, shard failures) need a key, as the write that queued it did.
import { errors } from '../../pipeline/errors.js';
import { errorResponses } from '../error-replies.js';
import { bulkStatus, JOB_ID_RE } from '../bulk-uploads.js';
import { keyChecker, presentedKey } from '../auth.js';
import { keyed } from '../schemas.js';

/** Fields of a job's status given only with a key. */
const KEYED_FIELDS = /** @type {const} */ (['model', 'collection', 'issues', 'errors', 'reason']);

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {import('../app.js').AppContext} ctx
 */
export default function jobRoutes(app, ctx) {
  const issue = {
    type: 'object',
    properties: { line: { type: 'integer' }, code: { type: 'string' }, reason: { type: 'string' }, id: { type: 'string' } },
  };
  const checkKey = keyChecker(ctx.config.server.apiKeyHashes);
  app.get('/v1/jobs/:id', {
    schema: {
      tags: ['write'],
      summary: 'State, progress and errors of a bulk job',
      description: 'Without a key (where reads are open) the answer has the state and the counts only, with `redacted: true`: ' +
        `${KEYED_FIELDS.join(', ')} need a key (a wrong key is a 403).`,
      // Anonymous callers are answered too (the {} requirement), with less.
      security: [{}, ...keyed],
      params: { type: 'object', properties: { id: { type: 'string', maxLength: 64 } }, required: ['id'] },
      response: {
        200: {
          type: 'object',
          properties: {
            id: { type: 'string' }, kind: { type: 'string' }, state: { type: 'string', enum: ['queued', 'running', 'completed', 'failed'] },
            model: { type: 'string' }, collection: { type: 'string' }, created_at: { type: 'string' },
            lines: { type: 'integer' }, lines_done: { type: 'integer' }, progress: { type: 'number' },
            shards: { type: 'object', properties: { total: { type: 'integer' }, done: { type: 'integer' }, failed: { type: 'integer' } } },
            documents: { type: 'integer' }, rejected: { type: 'integer' }, empty: { type: 'integer' },
            issues: { type: 'array', items: issue, description: 'the first 100 lines rejected or without a known word' },
            errors: {
              type: 'array',
              items: { type: 'object', properties: { shard: { type: 'integer' }, first_line: { type: 'integer' }, message: { type: 'string' } } },
            },
            redacted: { type: 'boolean', description: `true when asked without a key: ${KEYED_FIELDS.join(', ')} are left out` },
            reason: { type: ['string', 'null'], description: 'why the job failed as a whole (cancelled: its collection was deleted, its corpus is gone); null otherwise' },
          },
          required: ['id', 'kind', 'state', 'created_at', 'lines', 'lines_done', 'progress', 'shards', 'documents', 'rejected', 'empty', 'redacted'],
        },
        ...errorResponses,
      },
    },
  }, async (request) => {
    const { id } = /** @type {{id: string}} */ (request.params);
    // Ids become folder names: anything but our own format is simply unknown.
    const key = presentedKey(request.headers);
    if (key !== undefined && !checkKey(key)) throw errors.FORBIDDEN('job details');
    if (!JOB_ID_RE.test(id)) throw errors.JOB_NOT_FOUND(id);
    const status = await bulkStatus(id, ctx.hub, ctx.config);
    if (key !== undefined) return { ...status, redacted: false };
    const open = Object.fromEntries(Object.entries(status).filter(([k]) => !(/** @type {readonly string[]} */ (KEYED_FIELDS)).includes(k)));
    return { ...open, redacted: true };
  });
}
