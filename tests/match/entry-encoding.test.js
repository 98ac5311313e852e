// Precomputed match entries are stored with non-ASCII escaped; the route passes their results through with the
// escapes undone, so that a precomputed answer is UTF-8 JSON like a live one, byte for byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeEntry, unescapeNonAscii } from '../../pipeline/match/index.js';

test('unescapeNonAscii undoes encodeEntry: the text JSON.stringify writes, Japanese and emoji as UTF-8', () => {
  for (const title of ['サッカー日本代表', 'emoji 😀 and é', 'a literal \\u00e9 in the text', 'a lone \ud800 surrogate', 'control \u0001 char', 'plain']) {
    const entry = { k: 1, results: [{ id: 'ad-1', score: 0.5, title }] };
    const stored = encodeEntry(/** @type {any} */ (entry));
    assert.match(stored, /^[\x20-\x7e]*$/, 'stored as ASCII');
    assert.equal(unescapeNonAscii(stored), JSON.stringify(entry), title);
  }
});
