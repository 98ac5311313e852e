// Which model serves: the trained models, the collections of a model's store, and the model a server or command
// starts with (the active-model record: ./active.js).
import fs from 'node:fs';
import path from 'node:path';
import { modelsDir, validateModelName } from '../paths.js';
import { errors } from '../errors.js';
import { MODEL_FORMAT } from '../model/format.js';
import { mayHaveModelStore, openModelStore } from '../store/index.js';
import { activeRecords } from './active.js';
import { layoutRecords } from './layouts.js';

/** @typedef {import('../config.js').Config} Config */
/** @typedef {import('./active.js').ActiveRecords} ActiveRecords */

/**
 * Trained models in modelsDir() (complete ones: a manifest of the current format), newest first.
 * @returns {{name: string, created_at: string, manifest: Record<string, any>}[]}
 */
export function listModels() {
  let names = [];
  try {
    names = fs.readdirSync(modelsDir(), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return [];
  }
  const out = [];
  for (const name of names) {
    try {
      validateModelName(name);
      const manifest = JSON.parse(fs.readFileSync(path.join(modelsDir(), name, 'manifest.json'), 'utf8'));
      if (manifest.format === MODEL_FORMAT) out.push({ name, created_at: String(manifest.created_at ?? ''), manifest });
    } catch { /* temporary or foreign folder */ }
  }
  return out.sort((a, b) => b.created_at.localeCompare(a.created_at) || a.name.localeCompare(b.name));
}

/**
 * Collections of a model's store without keeping it open ([] when it has no store yet), each with its derived
 * match threshold when one is recorded.
 * @param {string} model
 * @param {{store: Config['store']}} config
 * @returns {Promise<{name: string, width: number, count: number, match_min_score?: import('../match/threshold.js').MatchThreshold}[]>}
 */
export async function storeCollections(model, config) {
  if (!mayHaveModelStore(model, config)) return [];
  const store = await openModelStore(model, config);
  try {
    const records = await layoutRecords(store).read();
    return (await store.listCollections()).map((c) => listingOf(c, records[c.name]));
  } finally {
    await store.close();
  }
}

/**
 * A collection as the listings show it: with its derived match threshold and its expansion when recorded.
 * @template {{name: string}} C
 * @param {C} c
 * @param {Record<string, any> | undefined} record its layout record
 */
export function listingOf(c, record) {
  return { ...c, ...(record?.match_min_score ? { match_min_score: record.match_min_score } : {}), ...(record?.expansion ? { expansion: record.expansion } : {}) };
}

/**
 * The model to serve at start: `explicit` (a flag), else the active-model record, else server.model, else the
 * newest model whose store holds documents, else the newest model. Recorded as active when it changes (unless
 * `record` is false: commands that only read, such as `scdv precompute`).
 * @param {string | undefined} explicit
 * @param {Config} config
 * @param {{record?: boolean, records?: ActiveRecords}} [opts] records: the active-model record to use (default:
 *   activeRecords(config), opened and closed here)
 * @returns {Promise<string>}
 */
export async function resolveModelName(explicit, config, opts = {}) {
  // A command told which model, that records nothing, has no need of the record (nor of the shared Redis).
  if (explicit !== undefined && opts.record === false) {
    validateModelName(explicit);
    if (!listModels().some((m) => m.name === explicit)) throw errors.MODEL_NOT_FOUND(explicit, modelsDir());
    return explicit;
  }
  const records = opts.records ?? activeRecords(config);
  try {
    const record = await records.read();
    let name = explicit ?? record?.model ?? config.server.model ?? null;
    if (!name) {
      const models = listModels();
      if (!models.length) throw errors.MODEL_NOT_FOUND('(any)', `${modelsDir()}: train one with \`scdv train\``);
      for (const m of models) {
        if ((await storeCollections(m.name, config)).some((c) => c.count > 0)) { name = m.name; break; }
      }
      name ??= models[0].name;
    }
    validateModelName(name);
    if (!listModels().some((m) => m.name === name)) throw errors.MODEL_NOT_FOUND(name, modelsDir());
    if ((opts.record ?? true) && (!record || record.model !== name)) {
      const previous = record && record.model !== name ? record.model : record?.previous ?? null;
      await records.write({ model: name, previous, activated_at: new Date().toISOString() });
    }
    return name;
  } finally {
    if (!opts.records) await records.close();
  }
}
