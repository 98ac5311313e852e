// What an expanded ad collection was expanded against (pipeline/match/expand.js), recorded beside its layout
// (./layouts.js: models/<name>/indexed.json, OpenSearch `_meta`) as `expansion`:
//   {from, neighbours, weight, expanded, from_count, from_indexed_at, own_collection, computed_at, stale, stale_since?, reason?}
// expanded false: the ads are stored as embedded (reason: the source collection was empty or missing, or the
// expansion is off). The record is stale when the source changed since (an API write marks it; `scdv index` of the
// source re-expands at once; `scdv precompute` re-expands a stale target before it derives the threshold).
import { expandRows, expandSettingsOf, ownCollectionOf } from '../match/expand.js';
import { layoutRecords } from './layouts.js';

/** @typedef {import('../store/index.js').StoreBackend} StoreBackend */
/** @typedef {import('../match/expand.js').ExpandSettings} ExpandSettings */

/**
 * @typedef {object} ExpansionRecord
 * @property {string} from
 * @property {number} neighbours
 * @property {number} weight
 * @property {boolean} expanded
 * @property {number} from_count documents of `from` when expanded
 * @property {string | null} from_indexed_at `from`'s recorded indexed_at when expanded (its generation)
 * @property {string} own_collection where the ads' own vectors are
 * @property {string} computed_at ISO 8601
 * @property {boolean} stale
 * @property {string} [stale_since]
 * @property {string} [reason] why not expanded
 */

/** Ads read and rewritten per batch by a re-expansion. */
const BATCH = 200;

/**
 * The source collection's handle, null when it does not exist.
 * @param {StoreBackend} store
 * @param {string} from
 */
export async function sourceCollection(store, from) {
  return (await store.collectionInfo(from)) ? store.collection(from) : null;
}

/**
 * Records what `target` was just expanded against.
 * @param {StoreBackend} store
 * @param {string} target
 * @param {ExpandSettings} settings
 * @param {boolean} expanded
 * @returns {Promise<ExpansionRecord>}
 */
export async function recordExpansion(store, target, settings, expanded) {
  const rec = layoutRecords(store);
  const all = await rec.read();
  const count = (await store.collectionInfo(settings.from))?.count ?? 0;
  /** @type {ExpansionRecord} */
  const expansion = {
    from: settings.from, neighbours: settings.neighbours, weight: settings.weight, expanded: expanded && count > 0,
    from_count: count, from_indexed_at: all[settings.from]?.indexed_at ?? null, own_collection: ownCollectionOf(target),
    computed_at: new Date().toISOString(), stale: false,
    ...(expanded && count > 0 ? {} : { reason: `collection "${settings.from}" is ${count ? 'not used' : 'empty or missing'}: ads stored unexpanded` }),
  };
  await rec.record(target, { ...((await rec.read())[target] ?? {}), expansion });
  return expansion;
}

/**
 * Expands every ad of `target` again from its own vectors (the companion collection) and records it. With
 * `settings` null (expansion turned off), the own vectors are written back as they are and the record removed.
 * Ads with no own vector (written before expansion existed) are left as they are.
 * @param {StoreBackend} store
 * @param {string} target
 * @param {ExpandSettings | null} settings
 * @returns {Promise<ExpansionRecord | null>}
 */
export async function reexpandCollection(store, target, settings) {
  const ownName = ownCollectionOf(target);
  const ownInfo = await store.collectionInfo(ownName);
  if (!ownInfo || !(await store.collectionInfo(target))) return null;
  const own = await store.collection(ownName);
  const tgt = await store.collection(target);
  const source = settings ? await sourceCollection(store, settings.from) : null;
  const ids = [...(await own.ids())].sort();
  let expanded = false;
  for (let i = 0; i < ids.length; i += BATCH) {
    /** @type {import('../match/expand.js').Row[]} */
    const rows = [];
    for (const id of ids.slice(i, i + BATCH)) {
      const d = await own.get(id);
      if (d) rows.push({ id, vector: d.vector, meta: d.meta });
    }
    const r = settings ? await expandRows(source, rows, settings) : { rows, expanded: false };
    expanded ||= r.expanded;
    await tgt.upsert(/** @type {any} */ (r.rows), { refresh: false });
  }
  await tgt.flush();
  if (!settings) {
    const rec = layoutRecords(store);
    const { expansion: _gone, ...rest } = (await rec.read())[target] ?? {};
    await rec.record(target, rest);
    return null;
  }
  return recordExpansion(store, target, settings, expanded);
}

/**
 * Whether `target`'s expansion is out of date: marked stale, or its source's count or generation differ from
 * those it was expanded against, or the config's settings differ from the recorded ones.
 * @param {StoreBackend} store
 * @param {ExpansionRecord | undefined} record
 * @param {ExpandSettings | null} settings the config's
 */
export async function expansionIsStale(store, record, settings) {
  if (!record) return settings !== null;
  if (!settings) return true;
  if (record.stale || record.from !== settings.from || record.neighbours !== settings.neighbours || record.weight !== settings.weight) return true;
  const all = await layoutRecords(store).read();
  const count = (await store.collectionInfo(record.from))?.count ?? 0;
  return count !== record.from_count || (all[record.from]?.indexed_at ?? null) !== record.from_indexed_at;
}

/**
 * Marks stale every expansion made from `source` (after an API write to it). Returns the targets marked.
 * @param {StoreBackend} store
 * @param {string} source
 */
export async function markExpansionsStale(store, source) {
  const rec = layoutRecords(store);
  const marked = [];
  for (const [target, e] of Object.entries(await rec.read())) {
    if (e?.expansion?.from !== source || e.expansion.stale) continue;
    await rec.record(target, { ...e, expansion: { ...e.expansion, stale: true, stale_since: new Date().toISOString() } });
    marked.push(target);
  }
  return marked;
}

/**
 * After `source` was re-indexed: every ad collection expanded from it (recorded, or configured with a companion
 * collection) is expanded again. Returns the records, by target.
 * @param {StoreBackend} store
 * @param {string} source
 * @param {{adEmbed: import('../config.js').Config['adEmbed']}} config
 */
export async function refreshExpansions(store, source, config) {
  /** @type {Record<string, ExpansionRecord | null>} */
  const out = {};
  const records = await layoutRecords(store).read();
  const targets = new Set(config.adEmbed.collections.filter((c) => expandSettingsOf(config.adEmbed, c)?.from === source));
  for (const [t, e] of Object.entries(records)) if (e?.expansion?.from === source) targets.add(t);
  for (const target of targets) {
    if (!(await store.collectionInfo(ownCollectionOf(target)))) continue;
    out[target] = await reexpandCollection(store, target, expandSettingsOf(config.adEmbed, target));
  }
  return out;
}

/**
 * One line saying how an ad collection was expanded, for the commands' output.
 * @param {string} target
 * @param {ExpansionRecord | null} e null: expansion off (own vectors stored as they are)
 */
export function describeExpansion(target, e) {
  if (!e) return `ads of "${target}" stored unexpanded (adEmbed.expand off)`;
  if (!e.expanded) return `ads of "${target}" stored unexpanded: ${e.reason}`;
  return `ads of "${target}" expanded from "${e.from}" (${e.from_count.toLocaleString('en-US')} documents): own vector + ${e.weight}/${e.neighbours} × its ${e.neighbours} nearest`;
}
