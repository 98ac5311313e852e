// Loader for the scdv_mecab native addon (build/Release/scdv_mecab.node).
// Tokenising, filtering and packing run in C++; each call returns one string.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * POS / text filter applied in C++. A token is kept when the longest prefix among
 * keepPos ∪ dropPos that matches its feature (on a field boundary) is in keepPos;
 * no match drops it. If keepPos is omitted, unmatched tokens are kept. An identical
 * prefix in both lists counts as a drop.
 * @typedef {object} FilterSpec
 * @property {string[]} [keepPos] feature prefixes to keep, e.g. '名詞', '動詞,自立'
 * @property {string[]} [dropPos] feature prefixes to drop, e.g. '名詞,非自立'
 * @property {string[]} [stopwords] exact match on the output token (after lowercasing)
 * @property {'none' | 'hiragana' | 'non-kanji' | 'all'} [singleChar] which 1-character tokens to drop (default 'none')
 * @property {boolean} [dropDigitsOnly] drop tokens made only of digits and , . ・ (default false)
 * @property {boolean} [dropNumberCounters] drop a number followed by one or two kanji/kana, such as 6月, 33歳,
 *   100万円 (default false)
 * @property {boolean} [dropSymbolsOnly] drop tokens without a letter, kana, kanji or digit (default false)
 * @property {boolean} [lowercase] ASCII A-Z -> a-z in the output token (default false)
 * @property {number} [maxTokenBytes] drop tokens longer than this many UTF-8 bytes (default: no limit)
 * @property {boolean} [foldLongVowels] a katakana-only token of 4+ characters ending in ー loses that ー
 *   (コンピューター -> コンピュータ), stop words too (default false)
 * @property {boolean} [joinNouns] after a run of adjacent kept nouns, their concatenation as one more token
 *   (言語 処理 研究 + 言語処理研究), checked like any token (default false)
 */

/**
 * @typedef {object} NativeTaggerOptions
 * @property {string} dicdir compiled MeCab dictionary folder (sys.dic, matrix.bin, char.bin, unk.dic, dicrc)
 * @property {string[]} [userdic] compiled user dictionaries (.dic)
 * @property {FilterSpec} [filter] omitted: every token is kept
 * @property {boolean} [hugePages] move the system dictionary's index into 2 MB pages once the process has parsed as
 *   much text as 1/32 of it, on a background thread (Linux with transparent huge pages; a private copy, ~330 MB
 *   with neologd, once per process): ~20 % faster parsing. Taggers of one process share one model of a
 *   dictionary, so one that asks moves it for all.
 */

/**
 * @typedef {object} DictionaryInfo
 * @property {string} filename path of sys.dic
 * @property {string} charset e.g. 'UTF-8'
 * @property {number} size number of entries
 * @property {number} version dictionary format version
 */

/**
 * Shape of the C++ class exported by the addon.
 * @typedef {object} RawTagger
 * @property {(text: string) => string} tokenize
 * @property {(text: string) => string} tokenizeWithPos
 * @property {(texts: readonly string[], withPos?: boolean) => Promise<string[]>} tokenizeBatch
 * @property {(text: string) => string} parse
 * @property {DictionaryInfo} dictionaryInfo
 * @property {number} hugePageBytes bytes of the dictionary's index in huge pages (0: in the file's shared pages)
 */

/** @typedef {{ NativeTagger: new (options: NativeTaggerOptions) => RawTagger, mecabVersion: string }} Addon */

const ADDON_PATH = fileURLToPath(new URL('../../build/Release/scdv_mecab.node', import.meta.url));

/**
 * Loads the addon. Done at import time on purpose: a missing or broken build makes the
 * import fail, which pipeline/tokenizer/tokenizer.js reports as "addon not built".
 * @returns {Addon}
 */
function loadAddon() {
  if (!existsSync(ADDON_PATH)) {
    throw new Error(
      `The MeCab native addon is not built (${ADDON_PATH} is missing). ` +
        'Run `npm run setup` (or `npm run build:native`).',
    );
  }
  try {
    return /** @type {Addon} */ (createRequire(import.meta.url)(ADDON_PATH));
  } catch (err) {
    throw new Error(
      `Cannot load the MeCab native addon ${ADDON_PATH}: ${/** @type {Error} */ (err).message}. ` +
        'Rebuild it with `npm run build:native` (or `npm run setup`).',
      { cause: err },
    );
  }
}

const addon = loadAddon();

/**
 * MeCab tagger with C++-side filtering. One shared MeCab Model/Tagger per instance;
 * sync calls run on the caller's thread, tokenizeBatch on the libuv thread pool.
 */
export class NativeTagger {
  /** @type {RawTagger} */
  #native;
  /** @type {Readonly<DictionaryInfo>} */
  #info;

  /**
   * @param {NativeTaggerOptions} options
   * @throws {TypeError} on a wrong option type
   * @throws {Error} when the dictionary is missing, incomplete or corrupt
   */
  constructor(options) {
    this.#native = new addon.NativeTagger(options);
    this.#info = Object.freeze(this.#native.dictionaryInfo);
  }

  /**
   * Kept tokens joined by ' ' ('' when none). Synchronous: for short texts.
   * @param {string} text
   * @returns {string}
   */
  tokenize(text) {
    return this.#native.tokenize(text);
  }

  /**
   * One `token\tPOS` line per kept token (POS = first 4 feature fields), joined by '\n'.
   * @param {string} text
   * @returns {string}
   */
  tokenizeWithPos(text) {
    return this.#native.tokenizeWithPos(text);
  }

  /**
   * Same per-text strings as tokenize / tokenizeWithPos, computed on the libuv pool.
   * Argument errors reject the promise too.
   * @param {readonly string[]} texts
   * @param {boolean} [withPos]
   * @returns {Promise<string[]>}
   */
  async tokenizeBatch(texts, withPos = false) {
    return this.#native.tokenizeBatch(texts, withPos);
  }

  /**
   * MeCab's raw output for the text (debugging, benchmark baseline).
   * @param {string} text
   * @returns {string}
   */
  parse(text) {
    return this.#native.parse(text);
  }

  /** @returns {number} bytes of the system dictionary's index in huge pages (0: in the file's shared pages) */
  get hugePageBytes() {
    return this.#native.hugePageBytes;
  }

  /** @returns {Readonly<DictionaryInfo>} the system dictionary's info */
  get dictionaryInfo() {
    return this.#info;
  }

  /** @returns {string} libmecab version, e.g. '0.996' */
  static get mecabVersion() {
    return addon.mecabVersion;
  }
}
