// Shard jobs that carry their documents (distributed batch; what `scdv index` queues on the OpenSearch
// backend): a `scdv worker index` process with ANOTHER data folder runs them (it can read neither the corpus's
// run folder nor write the markers there), returns each shard's result through Redis, and the queuing process
// writes the markers; at most index.queuedShards jobs are in Redis at a time; a worker whose copy of the model
// files differs refuses the job. The queue mechanics are the backend's business only through the worker's store,
// so this runs on the native store (the worker is given the same store folder); tests/opensearch/ has the cluster.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-travel-'));
process.env.SCDV_MODELS_DIR = path.join(tmp, 'models');
process.env.SCDV_DATA_DIR = path.join(tmp, 'data-a');
process.env.SCDV_STORE_DIR = path.join(tmp, 'store');
const { loadConfig } = await import('../../pipeline/config.js');
const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { runShards } = await import('../../pipeline/stages/sharded.js');
const { indexShardJob } = await import('../../pipeline/queue/index-job.js');
const { planShards } = await import('../../pipeline/corpus/plan.js');
const { prepareRunDir, readShardResult } = await import('../../pipeline/queue/shard.js');
const { openQueue } = await import('../../pipeline/queue/queues.js');
const { modelFilesDigest } = await import('../../pipeline/model/files-digest.js');
const { openStore } = await import('../../pipeline/store/index.js');
const { storeDirFor, REPO_ROOT } = await import('../../pipeline/paths.js');
const { ensureSampleModels } = await import('../lib/tiny-model.js');

const SAMPLE = 'tests/fixtures/livedoor/sample.jsonl';
const lines = fs.readFileSync(SAMPLE, 'utf8').trim().split('\n');
const config = loadConfig({ overrides: { index: { shardSize: 20, queuedShards: 2 }, queue: { lockDurationMs: 2000, stalledIntervalMs: 1000, backoffMs: 200, attempts: 1 } } });

/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redis;
before(async () => {
  redis = await startPrivateRedis();
  await ensureSampleModels({ names: ['small'], redisUrl: redis.url }); // sampleTrain(1) on the sample, shared with other files
});
after(async () => {
  await redis.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** `scdv worker index` as on host B: its own data folder, the same Redis, models and store. */
function startRemoteWorker() {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'pipeline/cli.js'), 'worker', 'index'], {
    env: { ...process.env, REDIS_URL: redis.url, SCDV_DATA_DIR: path.join(tmp, 'data-b') },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  return {
    stderr: () => stderr,
    stop: () => new Promise((resolve) => { child.once('exit', resolve); child.kill('SIGTERM'); }),
  };
}

/**
 * @param {string} runKey
 * @param {string} collection
 * @param {string} digest what the queuing host has
 */
async function runTravelling(runKey, collection, digest) {
  const corpus = path.resolve(SAMPLE);
  const plan = await planShards(corpus, config.index.shardSize);
  const outDir = path.join(tmp, 'data-a', 'runs', runKey);
  prepareRunDir(outDir, runKey, () => {});
  let maxQueued = 0;
  const queue = openQueue('index', redis.url, config.queue);
  const watch = setInterval(() => {
    queue.getJobCounts().then((c) => { maxQueued = Math.max(maxQueued, c.waiting + c.active + c.completed + c.delayed); }, () => {});
  }, 10);
  try {
    await runShards({
      queueName: 'index', outDir, runKey, pending: plan.shards, config, redisUrl: redis.url, log: () => {}, quiet: true, travel: true,
      // Host A's paths as host B sees them: nothing there (ENOTDIR even for root). The job must carry what B needs.
      jobData: (shard) => ({
        ...indexShardJob({ runKey, corpus, outDir, model: 'small', collection, config, duplicates: new Map(), travel: true, modelFilesSha256: digest }, shard),
        corpus: '/dev/null/host-a/corpus.jsonl', outDir: '/dev/null/host-a/run',
      }),
    });
  } finally {
    clearInterval(watch);
    await queue.close();
  }
  return { plan, outDir, maxQueued };
}

test('a worker with another data folder runs travelling shards; the queuing host writes the markers', { timeout: 120_000 }, async () => {
  const worker = startRemoteWorker();
  try {
    const { plan, outDir, maxQueued } = await runTravelling('travel-1', 'travelled', await modelFilesDigest('small'));
    assert.ok(plan.shards.length >= 4, `${plan.shards.length} shards`);
    let documents = 0;
    for (const s of plan.shards) {
      const r = readShardResult(outDir, s.index, 'travel-1');
      assert.ok(r, `marker of shard ${s.index}`);
      documents += r.documents;
    }
    assert.equal(documents, lines.length);
    assert.ok(maxQueued <= config.index.queuedShards, `at most ${config.index.queuedShards} jobs in Redis, saw ${maxQueued}`);
    assert.ok(!fs.existsSync(path.join(tmp, 'data-b', 'runs')), 'the worker wrote nothing in its own data folder');
    const store = openStore(storeDirFor('small'));
    try {
      assert.equal(store.collection('travelled').count(), lines.length);
    } finally {
      await store.close();
    }
  } finally {
    await worker.stop();
  }
});

test('a worker whose model files differ from the queuing host\'s refuses the job with SCDV_MODEL_FILES_MISMATCH', { timeout: 120_000 }, async () => {
  const worker = startRemoteWorker();
  try {
    await assert.rejects(runTravelling('travel-2', 'refused', 'c'.repeat(64)), (/** @type {any} */ e) => {
      assert.equal(e.code, 'SCDV_SHARD_FAILED', e.message);
      assert.match(e.message, /SCDV_MODEL_FILES_MISMATCH|differ from those collection "refused" was indexed with/);
      return true;
    });
    const store = openStore(storeDirFor('small'));
    try {
      assert.equal(store.collectionInfo('refused'), null, 'nothing written');
    } finally {
      await store.close();
    }
  } finally {
    await worker.stop();
  }
});

test('travelling jobs lost by Redis are queued again, and their results still reach the queuing host', { timeout: 120_000 }, async () => {
  const queue = openQueue('index', redis.url, config.queue);
  try {
    const run = runTravelling('travel-3', 'requeued', await modelFilesDigest('small'));
    // No worker yet: the first window of jobs waits; Redis "loses" it (a restart without persistence).
    let lost = 0;
    for (let i = 0; i < 200 && lost < config.index.queuedShards; i++) {
      for (const job of await queue.getWaiting()) if (String(job.id).startsWith('travel-3-')) { await job.remove(); lost++; }
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(lost, config.index.queuedShards);
    await new Promise((r) => setTimeout(r, 2500)); // the run's check for lost jobs (every 2 s) queues them again
    const worker = startRemoteWorker();
    try {
      const { plan, outDir } = await run;
      for (const s of plan.shards) assert.ok(readShardResult(outDir, s.index, 'travel-3'), `marker of shard ${s.index}`);
    } finally {
      await worker.stop();
    }
    assert.deepEqual(await queue.getCompleted(), [], 'every result was harvested and its job removed');
  } finally {
    await queue.close();
  }
});
