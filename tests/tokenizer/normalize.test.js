import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeText, normalizeWord, japaneseShare } from '../../pipeline/tokenizer/normalize.js';

test('rule 1: control characters become spaces, zero-width characters vanish', () => {
  assert.equal(normalizeText('a\u0000b\u0007c\u009Fd'), 'a b c d');
  assert.equal(normalizeText('ゼロ\u200B幅\uFEFF'), 'ゼロ幅');
  assert.equal(normalizeText('行1\n行2\t終'), '行1\n行2 終', 'newline kept, tab folded into a space');
});

test('rule 2: NFKC folds width — full-width ASCII, half-width kana, circled digits', () => {
  assert.equal(normalizeText('ＡＢＣ１２３！'), 'ABC123!');
  assert.equal(normalizeText('ｶﾀｶﾅｱﾌﾟﾘ'), 'カタカナアプリ');
  assert.equal(normalizeText('①㈱'), '1(株)');
});

test('rule 3: hyphen variants -> "-", long-vowel variants -> one "ー"', () => {
  assert.equal(normalizeText('A\u2010B\u2013C\u2212D'), 'A-B-C-D');
  assert.equal(normalizeText('ラーーーメン'), 'ラーメン');
  assert.equal(normalizeText('ラ―メン'), 'ラーメン');
  assert.equal(normalizeText('ﾗｰﾒﾝ'), 'ラーメン');
});

test('rule 4: tildes and wave dashes are removed', () => {
  assert.equal(normalizeText('わ〜い～'), 'わい');
});

test('rule 5: white space collapses; spaces between Japanese characters go', () => {
  assert.equal(normalizeText('Hello   World'), 'Hello World');
  assert.equal(normalizeText('東京　スカイ ツリー'), '東京スカイツリー');
  assert.equal(normalizeText('iPhone アプリ'), 'iPhone アプリ', 'space between Latin and kana kept');
});

test('normalizeWord folds ASCII case after width, like tokens', () => {
  assert.equal(normalizeWord(' ＴＯＰ '), 'top');
  assert.equal(normalizeWord('Amazon'), 'amazon');
});

test('japaneseShare tells Japanese from other text', () => {
  assert.ok(japaneseShare('今日は良い天気です') > 0.9);
  assert.ok(japaneseShare('The quick brown fox jumps over the lazy dog') < 0.05);
  assert.equal(japaneseShare('12345 !!!'), 1, 'no letters: not a language question');
});
