// The tokenizer as stages use it: config -> dictionary, filters, stop-word families.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../pipeline/config.js';
import { createTokenizer } from '../../pipeline/tokenizer/index.js';
import { listFamilies, readFamily } from '../../pipeline/tokenizer/stopwords.js';
import { resolveDictionary } from '../../pipeline/tokenizer/dictionary.js';

/** @param {Record<string, any>} [tokenizer] */
const make = (tokenizer = {}) => createTokenizer(loadConfig({ overrides: { tokenizer } }).tokenizer);

test('the default dictionary is what setup recorded; neologd keeps proper nouns whole', async () => {
  const tok = await make();
  const text = 'きゃりーぱみゅぱみゅが新宿駅で東京スカイツリーを見た';
  const tokens = tok.tokenize(text);
  if (tok.dictionary.name === 'neologd') {
    for (const name of ['きゃりーぱみゅぱみゅ', '東京スカイツリー', '新宿駅']) assert.ok(tokens.includes(name), `${name} in ${tokens}`);
  } else {
    // Without neologd (no seeds on this machine) setup fell back loudly and ipadic splits the names.
    assert.equal(tok.dictionary.name, 'ipadic');
    assert.ok(tok.dictionary.warning && /split/.test(tok.dictionary.warning));
    assert.ok(!tokens.includes('東京スカイツリー'));
  }
});

test('ipadic splits the proper nouns neologd keeps (the reason neologd is the default)', async () => {
  const tok = await make({ dictionary: 'ipadic' });
  const tokens = tok.tokenize('東京スカイツリーに行った');
  assert.ok(!tokens.includes('東京スカイツリー'), tokens.join(' '));
  assert.ok(tokens.includes('東京'));
});

test('parts of speech: nouns and verbs in base form; pronouns, numbers, suffixes dropped', async () => {
  const tok = await make({ dictionary: 'ipadic', stopwords: { families: [], extra: [] } });
  const tagged = tok.tokenizeWithPos('彼は3冊の本を図書館で読んだ');
  assert.deepEqual(tagged.map((t) => t.token), ['本', '図書館', '読む']);
  assert.ok(tagged.every((t) => t.pos.startsWith('名詞') || t.pos.startsWith('動詞,自立')));
});

test('foldLongVowels and joinNouns are off by default and when a trained model\'s config lacks them', async () => {
  const text = 'コンピューターとコンピュータで言語処理';
  const config = loadConfig({ overrides: { tokenizer: { dictionary: 'ipadic', stopwords: { families: [], extra: [] } } } }).tokenizer;
  /** @type {Record<string, any>} */
  const old = { ...config };
  delete old.foldLongVowels;
  delete old.joinNouns; // a manifest written before the options existed
  const expected = ['コンピューター', 'コンピュータ', '言語', '処理'];
  assert.deepEqual((await createTokenizer(config)).tokenize(text), expected);
  assert.deepEqual((await createTokenizer(/** @type {any} */ (old))).tokenize(text), expected);
  const both = await createTokenizer({ ...config, foldLongVowels: true, joinNouns: true });
  assert.deepEqual(both.tokenize(text), ['コンピュータ', 'コンピュータ', '言語', '処理', '言語処理']);
});

test('width and case folding make one token of ASCII variants', async () => {
  const tok = await make({ stopwords: { families: [], extra: [] } });
  const a = tok.tokenize('ＧＯＯＧＬＥの新サービス');
  const b = tok.tokenize('Googleの新サービス');
  const c = tok.tokenize('googleの新サービス');
  assert.ok(a.includes('google'), a.join(' '));
  assert.deepEqual(a, b);
  assert.deepEqual(b, c);
});

test('every stop-word family applies, and only when enabled', async () => {
  const families = listFamilies();
  assert.ok(families.length >= 5, `families: ${families}`);
  const none = await make({ stopwords: { families: [], extra: [] } });
  for (const family of families) {
    const only = await make({ stopwords: { families: [family], extra: [] } });
    const words = readFamily(family);
    assert.ok(words.length >= 50, `${family} has ${words.length} entries`);
    // Find entries that survive the filters as one token without stop-words, and check the family removes them.
    let checked = 0;
    for (const w of words) {
      if (none.tokenize(w).join(' ') !== w) continue;
      assert.deepEqual(only.tokenize(w), [], `${family}: "${w}" should be removed`);
      checked++;
    }
    assert.ok(checked >= 10, `${family}: only ${checked} entries checkable`);
  }
  const extra = await make({ stopwords: { families: [], extra: ['ＳＣＤＶ'] } });
  assert.deepEqual(extra.tokenize('SCDVの論文'), ['論文']);
});

test('stop-word lists are real: several hundred distinct entries with a comment header', () => {
  let total = 0;
  for (const f of listFamilies()) {
    total += readFamily(f).length;
    const head = fs.readFileSync(path.join('dictionaries', 'stopwords', `${f}.txt`), 'utf8').split('\n').slice(0, 3);
    assert.ok(head.every((l) => l.startsWith('#')), `${f}.txt starts with a comment header`);
  }
  assert.ok(total >= 300, `total ${total}`);
});

test('an unknown family and a missing dictionary give clear errors', async () => {
  await assert.rejects(make({ stopwords: { families: ['nope'], extra: [] } }), /unknown stop-word family "nope"/);
  await assert.rejects(make({ dictionary: '/does/not/exist' }), (err) => /** @type {any} */ (err).code === 'SCDV_DICTIONARY_NOT_FOUND');
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-dic-'));
  assert.throws(() => resolveDictionary(empty), /not a compiled MeCab dictionary \(missing sys\.dic/);
});

test('the async batch API under concurrency equals the sync API', async () => {
  const tok = await make();
  const lines = fs.readFileSync('tests/fixtures/livedoor/sample.jsonl', 'utf8').trim().split('\n').slice(0, 120);
  const texts = lines.map((l) => { const d = JSON.parse(l); return `${d.title}\n${d.body}`; });
  const sync = texts.map((t) => tok.tokenizeToString(t));
  const batches = [];
  for (let i = 0; i < texts.length; i += 15) batches.push(tok.tokenizeBatch(texts.slice(i, i + 15)));
  const async = (await Promise.all(batches)).flat();
  assert.equal(async.length, sync.length);
  assert.deepEqual(async, sync);
  assert.ok(sync.every((s) => s.length > 0));
});

test('numbers with a counter are dropped, numbers inside names are kept', async () => {
  const on = await make({ stopwords: { families: [], extra: [] } });
  const off = await make({ stopwords: { families: [], extra: [] }, dropNumberCounters: false });
  const text = '6月に33歳の3人が100万円を3Dと4Kで2ちゃんねるに書いた';
  const kept = on.tokenize(text);
  for (const t of ['6月', '33歳', '3人', '100万円']) assert.ok(!kept.includes(t), `${t} dropped: ${kept}`);
  for (const t of ['3d', '4k']) assert.ok(kept.includes(t), `${t} kept: ${kept}`);
  assert.ok(off.tokenize(text).some((t) => /^\d+[^\x00-\x7f]{1,2}$/.test(t)), 'the rule can be switched off');
});

test('a base form never gains punctuation its surface lacks', async () => {
  const tok = await make({ stopwords: { families: [], extra: [] } });
  const tokens = tok.tokenize('連絡先を涙ながらに消した。彼女は泣いた！');
  assert.ok(tokens.every((t) => !/[。、！？!?.,]$/.test(t)), tokens.join(' '));
});

test('a user dictionary compiled with scdv dict compile keeps a new word whole', async () => {
  const { compileUserDictionary } = await import('../../pipeline/tokenizer/user-dictionary.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-ud-'));
  const csv = path.join(dir, 'words.csv');
  fs.writeFileSync(csv, 'スコデブ推薦機,1285,1285,100,名詞,固有名詞,一般,*,*,*,スコデブ推薦機,スコデブスイセンキ,スコデブスイセンキ\n');
  const dic = path.join(dir, 'words.dic');
  assert.equal(compileUserDictionary(csv, dic).entries, 1);
  const text = 'スコデブ推薦機を使う';
  const plain = await make({ dictionary: 'ipadic', stopwords: { families: [], extra: [] } });
  assert.ok(!plain.tokenize(text).includes('スコデブ推薦機'));
  const withUser = await make({ dictionary: 'ipadic', userDictionaries: [dic], stopwords: { families: [], extra: [] } });
  assert.ok(withUser.tokenize(text).includes('スコデブ推薦機'), withUser.tokenize(text).join(' '));
  fs.writeFileSync(csv, 'broken,line\n');
  assert.throws(() => compileUserDictionary(csv, dic), /user dictionary line 1: 2 fields, need 13/);
});
