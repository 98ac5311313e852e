// Precomputed match entries are stored as UTF-8 JSON with `results` last; the route splits the head from the
// results' bytes and passes those through undecoded, so that a precomputed answer is UTF-8 JSON like a live one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeEntry, splitEntry } from '../../pipeline/match/index.js';

const TITLES = ['サッカー日本代表', 'emoji 😀 and é', 'a literal \\u00e9 and ,"results": in the text', 'a lone \ud800 surrogate', 'control \u0001 char', 'plain'];

test('splitEntry gives the head parsed and the results as the UTF-8 bytes JSON.stringify writes', () => {
  for (const title of TITLES) {
    const entry = { k: 1, count: 1, computed_at: '2026-12-07T00:00:00.000Z', results: [{ id: 'ad-1', score: 0.5, title }] };
    const { head, results } = splitEntry(Buffer.from(encodeEntry(/** @type {any} */ (entry))));
    assert.deepEqual(head, { k: 1, count: 1, computed_at: entry.computed_at }, title);
    assert.ok(Buffer.isBuffer(results));
    assert.ok(results.equals(Buffer.from(JSON.stringify(entry.results))), title);
  }
});

test('an entry written with non-ASCII escaped (earlier versions) splits into the same JSON', () => {
  const entry = { k: 1, results: [{ id: 'ad-1', score: 0.5, title: TITLES[0] }] };
  const escaped = JSON.stringify(entry).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const { head, results } = splitEntry(Buffer.from(escaped));
  assert.deepEqual(head, { k: 1 });
  assert.deepEqual(JSON.parse(results.toString()), entry.results);
});
