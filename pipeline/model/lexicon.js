// The hybrid layout's own lexical vocabulary, models/<name>/lexicon.txt: the training corpus tokenised as for the
// model but without the stop lists (docs/relevance.md "The lexical block's tokens": SCDV needs the lists, the
// lexical block is better without them). One line per word, most frequent first: word<TAB>count<TAB>idf, the
// format of vocab.txt; words seen fewer than min_count times are left out, and the idf is workers/scdv/idf.py's
// smoothed formula over the documents that kept a token. Built by workers/scdv/lexicon.py from the second tokenise
// run of `scdv train` (the model's run with the lists, this one without: both on the tokenise workers).
import fs from 'node:fs';
import path from 'node:path';
import { errors } from '../errors.js';
import { runPythonModule } from '../python.js';

export const LEXICON_FILE = 'lexicon.txt';

/**
 * The tokenizer settings of a model's lexical tokens: the ones it was trained with, without the stop lists.
 * @param {import('../config.js').Config['tokenizer']} trained
 */
export function lexicalTokenizerConfig(trained) {
  return { ...trained, stopwords: { families: [], extra: [] } };
}

/**
 * Whether a model can have a lexicon: with joinNouns the stop words change which nouns are adjacent, so the
 * tokens without the lists would not contain the model's own tokens.
 * @param {import('../config.js').Config['tokenizer']} trained
 */
export function lexiconPossible(trained) {
  return !trained.joinNouns;
}

/**
 * Write the lexicon of a tokenised corpus (one document per line, the tokens without the stop lists) into `dir`:
 * `python -m scdv.lexicon` (workers/scdv/lexicon.py), so the idf comes from the one implementation of the formula.
 * @param {string} corpusTxt
 * @param {{dir: string, minCount: number}} options
 * @returns {Promise<{words: number, documents: number}>}
 */
export async function buildLexicon(corpusTxt, options) {
  const r = await runPythonModule('scdv.lexicon', ['--corpus', corpusTxt, '--min-count', String(options.minCount), '--out', path.join(options.dir, LEXICON_FILE)], {
    fail: (why) => errors.TRAIN_FAILED('lexicon', why),
  });
  return { words: r.words, documents: r.documents };
}

/**
 * A model's lexicon, or null when the model has none (trained before lexicon.txt, or with joinNouns).
 * @param {string} modelDir
 * @returns {{indexOf: (word: string) => number, idf: Float32Array} | null}
 */
export function readLexicon(modelDir) {
  const file = path.join(modelDir, LEXICON_FILE);
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (/** @type {NodeJS.ErrnoException} */ (err).code === 'ENOENT') return null;
    throw errors.MODEL_CORRUPT(file, `cannot be read (${/** @type {Error} */ (err).message})`).because(err);
  }
  const lines = text.split('\n').filter((l) => l !== '');
  const idf = new Float32Array(lines.length);
  /** @type {Map<string, number>} */
  const index = new Map();
  lines.forEach((l, i) => {
    const cols = l.split('\t');
    const v = Number(cols[2]);
    if (cols.length !== 3 || !(v > 0)) throw errors.MODEL_CORRUPT(file, `line ${i + 1} is not word<TAB>count<TAB>idf`);
    if (index.has(cols[0])) throw errors.MODEL_CORRUPT(file, `line ${i + 1} repeats the word ${cols[0]}`);
    index.set(cols[0], i);
    idf[i] = v;
  });
  return { indexOf: (w) => index.get(w) ?? -1, idf };
}
