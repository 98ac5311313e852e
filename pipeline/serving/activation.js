// What an activation must keep serving: the rule, its 409, and activation without a running server.
import { modelsDir, validateModelName } from '../paths.js';
import { errors } from '../errors.js';
import { validateCollectionName } from '../store/index.js';
import { activeRecords } from './active.js';
import { listModels, storeCollections } from './model-choice.js';
import { checkModelFiles, readLayoutsOf } from './layouts.js';

/** @typedef {import('../config.js').Config} Config */

/**
 * The rule of activation, decided here: by default a new model must hold (with documents) every collection
 * with documents the active model serves, so that no served collection starts answering 404 unnoticed. An
 * activation that names `collections` asks for exactly those instead (each must hold documents in the new
 * model); the active model's other collections stop being served, deliberately, and are reported as
 * `unserved`. The new model serves every collection of its store either way.
 * @param {{name: string, collections: {name: string, count: number}[]}} current the active model
 * @param {{name: string, collections: {name: string, count: number}[]}} next the model to activate
 * @param {string[]} [chosen] the activate body's `collections`
 * @returns {{missing: string[], unserved: string[]}} missing: refuse the activation when not empty
 */
export function activationShortfall(current, next, chosen) {
  const has = new Set(next.collections.filter((c) => c.count > 0).map((c) => c.name));
  const served = current.collections.filter((c) => c.count > 0).map((c) => c.name);
  const required = chosen ?? served;
  return { missing: required.filter((c) => !has.has(c)), unserved: served.filter((c) => !has.has(c)) };
}

/**
 * The 409 of a refused activation: the rule it broke, the `scdv index` command for each missing collection
 * (with the corpus the active model's collection was indexed from, when recorded) and, by default, the
 * activate body that serves only the collections the new model has.
 * @param {string} current the active model
 * @param {string} next
 * @param {string[]} missing
 * @param {{chosen?: string[], has: string[], config: {store: Config['store']}}} opts config: where the layouts are recorded
 */
export async function activationRefused(current, next, missing, opts) {
  const indexed = await readLayoutsOf(current, opts.config);
  const commands = missing.map((c) => `scdv index --model ${next} --collection ${c} --corpus ${indexed[c]?.corpus ?? `<corpus of ${c}>`}`);
  const rule = opts.chosen
    ? 'the activation\'s "collections" names (each one named must hold documents in the new model)'
    : `model ${current} serves (an activation keeps every collection with documents the active model serves, so that none starts answering 404)`;
  const serveOnly = { collections: opts.has };
  const alternative = opts.chosen ? '' : `; or, to serve only the collections model ${next} has, activate it with the body ${JSON.stringify(serveOnly)}`;
  const err = errors.MODEL_NOT_BUILT(next, missing.join(', '), rule, commands.map((c) => `\`${c}\``).join(', '), alternative);
  err.details = { missing, commands, ...(opts.chosen ? {} : { serve_only: serveOnly }) };
  return err;
}

/**
 * Activation without a running server (`scdv activate --server local`): the same rule and the same 409 as the
 * server's (activationShortfall, activationRefused), checked against the stores, then the active-model record is
 * written; a server started later serves it, and running servers follow the record as they follow any activation.
 * @param {string} name
 * @param {Config} config
 * @param {{collections?: string[]}} [opts] collections: as the activate body's `collections`
 * @returns {Promise<{active: string, previous: string | null, changed: boolean, unserved?: string[]}>}
 */
export async function activateRecorded(name, config, opts = {}) {
  validateModelName(name);
  opts.collections?.forEach((c) => validateCollectionName(c));
  if (!listModels().some((m) => m.name === name)) throw errors.MODEL_NOT_FOUND(name, modelsDir());
  await checkModelFiles(name, await readLayoutsOf(name, config));
  const records = activeRecords(config);
  try {
    const record = await records.read();
    const current = record?.model ?? null;
    const nextCollections = await storeCollections(name, config);
    const servedNow = current && current !== name && listModels().some((m) => m.name === current) ? await storeCollections(current, config) : [];
    const { missing, unserved } = activationShortfall({ name: current ?? name, collections: servedNow }, { name, collections: nextCollections }, opts.collections);
    if (missing.length) {
      const has = nextCollections.filter((c) => c.count > 0).map((c) => c.name);
      throw await activationRefused(current ?? name, name, missing, { chosen: opts.collections, has, config });
    }
    const changed = current !== name;
    const previous = changed ? current : record?.previous ?? null;
    await records.write({ model: name, previous, activated_at: new Date().toISOString(), ...(opts.collections ? { collections: opts.collections, unserved } : {}) });
    return { active: name, previous, changed, ...(unserved.length ? { unserved } : {}) };
  } finally {
    await records.close();
  }
}
