// The default min_score of each target collection and the known-word minimum of the pages matched with it
// (pipeline/match/threshold.js derives both), recorded beside the target's layout (./layouts.js).
import { deriveMatchThreshold } from '../match/threshold.js';
import { layoutRecords, readRecordsOf } from './layouts.js';

/** @typedef {import('../config.js').Config} Config */

/**
 * The derived match thresholds of a model's collections, by collection (from the records of an open store, or
 * of the model's backend when `store` is a model name).
 * @param {Pick<import('../store/index.js').StoreBackend, 'backend' | 'model' | 'readLayouts' | 'recordLayout'> | string} store
 * @param {{store: Config['store']}} [config] with a model name
 * @returns {Promise<Record<string, import('../match/threshold.js').MatchThreshold>>}
 */
export async function readMatchThresholds(store, config) {
  const all = typeof store === 'string' ? await readRecordsOf(store, /** @type {{store: Config['store']}} */ (config)) : await layoutRecords(store).read();
  /** @type {Record<string, import('../match/threshold.js').MatchThreshold>} */
  const out = {};
  for (const [c, e] of Object.entries(all)) if (e?.match_min_score) out[c] = e.match_min_score;
  return out;
}

/**
 * Measures the default min_score of `target` against the pages of `source` (deriveMatchThreshold) and records it
 * beside the target's layout (null, nothing recorded: an empty collection).
 * @param {import('../store/index.js').StoreBackend} store the model's store
 * @param {string} source
 * @param {string} target
 * @param {{server: {matchThreshold: {quantile: number, knownShareRatio: number}}}} config
 */
export async function deriveAndRecordThreshold(store, source, target, config) {
  const t = await deriveMatchThreshold(await store.collection(source), await store.collection(target), {
    source, quantile: config.server.matchThreshold.quantile, knownShareRatio: config.server.matchThreshold.knownShareRatio,
  });
  if (!t) return null;
  const rec = layoutRecords(store);
  await rec.record(target, { ...((await rec.read())[target] ?? {}), match_min_score: t });
  return t;
}

/**
 * After `collection` was indexed: its own threshold against the default page collection (articles) when that
 * holds documents, and, when it is a page collection itself, the thresholds measured against it again.
 * @param {import('../store/index.js').StoreBackend} store
 * @param {string} collection
 * @param {string} defaultSource CLI_DEFAULTS.collection
 * @param {{server: {matchThreshold: {quantile: number, knownShareRatio: number}}}} config
 * @returns {Promise<Record<string, import('../match/threshold.js').MatchThreshold>>} the thresholds derived, by target
 */
export async function rederiveThresholds(store, collection, defaultSource, config) {
  const counts = new Map((await store.listCollections()).map((c) => [c.name, c.count]));
  /** @type {[string, string][]} source, target */
  const todo = [];
  if (collection !== defaultSource && (counts.get(defaultSource) ?? 0) > 0) todo.push([defaultSource, collection]);
  for (const [target, t] of Object.entries(await readMatchThresholds(store))) {
    if (t.source === collection && target !== collection && (counts.get(target) ?? 0) > 0) todo.push([collection, target]);
  }
  /** @type {Record<string, import('../match/threshold.js').MatchThreshold>} */
  const out = {};
  for (const [source, target] of todo) {
    const t = await deriveAndRecordThreshold(store, source, target, config);
    if (t) out[target] = t;
  }
  return out;
}
