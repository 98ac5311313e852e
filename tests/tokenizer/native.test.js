// Tests for the scdv_mecab native addon against the ipadic UTF-8 dictionary.
// Run: node --test tests/tokenizer/native.test.js   (after `npm run build:native`)
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { NativeTagger } from '../../pipeline/tokenizer/native.js';

const IPADIC = '/var/lib/mecab/dic/ipadic-utf8';
const IPADIC_SOURCES = '/usr/share/mecab/dic/ipadic';
const DICT_INDEX = '/usr/lib/mecab/mecab-dict-index';

/** @type {import('../../pipeline/tokenizer/native.js').FilterSpec} */
const FILTER = {
  keepPos: ['名詞', '動詞,自立'],
  dropPos: ['名詞,非自立', '名詞,数', '名詞,形容動詞語幹', '名詞,副詞可能', '名詞,代名詞', '名詞,接尾', '名詞,特殊'],
  stopwords: ['なる', 'ある', 'top'],
  singleChar: 'non-kanji',
  dropDigitsOnly: true,
  dropSymbolsOnly: true,
  lowercase: true,
  maxTokenBytes: 100,
};

/**
 * @param {import('../../pipeline/tokenizer/native.js').FilterSpec} [filter]
 * @param {string[]} [userdic]
 */
function tagger(filter, userdic) {
  return new NativeTagger({ dicdir: IPADIC, ...(filter ? { filter } : {}), ...(userdic ? { userdic } : {}) });
}

let tmp = '';
before(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'scdv-native-test-'));
});
after(() => {
  rmSync(tmp, { recursive: true, force: true });
});

describe('POS keep/drop', () => {
  const t = tagger(FILTER);

  test('keeps nouns of すもももももももものうち, drops 非自立 うち', () => {
    assert.equal(t.tokenize('すもももももももものうち'), 'すもも もも もも');
  });

  test('drops 代名詞 and 数, keeps 本 and the base form 読む', () => {
    assert.equal(t.tokenize('ここで彼は3つの本を読んだ'), '本 読む');
  });

  test('no filter keeps every token (base forms)', () => {
    assert.equal(tagger().tokenize('ここで彼は3つの本を読んだ'), 'ここ で 彼 は 3 つ の 本 を 読む だ');
  });

  test('unmatched tokens are dropped when keepPos is given', () => {
    assert.equal(tagger({ keepPos: ['動詞'] }).tokenize('ここで彼は3つの本を読んだ'), '読む');
  });

  test('the longest matching prefix wins, in both directions', () => {
    const text = 'ここで彼は3つの本を読んだ';
    assert.equal(tagger({ keepPos: ['名詞'], dropPos: ['名詞,代名詞'] }).tokenize(text), '3 本');
    assert.equal(
      tagger({ keepPos: ['名詞', '名詞,代名詞,一般'], dropPos: ['名詞,代名詞'] }).tokenize(text),
      'ここ 彼 3 本',
    );
    assert.equal(tagger({ keepPos: ['名詞,代名詞'], dropPos: ['名詞'] }).tokenize(text), 'ここ 彼');
  });

  test('prefixes match whole fields only', () => {
    assert.equal(tagger({ keepPos: ['名'] }).tokenize('本を読んだ'), '');
    assert.equal(tagger({ keepPos: ['名詞,一'] }).tokenize('本を読んだ'), '');
    assert.equal(tagger({ keepPos: ['名詞,一般'] }).tokenize('本を読んだ'), '本');
    assert.equal(tagger({ keepPos: ['動詞,自立,*,*,五段・マ行'] }).tokenize('本を読んだ'), '読む');
  });

  test('the same prefix in keepPos and dropPos drops', () => {
    assert.equal(tagger({ keepPos: ['名詞'], dropPos: ['名詞'] }).tokenize('本を読んだ'), '');
  });

  test('unknown words fall back to the surface', () => {
    // ア and x have no base form ('*'): the surface is used.
    assert.equal(tagger().tokenize('猫はアとxを見た'), '猫 は ア と x を 見る た');
  });
});

describe('text filters', () => {
  test('stopwords match the lowercased token', () => {
    const text = 'TOPページになる';
    assert.equal(tagger(FILTER).tokenize(text), 'ページ');
    assert.equal(tagger({ ...FILTER, stopwords: [] }).tokenize(text), 'top ページ なる');
    assert.equal(tagger({ ...FILTER, stopwords: ['TOP'] }).tokenize(text), 'ページ なる');
    assert.equal(tagger({ ...FILTER, lowercase: false, stopwords: ['top'] }).tokenize(text), 'TOP ページ なる');
  });

  test('singleChar modes', () => {
    const text = '猫はアとxを見た'; // 猫 は ア と x を 見る た
    assert.equal(tagger({ singleChar: 'none' }).tokenize(text), '猫 は ア と x を 見る た');
    assert.equal(tagger({ singleChar: 'hiragana' }).tokenize(text), '猫 ア x 見る');
    assert.equal(tagger({ singleChar: 'non-kanji' }).tokenize(text), '猫 見る');
    assert.equal(tagger({ singleChar: 'all' }).tokenize(text), '見る');
  });

  test('digits-only tokens (ASCII, full-width, kanji numerals, separators)', () => {
    const text = '2012年の3,000円と１２３個と三百人';
    const all = '2012 年 の 3 , 000 円 と １ ２ ３ 個 と 三 百 人';
    assert.equal(tagger().tokenize(text), all);
    assert.equal(tagger({ dropDigitsOnly: true }).tokenize(text), '年 の , 円 と 個 と 人');
  });

  test('symbols-only tokens', () => {
    const text = 'ａｂｃ！？ー・・Ωと한국と★♪。';
    assert.equal(tagger().tokenize(text), 'ａｂｃ ！ ？ ー・ ・ Ω と 한국 と ★♪。');
    // ー is katakana (kept); ・ is punctuation; Ω is Greek, 한국 Hangul.
    assert.equal(tagger({ dropSymbolsOnly: true }).tokenize(text), 'ａｂｃ ー・ Ω と 한국 と');
  });

  test('lowercase applies to ASCII letters only', () => {
    assert.equal(tagger(FILTER).tokenize('NHKとGoogle'), 'nhk google');
    assert.equal(tagger({ ...FILTER, lowercase: false }).tokenize('NHKとGoogle'), 'NHK Google');
    assert.equal(tagger({ lowercase: true }).tokenize('ＡＢＣとΩ'), 'ＡＢＣ と Ω');
  });

  test('maxTokenBytes counts UTF-8 bytes', () => {
    // すもも = 9 bytes, もも = 6 bytes
    assert.equal(tagger({ ...FILTER, maxTokenBytes: 6 }).tokenize('すもももももももものうち'), 'もも もも');
    assert.equal(tagger({ ...FILTER, maxTokenBytes: 9 }).tokenize('すもももももももものうち'), 'すもも もも もも');
  });
});

describe('spelling variants and compounds (off unless asked)', () => {
  const variants = 'コンピューターとコンピュータ、サーバーとサーバ、キーとツアー、ユーザー';

  test('foldLongVowels: a katakana token of 4+ characters loses its final ー, shorter ones keep it', () => {
    assert.equal(tagger(FILTER).tokenize(variants), 'コンピューター コンピュータ サーバー サーバ キー ツアー ユーザー');
    assert.equal(
      tagger({ ...FILTER, foldLongVowels: true }).tokenize(variants),
      'コンピュータ コンピュータ サーバ サーバ キー ツアー ユーザ',
    );
  });

  test('foldLongVowels folds stop words too, so either spelling of a stop word still drops both', () => {
    const filter = { ...FILTER, foldLongVowels: true };
    assert.equal(tagger({ ...filter, stopwords: ['ユーザー'] }).tokenize('ユーザーとユーザ'), '');
    assert.equal(tagger({ ...filter, stopwords: ['ユーザ'] }).tokenize('ユーザーとユーザ'), '');
  });

  test('joinNouns adds each run of adjacent kept nouns as one more token, after its parts', () => {
    const text = '東京 大学の言語処理研究。';
    assert.equal(tagger(FILTER).tokenize(text), '東京 大学 言語 処理 研究');
    // The space between 東京 and 大学 ends a run; の ends another.
    assert.equal(tagger({ ...FILTER, joinNouns: true }).tokenize(text), '東京 大学 言語 処理 研究 言語処理研究');
    assert.equal(
      tagger({ ...FILTER, joinNouns: true }).tokenizeWithPos('言語処理'),
      '言語\t名詞,一般,*,*\n処理\t名詞,サ変接続,*,*\n言語処理\t名詞,サ変接続,*,*',
    );
    // The compound passes the text checks like any token.
    assert.equal(tagger({ ...FILTER, joinNouns: true, stopwords: ['言語処理'] }).tokenize('言語処理'), '言語 処理');
  });
});

describe('output formats', () => {
  const t = tagger(FILTER);

  test('tokenizeWithPos gives token<TAB>first 4 feature fields per line', () => {
    assert.equal(t.tokenizeWithPos('ここで彼は3つの本を読んだ'), '本\t名詞,一般,*,*\n読む\t動詞,自立,*,*');
    assert.equal(t.tokenizeWithPos('東京へ行った'), '東京\t名詞,固有名詞,地域,一般\n行く\t動詞,自立,*,*');
    for (const line of t.tokenizeWithPos('彼女はＡさんと東京へ行った。NHKとGoogleの本').split('\n')) {
      assert.match(line, /^[^\t\s]+\t[^,\t]+(,[^,\t]+){3}$/);
    }
  });

  test('empty string and whitespace-only text', () => {
    assert.equal(t.tokenize(''), '');
    assert.equal(t.tokenizeWithPos(''), '');
    assert.equal(t.tokenize(' \n\t '), '');
    assert.equal(t.parse(''), 'EOS\n');
  });

  test('parse returns the raw MeCab format', () => {
    const raw = t.parse('本を読んだ');
    assert.equal(raw.split('\n')[0], '本\t名詞,一般,*,*,*,*,本,ホン,ホン');
    assert.ok(raw.endsWith('EOS\n'));
  });

  test('non-BMP and lone-surrogate input survive the UTF-8 copy', () => {
    // 𠮷 (U+20BB7) is a 4-byte kanji: kept by 'non-kanji' although it is one character.
    assert.equal(tagger({ singleChar: 'non-kanji' }).tokenize('𠮷野家の本'), '𠮷 野家 本');
    assert.equal(tagger({ singleChar: 'all' }).tokenize('𠮷野家の本'), '野家');
    // A lone surrogate becomes U+FFFD (a MeCab symbol) instead of breaking the text.
    assert.equal(tagger().tokenize('本\uD800を読む'), '本 \uFFFD を 読む');
    assert.equal(tagger({ dropSymbolsOnly: true }).tokenize('本\uD800を読む'), '本 を 読む');
  });

  test('dictionaryInfo describes the system dictionary', () => {
    const info = t.dictionaryInfo;
    assert.equal(info.filename, path.join(IPADIC, 'sys.dic'));
    assert.equal(info.charset.toLowerCase().replace('-', ''), 'utf8');
    assert.ok(info.size > 300000, `size ${info.size}`);
    assert.equal(info.version, 102);
  });
});

describe('user dictionary', () => {
  test('quoted base form with a comma and a space', () => {
    const csv = path.join(tmp, 'user.csv');
    const dic = path.join(tmp, 'user.dic');
    // 1288 = 名詞,固有名詞,一般 in ipadic's left-id.def; sources are EUC-JP.
    const line = 'スコーデーブイ,1288,1288,100,名詞,固有名詞,一般,*,*,*,"SCDV,Rec v2",スコーデーブイ,スコーデーブイ\n';
    writeFileSync(csv, execFileSync('iconv', ['-f', 'utf-8', '-t', 'euc-jp'], { input: line }));
    execFileSync(DICT_INDEX, ['-d', IPADIC_SOURCES, '-u', dic, '-f', 'euc-jp', '-t', 'utf-8', csv], { stdio: 'pipe' });
    const t = tagger(FILTER, [dic]);
    assert.equal(t.tokenize('スコーデーブイの論文'), 'scdv,rec_v2 論文');
    assert.equal(t.tokenizeWithPos('スコーデーブイ'), 'scdv,rec_v2\t名詞,固有名詞,一般,*');
    assert.equal(tagger(FILTER).tokenize('スコーデーブイの論文'), 'スコーデーブイ 論文');
  });
});

/** @returns {string[]} ~200 varied texts */
function variedTexts() {
  const base = [
    'すもももももももものうち',
    'ここで彼は3つの本を読んだ',
    'NHKとGoogleが2012年に提携した。',
    '彼女はＡさんと東京へ行った',
    '',
    '★♪！？',
    'ａｂｃ！？ー・・Ωと한국と',
    '今日は良い天気ですね。明日も晴れるでしょう。\n改行も含む文章です。',
    'iPhone 5の発売日は9月21日、価格は¥49,800から。',
    '独女の中には自分の式はまだなのに呼ばれてばかりという「お祝い貧乏」状態の人も多い。',
  ];
  /** @type {string[]} */
  const out = [];
  for (let i = 0; i < 200; i++) {
    const a = base[i % base.length];
    const b = base[(i * 7 + 3) % base.length];
    out.push(i % 3 === 0 ? a : `${a}${i}番目、${b}`.repeat(1 + (i % 4)));
  }
  return out;
}

describe('tokenizeBatch', () => {
  const t = tagger(FILTER);

  test('8 concurrent batches equal tokenize / tokenizeWithPos', async () => {
    const texts = variedTexts();
    const chunks = Array.from({ length: 8 }, (_, k) => texts.filter((_, i) => i % 8 === k));
    const [plain, withPos] = await Promise.all([
      Promise.all(chunks.map((c) => t.tokenizeBatch(c))),
      Promise.all(chunks.map((c) => t.tokenizeBatch(c, true))),
    ]);
    chunks.forEach((chunk, k) => {
      assert.deepEqual(plain[k], chunk.map((s) => t.tokenize(s)));
      assert.deepEqual(withPos[k], chunk.map((s) => t.tokenizeWithPos(s)));
    });
  });

  test('empty inputs', async () => {
    assert.deepEqual(await t.tokenizeBatch([]), []);
    assert.deepEqual(await t.tokenizeBatch(['', '']), ['', '']);
  });

  test('bad arguments reject with TypeError', async () => {
    await assert.rejects(t.tokenizeBatch(/** @type {any} */ ('text')), TypeError);
    await assert.rejects(t.tokenizeBatch(/** @type {any} */ (['ok', 1])), TypeError);
    await assert.rejects(t.tokenizeBatch(['ok'], /** @type {any} */ (1)), TypeError);
  });

  test('the event loop keeps ticking while a big batch runs', async () => {
    const doc = variedTexts().join('。');
    const texts = Array.from({ length: 300 }, (_, i) => `${i}: ${doc}`);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const started = performance.now();
    const result = await t.tokenizeBatch(texts);
    const elapsed = performance.now() - started;
    clearInterval(timer);
    assert.equal(result.length, texts.length);
    assert.ok(elapsed > 50, `batch too small to observe (${elapsed.toFixed(0)} ms)`);
    // A blocked loop would tick 0-1 times; allow for a loaded machine.
    assert.ok(ticks >= Math.min(20, elapsed / 20), `only ${ticks} ticks in ${elapsed.toFixed(0)} ms`);
  });

  test('the batch keeps the tagger alive after the wrapper is dropped', async () => {
    const pending = tagger(FILTER).tokenizeBatch(['本を読んだ']);
    assert.deepEqual(await pending, ['本 読む']);
  });
});

describe('errors', () => {
  test('missing dicdir', () => {
    assert.throws(() => new NativeTagger({ dicdir: path.join(tmp, 'nope') }), /not found/);
  });

  test('dicdir that is a file', () => {
    const file = path.join(tmp, 'file.txt');
    writeFileSync(file, 'x');
    assert.throws(() => new NativeTagger({ dicdir: file }), /not a folder/);
  });

  test('folder without sys.dic', () => {
    const dir = path.join(tmp, 'empty-dict');
    mkdirSync(dir, { recursive: true });
    assert.throws(() => new NativeTagger({ dicdir: dir }), {
      message: `not a compiled MeCab dictionary: ${dir} has no sys.dic`,
    });
  });

  test('corrupt sys.dic reports MeCab\'s error', () => {
    const dir = path.join(tmp, 'corrupt-dict');
    mkdirSync(dir, { recursive: true });
    for (const f of ['char.bin', 'matrix.bin', 'unk.dic', 'dicrc']) copyFileSync(path.join(IPADIC, f), path.join(dir, f));
    writeFileSync(path.join(dir, 'sys.dic'), randomBytes(64 * 1024));
    assert.throws(() => new NativeTagger({ dicdir: dir }), (err) => {
      assert.ok(err instanceof Error);
      assert.match(err.message, /MeCab could not load the dictionary/);
      assert.match(err.message, /dictionary file is broken|sys\.dic/);
      return true;
    });
  });

  test('missing user dictionary', () => {
    assert.throws(() => tagger(undefined, [path.join(tmp, 'nope.dic')]), /user dictionary not found/);
  });

  test('wrong option types throw TypeError naming the option', () => {
    /** @type {Array<[unknown, RegExp]>} */
    const cases = [
      [undefined, /options must be an object/],
      ['dir', /options must be an object/],
      [{}, /options\.dicdir/],
      [{ dicdir: 1 }, /options\.dicdir/],
      [{ dicdir: IPADIC, userdic: 'a.dic' }, /options\.userdic/],
      [{ dicdir: IPADIC, filter: [] }, /options\.filter/],
      [{ dicdir: IPADIC, filter: { keepPos: '名詞' } }, /filter\.keepPos/],
      [{ dicdir: IPADIC, filter: { dropPos: [1] } }, /filter\.dropPos/],
      [{ dicdir: IPADIC, filter: { keepPos: [''] } }, /filter\.keepPos/],
      [{ dicdir: IPADIC, filter: { stopwords: 'top' } }, /filter\.stopwords/],
      [{ dicdir: IPADIC, filter: { singleChar: 'kanji' } }, /filter\.singleChar/],
      [{ dicdir: IPADIC, filter: { dropDigitsOnly: 'yes' } }, /filter\.dropDigitsOnly/],
      [{ dicdir: IPADIC, filter: { dropSymbolsOnly: 1 } }, /filter\.dropSymbolsOnly/],
      [{ dicdir: IPADIC, filter: { lowercase: null } }, /filter\.lowercase/],
      [{ dicdir: IPADIC, filter: { maxTokenBytes: 0 } }, /filter\.maxTokenBytes/],
      [{ dicdir: IPADIC, filter: { maxTokenBytes: 1.5 } }, /filter\.maxTokenBytes/],
      [{ dicdir: IPADIC, filter: { stopWords: [] } }, /filter\.stopWords/],
      [{ dicdir: IPADIC, filter: { foldLongVowels: 'yes' } }, /filter\.foldLongVowels/],
      [{ dicdir: IPADIC, filter: { joinNouns: 1 } }, /filter\.joinNouns/],
    ];
    for (const [options, message] of cases) {
      assert.throws(() => new NativeTagger(/** @type {any} */ (options)), (err) => {
        assert.ok(err instanceof TypeError, `${JSON.stringify(options)}: ${err}`);
        assert.match(err.message, message);
        return true;
      });
    }
  });

  test('wrong text types throw TypeError', () => {
    const t = tagger(FILTER);
    assert.throws(() => t.tokenize(/** @type {any} */ (5)), TypeError);
    assert.throws(() => t.tokenizeWithPos(/** @type {any} */ (null)), TypeError);
    assert.throws(() => t.parse(/** @type {any} */ (undefined)), TypeError);
  });
});

describe('one model per dictionary in a process, its index in huge pages when asked', () => {
  const TEXTS = ['東京都の美術館で新しい展覧会が始まった。', '日本語の形態素解析器を使ってテキストを処理する研究', 'iPhoneとAndroidのスマートフォン市場シェア'];
  /** This process's mappings of the dictionary's sys.dic: start address and file offset. */
  const sysDicMappings = () => {
    const file = realpathSync(path.join(IPADIC, 'sys.dic'));
    return readFileSync('/proc/self/maps', 'utf8').split('\n').filter((l) => l.endsWith(` ${file}`))
      .map((l) => ({ start: BigInt(`0x${l.split('-')[0]}`), offset: BigInt(`0x${l.split(/\s+/)[2]}`) }));
  };
  const thpOn = () => /\[(always|madvise)\]/.test(readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8'));

  test('taggers of one dictionary share its model: asked once, the index is moved for all once enough text was parsed, and they parse as before', async () => {
    const plain = tagger(FILTER);
    const before = TEXTS.map((t) => plain.tokenize(t));
    const mapped = sysDicMappings();
    assert.deepEqual(mapped.map((m) => m.offset), [0n], 'one mapping of sys.dic for the live taggers');
    const huge = new NativeTagger({ dicdir: IPADIC, filter: FILTER, hugePages: true });
    huge.tokenize(TEXTS[0]);
    assert.equal(huge.hugePageBytes, 0, 'a little text does not pay for the copy');
    // Moved whenever it can be: Linux with transparent huge pages, and the file mapped at a 2 MB boundary; once as
    // much text as 1/32 of the index (ipadic's ~17 MB: ~0.5 MB) went through either tagger, on a background thread.
    const movable = process.platform === 'linux' && thpOn() && mapped[0].start % (2n << 20n) === 0n;
    const long = TEXTS.join('').repeat(100); // ~13 KB
    for (let i = 0; i < 100; i++) (i % 2 ? plain : huge).tokenize(long);
    for (let waited = 0; movable && huge.hugePageBytes === 0 && waited < 10_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
    assert.equal(huge.hugePageBytes, plain.hugePageBytes, 'the move is the shared model\'s');
    const moved = BigInt(huge.hugePageBytes);
    // The second tagger loaded nothing: the one mapping, less the moved first part.
    assert.deepEqual(sysDicMappings(), [{ start: mapped[0].start + moved, offset: moved }]);
    if (movable) {
      assert.ok(huge.hugePageBytes >= 2 << 20 && huge.hugePageBytes % (2 << 20) === 0, `${huge.hugePageBytes} bytes moved`);
      const smaps = readFileSync('/proc/self/smaps', 'utf8');
      const start = smaps.indexOf(`${mapped[0].start.toString(16)}-`);
      assert.ok(start >= 0, 'the moved range is a mapping of its own');
      const anonHuge = Number(/AnonHugePages:\s+(\d+) kB/.exec(smaps.slice(start))?.[1]);
      assert.ok(anonHuge > 0, `the range is in huge pages (${anonHuge} kB)`);
    } else {
      assert.equal(huge.hugePageBytes, 0);
    }
    assert.deepEqual(TEXTS.map((t) => plain.tokenize(t)), before, 'the tagger made before the move parses as before');
    assert.deepEqual(TEXTS.map((t) => huge.tokenize(t)), before);
  });

  test('hugePages must be a boolean', () => {
    assert.throws(() => new NativeTagger({ dicdir: IPADIC, hugePages: /** @type {any} */ ('yes') }), /options.hugePages must be a boolean/);
  });
});
