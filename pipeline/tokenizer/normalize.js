// Text normalisation before MeCab. Each rule is one line below and has its own test
// (tests/tokenizer/normalize.test.js). ASCII case is folded later, per token, in the native code,
// because MeCab's unknown-word handling looks at the original case.
//
//  1. Control characters (C0 but tab/newline, DEL, C1) and zero-width characters become a space / vanish.
//  2. Unicode NFKC: full-width ASCII -> ASCII, half-width kana -> full-width kana, ① -> 1, ㈱ -> (株) ...
//  3. Hyphen-like characters -> '-' ; long-vowel-like characters -> 'ー', runs of 'ー' -> one
//     (the mecab-ipadic-neologd normalisation: ｰ, —, ―, ─, ━, － all spell the same ー).
//  4. Tildes and wave dashes (〜, ～, ∼ ...) are removed, as neologd's normaliser does.
//  5. White space runs collapse to one space; spaces between two Japanese characters are removed
//     (layout spaces inside Japanese text split words MeCab would otherwise keep whole).

const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;
const ZERO_WIDTH = /[\u200B-\u200D\u2060\uFEFF]/g;
const HYPHENS = /[\u02D7\u058A\u2010\u2011\u2012\u2013\u2043\u207B\u208B\u2212]/g;
const LONG_VOWELS = /[\uFE63\uFF0D\uFF70\u2014\u2015\u2500\u2501\u30FC]+/g;
const TILDES = /[~\u223C\u223E\u301C\u3030\uFF5E]/g;
const SPACES = /[ \t\u3000]+/g;
const JA = '\\u3040-\\u30FF\\u3400-\\u4DBF\\u4E00-\\u9FFF\\uF900-\\uFAFF\\u3000-\\u303F\\uFF01-\\uFF0F';
const SPACE_BETWEEN_JA = new RegExp(`(?<=[${JA}]) (?=[${JA}])`, 'g');

/**
 * Normalise one text for tokenising (see the rules above).
 * @param {string} text
 * @returns {string}
 */
export function normalizeText(text) {
  return text
    .replace(CONTROL, ' ')
    .replace(ZERO_WIDTH, '')
    .normalize('NFKC')
    .replace(HYPHENS, '-')
    .replace(LONG_VOWELS, 'ー')
    .replace(TILDES, '')
    .replace(SPACES, ' ')
    .replace(SPACE_BETWEEN_JA, '');
}

/**
 * Normalise a word the way tokens come out of the tokenizer (for stop-word lists and lookups).
 * @param {string} word
 */
export function normalizeWord(word) {
  return normalizeText(word).trim().toLowerCase();
}

/**
 * Share of characters that are kana or kanji, over letters (spaces, digits and punctuation not counted).
 * Used to warn about documents that are not Japanese.
 * @param {string} text
 * @returns {number} 0..1 (1 for a text without letters, which is not a language question)
 */
export function japaneseShare(text) {
  let ja = 0;
  let letters = 0;
  for (const ch of text) {
    const c = /** @type {number} */ (ch.codePointAt(0));
    const isJa = (c >= 0x3040 && c <= 0x30ff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x4e00 && c <= 0x9fff) || (c >= 0xf900 && c <= 0xfaff);
    if (isJa) { ja++; letters++; } else if (/\p{L}/u.test(ch)) letters++;
    if (letters >= 4000) break; // a sample is enough
  }
  return letters === 0 ? 1 : ja / letters;
}
