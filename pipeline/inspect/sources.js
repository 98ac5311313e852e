// Where inspect and explain get a document from: its stored vector (store collection of the model) and,
// for its words, its text (given, or looked up by id in the corpus the collection was indexed from).
import fs from 'node:fs';
import { errors } from '../errors.js';
import { openModelStore } from '../store/index.js';
import { storeDirFor } from '../paths.js';
import { readLines } from '../corpus/lines.js';
import { parseDocument } from '../corpus/document.js';

/**
 * Open an existing collection of a model's store (never creates one).
 * @param {string} model
 * @param {string} collection
 * @param {{store: import('../config.js').Config['store']}} config
 */
export async function openCollection(model, collection, config) {
  // Opening a native store creates its folder: a model without one has no collection to inspect.
  if (config.store.backend === 'native' && !fs.existsSync(storeDirFor(model))) throw errors.COLLECTION_NOT_FOUND(collection, model);
  const store = await openModelStore(model, config);
  try {
    return { store, coll: await store.collection(collection) };
  } catch (err) {
    await store.close(); // SCDV_COLLECTION_NOT_FOUND when it does not exist
    throw err;
  }
}

/**
 * @param {import('../store/index.js').CollectionHandle} coll
 * @param {string} id
 * @param {string} collection
 */
export async function storedDocument(coll, id, collection) {
  const doc = await coll.get(id);
  if (!doc) throw errors.DOCUMENT_NOT_FOUND(id, collection);
  return doc;
}

/**
 * Documents of a JSON Lines corpus by id (first occurrence wins, as in indexing); stops reading once all
 * are found.
 * @param {string} corpus
 * @param {string[]} ids
 * @returns {Promise<Map<string, import('../corpus/document.js').Document>>}
 */
export async function findCorpusDocuments(corpus, ids) {
  if (!fs.existsSync(corpus)) throw errors.CORPUS_NOT_FOUND(corpus, 'no such file');
  const want = new Set(ids);
  /** @type {Map<string, import('../corpus/document.js').Document>} */
  const found = new Map();
  for await (const line of readLines(corpus, { maxLineBytes: 1 << 20 })) {
    if (!('buf' in line)) continue;
    const r = parseDocument(line.buf, line.lineNo);
    if (!('doc' in r) || !want.has(r.doc.id) || found.has(r.doc.id)) continue;
    found.set(r.doc.id, r.doc);
    if (found.size === want.size) break;
  }
  return found;
}
