// The OpenSearch re-ranking window per shard (store.opensearch.candidates, store/opensearch/search.js
// candidateCount): one shard re-ranks every candidate the search wants; on several shards each re-ranks its share
// plus `spread` standard deviations, which holds the shard's part of the search's best candidates when the ids are
// spread over the shards at random, as the engine's routing by id hash does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { candidateCount } from '../../pipeline/store/opensearch/search.js';
import { DEFAULT_CONFIG } from '../../pipeline/config.js';

const C = DEFAULT_CONFIG.store.opensearch.candidates;

test('one shard re-ranks max(min, perK·k); more shards each re-rank their share and its spread, capped at max', () => {
  assert.equal(candidateCount(10, 1, C), C.min);
  assert.equal(candidateCount(1000, 1, C), Math.min(C.max, C.perK * 1000));
  const six = candidateCount(10, 6, C);
  assert.equal(six, Math.ceil(C.min / 6 + C.spread * Math.sqrt((C.min / 6) * (5 / 6))));
  assert.ok(six < C.min / 2, `6 shards re-rank far fewer than one does (${six})`);
  for (let s = 1; s < 64; s++) assert.ok(candidateCount(10, s + 1, C) <= candidateCount(10, s, C), `no more a shard on ${s + 1} shards than on ${s}`);
  assert.equal(candidateCount(5000, 1, C), C.max, 'capped at max');
  assert.equal(candidateCount(10, 3, { ...C, spread: 0, perShard: 5 }), Math.ceil(C.min / 3) + 10, 'perShard adds to each shard');
});

test('the windows hold every shard\'s part of the best candidates in all but a few of 20,000 random routings', () => {
  // A small deterministic generator: the test fails the same way every time if the window is too small.
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (const shards of [2, 3, 6, 12]) {
    for (const k of [10, 100]) {
      const total = Math.max(C.min, Math.ceil(C.perK * k));
      const window = candidateCount(k, shards, C);
      let overflowing = 0;
      const trials = 20_000;
      for (let t = 0; t < trials; t++) {
        const held = new Array(shards).fill(0);
        for (let i = 0; i < total; i++) held[Math.floor(rand() * shards)]++;
        if (Math.max(...held) > window) overflowing++;
      }
      assert.ok(overflowing / trials < 0.002, `${shards} shards, k ${k}: a shard held more than its window of ${window} in ${overflowing} of ${trials} routings`);
    }
  }
});
