// The tree says what is true now, how it was measured and why; how and when it was made belongs in git log.
// Every tracked text file (vendored licences and the bundled corpus excepted) is checked for a numbered work period
// ("sess" + "ion 12", "Sess" + "ions 15-17"), an issue number, or a work-stream name beside such a number (s11-…),
// and the two measurement documents for their size: current figures, not a diary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../pipeline/paths.js';

/** What may not appear, each with the reason shown when it does. */
const RULES = [
  { re: /\bsess(?:ion)s?[ -]?\d/i, what: 'a numbered work period' },
  { re: /\bwork[- ]periods?\b/i, what: 'a work period' },
  { re: /\bissues? #?\d+\b/i, what: 'an issue number' },
  { re: /\b[si]\d{1,2}-[a-z]{3,}\d?\b/, what: 'a work-stream name' },
];

/**
 * Files not written by the project, or data: the vendored licence texts, the corpus fixtures, binary store fixtures;
 * and this file, which names what it looks for.
 */
const EXCLUDED = [/^tests\/docs-history\.test\.js$/, /^LICENSE$/, /^tests\/fixtures\//, /^tests\/store\/fixtures\//, /^package-lock\.json$/, /(^|\/)node_modules\//];

/** Line caps: the current figures of each benchmark, and the relevance method with today's results. */
const MAX_LINES = { 'BENCHMARKS.md': 400, 'docs/relevance.md': 300 };

/** @returns {string[] | null} the tracked files, repository-relative; null outside a git checkout */
function trackedFiles() {
  try {
    return execFileSync('git', ['ls-files', '-z'], { cwd: REPO_ROOT, encoding: 'utf8', maxBuffer: 64 << 20 })
      .split('\0')
      .filter(Boolean);
  } catch {
    return null;
  }
}

/**
 * The rule breaches of one text.
 * @param {string} text
 * @returns {{line: number, what: string, excerpt: string}[]}
 */
function historyMentions(text) {
  /** @type {{line: number, what: string, excerpt: string}[]} */
  const found = [];
  text.split('\n').forEach((line, i) => {
    for (const { re, what } of RULES) {
      const m = re.exec(line);
      if (m) found.push({ line: i + 1, what, excerpt: line.slice(Math.max(0, m.index - 40), m.index + 60).trim() });
    }
  });
  return found;
}

test('the rules catch how the tree was made and leave ordinary words alone', () => {
  const bad = ['measured in Sess' + 'ion 16', 'sess' + 'ions 15-17', 'before sess' + 'ion-6', 'the work per' + 'iod',
    '(iss' + 'ue 15: writes)', 'branch s1' + '1-search2'];
  for (const t of bad) assert.equal(historyMentions(t).length, 1, t);
  const fine = ['the login session cookie (adminSessionS, 8 h)', 'browser sessions for the queue board', 'a 16-bit gap',
    'segment format 4', 'see pipeline/store/README.md', 'p50 1.74 ms at 1M documents'];
  for (const t of fine) assert.deepEqual(historyMentions(t), [], t);
});

test('no tracked file says in which work period or for which issue it was made', (t) => {
  const files = trackedFiles();
  if (!files) return t.skip('not a git checkout');
  const breaches = [];
  for (const rel of files) {
    if (EXCLUDED.some((re) => re.test(rel))) continue;
    const abs = path.join(REPO_ROOT, rel);
    if (!fs.existsSync(abs) || !fs.statSync(abs).isFile()) continue;
    const bytes = fs.readFileSync(abs);
    if (bytes.includes(0)) continue; // binary
    for (const b of historyMentions(bytes.toString('utf8'))) breaches.push(`${rel}:${b.line}: ${b.what}: …${b.excerpt}…`);
  }
  assert.deepEqual(breaches, [], `history belongs in git log; say what is true now and why, and point to where a figure is recorded:\n${breaches.join('\n')}`);
});

test('the measurement documents hold current figures, not a diary', () => {
  for (const [rel, max] of Object.entries(MAX_LINES)) {
    const lines = fs.readFileSync(path.join(REPO_ROOT, rel), 'utf8').split('\n').length - 1;
    assert.ok(lines <= max, `${rel} has ${lines} lines, over ${max}: keep each benchmark's latest figure (older ones stay in git history)`);
  }
});
