// Progress and errors of a bulk job.
import { errors } from '../../pipeline/errors.js';
import { errorResponses } from '../errors.js';
import { bulkStatus, JOB_ID_RE } from '../jobs.js';

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {import('../app.js').AppContext} ctx
 */
export default function jobRoutes(app, ctx) {
  const issue = {
    type: 'object',
    properties: { line: { type: 'integer' }, code: { type: 'string' }, reason: { type: 'string' }, id: { type: 'string' } },
  };
  app.get('/v1/jobs/:id', {
    schema: {
      tags: ['write'],
      summary: 'State, progress and errors of a bulk job',
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
            reason: { type: ['string', 'null'], description: 'why the job failed as a whole (cancelled: its collection was deleted, its corpus is gone); null otherwise' },
          },
        },
        ...errorResponses,
      },
    },
  }, async (request) => {
    const { id } = /** @type {{id: string}} */ (request.params);
    // Ids become folder names: anything but our own format is simply unknown.
    if (!JOB_ID_RE.test(id)) throw errors.JOB_NOT_FOUND(id);
    return bulkStatus(id, ctx.hub, ctx.config);
  });
}
