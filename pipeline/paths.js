// Where things live. One place, so that moving a folder is a one-line change.
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { errors } from './errors.js';

/** Repository root (the folder holding package.json). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const DICTIONARIES_DIR = path.join(REPO_ROOT, 'dictionaries');
export const STOPWORDS_DIR = path.join(DICTIONARIES_DIR, 'stopwords');
export const USER_DICTIONARIES_DIR = path.join(DICTIONARIES_DIR, 'user');
/** Ignored build output: compiled dictionaries (links into the cache) and active.json. */
export const DICT_BUILD_DIR = path.join(DICTIONARIES_DIR, 'build');
/** Written by setup: which system dictionary the tokenizer uses by default. */
export const ACTIVE_DICT_FILE = path.join(DICT_BUILD_DIR, 'active.json');
export const NEOLOGD_LINK = path.join(DICT_BUILD_DIR, 'neologd');

/** Debian's compiled UTF-8 ipadic, the fallback system dictionary. */
export const IPADIC_UTF8_DIR = '/var/lib/mecab/dic/ipadic-utf8';
/** Debian's EUC-JP ipadic sources, the base of every dictionary we compile. */
export const IPADIC_SOURCE_DIR = '/usr/share/mecab/dic/ipadic';

/**
 * Folders a caller may choose: set with usePaths() (tests, an application embedding the pipeline), else from
 * the environment (SCDV_MODELS_DIR, SCDV_DATA_DIR, SCDV_STORE_DIR), read when asked rather than at import, so a
 * process can point the pipeline elsewhere after loading it.
 * @typedef {{modelsDir?: string, dataDir?: string, storeDir?: string}} ChosenPaths
 */
/** @type {ChosenPaths} */
let chosen = {};

/**
 * Choose folders for this process (undefined keeps the environment's or the default).
 * @param {ChosenPaths} paths
 */
export function usePaths(paths) {
  chosen = { ...chosen, ...Object.fromEntries(Object.entries(paths).filter(([, v]) => v !== undefined).map(([k, v]) => [k, path.resolve(v)])) };
}

/** @param {string} name */
const fromEnv = (name) => (process.env[name] ? path.resolve(/** @type {string} */ (process.env[name])) : null);

/** Trained models, one folder each. */
export const modelsDir = () => chosen.modelsDir ?? fromEnv('SCDV_MODELS_DIR') ?? path.join(REPO_ROOT, 'models');
/** Working files of runs (tokenised corpora, training stages): reusable, never needed by a finished model. */
export const dataDir = () => chosen.dataDir ?? fromEnv('SCDV_DATA_DIR') ?? path.join(REPO_ROOT, '.scdv');
/** Vector stores, one per model: <storeDir>/<model>/<collection>/ (vectors of different models never mix). */
export const storeDir = () => chosen.storeDir ?? fromEnv('SCDV_STORE_DIR') ?? path.join(dataDir(), 'store');
/**
 * The store folder of one model.
 * @param {string} model
 */
export const storeDirFor = (model) => path.join(storeDir(), model);

// Model names become folder names (under modelsDir() and storeDir()): keep them to a safe alphabet (no path tricks).
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * @param {string} name
 * @returns {string} the name, when valid
 */
export function validateModelName(name) {
  if (typeof name !== 'string' || !MODEL_NAME.test(name) || name.includes('..')) throw errors.MODEL_NAME_INVALID(String(name));
  return name;
}
/**
 * A path, links resolved, when it lies inside one of `roots` (folders, or files allowed by themselves); else the
 * error `refuse(reason)` makes. Relative paths and `..` segments are refused before anything is resolved; a path
 * that does not exist yet is resolved through its deepest existing folder (a link there cannot lead out).
 * @param {unknown} file
 * @param {string[]} roots
 * @param {(reason: string) => Error} refuse
 * @returns {string}
 */
export function confinedPath(file, roots, refuse) {
  if (typeof file !== 'string' || file === '' || file.includes('\0')) throw refuse('is not a path');
  if (!path.isAbsolute(file)) throw refuse('is not an absolute path');
  if (file.split(/[\\/]/).includes('..')) throw refuse('has a ".." segment');
  const real = realpathSoFar(file);
  const inside = roots.map(realpathSoFar).some((r) => real === r || real.startsWith(r.endsWith(path.sep) ? r : r + path.sep));
  if (!inside) throw refuse('is outside the folders this process may use');
  return real;
}

/** @param {string} p the real path of its deepest existing ancestor, joined with the rest */
function realpathSoFar(p) {
  let head = path.resolve(p);
  /** @type {string[]} */
  const rest = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync(head), ...rest.reverse());
    } catch { /* not there (yet) */ }
    const up = path.dirname(head);
    if (up === head) return path.resolve(p);
    rest.push(path.basename(head));
    head = up;
  }
}
export const VENV_DIR = path.join(REPO_ROOT, '.venv');
export const VENV_PYTHON = path.join(VENV_DIR, 'bin', 'python');
export const PYTHON_REQUIREMENTS = path.join(REPO_ROOT, 'workers', 'requirements.txt');
export const NATIVE_ADDON = path.join(REPO_ROOT, 'build', 'Release', 'scdv_mecab.node');

/** The bundled sample corpus (livedoor news, CC BY-ND 2.1 JP, see its ATTRIBUTION.md). */
export const SAMPLE_CORPUS = path.join(REPO_ROOT, 'tests', 'fixtures', 'livedoor', 'sample.jsonl');
/** Read-only material beside the clone on development and CI machines; absent on a user's machine. */
export const SHARED_DIR = path.resolve(REPO_ROOT, '..', 'shared');

/**
 * Cache outside the clone, so that a fresh clone reuses the compiled dictionary (about 0.8 GB).
 * @returns {string}
 */
export function cacheDir() {
  if (process.env.SCDV_CACHE_DIR) return path.resolve(process.env.SCDV_CACHE_DIR);
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'scdv-recommender');
}

/** The OpenSearch release `npm run setup -- --opensearch` installs (2.x runs on Debian's Java 17; 3.x needs 21). */
export const OPENSEARCH_VERSION = '2.19.3';
/**
 * Where that install lives: the cache (like the dictionary), or $SCDV_OPENSEARCH_HOME for one made elsewhere.
 * @returns {string}
 */
export const opensearchHome = () => fromEnv('SCDV_OPENSEARCH_HOME') ?? path.join(cacheDir(), `opensearch-${OPENSEARCH_VERSION}`);
