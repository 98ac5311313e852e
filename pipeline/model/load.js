// Open a trained model folder for embedding: manifest + word-topic vectors.
import fs from 'node:fs';
import path from 'node:path';
import { modelsDir as defaultModelsDir, validateModelName } from '../paths.js';
import { errors } from '../errors.js';
import { MODEL_FORMAT } from './format.js';
import { WordTopics } from './word-topics.js';

/**
 * @typedef {object} LoadedModel
 * @property {string} name
 * @property {string} dir
 * @property {Record<string, any>} manifest
 * @property {WordTopics} wordTopics
 * @property {number} width dims of word-topic and document vectors
 */

/**
 * @param {string} name
 * @param {{modelsDir?: string, inMemory?: boolean}} [opts] inMemory: read the word-topic file into memory
 *   (batch jobs); otherwise it is memory-mapped (the shared page cache, no heap; WordTopics.map)
 * @returns {LoadedModel}
 */
export function loadModel(name, opts = {}) {
  const modelsDir = opts.modelsDir ?? defaultModelsDir();
  const dir = path.join(modelsDir, validateModelName(name));
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  } catch {
    throw errors.MODEL_NOT_FOUND(name, modelsDir);
  }
  if (manifest.format !== MODEL_FORMAT) {
    throw errors.MODEL_NOT_FOUND(name, `${modelsDir} (format ${manifest.format}, this version reads ${MODEL_FORMAT}: train it again)`);
  }
  const file = path.join(dir, 'word_topics.bin');
  const wordTopics = opts.inMemory ? WordTopics.fromBytes(readModelFile(file), file) : WordTopics.map(file);
  return { name, dir, manifest, wordTopics, width: wordTopics.width };
}

/** @param {string} file */
function readModelFile(file) {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw errors.MODEL_CORRUPT(file, `cannot be read (${/** @type {Error} */ (err).message})`).because(err);
  }
}
