// Faults of the training stage: the Python worker exiting non-zero (SCDV_FAULT_TRAIN_EXIT, a crash without an
// error line), the Python worker killed with SIGKILL, the Node train worker killed with SIGKILL while its Python
// child runs. Must hold: a failing job fails with the worker's own message after `queue.attempts` attempts; a
// killed one is retried and the run completes; no partial model folder ever appears under its name (so none is
// listed or activatable); a re-run reuses the stages finished before the crash; no orphan Python process is left.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { quiet, report, cleanup, childPids, sleep, waitFor, twoTopicCorpus, tinyTrainConfig } from './helpers.js';

const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { openQueue } = await import('../../pipeline/queue/queues.js');
const { runTrain } = await import('../../pipeline/stages/train.js');
const { modelsDir } = await import('../../pipeline/paths.js');
const { loadModel } = await import('../../pipeline/model/load.js');

/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redis;
before(async () => { redis = await startPrivateRedis(); });
after(async () => { await redis.stop(); cleanup(); });

const corpus = twoTopicCorpus();
const config = tinyTrainConfig();

/**
 * Watch modelsDir() during a run: every folder that ever appears under a model name must be complete.
 * @returns {{stop: () => void, seen: Map<string, boolean>}} seen: name -> complete at every sighting
 */
function watchModels() {
  /** @type {Map<string, boolean>} */
  const seen = new Map();
  const look = () => {
    let names = [];
    try { names = fs.readdirSync(modelsDir()); } catch { return; }
    for (const n of names) {
      if (n.startsWith('.')) continue; // temporary folders are hidden and not valid model names
      const complete = fs.existsSync(path.join(modelsDir(), n, 'manifest.json'));
      seen.set(n, (seen.get(n) ?? true) && complete);
    }
  };
  const timer = setInterval(look, 10);
  return { stop: () => { clearInterval(timer); look(); }, seen };
}

/** Python training processes still running for a work folder. */
function pythonFor(/** @type {string} */ name) {
  const out = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8');
      if (cmd.includes('scdv.train') && cmd.includes(`${path.sep}work${path.sep}${name}${path.sep}`) && alive(Number(p))) out.push(Number(p));
    } catch { /* gone */ }
  }
  return out;
}

/** Running (a zombie waiting for init to reap it counts as gone). @param {number} pid */
const alive = (pid) => { try { return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch { return false; } };

/** @param {number} pid */
const cmdline = (pid) => { try { return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'); } catch { return []; } };

test('the Python worker exits non-zero at every attempt: the job fails with its message after the retries, no model appears, finished stages are kept', async (t) => {
  const watch = watchModels();
  process.env.SCDV_FAULT_TRAIN_EXIT = 'gmm:3';
  const t0 = Date.now();
  try {
    await assert.rejects(runTrain({ corpus, name: 'crashy', config, redisUrl: redis.url, ...quiet }), (err) => {
      const e = /** @type {any} */ (err);
      assert.equal(e.code, 'SCDV_TRAIN_FAILED');
      assert.match(e.message, /training stage gmm failed: python worker exited with 3: .*fault injection: stage gmm crashed \(exit code 3\)/);
      return true;
    });
  } finally {
    delete process.env.SCDV_FAULT_TRAIN_EXIT;
    watch.stop();
  }
  const failedAfter = (Date.now() - t0) / 1000;
  const queue = openQueue('train', redis.url, config.queue);
  const failed = (await queue.getFailed()).filter((j) => j.data.stage === 'gmm');
  await queue.close();
  assert.equal(failed.length, 1);
  assert.equal(failed[0].attemptsMade, config.queue.attempts, 'tried queue.attempts times');
  assert.ok(!watch.seen.has('crashy'), 'no folder ever appeared under the model name');
  assert.deepEqual(fs.existsSync(modelsDir()) ? fs.readdirSync(modelsDir()).filter((n) => n.includes('crashy')) : [], [], 'no temporary folder is left either');
  assert.throws(() => loadModel('crashy'), /not found/, 'nothing to activate');

  // The crash lost only the stage in progress: a re-run reuses word2vec and idf.
  const again = await runTrain({ corpus, name: 'crashy', config, redisUrl: redis.url, ...quiet });
  assert.equal(again.manifest.stages.word2vec.reused, true);
  assert.equal(again.manifest.stages.idf.reused, true);
  assert.equal(again.manifest.stages.gmm.reused, undefined);
  assert.ok(fs.existsSync(path.join(again.modelDir, 'word_topics.bin')));
  report(t, 'train-python-exit', { attempts: failed[0].attemptsMade, failedAfterSeconds: failedAfter, rerunReused: ['word2vec', 'idf'] });
});

test('the Python worker killed with SIGKILL mid-stage: the job is retried and the model completes', async (t) => {
  const watch = watchModels();
  let killed = 0;
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  const { manifest, modelDir } = await runTrain({
    corpus, name: 'py-killed', config, redisUrl: redis.url, ...quiet,
    onTrainWorkersStarted: (pool) => {
      let seenAt = 0;
      timer = setInterval(() => {
        const py = pool.pids.flatMap(childPids).find((p) => cmdline(p).includes('word2vec'));
        if (!py) return;
        seenAt ||= Date.now();
        if (Date.now() - seenAt > 700) { // imports done, training under way
          process.kill(py, 'SIGKILL');
          killed = py;
          clearInterval(timer);
        }
      }, 20);
    },
  }).finally(() => { clearInterval(timer); watch.stop(); });
  assert.ok(killed > 0, 'a Python worker was killed');
  assert.equal(manifest.counts.clusters, 2);
  assert.ok(fs.existsSync(path.join(modelDir, 'word_topics.bin')));
  assert.equal(watch.seen.get('py-killed'), true, 'the model folder was complete whenever it was visible');
  report(t, 'train-python-sigkill', { killedPid: killed, completed: true });
});

test('the Node train worker killed with SIGKILL while its Python stage runs: the stage is taken over, the run completes, no orphan Python is left', async (t) => {
  const watch = watchModels();
  let killed = 0;
  /** @type {number[]} */
  let orphans = [];
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  /** @type {NodeJS.Timeout | undefined} */
  let orphanWatch;
  let killedAt = 0;
  let orphanLifeMs = -1;
  const t0 = Date.now();
  const { manifest } = await runTrain({
    corpus, name: 'node-killed', config, redisUrl: redis.url, ...quiet,
    onTrainWorkersStarted: (pool) => {
      timer = setInterval(() => {
        const worker = pool.pids.find((w) => childPids(w).some((p) => cmdline(p).includes('word2vec')));
        if (!worker || killed) return;
        orphans = childPids(worker);
        process.kill(worker, 'SIGKILL');
        killed = worker;
        killedAt = Date.now();
        clearInterval(timer);
        orphanWatch = setInterval(() => {
          if (!orphans.some(alive)) { orphanLifeMs = Date.now() - killedAt; clearInterval(orphanWatch); }
        }, 10);
      }, 20);
    },
  }).finally(() => { clearInterval(timer); watch.stop(); });
  assert.ok(killed > 0, 'the train worker was killed');
  assert.equal(manifest.counts.clusters, 2);
  assert.equal(watch.seen.get('node-killed'), true);
  // The killed worker's Python child must not keep training beside its replacement: it dies with its parent
  // (PR_SET_PDEATHSIG), not whenever it next writes to the closed pipe.
  await waitFor(() => !orphans.some(alive), { timeoutMs: 1000, what: 'the orphaned Python stage to exit' })
    .catch(() => assert.fail(`orphaned Python process(es) still running: ${orphans.filter(alive)}`));
  clearInterval(orphanWatch);
  await sleep(100);
  assert.deepEqual(pythonFor('node-killed'), [], 'no training process left for this model');
  report(t, 'train-node-worker-sigkill', { killedPid: killed, orphansAtKill: orphans.length, orphanLifeMs, seconds: (Date.now() - t0) / 1000 });
});
