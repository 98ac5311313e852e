// The hybrid layout's own lexical vocabulary, models/<name>/lexicon.txt: the training corpus tokenised as for the
// model but without the stop lists (docs/relevance.md "The lexical block's tokens": SCDV needs the lists, the
// lexical block is better without them). One line per word, most frequent first: word<TAB>count<TAB>idf, the
// format of vocab.txt; words seen fewer than min_count times are left out, and the idf is workers/scdv/idf.py's
// smoothed formula ln((1 + N) / (1 + df)) + 1 over the N documents that kept a token.
import fs from 'node:fs';
import path from 'node:path';
import { readLines } from '../corpus/lines.js';
import { parseDocument, documentText } from '../corpus/document.js';
import { errors } from '../errors.js';
import { writeFileAtomic } from '../fsutil.js';

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
 * Count the corpus's tokens (each valid line's title and body; an id seen before is skipped, as tokenising does)
 * and write the lexicon into `dir`.
 * @param {string} corpus JSON Lines
 * @param {{tokenizeBatch: (texts: string[]) => Promise<string[]>}} tokenizer the lexical tokenizer
 * @param {{dir: string, minCount: number, maxLineBytes: number, batch?: number}} o
 * @returns {Promise<{words: number, documents: number}>}
 */
export async function buildLexicon(corpus, tokenizer, o) {
  /** @type {Map<string, number>} */
  const count = new Map();
  /** @type {Map<string, number>} */
  const df = new Map();
  const seen = new Set();
  let documents = 0;
  /** @type {string[]} */
  let texts = [];
  const flush = async () => {
    for (const packed of await tokenizer.tokenizeBatch(texts)) {
      if (packed === '') continue;
      documents++;
      const toks = packed.split(' ');
      for (const t of toks) count.set(t, (count.get(t) ?? 0) + 1);
      for (const t of new Set(toks)) df.set(t, (df.get(t) ?? 0) + 1);
    }
    texts = [];
  };
  for await (const line of readLines(corpus, { maxLineBytes: o.maxLineBytes })) {
    if (!('buf' in line)) continue;
    const parsed = parseDocument(line.buf, line.lineNo);
    if (!('doc' in parsed) || seen.has(parsed.doc.id)) continue;
    seen.add(parsed.doc.id);
    texts.push(documentText(parsed.doc));
    if (texts.length >= (o.batch ?? 256)) await flush();
  }
  await flush();
  const words = [...count].filter(([, c]) => c >= o.minCount).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const lines = words.map(([w, c]) => `${w}\t${c}\t${(Math.log((1 + documents) / (1 + /** @type {number} */ (df.get(w)))) + 1).toPrecision(9)}\n`);
  writeFileAtomic(path.join(o.dir, LEXICON_FILE), lines.join(''));
  return { words: words.length, documents };
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
