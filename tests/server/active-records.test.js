// The active-model record: one interface, the file on the native backend and the shared Redis on
// OpenSearch, chosen by activeRecords() from the config. A follower on another "host" (another instance on the same
// Redis) hears a write at once through pub/sub, and through its poll when the message was missed. Real Redis.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { startPrivateRedis, redisOptions } from '../../pipeline/queue/redis.js';
import { usePaths } from '../../pipeline/paths.js';
import { DEFAULT_CONFIG } from '../../pipeline/config.js';
import { activeRecords, FileActiveRecords, RedisActiveRecords } from '../../pipeline/serving/active.js';
import { waitFor } from '../lib/wait.js';

/** @type {Awaited<ReturnType<typeof startPrivateRedis>>} */
let redis;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-active-'));
/** @type {import('../../pipeline/config.js').Config} */
const opensearch = { ...DEFAULT_CONFIG, store: { ...DEFAULT_CONFIG.store, backend: 'opensearch', opensearch: { ...DEFAULT_CONFIG.store.opensearch, indexPrefix: 't-' } } };

before(async () => {
  redis = await startPrivateRedis();
  usePaths({ dataDir: tmp });
});
after(async () => {
  await redis.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** @param {string} model */
const rec = (model) => ({ model, previous: null, activated_at: new Date().toISOString() });

/**
 * The first record `r` hands to a follower, and when.
 * @param {import('../../pipeline/serving/active.js').ActiveRecords} r
 * @param {string} model
 * @param {number} pollMs
 */
function followUntil(r, model, pollMs) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${model} not followed within 20 s`)), 20_000);
    r.follow((x) => { if (x.model === model) { clearTimeout(timer); resolve(Date.now()); } }, pollMs);
  });
}

test('the backend decides where the record lives: the file on native, the shared Redis on OpenSearch', async () => {
  assert.ok(activeRecords(DEFAULT_CONFIG) instanceof FileActiveRecords);
  const saved = process.env.REDIS_URL;
  delete process.env.REDIS_URL;
  try {
    assert.throws(() => activeRecords(opensearch), (/** @type {any} */ e) => e.code === 'SCDV_CONFIG_INVALID' && /REDIS_URL/.test(e.message));
    // A private Redis of one process cannot be what every host shares.
    assert.throws(() => activeRecords(opensearch, { redisUrl: redis.url, privateRedis: true }), /REDIS_URL/);
  } finally {
    if (saved !== undefined) process.env.REDIS_URL = saved;
  }
  const r = activeRecords(opensearch, { redisUrl: redis.url });
  try {
    assert.ok(r instanceof RedisActiveRecords);
    assert.equal(/** @type {RedisActiveRecords} */ (r).key, 'scdv:active-model:t-');
  } finally {
    await r.close();
  }
});

test('file records: written, read back, followed by another instance', async () => {
  const a = new FileActiveRecords();
  const b = new FileActiveRecords();
  try {
    assert.equal(await a.read(), null);
    await a.write(rec('m1'));
    assert.equal((await b.read())?.model, 'm1');
    const seen = followUntil(b, 'm2', 20);
    await a.write(rec('m2'));
    await seen;
    assert.equal(JSON.parse(fs.readFileSync(path.join(tmp, 'server', 'active-model.json'), 'utf8')).model, 'm2');
  } finally {
    await a.close();
    await b.close();
  }
});

test('Redis records: a write on one host is heard on another at once (pub/sub), whatever the poll interval', async () => {
  const a = activeRecords(opensearch, { redisUrl: redis.url });
  const b = activeRecords(opensearch, { redisUrl: redis.url });
  try {
    await a.write(rec('m1'));
    assert.equal((await b.read())?.model, 'm1');
    const seen = followUntil(b, 'm2', 60_000);
    // The subscription is in place (Redis counts the channel's subscribers), so that the write's message reaches it.
    const raw = new Redis(redisOptions(redis.url));
    try {
      const key = /** @type {RedisActiveRecords} */ (b).key;
      await waitFor(async () => Number((/** @type {any[]} */ (await raw.pubsub('NUMSUB', key)))[1]) === 1, { timeoutMs: 20_000, what: `a subscriber on ${key}` });
    } finally {
      raw.disconnect();
    }
    const t0 = Date.now();
    await a.write(rec('m2'));
    const at = await seen;
    assert.ok(at - t0 < 500, `followed after ${at - t0} ms`);
  } finally {
    await a.close();
    await b.close();
  }
});

test('Redis records: a write whose message was missed is found by the poll', async () => {
  const b = activeRecords(opensearch, { redisUrl: redis.url });
  const raw = new Redis(redisOptions(redis.url));
  try {
    const seen = followUntil(b, 'm3', 100);
    // Set without publishing: only the poll can see it.
    await raw.set('scdv:active-model:t-', JSON.stringify(rec('m3')));
    const t0 = Date.now();
    const at = await seen;
    assert.ok(at - t0 < 1000, `followed after ${at - t0} ms`);
  } finally {
    raw.disconnect();
    await b.close();
  }
});

test('Redis records: Redis unreachable is SCDV_REDIS_UNAVAILABLE naming the record', async () => {
  const r = new RedisActiveRecords('redis://127.0.0.1:1', 'scdv:active-model:x-');
  try {
    await assert.rejects(r.read(), (/** @type {any} */ e) => e.code === 'SCDV_REDIS_UNAVAILABLE' && /scdv:active-model:x-/.test(e.message));
  } finally {
    await r.close();
  }
});
