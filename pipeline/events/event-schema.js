// The reader events' schema, one place: the route validates against it (ajv), the simulator writes it, the
// report reads it. An impression is the list a widget showed for one answer; a click is one of its items opened.
import { MAX_ID_LENGTH, idProblem } from '../corpus/document.js';
import { COLLECTION_NAME_RE } from '../store/names.js';

// The id rule beyond the length (no tab or line break, no lone surrogate) is eventIdProblem's: an event's ids sit
// deep in a batch, where OpenAPI tools outside JavaScript misread that pattern and fuzz the route with ids it refuses.
const docId = { type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH };

/**
 * The first id of a schema-valid event that is no document id (idProblem's rule), as the field path under the
 * event and the problem; undefined when all are.
 * @param {Record<string, any>} event
 * @returns {{field: string, problem: string} | undefined}
 */
export function eventIdProblem(event) {
  /** @type {[string, unknown][]} */
  const ids = [['page_id', event.page_id], ['clicked_id', event.clicked_id], ...(event.items ?? []).map((/** @type {any} */ it, /** @type {number} */ i) => [`items.${i}.id`, it?.id])];
  for (const [field, id] of ids) {
    const problem = typeof id === 'string' ? idProblem(id) : undefined;
    if (problem) return { field, problem };
  }
  return undefined;
}
const shortText = (/** @type {string} */ description) => ({ type: 'string', minLength: 1, maxLength: 200, description });
const requestId = { type: 'string', minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9._:-]+$', description: 'the request_id of the related/match answer shown' };

/** A hashed user id (what picks the arm): never an e-mail address or a raw account id. */
export const USER_SCHEMA = {
  type: 'string', minLength: 8, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$',
  description: 'a hashed (pseudonymous) user id, e.g. hex SHA-256 of a cookie id with a site secret; never personal data',
};

const common = {
  id: { type: 'string', minLength: 1, maxLength: 100, description: "the client's own event id (optional)" },
  ts: { type: 'string', format: 'date-time', maxLength: 64, description: 'when it happened (client clock); the server adds received_at' },
  request_id: requestId,
  page_id: { ...docId, description: 'the page the list was shown on' },
  user: USER_SCHEMA,
};

/**
 * @param {{maxItems: number, maxBatch: number}} limits events.maxItems, events.maxBatch
 */
export function eventSchemas(limits) {
  const impression = {
    type: 'object',
    title: 'impression: the list shown for one answer',
    additionalProperties: false,
    required: ['type', 'request_id', 'items'],
    properties: {
      type: { type: 'string', const: 'impression' },
      ...common,
      collection: { type: 'string', pattern: COLLECTION_NAME_RE.source, description: 'the collection the list came from' },
      model: { type: 'string', maxLength: 64 },
      arm: { type: 'string', maxLength: 32, description: 'the arm of the answer' },
      site: shortText("the page's site"),
      category: shortText("the page's category (genre)"),
      items: {
        type: 'array', minItems: 1, maxItems: limits.maxItems,
        items: {
          type: 'object', additionalProperties: false, required: ['id', 'position', 'score'],
          properties: {
            id: docId,
            position: { type: 'integer', minimum: 1, maximum: 1000, description: '1 for the first shown' },
            score: { type: 'number', minimum: -1, maximum: 1, description: 'the similarity the answer gave' },
            category: shortText("the item's category"),
            site: shortText("the item's site"),
          },
        },
      },
    },
  };
  const click = {
    type: 'object',
    title: 'click: an item of a shown list opened',
    additionalProperties: false,
    required: ['type', 'clicked_id'],
    anyOf: [{ required: ['request_id'], title: 'with request_id' }, { required: ['page_id'], title: 'with page_id' }],
    properties: {
      type: { type: 'string', const: 'click' },
      ...common,
      clicked_id: docId,
      position: { type: 'integer', minimum: 1, maximum: 1000 },
    },
  };
  return {
    batch: {
      type: 'object',
      additionalProperties: false,
      required: ['events'],
      properties: {
        events: {
          type: 'array', minItems: 1, maxItems: limits.maxBatch, items: {
            // The discriminator makes ajv check only the branch the type names, so an error names the real field.
            type: 'object', required: ['type'], discriminator: { propertyName: 'type' }, oneOf: [impression, click],
          },
        },
      },
    },
    impression,
    click,
  };
}
