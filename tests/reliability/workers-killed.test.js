// Fault: tokenise and index workers killed with SIGKILL in the middle of shards, twice per run, every local
// worker at once. Must hold: the shards are taken over (stalled jobs), the run completes, every input document
// is in the output exactly once and the output equals that of an undisturbed run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { tmp, SAMPLE, sampleLines, MODEL, testConfig, quiet, ensureModel, report, cleanup } from './helpers.js';

const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { openQueue } = await import('../../pipeline/queue/queues.js');
const { runTokenize } = await import('../../pipeline/stages/tokenize.js');
const { runIndex } = await import('../../pipeline/stages/indexing.js');
const { storeDirFor } = await import('../../pipeline/paths.js');
const { openStore } = await import('../../pipeline/store/index.js');

/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redis;
before(async () => {
  redis = await startPrivateRedis();
  await ensureModel(redis.url);
});
after(async () => {
  await redis.stop();
  cleanup();
});

const ids = sampleLines().map((l) => JSON.parse(l).id);

/**
 * While the run goes, kill every local worker with SIGKILL as soon as some shard has reported progress
 * (so it is mid-shard), `rounds` times, at least `gapMs` apart.
 * @param {'tokenize'|'index'} queueName
 * @param {import('../../pipeline/queue/worker-pool.js').WorkerPool} pool
 * @param {{rounds: number, gapMs: number, killed: number[], midShard: number[]}} state
 */
function killMidShard(queueName, pool, state) {
  const queue = openQueue(queueName, redis.url, testConfig().queue);
  queue.on('error', () => {});
  let last = 0;
  let busy = false;
  const timer = setInterval(async () => {
    if (busy || Date.now() - last < state.gapMs) return;
    busy = true;
    try {
      const active = (await queue.getActive()).filter((j) => {
        const p = /** @type {any} */ (j.progress());
        return p && p.lines > 0 && p.lines < j.data.shard.lines;
      });
      if (active.length && pool.pids.length) {
        state.midShard.push(active.length);
        for (const pid of pool.pids) {
          process.kill(pid, 'SIGKILL');
          state.killed.push(pid);
        }
        last = Date.now();
        if (--state.rounds === 0) stop();
      }
    } catch { /* the queue is closing */ } finally {
      busy = false;
    }
  }, 20);
  const stop = () => { clearInterval(timer); queue.close().catch(() => {}); };
  return stop;
}

/**
 * Run a stage with its batches slowed down (SCDV_FAULT_BATCH_DELAY_MS) while every local worker is SIGKILLed
 * mid-shard, twice.
 * @template R
 * @param {'tokenize'|'index'} stage
 * @param {(onWorkersStarted: (pool: any) => void) => Promise<R>} run
 * @returns {Promise<{result: R, state: {rounds: number, gapMs: number, killed: number[], midShard: number[]}}>}
 */
async function withKillsMidShard(stage, run) {
  const state = { rounds: 2, gapMs: 1500, killed: /** @type {number[]} */ ([]), midShard: /** @type {number[]} */ ([]) };
  /** @type {() => void} */
  let stop = () => {};
  process.env.SCDV_FAULT_BATCH_DELAY_MS = '60';
  try {
    const result = await run((pool) => { stop = killMidShard(stage, pool, state); });
    return { result, state };
  } finally {
    stop();
    delete process.env.SCDV_FAULT_BATCH_DELAY_MS;
  }
}

test('tokenise workers SIGKILLed mid-shard twice: the run completes, every document exactly once, output identical', async (t) => {
  const config = testConfig({ tokenize: { shardSize: 40, batchSize: 8 } });
  const clean = await runTokenize({ corpus: SAMPLE, outDir: path.join(tmp, 'tok-clean'), config, redisUrl: redis.url, workers: 2, ...quiet });

  const t0 = Date.now();
  const { result: s, state } = await withKillsMidShard('tokenize', (onWorkersStarted) => runTokenize({
    corpus: SAMPLE, outDir: path.join(tmp, 'tok-killed'), config, redisUrl: redis.url, workers: 2, ...quiet, onWorkersStarted,
  }));
  assert.equal(state.rounds, 0, `both kill rounds happened mid-shard (${state.midShard})`);
  const rows = fs.readFileSync(s.tokensFile, 'utf8').trim().split('\n').map((r) => r.split('\t')[0]);
  assert.deepEqual(rows, ids, 'every document exactly once, in corpus order');
  assert.equal(fs.readFileSync(s.tokensFile, 'utf8'), fs.readFileSync(clean.tokensFile, 'utf8'), 'same tokens as an undisturbed run');
  assert.deepEqual(fs.readdirSync(path.join(s.outDir, 'shards')).filter((f) => f.includes('.tmp-')), [], 'no temp file of a killed worker is left');
  report(t, 'tokenize-worker-sigkill', { workersKilled: state.killed.length, activeJobsAtKills: state.midShard, documents: rows.length, seconds: (Date.now() - t0) / 1000 });
});

test('index workers SIGKILLed mid-shard twice: the run completes, every document exactly once in the store, vectors as undisturbed', async (t) => {
  const config = testConfig({ index: { shardSize: 40, writeBatchSize: 5 } });
  await runIndex({ corpus: SAMPLE, model: MODEL, collection: 'clean', config, redisUrl: redis.url, workers: 2, ...quiet });

  const t0 = Date.now();
  const { result: s, state } = await withKillsMidShard('index', (onWorkersStarted) => runIndex({
    corpus: SAMPLE, model: MODEL, collection: 'killed', config, redisUrl: redis.url, workers: 2, ...quiet, onWorkersStarted,
  }));
  assert.equal(state.rounds, 0, `both kill rounds happened mid-shard (${state.midShard})`);
  const store = openStore(storeDirFor(MODEL));
  try {
    const clean = store.collection('clean');
    const killed = store.collection('killed');
    assert.equal(s.documents, clean.count());
    assert.equal(killed.count(), clean.count(), 'no document lost, none duplicated');
    for (const id of ids) {
      const a = clean.get(id);
      const b = killed.get(id);
      assert.equal(Boolean(b), Boolean(a), `document ${id} present in both or neither`);
      if (a && b) {
        assert.deepEqual([...b.vector.indices], [...a.vector.indices]);
        assert.deepEqual([...b.vector.values], [...a.vector.values]);
        assert.deepEqual(b.meta, a.meta);
      }
    }
  } finally {
    store.close();
  }
  report(t, 'index-worker-sigkill', { workersKilled: state.killed.length, activeJobsAtKills: state.midShard, documents: s.documents, seconds: (Date.now() - t0) / 1000 });
});
