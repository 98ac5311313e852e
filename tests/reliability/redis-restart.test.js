// Fault: Redis killed (SIGKILL) in the middle of a corpus run and started again 1.5 s later on the same socket,
// once with its data kept (append-only file, as a production Redis restarts) and once coming back empty (no
// persistence: every queued and active job is gone). Must hold: workers reconnect, the run completes, every input
// document is in the output exactly once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { tmp, SAMPLE, sampleLines, MODEL, testConfig, quiet, ensureModel, restartableRedis, report, cleanup, sleep, waitFor, childPids, twoTopicCorpus, tinyTrainConfig } from './helpers.js';

const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { runTokenize } = await import('../../pipeline/stages/tokenize.js');
const { runIndex } = await import('../../pipeline/stages/indexing.js');
const { storeDirFor } = await import('../../pipeline/paths.js');
const { runTrain } = await import('../../pipeline/stages/train.js');
const { openStore } = await import('../../pipeline/store/index.js');

before(async () => {
  const r = await startPrivateRedis();
  try { await ensureModel(r.url); } finally { await r.stop(); }
});
after(() => cleanup());

const ids = sampleLines().map((l) => JSON.parse(l).id);

/**
 * Kill Redis once `ready()` says the run is under way, keep it down for `downMs`, start it again.
 * @param {Awaited<ReturnType<typeof restartableRedis>>} redis
 * @param {() => boolean} ready
 */
function restartDuringRun(redis, ready, downMs = 1500) {
  const figures = { downAtMs: 0, downForMs: 0 };
  const t0 = Date.now();
  const done = (async () => {
    await waitFor(ready, { timeoutMs: 60_000, what: 'the run to get under way' });
    await redis.stop('SIGKILL');
    figures.downAtMs = Date.now() - t0;
    await sleep(downMs);
    await redis.start();
    figures.downForMs = Date.now() - t0 - figures.downAtMs;
  })();
  return { figures, done };
}

/** Shard markers written so far in a run folder. @param {string} dir */
const markers = (dir) => (fs.existsSync(path.join(dir, 'shards')) ? fs.readdirSync(path.join(dir, 'shards')).filter((f) => /^\d+\.json$/.test(f)).length : 0);

for (const persist of [true, false]) {
  const label = persist ? 'with its data (AOF)' : 'empty';
  test(`tokenise: Redis killed mid-run and restarted ${label}: the run completes, every document exactly once`, async (t) => {
    const redis = await restartableRedis({ persist });
    const out = path.join(tmp, `tok-${persist ? 'aof' : 'empty'}`);
    process.env.SCDV_FAULT_BATCH_DELAY_MS = '40';
    const t0 = Date.now();
    try {
      const fault = restartDuringRun(redis, () => markers(out) >= 1);
      const [s] = await Promise.all([
        runTokenize({ corpus: SAMPLE, outDir: out, config: testConfig({ tokenize: { shardSize: 30, batchSize: 5 } }), redisUrl: redis.url, workers: 2, ...quiet }),
        fault.done,
      ]);
      assert.ok(markers(out) > 1);
      const rows = fs.readFileSync(s.tokensFile, 'utf8').trim().split('\n').map((r) => r.split('\t')[0]);
      assert.deepEqual(rows, ids, 'every document exactly once, in corpus order');
      report(t, `redis-restart-tokenize-${persist ? 'aof' : 'empty'}`, { ...fault.figures, shards: s.shards, documents: rows.length, seconds: (Date.now() - t0) / 1000 });
    } finally {
      delete process.env.SCDV_FAULT_BATCH_DELAY_MS;
      await redis.close();
    }
  });

  test(`index: Redis killed mid-run and restarted ${label}: the run completes, every document exactly once in the store`, async (t) => {
    const redis = await restartableRedis({ persist });
    const collection = `restart-${persist ? 'aof' : 'empty'}`;
    const dir = path.join(storeDirFor(MODEL), collection);
    process.env.SCDV_FAULT_BATCH_DELAY_MS = '40';
    const t0 = Date.now();
    try {
      let written = 0;
      const fault = restartDuringRun(redis, () => {
        // some shards written: the WAL has grown past its header
        try { written = fs.readdirSync(dir).filter((f) => f.startsWith('wal-')).reduce((a, f) => a + fs.statSync(path.join(dir, f)).size, 0); } catch { /* not yet */ }
        return written > 20_000;
      });
      const [s] = await Promise.all([
        runIndex({ corpus: SAMPLE, model: MODEL, collection, config: testConfig({ index: { shardSize: 30, writeBatchSize: 5 } }), redisUrl: redis.url, workers: 2, ...quiet }),
        fault.done,
      ]);
      const store = openStore(storeDirFor(MODEL));
      try {
        const c = store.collection(collection);
        assert.equal(c.count(), s.documents);
        assert.equal(s.documents + s.empty + s.rejected, ids.length, 'every line accounted for');
        for (const id of ids) assert.ok(c.get(id), `document ${id} is in the store`);
      } finally {
        store.close();
      }
      report(t, `redis-restart-index-${persist ? 'aof' : 'empty'}`, { ...fault.figures, shards: s.shards, documents: s.documents, seconds: (Date.now() - t0) / 1000 });
    } finally {
      delete process.env.SCDV_FAULT_BATCH_DELAY_MS;
      await redis.close();
    }
  });
}

test('train: Redis killed while a Python stage runs and restarted empty: the stage is queued again, the model completes', async (t) => {
  const redis = await restartableRedis({ persist: false });
  const t0 = Date.now();
  try {
    /** @type {import('../../pipeline/queue/worker-pool.js').WorkerPool | null} */
    let pool = null;
    const python = () => (pool ? pool.pids.flatMap(childPids) : []).length > 0;
    const fault = restartDuringRun(redis, python);
    const [{ manifest }] = await Promise.all([
      runTrain({ corpus: twoTopicCorpus(), name: 'redis-restarted', config: tinyTrainConfig(), redisUrl: redis.url, ...quiet, onTrainWorkersStarted: (p) => { pool = p; } }),
      fault.done,
    ]);
    assert.equal(manifest.counts.clusters, 2);
    report(t, 'redis-restart-train-empty', { ...fault.figures, seconds: (Date.now() - t0) / 1000 });
  } finally {
    await redis.close();
  }
});
