// Which compiled MeCab system dictionary to use, with errors that say what to do.
import fs from 'node:fs';
import path from 'node:path';
import { ACTIVE_DICT_FILE, DICT_BUILD_DIR, IPADIC_UTF8_DIR, NEOLOGD_LINK } from '../paths.js';
import { errors } from '../errors.js';

/**
 * @typedef {object} DictionaryChoice
 * @property {string} name 'neologd', 'ipadic' or 'custom'
 * @property {string} dicdir absolute path of the compiled dictionary
 * @property {string} [warning] set when setup fell back to ipadic
 */

const REQUIRED_FILES = ['sys.dic', 'matrix.bin', 'char.bin', 'unk.dic', 'dicrc'];

/**
 * Resolve the config's `tokenizer.dictionary` to a folder and check it looks like a compiled dictionary.
 * @param {string} setting 'default' | 'neologd' | 'ipadic' | a path
 * @returns {DictionaryChoice}
 */
export function resolveDictionary(setting) {
  /** @type {DictionaryChoice} */
  let choice;
  if (setting === 'default') {
    let active;
    try {
      active = JSON.parse(fs.readFileSync(ACTIVE_DICT_FILE, 'utf8'));
    } catch {
      throw errors.DICTIONARY_NOT_FOUND('default', ACTIVE_DICT_FILE, 'setup has not run; run `npm run setup`');
    }
    choice = { name: active.name, dicdir: path.resolve(DICT_BUILD_DIR, active.dicdir), warning: active.warning };
  } else if (setting === 'neologd') {
    choice = { name: 'neologd', dicdir: NEOLOGD_LINK };
  } else if (setting === 'ipadic') {
    choice = { name: 'ipadic', dicdir: IPADIC_UTF8_DIR };
  } else {
    choice = { name: 'custom', dicdir: path.resolve(setting) };
  }
  if (!fs.existsSync(choice.dicdir)) {
    const hint = choice.name === 'neologd' ? 'build it with `npm run setup` (needs neologd seed CSVs)' : 'check the path';
    throw errors.DICTIONARY_NOT_FOUND(choice.name, choice.dicdir, hint);
  }
  const missing = REQUIRED_FILES.filter((f) => !fs.existsSync(path.join(choice.dicdir, f)));
  if (missing.length) {
    throw errors.DICTIONARY_BROKEN(choice.dicdir, `not a compiled MeCab dictionary (missing ${missing.join(', ')})`);
  }
  return choice;
}
