// Stop-word families: dictionaries/stopwords/<family>.txt, one word per line, '#' starts a comment.
import fs from 'node:fs';
import path from 'node:path';
import { STOPWORDS_DIR } from '../paths.js';
import { errors } from '../errors.js';
import { normalizeWord } from './normalize.js';

/**
 * Names of the families available in `dir`.
 * @param {string} [dir]
 * @returns {string[]}
 */
export function listFamilies(dir = STOPWORDS_DIR) {
  try {
    return fs.readdirSync(dir).filter((n) => n.endsWith('.txt')).map((n) => n.slice(0, -4)).sort();
  } catch {
    return [];
  }
}

/**
 * Entries of one family file, normalised like tokens (NFKC, lower case).
 * @param {string} family
 * @param {string} [dir]
 * @returns {string[]}
 */
export function readFamily(family, dir = STOPWORDS_DIR) {
  const known = listFamilies(dir);
  if (!known.includes(family)) throw errors.STOPWORD_FAMILY_UNKNOWN(family, known.join(', ') || 'none');
  return fs.readFileSync(path.join(dir, `${family}.txt`), 'utf8')
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter(Boolean)
    .map(normalizeWord);
}

/**
 * The stop-word set for a config: the chosen families (all when null) plus extra words.
 * @param {{families: string[]|null, extra: string[]}} spec
 * @param {string} [dir]
 * @returns {{words: string[], families: string[]}}
 */
export function loadStopwords(spec, dir = STOPWORDS_DIR) {
  const families = spec.families ?? listFamilies(dir);
  const words = new Set();
  for (const f of families) for (const w of readFamily(f, dir)) words.add(w);
  for (const w of spec.extra) words.add(normalizeWord(w));
  return { words: [...words].sort(), families };
}
