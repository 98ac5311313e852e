// The tokenizer every stage uses (batch jobs now, server requests later): normalise, then MeCab with
// part-of-speech, stop-word and noise filters applied in native code, which returns only kept tokens.
import { errors } from '../errors.js';
import { hashOf } from '../config.js';
import { normalizeText } from './normalize.js';
import { loadStopwords } from './stopwords.js';
import { resolveDictionary } from './dictionary.js';

/** @typedef {import('../config.js').Config['tokenizer']} TokenizerConfig */
/** @typedef {{token: string, pos: string}} TaggedToken */
/**
 * How this process runs the tokenizer (not what it produces: no part of a model's or a run's identity).
 * @typedef {object} TokenizerOptions
 * @property {boolean} [hugePages] the dictionary's index copied into huge pages once this process has parsed enough
 *   text for the copy to pay (tokenize.hugePages; native/mecab_pages.h); off unless asked for
 */

export class Tokenizer {
  /**
   * @param {TokenizerConfig} config
   * @param {{NativeTagger: any}} native the loaded addon module (injected so that loading errors surface once)
   * @param {TokenizerOptions} [opts]
   */
  constructor(config, native, opts = {}) {
    this.config = config;
    this.dictionary = resolveDictionary(config.dictionary);
    const stop = loadStopwords(config.stopwords);
    this.stopwordFamilies = stop.families;
    this.stopwordCount = stop.words.length;
    try {
      this.tagger = new native.NativeTagger({
        dicdir: this.dictionary.dicdir,
        userdic: config.userDictionaries,
        filter: {
          keepPos: config.keepPos,
          dropPos: config.dropPos,
          stopwords: stop.words,
          singleChar: config.singleChar,
          dropDigitsOnly: config.dropDigitsOnly,
          dropNumberCounters: config.dropNumberCounters,
          dropSymbolsOnly: config.dropSymbolsOnly,
          lowercase: config.lowercase,
          maxTokenBytes: config.maxTokenBytes,
          // A model's manifest from before these options has no such keys: its tokens stay as trained.
          foldLongVowels: config.foldLongVowels ?? false,
          joinNouns: config.joinNouns ?? false,
        },
        hugePages: opts.hugePages ?? false,
      });
    } catch (err) {
      throw errors.DICTIONARY_BROKEN(this.dictionary.dicdir, /** @type {Error} */ (err).message).because(err);
    }
  }

  /**
   * Kept tokens of one text as one space-separated string ('' when none): the compact form stages store.
   * @param {string} text
   * @returns {string}
   */
  tokenizeToString(text) {
    return this.tagger.tokenize(normalizeText(text));
  }

  /**
   * @param {string} text
   * @returns {string[]}
   */
  tokenize(text) {
    const s = this.tokenizeToString(text);
    return s === '' ? [] : s.split(' ');
  }

  /**
   * Kept tokens with their part of speech (first four MeCab feature fields).
   * @param {string} text
   * @returns {TaggedToken[]}
   */
  tokenizeWithPos(text) {
    const s = this.tagger.tokenizeWithPos(normalizeText(text));
    if (s === '') return [];
    return s.split('\n').map((/** @type {string} */ line) => {
      const tab = line.indexOf('\t');
      return { token: line.slice(0, tab), pos: line.slice(tab + 1) };
    });
  }

  /**
   * Tokenise many texts on the libuv thread pool; resolves to one space-separated string per text.
   * @param {string[]} texts
   * @returns {Promise<string[]>}
   */
  tokenizeBatch(texts) {
    return this.tagger.tokenizeBatch(texts.map(normalizeText));
  }

  /** What produced the tokens, for manifests: the dictionary and a hash of the filter config. */
  describe() {
    return {
      dictionary: { name: this.dictionary.name, dicdir: this.dictionary.dicdir, ...this.tagger.dictionaryInfo },
      stopwordFamilies: this.stopwordFamilies,
      stopwordCount: this.stopwordCount,
      configHash: hashOf(this.config),
    };
  }
}

/**
 * Load the addon and build a Tokenizer; the one entry point callers use.
 * @param {TokenizerConfig} config
 * @param {TokenizerOptions} [opts]
 * @returns {Promise<Tokenizer>}
 */
export async function createTokenizer(config, opts = {}) {
  // tokenizer.lang 'en': a plain regex tokeniser (no MeCab), for checks against English benchmarks.
  if (/** @type {{lang?: string}} */ (config).lang === 'en') {
    const { EnglishTokenizer } = await import('./english.js');
    return /** @type {Tokenizer} */ (/** @type {unknown} */ (new EnglishTokenizer(config)));
  }
  let native;
  try {
    native = await import('./native.js');
  } catch (err) {
    throw errors.ADDON_NOT_BUILT(/** @type {Error} */ (err).message).because(err);
  }
  return new Tokenizer(config, native, opts);
}
