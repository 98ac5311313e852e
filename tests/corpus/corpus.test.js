import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readLines } from '../../pipeline/corpus/lines.js';
import { planShards } from '../../pipeline/corpus/plan.js';
import { META_FIELDS, RESULT_FIELDS, parseDocument } from '../../pipeline/corpus/document.js';
import { REPO_ROOT } from '../../pipeline/paths.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-corpus-'));

/** @param {string} name @param {Buffer|string} content */
function write(name, content) {
  const f = path.join(tmp, name);
  fs.writeFileSync(f, content);
  return f;
}

/** @param {string} file @param {object} [opts] */
async function collect(file, opts = {}) {
  const out = [];
  for await (const l of readLines(file, { maxLineBytes: 100, ...opts })) {
    out.push('buf' in l ? [l.lineNo, l.buf.toString()] : [l.lineNo, `TOO_LONG:${l.tooLongBytes}`]);
  }
  return out;
}

test('readLines numbers lines, strips CR, keeps a last line without newline', async () => {
  const f = write('a.jsonl', 'one\r\ntwo\n\nfour');
  assert.deepEqual(await collect(f), [[1, 'one'], [2, 'two'], [3, ''], [4, 'four']]);
});

test('readLines skips an over-long line without holding it, and goes on', async () => {
  const f = write('b.jsonl', `short\n${'x'.repeat(5000)}\nafter\n${'y'.repeat(300)}`);
  assert.deepEqual(await collect(f), [[1, 'short'], [2, 'TOO_LONG:5000'], [3, 'after'], [4, 'TOO_LONG:300']]);
});

test('readLines honours byte ranges and a first line number', async () => {
  const f = write('c.jsonl', 'aa\nbb\ncc\n');
  assert.deepEqual(await collect(f, { start: 3, end: 9, firstLine: 2 }), [[2, 'bb'], [3, 'cc']]);
});

test('planShards covers every line exactly once, in order', async () => {
  const lines = Array.from({ length: 23 }, (_, i) => `{"id":"${i}","body":"本文${i}"}`);
  const f = write('d.jsonl', lines.join('\n')); // no trailing newline
  const plan = await planShards(f, 5);
  assert.equal(plan.lines, 23);
  assert.equal(plan.shards.length, 5);
  const seen = [];
  for (const s of plan.shards) {
    for await (const l of readLines(f, { start: s.start, end: s.end, firstLine: s.firstLine, maxLineBytes: 1000 })) {
      if ('buf' in l) seen.push([l.lineNo, l.buf.toString()]);
    }
  }
  assert.deepEqual(seen, lines.map((t, i) => [i + 1, t]));
  assert.equal(plan.shards.at(-1)?.lines, 3);
});

test('planShards rejects a missing or empty corpus clearly', async () => {
  await assert.rejects(planShards(path.join(tmp, 'nope.jsonl'), 5), /corpus file .*nope\.jsonl/);
  await assert.rejects(planShards(write('empty.jsonl', ''), 5), /has no lines/);
});

/** @param {string} s */
const parse = (s, line = 7) => parseDocument(Buffer.from(s), line);

test('parseDocument accepts a full document and maps date to published_at', () => {
  const r = parse('{"id":"a1","title":"題","body":"本文","url":"http://x","date":"2010-05-22T14:30:00+0900","category":"c","site":"s"}');
  assert.ok('doc' in r);
  assert.deepEqual(r.doc, { id: 'a1', title: '題', body: '本文', url: 'http://x', category: 'c', site: 's', published_at: '2010-05-22T05:30:00.000Z' });
});

test('parseDocument names line, field and reason for each kind of bad line', () => {
  /** @type {[string|Buffer, string, RegExp][]} */
  const cases = [
    ['{"id": "a", "body": ', 'INVALID_JSON', /invalid JSON/],
    ['[1,2]', 'NOT_AN_OBJECT', /one JSON object/],
    ['{"body":"x"}', 'MISSING_FIELD', /"id" is missing/],
    ['{"id":"a"}', 'MISSING_FIELD', /"body" is missing/],
    ['{"id":"a","body":"   "}', 'EMPTY_BODY', /"body" is empty/],
    ['{"id":{"x":1},"body":"x"}', 'INVALID_FIELD', /"id" must be a string/],
    ['{"id":"a\\tb","body":"x"}', 'INVALID_FIELD', /tab or line break/],
    ['{"id":"t\\ud800","body":"x"}', 'INVALID_FIELD', /"id" contains a lone surrogate \(\\ud800 at 1\)/],
    ['{"id":"t\\udbffx","body":"x"}', 'INVALID_FIELD', /"id" contains a lone surrogate/],
    ['{"id":"a","body":5}', 'INVALID_FIELD', /"body" must be a string/],
    ['{"id":"a","body":"x","published_at":"yesterday"}', 'INVALID_FIELD', /"published_at" is not a date/],
    [Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), 'INVALID_UTF8', /not valid UTF-8/],
  ];
  for (const [input, code, reason] of cases) {
    const r = parseDocument(Buffer.isBuffer(input) ? input : Buffer.from(input), 42);
    assert.ok('error' in r, `expected an error for ${input}`);
    assert.equal(r.error.code, code, String(input));
    assert.equal(r.error.line, 42);
    assert.match(r.error.reason, reason);
  }
});

test('an invalid-JSON reason names the position and the kind, never the line\'s text (a line of /etc/passwd, a secret)', () => {
  /** @type {[string, RegExp][]} */
  const cases = [
    ['root:x:0:0:root:/root:/bin/bash', /^invalid JSON: unexpected token$/],
    ['{"id": "s3cr3t-value", "body": "xyzq', /^invalid JSON at character 37: unterminated string$/],
    ['{"id": "s3cr3t-value" "body": 1}', /^invalid JSON at character 23: expected ',' or '}' after property value$/],
    ['{"id": "s3cr3t-value"} trailing', /^invalid JSON at character 24: unexpected non-whitespace character$/],
    ['{"id": "s3cr3t-value", "body": ', /^invalid JSON: unexpected end of json input$/],
  ];
  for (const [line, reason] of cases) {
    const r = parse(line);
    assert.ok('error' in r && r.error.code === 'INVALID_JSON', line);
    assert.match(r.error.reason, reason);
    for (const secret of ['root', 's3cr3t', 'bash', 'xyzq', 'trailing']) assert.ok(!r.error.reason.includes(secret), `${r.error.reason} quotes the line`);
  }
});

test('parseDocument warns about control characters, keeps numeric ids, skips blank lines', () => {
  const r = parse('{"id":12,"body":"本文\\u0000です"}');
  assert.ok('doc' in r);
  assert.equal(r.doc.id, '12');
  assert.equal(r.warnings[0].code, 'CONTROL_CHARACTERS');
  assert.deepEqual(parse('   '), { blank: true });
});

test("a result's fields are the stored metadata fields, in the answers' order, and the native store writes that order", () => {
  assert.deepEqual([...RESULT_FIELDS].sort(), [...META_FIELDS].sort());
  assert.notDeepEqual([...RESULT_FIELDS], [...META_FIELDS], 'two orders: stored (META_FIELDS), answered (RESULT_FIELDS)');
  // The fused re-ranking copies the text fields' bytes in its own list (kFields): RESULT_FIELDS without `ad`.
  const cc = fs.readFileSync(path.join(REPO_ROOT, 'pipeline/store/native/src/result_fields.cc'), 'utf8');
  const m = /kFields = \{([^}]*)\}/.exec(cc);
  assert.ok(m, 'kFields not found in result_fields.cc');
  assert.deepEqual(m[1].split(',').map((f) => f.trim().replace(/"/g, '')), RESULT_FIELDS.filter((f) => f !== 'ad'));
});
