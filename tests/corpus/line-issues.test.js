// The per-line issue codes (rejected.jsonl, warnings.jsonl, bulk-job status) come from one catalogue,
// pipeline/line-issues.js: every code the sources produce is in it, none is spelt as a literal elsewhere, and
// every entry says what it means.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ISSUE, LINE_ISSUES } from '../../pipeline/line-issues.js';
import { errors } from '../../pipeline/errors.js';
import { REPO_ROOT } from '../../pipeline/paths.js';

/** @param {string} dir @returns {string[]} */
function sourceFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return ['node_modules', 'build', 'native'].includes(e.name) ? [] : sourceFiles(p);
    return e.name.endsWith('.js') ? [p] : [];
  });
}

const CATALOGUE = path.join(REPO_ROOT, 'pipeline', 'line-issues.js');
const sources = ['pipeline', 'server', 'workers'].flatMap((d) => sourceFiles(path.join(REPO_ROOT, d)))
  .filter((f) => f !== CATALOGUE)
  .map((f) => ({ file: path.relative(REPO_ROOT, f), text: fs.readFileSync(f, 'utf8') }));

test('the scan sees the sources that report line issues', () => {
  const files = sources.map((s) => s.file);
  for (const f of ['pipeline/corpus/document.js', 'pipeline/queue/shard.js', 'workers/indexing.js', 'workers/tokenize.js']) {
    assert.ok(files.includes(f), f);
  }
});

test('every issue code a source produces is in the catalogue, and none is written as a string literal', () => {
  /** @type {string[]} */
  const problems = [];
  const used = new Set();
  for (const { file, text } of sources) {
    // An issue object built with a literal code: `code: 'X'` (errors of the catalogue in errors.js start with SCDV_).
    for (const m of text.matchAll(/\bcode:\s*['"`]([A-Z][A-Z0-9_]*)['"`]/g)) {
      problems.push(`${file}: code literal '${m[1]}' (use ISSUE.${m[1]} from pipeline/line-issues.js${m[1] in LINE_ISSUES ? '' : ', after adding it there'})`);
    }
    for (const m of text.matchAll(/\bISSUE\.([A-Za-z0-9_]+)/g)) {
      if (!(m[1] in LINE_ISSUES)) problems.push(`${file}: ISSUE.${m[1]} is not in the catalogue`);
      used.add(m[1]);
    }
    for (const code of Object.keys(LINE_ISSUES)) {
      if (new RegExp(`['"\`]${code}['"\`]`).test(text)) problems.push(`${file}: '${code}' written as a literal`);
    }
  }
  assert.deepEqual(problems, []);
  assert.deepEqual(Object.keys(LINE_ISSUES).filter((c) => !used.has(c)), [], 'catalogued codes that nothing produces');
});

test('every catalogued code says what it means, and related request errors exist', () => {
  const errorCodes = new Set(Object.values(errors).map((e) => e.code));
  for (const [code, kind] of Object.entries(LINE_ISSUES)) {
    assert.equal(ISSUE[/** @type {keyof typeof ISSUE} */ (code)], code);
    assert.ok(['rejected', 'warning', 'empty'].includes(kind.outcome), code);
    assert.ok(kind.meaning.length > 10, code);
    if ('requestError' in kind) assert.ok(errorCodes.has(kind.requestError), `${code}: ${kind.requestError} is not in pipeline/errors.js`);
  }
  assert.equal(LINE_ISSUES.NO_KNOWN_WORDS.requestError, errors.NO_USABLE_WORDS.code);
});
