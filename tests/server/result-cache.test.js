// The related result cache's admission rule (server/cache.js): an answer asked for once is not kept, one asked for
// again is, and from then on served; a kept answer whose collection changed is recomputed and kept at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ResultCache, sizeOf } from '../../server/cache.js';

/** get with a compute that counts its calls */
async function ask(/** @type {ResultCache} */ c, /** @type {string} */ key, /** @type {string} */ version, /** @type {{n: number}} */ computed) {
  return c.get(key, version, async () => { computed.n++; return `answer of ${key} at ${version} (${computed.n})`; });
}

test('an answer asked for once is not kept; asked for again it is, then served from the cache', async () => {
  const c = new ResultCache(100);
  const computed = { n: 0 };
  const first = await ask(c, 'm\0a\0doc1', 'v1', computed);
  assert.deepEqual([first.hit, computed.n, c.map.size], [false, 1, 0], 'computed, not kept');
  const second = await ask(c, 'm\0a\0doc1', 'v1', computed);
  assert.deepEqual([second.hit, computed.n, c.map.size], [false, 2, 1], 'computed again, kept');
  for (let i = 0; i < 5; i++) {
    const r = await ask(c, 'm\0a\0doc1', 'v1', computed);
    assert.deepEqual([r.hit, r.value, computed.n], [true, second.value, 2], 'served from the cache');
  }
  assert.deepEqual([c.hits, c.misses], [5, 2]);
  // The collection changed: the kept answer is recomputed once and kept again at the new version.
  const changed = await ask(c, 'm\0a\0doc1', 'v2', computed);
  assert.deepEqual([changed.hit, computed.n], [false, 3]);
  assert.equal((await ask(c, 'm\0a\0doc1', 'v2', computed)).hit, true);
});

test('every article asked for once: nothing kept, the keys remembered are bounded', async () => {
  const c = new ResultCache(50);
  const computed = { n: 0 };
  for (let i = 0; i < 1000; i++) assert.equal((await ask(c, `m\0a\0doc${i}`, 'v1', computed)).hit, false);
  assert.equal(c.map.size, 0);
  assert.ok(c.seen.size <= 50);
  // Popular articles among them still get kept and served.
  for (let round = 0; round < 3; round++) for (let i = 0; i < 10; i++) await ask(c, `m\0a\0hot${i}`, 'v1', computed);
  assert.equal(c.map.size, 10);
  assert.equal(c.hits, 10);
});

test('the cache holds at most maxEntries; a deleted collection\'s keys go; 0 disables it', async () => {
  const c = new ResultCache(5);
  const computed = { n: 0 };
  for (let i = 0; i < 8; i++) for (let j = 0; j < 2; j++) await ask(c, `m\0a\0doc${i}`, 'v1', computed);
  assert.equal(c.map.size, 5);
  await ask(c, 'm\0b\0x', 'v1', computed);
  c.forgetCollection('m\0a');
  assert.equal(c.map.size, 0);
  assert.deepEqual([...c.seen], ['m\0b\0x']);
  const off = new ResultCache(0);
  for (let i = 0; i < 3; i++) assert.equal((await ask(off, 'k', 'v', computed)).hit, false);
  assert.equal(off.map.size + off.seen.size, 0);
});

test('the cache holds at most maxBytes of answers and keys (serialised length), least recently used evicted first', async () => {
  const c = new ResultCache(10_000, 1 << 20);
  // Answers of 40 KB each, every one asked twice (so kept): 26 of them fit in 1 MB, not 100.
  const answer = (/** @type {number} */ i) => Buffer.alloc(40_000, i % 256);
  for (let i = 0; i < 100; i++) for (let j = 0; j < 2; j++) await c.get(`m\0a\0doc${i}`, 'v1', async () => answer(i));
  assert.ok(c.bytes <= 1 << 20, `${c.bytes} bytes kept`);
  assert.equal(c.bytes, [...c.map.values()].reduce((n, e) => n + e.size, 0), 'the count matches the entries');
  assert.ok(c.map.size >= 20 && c.map.size <= 26, `${c.map.size} entries`);
  assert.ok(c.map.has('m\0a\0doc99') && !c.map.has('m\0a\0doc0'), 'the newest kept, the oldest evicted');
  assert.ok(c.evictions >= 74);
  // An answer over an eighth of the budget is served, never kept.
  for (let j = 0; j < 3; j++) assert.equal((await c.get('m\0a\0big', 'v1', async () => Buffer.alloc(200_000))).hit, false);
  assert.ok(!c.map.has('m\0a\0big'));
  // JSON values count by their text; deleting a collection gives its bytes back.
  assert.equal(sizeOf({ a: 'é' }), Buffer.byteLength('{"a":"é"}'));
  c.forgetCollection('m\0a');
  assert.deepEqual([c.bytes, c.map.size], [0, 0]);
});

test('remembered keys are bounded by bytes too: long unique keys do not grow the cache', async () => {
  const c = new ResultCache(10_000, 1 << 20);
  const long = 'x'.repeat(4000);
  for (let i = 0; i < 2000; i++) await c.get(`m\0a\0${i}\0${long}`, 'v1', async () => 'v');
  assert.ok(c.seenBytes <= (1 << 20) / 16, `${c.seenBytes} bytes of keys remembered`);
  assert.equal(c.seenBytes, [...c.seen].reduce((n, k) => n + 2 * k.length, 0));
});

test('the default budget: server.relatedCacheBytes is 64 MiB', async () => {
  const { DEFAULT_CONFIG } = await import('../../pipeline/config.js');
  assert.equal(DEFAULT_CONFIG.server.relatedCacheBytes, 64 << 20);
});
