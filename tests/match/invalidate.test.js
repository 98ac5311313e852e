// invalidate() after a write (pipeline/match/precomputed.js), against a real Redis: the written documents' entries for
// every precomputed target are deleted, nothing else is, and the collection's generation as a target goes up by one.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { startPrivateRedis, redisOptions } from '../../pipeline/queue/redis.js';
import { invalidate, keys } from '../../pipeline/match/index.js';

const server = await startPrivateRedis();
const redis = new Redis(redisOptions(server.url));
after(async () => {
  redis.disconnect();
  await server.stop();
});

test('invalidate deletes the written documents\' entries for every target, bumps the generation, keeps the rest', async () => {
  const P = '{scdv}';
  const k = keys(P);
  if (redis.status !== 'ready') await new Promise((r) => redis.once('ready', r));
  // Ids and targets with the separator and Lua-pattern characters in them: the keys are built, not matched.
  const targets = ['ads', 'ads:2', 'promo%.'];
  const ids = ['a-1', 'b:2', 'c.%3'];
  await redis.sadd(k.targets('m', 'articles'), ...targets);
  for (const t of targets) for (const id of [...ids, 'keep']) await redis.set(k.entry('m', 'articles', t, id), '{}');
  await redis.set(k.entry('m', 'other', 'ads', 'a-1'), '{}'); // another source's entry
  await redis.set(k.gen('m', 'articles'), '4');

  assert.equal(await invalidate(redis, P, 'm', 'articles', ids.slice(0, 2)), true);
  for (const t of targets) {
    for (const id of ids.slice(0, 2)) assert.equal(await redis.exists(k.entry('m', 'articles', t, id)), 0, `${t} ${id} deleted`);
    assert.equal(await redis.exists(k.entry('m', 'articles', t, 'c.%3')), 1, `${t}: an id not written is kept`);
    assert.equal(await redis.exists(k.entry('m', 'articles', t, 'keep')), 1);
  }
  assert.equal(await redis.exists(k.entry('m', 'other', 'ads', 'a-1')), 1, 'another source is untouched');
  assert.equal(await redis.get(k.gen('m', 'articles')), '5');

  // No targets precomputed: only the generation moves.
  assert.equal(await invalidate(redis, P, 'm', 'fresh', ['x']), true);
  assert.equal(await redis.get(k.gen('m', 'fresh')), '1');
});
