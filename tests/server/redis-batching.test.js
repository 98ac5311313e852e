// QueueHub.batchThisTurn (server/redis-queues.js), against a real Redis: the precomputed-match lookups issued in one
// turn of the event loop leave in one write, each is answered with its own entry, and the socket is not held past
// the turn.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startPrivateRedis } from '../../pipeline/queue/redis.js';
import { loadConfig } from '../../pipeline/config.js';
import { encodeEntry, keys, lookupMatch } from '../../pipeline/match/index.js';
import { QueueHub } from '../../server/redis-queues.js';

const server = await startPrivateRedis();
const config = loadConfig();
const log = { warn: () => {}, info: () => {} };
const hub = new QueueHub({ redisUrl: server.url, config, log });
after(async () => {
  await hub.close();
  await server.stop();
});

test('lookups issued in one turn go out in one write, each answered with its entry; the next turn writes at once', async () => {
  assert.equal(await hub.ready(10_000), true);
  const P = config.queue.prefix;
  const ids = ['page-1', 'page-2', 'page-3'];
  for (const [i, id] of ids.entries()) {
    await hub.redis.set(keys(P).entry('m', 'articles', 'ads', id), encodeEntry({
      model: 'm', source: 'articles', target: 'ads', id, k: 3, target_gen: 0, computed_at: new Date(0).toISOString(), count: 1,
      results: [{ id: `ad-${i}`, score: 0.5 }],
    }));
  }
  const stream = hub.redis.stream;
  /** @type {number[]} chunks per writev system call */
  const writevs = [];
  const writev = /** @type {NonNullable<typeof stream._writev>} */ (stream._writev);
  stream._writev = function (chunks, cb) {
    writevs.push(chunks.length);
    return writev.call(this, chunks, cb);
  };
  try {
    const lookup = (/** @type {string} */ id) => lookupMatch(hub.redis, P, { model: 'm', source: 'articles', target: 'ads', id, k: 3 });
    hub.batchThisTurn();
    const answers = ids.map((id) => { hub.batchThisTurn(); return lookup(id); });
    assert.equal(stream.writableCorked, 1, 'held until the turn ends (once, however often asked)');
    assert.ok(stream.writableLength > 0, 'the commands wait on the socket');
    const got = await Promise.all(answers);
    assert.deepEqual(got.map((a) => a.reason), ['fresh', 'fresh', 'fresh']);
    assert.deepEqual(got.map((a) => JSON.parse(/** @type {NonNullable<typeof a.entry>} */ (a.entry).results.toString())[0].id), ['ad-0', 'ad-1', 'ad-2']);
    assert.deepEqual(writevs, [3], 'the three lookups in one write');
    assert.equal(stream.writableCorked, 0);

    // Not asked for: a lookup is written when issued.
    const alone = lookup('page-1');
    assert.equal(stream.writableCorked, 0);
    assert.equal(stream.writableLength, 0, 'written at once');
    assert.equal((await alone).reason, 'fresh');
  } finally {
    stream._writev = writev;
  }
});
