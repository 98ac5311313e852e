// Schema of the sections events and experiments (conventions: ./section.js).
import { section } from './section.js';

const posInt = (/** @type {number} */ d, /** @type {string} */ description, /** @type {Record<string, unknown>} */ more = {}) => ({ type: 'integer', minimum: 1, default: d, description, ...more });

export const events = section('Reader events (POST /v1/events, pipeline/events/): an append-only log of impressions and clicks.', {
  dir: { type: ['string', 'null'], minLength: 1, ruleText: 'a folder path', default: null, description: "Folder of the log's segment files (null: <data dir>/events)." },
  fsync: {
    type: 'string', enum: ['always', 'never'], default: 'always',
    description: "'always': a batch is answered only once it is on disk (write + fdatasync, one per group of batches that arrive together: group commit); 'never': once written to the OS (survives a killed server, not a power cut).",
    why: 'group commit keeps the cost of durability small (BENCHMARKS.md § Reader events).',
  },
  segmentBytes: posInt(64 << 20, 'A segment file is closed and a new one started past this size, bytes; retention removes whole segments.'),
  maxAgeDays: { type: 'number', minimum: 0, default: 90, note: '0: keep by age forever', description: 'Segments whose newest event is older than this are deleted.' },
  maxBytes: { type: 'number', minimum: 0, default: 4 * 1024 ** 3, note: '0: no limit', description: "The log's total size: the oldest segments are deleted past it, bytes." },
  bodyLimit: posInt(4 << 20, 'Largest events request body (JSON or NDJSON), bytes.'),
  maxBatch: posInt(10_000, 'Events per request.'),
  maxItems: posInt(100, 'Results per impression (the list a widget showed).'),
  maxPendingBytes: posInt(64 << 20, 'Bytes waiting to be written before new batches are refused with 503 (memory stays bounded).'),
  inFlightBytes: posInt(8 << 20, 'Bytes of event batches read, parsed and stored at once per process (declared Content-Length, else bodyLimit; one batch always runs): more batches wait with their bodies unread, so that large ones neither stall other requests nor fill memory.', {
    why: '40 concurrent 4 MiB batches keep /healthz answering and the event loop under 1 s (RELIABILITY.md § Load).',
  }),
  waitingBatches: posInt(32, 'Batches waiting for inFlightBytes; one more is answered 503 SCDV_SERVER_BUSY with Retry-After.'),
  bandWidth: { type: 'number', exclusiveMinimum: 0, maximum: 1, default: 0.1, description: '`scdv report clicks`: width of a similarity band (scores 0.30-0.40 with 0.1).' },
  minImpressions: posInt(100, '`scdv report clicks`: a cell (band, genre, arm) with fewer impressions is shown but never flagged.'),
});

/** The methods an arm may use (pipeline/events/arms.js). */
export const ARM_METHODS = /** @type {const} */ (['hybrid', 'scdv', 'lexical']);

export const experiments = section("Arms: live comparison of methods. Each request goes to one arm, chosen by a hash of `user` (a hashed user id) or else the page id, so that one reader keeps one arm; weights are relative. Methods (pipeline/events/arms.js): 'hybrid' (the collection's own vectors), 'scdv' (the SCDV block alone) and 'lexical' (the TF-IDF block alone), the last two only on collections indexed with the hybrid layout.", {
  salt: { type: 'string', default: 'scdv-1', description: 'Changing the salt reshuffles every reader between arms (start a new experiment).' },
  arms: {
    type: 'array', minItems: 1, maxItems: 20, default: [{ name: 'hybrid', method: 'hybrid', weight: 1 }],
    description: 'The arms, each {name, method, weight}; names distinct.',
    items: {
      type: 'object', additionalProperties: false, required: ['name', 'method', 'weight'],
      properties: {
        name: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$', ruleText: '1-32 letters, digits, ".", "_" or "-"', description: "The arm's name (in events and reports)." },
        method: { type: 'string', enum: [...ARM_METHODS], description: 'How its lists are searched.' },
        weight: { type: 'number', exclusiveMinimum: 0, description: 'Its relative share of readers.' },
      },
    },
  },
});
