// The embed settings of the texts compared with a collection and of the documents written to it: its recorded
// layout's, else a new collection's (newCollectionEmbed), else the model's default.
import { newCollectionEmbed, layoutDifference } from '../embed/layout.js';
import { mayHaveModelStore, openModelStore } from '../store/index.js';
import { INDEXED_FILE, readLayoutsOf } from './layouts.js';

/** @typedef {import('../config.js').Config} Config */
/** @typedef {import('../embed/layout.js').VectorLayout} VectorLayout */
/** @typedef {{warn?: (o: any, m?: string) => void, info: (o: any, m?: string) => void}} ServingLog */

/**
 * The embed settings to compare texts with one collection: those it was indexed with when recorded, else those a
 * new collection of that name gets from the config (newCollectionEmbed: the ads' for an ad collection).
 * @param {string} model
 * @param {string | undefined} collection
 * @param {{embed: Config['embed'], adEmbed: Config['adEmbed'], store: Config['store']}} config used when none are recorded
 * @returns {Promise<Config['embed']>}
 */
export async function collectionEmbedConfig(model, collection, config) {
  const recorded = collection === undefined ? undefined : (await readLayoutsOf(model, config))[collection];
  return recorded ? recorded.layout.embed : collection === undefined ? config.embed : newCollectionEmbed(config.embed, config.adEmbed, collection);
}

/**
 * The one rule for the embed settings of documents written to (and texts compared with) a collection of a served
 * model: its recorded layout's; else, when it holds documents (written through the API by a version that recorded
 * nothing), the model's default, which they were embedded with; else a new collection's (newCollectionEmbed over
 * the model's default). The server's writes and its queued bulk jobs both decide here.
 * @param {{collection: string, recorded: VectorLayout | undefined, hasDocuments: boolean, modelDefault: Config['embed'], adEmbed: Config['adEmbed']}} options
 * @returns {{embed: Config['embed'], recorded: boolean}}
 */
export function servedCollectionEmbed(options) {
  if (options.recorded) return { embed: options.recorded.embed, recorded: true };
  return { embed: options.hasDocuments ? options.modelDefault : newCollectionEmbed(options.modelDefault, options.adEmbed, options.collection), recorded: false };
}

/**
 * servedCollectionEmbed for a model's collection, from the records and the store as they are now (a bulk job's).
 * @param {string} model
 * @param {string} collection
 * @param {Config} config
 */
export async function collectionWriteEmbed(model, collection, config) {
  const recorded = (await readLayoutsOf(model, config))[collection]?.layout;
  if (recorded) return recorded.embed;
  const store = mayHaveModelStore(model, config) ? await openModelStore(model, config) : null;
  let hasDocuments = false;
  try {
    hasDocuments = ((await store?.collectionInfo(collection))?.count ?? 0) > 0;
  } finally {
    await store?.close();
  }
  return servedCollectionEmbed({ collection, recorded, hasDocuments, modelDefault: await servingEmbedConfig(model, config), adEmbed: config.adEmbed }).embed;
}

/**
 * A model's default embed settings: those its page collections (every one but the ad collections, adEmbed.collections,
 * whose settings are their own) were indexed with, whatever the server's own config says, for a collection with no
 * recorded layout and the texts compared with it. Page collections indexed with different settings have no common
 * default: then the config's settings stay, and the others are named in a warning. A recorded collection is always
 * written to and queried with its own layout (server/model-state.js: one embedder per layout).
 * @param {string} name
 * @param {{embed: Config['embed'], store: Config['store'], adEmbed?: Config['adEmbed']}} config its embed settings are the configured ones
 * @param {ServingLog} [log]
 * @returns {Promise<Config['embed']>}
 */
export async function servingEmbedConfig(name, config, log) {
  const configured = config.embed;
  const ads = config.adEmbed?.collections ?? [];
  const recorded = Object.entries(await readLayoutsOf(name, config)).filter(([c]) => !ads.includes(c));
  if (recorded.length === 0) return configured;
  const first = recorded[0][1].layout;
  const differing = recorded.filter(([, r]) => layoutDifference(r.layout, first) !== '');
  if (differing.length === 0) {
    if (layoutDifference({ ...first, embed: configured }, first) !== '') {
      log?.info({ model: name }, `model ${name}: embedding requests with the settings its collections were indexed with (models/${name}/${INDEXED_FILE}), not the config's`);
    }
    return first.embed;
  }
  (log?.warn ?? log?.info)?.({ model: name, collections: recorded.map(([c]) => c) },
    `model ${name}: its page collections were indexed with different embed settings; each is written to and queried with its own, and a new collection gets the config's`);
  return configured;
}
