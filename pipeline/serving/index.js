// Which model serves, and with which embed settings each collection of a model was indexed: the decisions the
// server, the CLI, `scdv index`, eval, inspect and the demo share (server/model-state.js keeps only the server's
// runtime state: the loaded models and the switch between them). This file is the folder's public face:
//   active.js            where the active-model record lives (the file on the native backend, the shared Redis on OpenSearch)
//   model-choice.js      the trained models, a store's collections, the model to serve at start
//   activation.js        what an activation must keep serving, its 409, activation without a server
//   layouts.js           the layouts collections were indexed with, where each backend records them; the model files check
//   match-thresholds.js  the derived default min_score of each target collection
//   collection-embed.js  the embed settings of a collection's documents and of the texts compared with it
export { activeModelFile, activeRecords } from './active.js';
export { listModels, storeCollections, resolveModelName, listingOf } from './model-choice.js';
export { activationShortfall, activationRefused, activateRecorded } from './activation.js';
export {
  INDEXED_FILE, readIndexed, recordIndexed, recordCollectionLayout, recordLayoutIfNone, readLayoutsOf, checkModelFiles,
  forgetIndexed, layoutRecords, dropModelCollection, indexedLayoutDifference,
} from './layouts.js';
export { readMatchThresholds, deriveAndRecordThreshold, rederiveThresholds } from './match-thresholds.js';
export { collectionEmbedConfig, servedCollectionEmbed, collectionWriteEmbed, servingEmbedConfig } from './collection-embed.js';
/** @typedef {import('./active.js').ActiveRecord} ActiveRecord */
/** @typedef {import('./active.js').ActiveRecords} ActiveRecords */
/** @typedef {import('./collection-embed.js').ServingLog} ServingLog */
