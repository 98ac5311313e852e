// Precomputed match entries are stored as UTF-8 JSON with `results` last and the results' scores and byte ends in
// the head; the route splits the head from the results' bytes and answers with a slice of them, undecoded, so that a
// precomputed answer is UTF-8 JSON like a live one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeEntry, entryResults, splitEntry } from '../../pipeline/match/index.js';
import { seededRandom } from '../../pipeline/random.js';

const TITLES = ['サッカー日本代表', 'emoji 😀 and é', 'a literal \\u00e9 and ,"results": in the text', 'a lone \ud800 surrogate', 'control \u0001 char', 'plain'];

test('splitEntry gives the head parsed and the results as the UTF-8 bytes JSON.stringify writes', () => {
  for (const title of TITLES) {
    const entry = { k: 1, count: 1, computed_at: '2026-12-07T00:00:00.000Z', results: [{ id: 'ad-1', score: 0.5, title }] };
    const { head, results } = splitEntry(Buffer.from(encodeEntry(/** @type {any} */ (entry))));
    assert.deepEqual(head, { k: 1, count: 1, computed_at: entry.computed_at, scores: [0.5], ends: [Buffer.byteLength(JSON.stringify(entry.results[0])) + 1] }, title);
    assert.deepEqual(JSON.parse(encodeEntry(/** @type {any} */ (entry))), { ...head, results: entry.results });
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

test('entryResults cuts to k and min_score as filtering the parsed results would, for any scores, also on escaped entries', () => {
  const random = seededRandom(7);
  let sliced = 0;
  for (let trial = 0; trial < 500; trial++) {
    const n = Math.floor(random() * 6);
    // Re-ranked lists (recency, duplicates) need not be in score order: scores are drawn at random.
    const results = Array.from({ length: n }, (_, i) => ({ id: `ad-${i}`, score: Math.round(random() * 100) / 100, title: TITLES[i % TITLES.length] }));
    const entry = { model: 'm', k: 5, count: n, ...(n ? { lowest_score: Math.min(...results.map((r) => r.score)) } : {}), results };
    const k = 1 + Math.floor(random() * 6);
    const min = Math.round(random() * 100) / 100;
    const expected = { results: results.filter((r) => r.score >= min).slice(0, k), below: results.slice(0, k).filter((r) => r.score < min).length };
    const stored = encodeEntry(/** @type {any} */ (entry));
    const legacy = JSON.stringify(entry).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    for (const raw of [stored, legacy]) {
      const split = splitEntry(Buffer.from(raw));
      const got = entryResults(split, k, min);
      assert.deepEqual({ results: JSON.parse(got.bytes.toString()), below: got.below }, expected, `${raw} k ${k} min ${min}`);
      if (raw === stored && got.bytes.buffer === split.results.buffer) sliced++;
    }
  }
  assert.ok(sliced > 200, `${sliced} of 500 answered with the stored bytes themselves`);
});
