// The related result cache's admission rule (server/cache.js): an answer asked for once is not kept, one asked for
// again is, and from then on served; a kept answer whose collection changed is recomputed and kept at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ResultCache } from '../../server/cache.js';

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
