// Code, schema and docs point to where a figure is recorded by naming a section ("BENCHMARKS.md § REST API",
// 'docs/relevance.md "Damping"'): every such pointer must name a heading that exists, so that a reader who follows it
// finds the figure, and a renamed or dropped section fails here instead of leaving a dead pointer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { REPO_ROOT } from '../pipeline/paths.js';

const DOC = String.raw`((?:[\w.-]+/)*(?:BENCHMARKS|RELIABILITY|README|[a-z-]+)\.md)`;
/** `FILE § Title…` (the title runs on: a heading must be a prefix of it) */
const SECTION_SIGN = new RegExp(String.raw`${DOC},? § ([^\n]+)`, 'g');
/** `FILE "Title"` or `FILE, "Title"` (the quoted text must begin a heading) */
const QUOTED = new RegExp(String.raw`${DOC},? ["“]([^"”\n]{3,80})["”]`, 'g');

/** @param {string} text */
const unescape = (text) => text.replace(/\\'/g, "'").replace(/\\"/g, '"');

/** Headings of a markdown file, without their #'s, backticks and links. @param {string} file */
function headings(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => /^#{1,6} /.test(l))
    .map((l) => l.replace(/^#+ /, '').replace(/`/g, '').trim());
}

/**
 * Every section pointer in `text`, with the markdown file it names (relative to `from`'s folder, else the repo).
 * @param {string} text @param {string} from a repo-relative path
 * @returns {{doc: string, title: string, quoted: boolean}[]}
 */
export function pointersIn(text, from) {
  const out = [];
  const resolve = (/** @type {string} */ doc) => {
    const near = path.join(path.dirname(from), doc);
    return fs.existsSync(path.join(REPO_ROOT, near)) ? near : doc;
  };
  for (const m of unescape(text).matchAll(SECTION_SIGN)) out.push({ doc: resolve(m[1]), title: m[2], quoted: false });
  for (const m of unescape(text).matchAll(QUOTED)) out.push({ doc: resolve(m[1]), title: m[2], quoted: true });
  return out;
}

/** @param {{title: string, quoted: boolean}} p @param {string[]} hs */
const found = (p, hs) => p.title.startsWith('…') || hs.map((h) => h.toLowerCase()).some((h) => {
  const title = p.title.toLowerCase();
  const bare = h.replace(/ \([^)]*\)$/, ''); // "Ads' own layout (adEmbed)" is also "Ads' own layout"
  return p.quoted ? h.startsWith(title) : title.startsWith(h) || title.startsWith(bare);
});

test('a pointer is found only when its heading exists', () => {
  const hs = ['REST API', "Ads' own layout (adEmbed)"];
  assert.ok(found({ title: 'REST API).', quoted: false }, hs));
  assert.ok(found({ title: "Ads' own layout", quoted: true }, hs));
  assert.ok(!found({ title: 'Vector store on OpenSearch.', quoted: false }, hs));
  assert.deepEqual(pointersIn("why: 'see BENCHMARKS.md § REST API.'", 'pipeline/x.js').map((p) => p.title), ['REST API.\'']);
});

test('every section pointer in the tree names a heading that exists', () => {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: REPO_ROOT, encoding: 'utf8' }).split('\0')
    .filter((f) => /\.(js|cjs|mjs|py|cc|h|md|json)$/.test(f) && !f.startsWith('tests/fixtures/') && f !== 'package-lock.json'
      && f !== 'tests/docs-pointers.test.js' && fs.existsSync(path.join(REPO_ROOT, f)));
  const broken = [];
  let checked = 0;
  for (const f of files) {
    for (const p of pointersIn(fs.readFileSync(path.join(REPO_ROOT, f), 'utf8'), f)) {
      const doc = path.join(REPO_ROOT, p.doc);
      if (!fs.existsSync(doc)) { broken.push(`${f}: ${p.doc} does not exist`); continue; }
      checked++;
      if (!found(p, headings(doc))) broken.push(`${f}: ${p.doc} has no section "${p.title.slice(0, 60)}"`);
    }
  }
  assert.ok(checked > 20, `pointers found: ${checked}`);
  assert.deepEqual([...new Set(broken)], []);
});
