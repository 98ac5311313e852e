// Bad input: a corpus mixing good articles with every kind of bad line (written here, the 50 MB document
// generated, never committed), tokenised and indexed. Must hold: every bad line is reported with its line
// number, a code and a reason; every good document is processed exactly once; documents kept with a remark are
// listed as warnings; tokenise and index agree on what they reject.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { tmp, sampleLines, MODEL, testConfig, quiet, ensureModel, report, cleanup } from './helpers.js';

const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { runTokenize } = await import('../../pipeline/stages/tokenize.js');
const { runIndex } = await import('../../pipeline/stages/indexing.js');
const { storeDirFor } = await import('../../pipeline/paths.js');
const { openStore } = await import('../../pipeline/store/index.js');

/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redis;
before(async () => {
  redis = await startPrivateRedis();
  await ensureModel(redis.url);
});
after(async () => { await redis.stop(); cleanup(); });

const good = sampleLines().slice(0, 60);
const goodIds = good.map((l) => JSON.parse(l).id);
const HUGE_BYTES = 50 * 1024 * 1024;

/**
 * The bad lines, each with what must become of it: rejected with a code, kept with a warning code, or kept.
 * @type {{what: string, line: Buffer | string, reject?: string, warn?: string, id?: string}[]}
 */
const cases = [
  { what: 'truncated JSON', line: '{"id": "broken", "body": "途中で', reject: 'INVALID_JSON' },
  { what: 'not JSON at all', line: 'これはJSONではない', reject: 'INVALID_JSON' },
  { what: 'a JSON array', line: '["id", "body"]', reject: 'NOT_AN_OBJECT' },
  { what: 'JSON null', line: 'null', reject: 'NOT_AN_OBJECT' },
  { what: 'no id', line: JSON.stringify({ body: '本文だけの記事です。東京で会議が開かれた。' }), reject: 'MISSING_FIELD' },
  { what: 'no body', line: JSON.stringify({ id: 'no-body', title: '見出しだけ' }), reject: 'MISSING_FIELD' },
  { what: 'empty id', line: JSON.stringify({ id: '', body: '本文' }), reject: 'MISSING_FIELD' },
  { what: 'empty body', line: JSON.stringify({ id: 'empty-body', body: '' }), reject: 'EMPTY_BODY' },
  { what: 'blank body', line: JSON.stringify({ id: 'blank-body', body: ' \u3000\n\t ' }), reject: 'EMPTY_BODY' },
  { what: 'body of the wrong type', line: JSON.stringify({ id: 'num-body', body: 42 }), reject: 'INVALID_FIELD' },
  { what: 'id of the wrong type', line: JSON.stringify({ id: { a: 1 }, body: '本文' }), reject: 'INVALID_FIELD' },
  { what: 'id with a tab', line: JSON.stringify({ id: 'tab\tid', body: '本文' }), reject: 'INVALID_FIELD' },
  { what: 'id over 512 characters', line: JSON.stringify({ id: 'x'.repeat(600), body: '本文' }), reject: 'INVALID_FIELD' },
  { what: 'a date that is not one', line: JSON.stringify({ id: 'bad-date', body: '本文の記事', published_at: 'yesterday' }), reject: 'INVALID_FIELD' },
  { what: 'duplicate id (same shard)', line: good[1], reject: 'DUPLICATE_ID' },
  { what: 'duplicate id (earlier shard), other text', line: JSON.stringify({ ...JSON.parse(good[2]), title: '重複した記事', body: '同じIDで別の本文。' }), reject: 'DUPLICATE_ID' },
  { what: 'invalid UTF-8', line: Buffer.concat([Buffer.from('{"id":"bad-utf8","body":"'), Buffer.from([0xe3, 0x81, 0xff, 0xc0, 0xaf]), Buffer.from('"}')]), reject: 'INVALID_UTF8' },
  { what: 'a UTF-16 line', line: Buffer.from(JSON.stringify({ id: 'utf16', body: '日本語の記事' }), 'utf16le'), reject: 'INVALID_UTF8' },
  { what: 'a 50 MB document', line: 'HUGE', reject: 'TOO_LARGE', id: 'huge' },
  { what: 'control characters in the body', line: JSON.stringify({ id: 'ctrl', title: '制御\u0007文字', body: '東京\u0000スカイツリー\u001bの展望台から富士山を見た。\u0085観光客が多い。' }), warn: 'CONTROL_CHARACTERS' },
  { what: 'English text', line: JSON.stringify({ id: 'english', body: 'The quick brown fox jumps over the lazy dog near the river bank.' }), warn: 'NOT_JAPANESE' },
  { what: 'Korean text', line: JSON.stringify({ id: 'korean', body: '서울에서 열린 회의에 많은 사람들이 참석했습니다.' }), warn: 'NOT_JAPANESE' },
  { what: 'symbols and digits only', line: JSON.stringify({ id: 'symbols', body: '！！？？★★★ 123 456 ---' }), warn: 'NO_TOKENS' },
  { what: 'emoji only (kept: neologd reads 😀 as 笑顔)', line: JSON.stringify({ id: 'emoji', body: '😀😀😀' }) },
  { what: 'an integer id', line: JSON.stringify({ id: 123456, body: '整数のIDを持つ記事です。大阪で祭りが行われた。' }) },
  { what: 'a CRLF line ending', line: JSON.stringify({ id: 'crlf', body: '改行コードがCRLFの記事。名古屋の天気。' }) + '\r' },
];

/** Good lines with the bad ones spread among them; the last line has no final newline. */
function writeCorpus() {
  const file = path.join(tmp, 'bad.jsonl');
  const fd = fs.openSync(file, 'w');
  /** @type {Map<number, typeof cases[number]>} */
  const at = new Map();
  let lineNo = 0;
  const put = (/** @type {Buffer | string} */ l) => { fs.writeSync(fd, typeof l === 'string' ? Buffer.from(l) : l); lineNo++; };
  let gi = 0;
  for (const [i, c] of cases.entries()) {
    for (let k = 0; k < 2 && gi < good.length; k++) { put(good[gi++]); fs.writeSync(fd, '\n'); }
    if (c.line === 'HUGE') {
      // {"id":"huge","body":"ああ…"} of 50 MB, written in 1 MB pieces
      fs.writeSync(fd, '{"id":"huge","body":"');
      const piece = Buffer.from('あ'.repeat((1 << 20) / 3));
      for (let w = 0; w < HUGE_BYTES; w += piece.length) fs.writeSync(fd, piece);
      put('"}');
    } else {
      put(c.line);
    }
    at.set(lineNo, c);
    if (i < cases.length - 1) fs.writeSync(fd, '\n');
  }
  while (gi < good.length) { fs.writeSync(fd, '\n'); put(good[gi++]); }
  fs.closeSync(fd);
  return { file, at, lines: lineNo };
}

const corpus = writeCorpus();
const expectedRejected = [...corpus.at].filter(([, c]) => c.reject).map(([line, c]) => [line, c.reject]);
const expectedWarnings = [...corpus.at].filter(([, c]) => c.warn).map(([line, c]) => [line, c.warn]);
const keptIds = [...goodIds, ...[...corpus.at.values()].filter((c) => !c.reject).map((c) => String(JSON.parse(String(c.line)).id))];

test('tokenise a corpus of bad lines: each reported by line with its reason, every good document exactly once', async (t) => {
  const t0 = Date.now();
  const s = await runTokenize({ corpus: corpus.file, outDir: path.join(tmp, 'tok'), config: testConfig({ tokenize: { shardSize: 25 } }), redisUrl: redis.url, workers: 2, ...quiet });
  const rejected = fs.readFileSync(path.join(s.outDir, 'rejected.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(rejected.map((r) => [r.line, r.code]), expectedRejected);
  for (const r of rejected) {
    assert.ok(typeof r.reason === 'string' && r.reason.length > 10, `line ${r.line} has a reason: ${r.reason}`);
    assert.ok(r.reason.length < 300, `line ${r.line}'s reason does not quote the line whole`);
  }
  const huge = rejected.find((r) => r.code === 'TOO_LARGE');
  assert.match(huge.reason, /^line of \d+ bytes exceeds corpus\.maxDocumentBytes = 1048576$/);
  assert.ok(Number(huge.reason.split(' ')[2]) >= HUGE_BYTES);
  const dup = rejected.filter((r) => r.code === 'DUPLICATE_ID').map((r) => r.reason);
  assert.match(dup[0], new RegExp(`duplicate id "${goodIds[1]}" \\(first on line 2\\)`));
  const warnings = fs.readFileSync(path.join(s.outDir, 'warnings.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(warnings.map((w) => [w.line, w.code]), expectedWarnings);
  const rows = fs.readFileSync(s.tokensFile, 'utf8').trim().split('\n').map((r) => r.split('\t'));
  assert.deepEqual(rows.map((r) => r[0]).sort(), [...keptIds].sort(), 'every kept document exactly once');
  const ctrl = rows.find((r) => r[0] === 'ctrl');
  assert.ok(ctrl && /スカイツリー/.test(ctrl[1]) && !/[\u0000-\u001f]/.test(ctrl[1]), 'control characters gone, the text around them kept');
  assert.equal(s.rejected, expectedRejected.length);
  report(t, 'bad-corpus-tokenize', {
    lines: corpus.lines, badCases: cases.length, rejected: s.rejected, warnings: s.warnings, documents: s.documents,
    corpusBytes: fs.statSync(corpus.file).size, seconds: (Date.now() - t0) / 1000,
  });
});

test('index the same corpus: the same lines rejected with the same codes, duplicates keep their first occurrence', async (t) => {
  const t0 = Date.now();
  const s = await runIndex({ corpus: corpus.file, model: MODEL, collection: 'bad', config: testConfig({ index: { shardSize: 25 } }), redisUrl: redis.url, workers: 2, ...quiet });
  const issues = fs.readFileSync(s.reportFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const rejected = issues.filter((x) => x.code !== 'NO_KNOWN_WORDS');
  assert.deepEqual(rejected.map((r) => [r.line, r.code]), expectedRejected);
  const empty = issues.filter((x) => x.code === 'NO_KNOWN_WORDS').map((x) => x.id);
  const store = openStore(storeDirFor(MODEL));
  try {
    const c = store.collection('bad');
    const stored = keptIds.filter((id) => !empty.includes(id));
    assert.equal(c.count(), stored.length, 'every kept document once');
    for (const id of stored) assert.ok(c.get(id), `${id} stored`);
    // The duplicate of the earlier shard was not written over the first occurrence.
    const first = JSON.parse(good[2]);
    assert.equal(c.get(first.id)?.meta.title, first.title);
  } finally {
    store.close();
  }
  report(t, 'bad-corpus-index', { rejected: rejected.length, noKnownWords: empty.length, documents: s.documents, seconds: (Date.now() - t0) / 1000 });
});
