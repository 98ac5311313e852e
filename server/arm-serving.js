// What every related/match answer carries for reader events: a request id and the arm that answered
// (pipeline/events/arms.js decides the arm and its query); the routes call serveArm once and search through it.
import { USER_SCHEMA } from '../pipeline/events/event-schema.js';
import { chooseArm, methodQuery, newRequestId } from '../pipeline/events/arms.js';
import { searchView } from '../pipeline/match/rerank.js';

/** The request parameter that picks the arm (query string or body). */
export const armParams = { user: USER_SCHEMA };

/** The answer's fields (response schemas). */
export const armFields = {
  request_id: { type: 'string', description: 'names this answer in impression and click events (POST /v1/events)' },
  arm: { type: 'string', description: 'the arm (method) that answered: config experiments.arms' },
};

/**
 * @typedef {object} ServedArm
 * @property {string} request_id
 * @property {string} arm
 * @property {string} method
 * @property {boolean} asIndexed the arm searches with the vectors as indexed (precomputed matches serve it)
 * @property {(coll: import('./model-state.js').Collection, v: import('../pipeline/events/arms.js').SparseVector, opts: Record<string, any>) => Promise<{id: string, score: number, meta: any}[]>} search
 *   the collection searched with the arm's query (no results when the method's block of the query is empty)
 * @property {(coll: import('./model-state.js').Collection) => import('../pipeline/match/rerank.js').SearchTarget} on
 *   the collection searched through this arm (for searchCollection's candidate loop: pipeline/match/rerank.js searchView)
 * @property {(json: string) => string} splice the fields put first into a serialised answer object
 * @property {(json: Buffer) => Buffer} spliceBytes the same for an answer serialised as UTF-8 bytes
 */

/**
 * @param {import('./app.js').AppContext} ctx
 * @param {import('./model-state.js').ServingModel} servingModel
 * @param {string | undefined} unit the hashed user id, else the page id; undefined: a random split per request
 * @returns {ServedArm}
 */
export function serveArm(ctx, servingModel, unit) {
  const requestId = newRequestId();
  const layout = servingModel.embedder.layout;
  const arm = chooseArm(ctx.config.experiments, unit ?? requestId, layout);
  ctx.metrics.armAnswers.inc({ arm: arm.name });
  const head = `"request_id":${JSON.stringify(requestId)},"arm":${JSON.stringify(arm.name)}`;
  return {
    request_id: requestId,
    arm: arm.name,
    method: arm.method,
    asIndexed: arm.method === 'hybrid' || layout.kind !== 'hybrid',
    async search(coll, v, opts) {
      const q = methodQuery(arm.method, v, layout);
      if (q.indices.length === 0) return [];
      return coll.searchAsync(q, opts);
    },
    on(coll) {
      // The collection as the re-ranking loop sees it: searched with the arm's query (methodQuery returns the vector
      // unchanged when the arm searches with it as indexed).
      const queryOf = (/** @type {import('../pipeline/embed/vectorizer.js').SparseVector} */ v) =>
        /** @type {import('../pipeline/embed/vectorizer.js').SparseVector} */ (methodQuery(arm.method, v, layout));
      return searchView(/** @type {import('../pipeline/match/rerank.js').SearchTarget} */ (coll), queryOf, this.asIndexed);
    },
    splice: (json) => (json === '{}' ? `{${head}}` : `{${head},${json.slice(1)}`),
    spliceBytes: (json) => (json.length === 2 ? Buffer.from(`{${head}}`) : Buffer.concat([Buffer.from(`{${head},`), json.subarray(1)])),
  };
}
