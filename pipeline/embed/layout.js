// The vector layout a collection was indexed with, recorded in the model folder: a query must be embedded with
// the same layout as the documents it is compared with (a hybrid and a pure SCDV vector, or two hybrid vectors of
// different α, do not mix). `scdv index` records it; `scdv eval --collection` checks it.
//
// models/<name>/indexed.json:
//   { "<collection>": { "layout": VectorLayout, "indexed_at": ISO 8601, "corpus_sha256": "…" }, … }
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../fsutil.js';
import { modelsDir } from '../paths.js';
import { validateCollectionName } from '../store/index.js';

export const INDEXED_FILE = 'indexed.json';

/**
 * @typedef {object} VectorLayout
 * @property {'scdv-vectors/1'} format
 * @property {'scdv'|'hybrid'} kind
 * @property {number} width whole vector
 * @property {number} scdvWidth the SCDV block: dims [0, scdvWidth)
 * @property {number} lexicalWidth the TF-IDF block: dims [scdvWidth, width) (0 when pure SCDV)
 * @property {import('../config.js').Config['embed']} embed the settings that shape the vectors
 */

/**
 * @param {import('../config.js').Config['embed']} embed
 * @param {number} scdvWidth
 * @param {number} vocabulary words of the model
 * @returns {VectorLayout}
 */
export function vectorLayout(embed, scdvWidth, vocabulary) {
  const hybrid = embed.hybrid.alpha < 1;
  return {
    format: 'scdv-vectors/1',
    kind: hybrid ? 'hybrid' : 'scdv',
    width: scdvWidth + (hybrid ? vocabulary : 0),
    scdvWidth,
    lexicalWidth: hybrid ? vocabulary : 0,
    embed: structuredClone(embed),
  };
}

/**
 * What differs between two layouts ('' when they are the same).
 * @param {VectorLayout} a
 * @param {VectorLayout} b
 */
export function layoutDifference(a, b) {
  /** @type {(o: any, p?: string) => [string, string][]} */
  const flat = (o, p = '') => Object.entries(o).flatMap(([k, v]) =>
    v !== null && typeof v === 'object' ? flat(v, `${p}${k}.`) : [/** @type {[string, string]} */ ([`${p}${k}`, JSON.stringify(v)])]);
  const A = new Map(flat(a));
  const B = new Map(flat(b));
  const keys = [...new Set([...A.keys(), ...B.keys()])];
  return keys.filter((k) => A.get(k) !== B.get(k)).map((k) => `${k} ${A.get(k) ?? '-'} vs ${B.get(k) ?? '-'}`).join(', ');
}

/**
 * @param {string} modelDir
 * @returns {Record<string, {layout: VectorLayout, indexed_at: string, corpus_sha256?: string}>}
 */
export function readIndexed(modelDir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(modelDir, INDEXED_FILE), 'utf8'));
  } catch {
    return {};
  }
}

/**
 * @param {string} modelDir
 * @param {string} collection
 * @param {VectorLayout} layout
 * @param {string} [corpusSha256]
 */
export function recordIndexed(modelDir, collection, layout, corpusSha256) {
  const all = readIndexed(modelDir);
  all[collection] = { layout, indexed_at: new Date().toISOString(), ...(corpusSha256 ? { corpus_sha256: corpusSha256 } : {}) };
  writeFileAtomic(path.join(modelDir, INDEXED_FILE), JSON.stringify(all, null, 2) + '\n');
}

/**
 * Removes a collection's entry (after the collection was deleted); no file is written when it has none.
 * @param {string} modelDir
 * @param {string} collection
 */
export function forgetIndexed(modelDir, collection) {
  const all = readIndexed(modelDir);
  if (!(collection in all)) return;
  delete all[collection];
  writeFileAtomic(path.join(modelDir, INDEXED_FILE), JSON.stringify(all, null, 2) + '\n');
}

/**
 * Deletes a collection of a model: from its store (see Store.dropCollection; SCDV_COLLECTION_NOT_FOUND when
 * absent) and from the model's record of indexed layouts (models/<model>/indexed.json).
 * @param {import('../store/index.js').Store} store the model's store (storeDirFor(model))
 * @param {string} model
 * @param {string} collection
 */
export async function dropModelCollection(store, model, collection) {
  await store.dropCollection(validateCollectionName(collection));
  forgetIndexed(path.join(modelsDir(), model), collection);
}
