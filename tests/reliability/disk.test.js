// Faults: the disk fills up, or the data folder becomes read-only, under the vector store, a tokenise run and a
// model replacement. Injected with a small tmpfs mounted for the test (`mount -t tmpfs -o size=…`, remounted
// read-only for the unwritable cases): real ENOSPC and EROFS from the kernel. Mounting needs root (CI runs as
// root); elsewhere these tests are skipped with that reason. (chmod cannot stand in: root ignores it.)
// Must hold: the operation fails with a clear error naming the cause, and nothing that was there is damaged.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { tmp, SAMPLE, sampleLines, testConfig, quiet, smallDisk, snapshot, report, cleanup, twoTopicCorpus, tinyTrainConfig } from './helpers.js';
import { rng } from '../lib/random.js';

const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { openStore } = await import('../../pipeline/store/index.js');
const { runTokenize } = await import('../../pipeline/stages/tokenize.js');
const { runTrain } = await import('../../pipeline/stages/train.js');
const { modelsDir } = await import('../../pipeline/paths.js');

/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redis;
/** @type {NonNullable<ReturnType<typeof smallDisk>>[]} */
const disks = [];
before(async () => { redis = await startPrivateRedis(); });
after(async () => {
  for (const d of disks) d.unmount();
  await redis.stop();
  cleanup();
});

/** @param {number} bytes */
function disk(bytes) {
  const d = smallDisk(bytes, tmp);
  if (d) disks.push(d);
  return d;
}
const SKIP = 'mounting a tmpfs needs root (CAP_SYS_ADMIN)';
const probe = smallDisk(1 << 20, tmp);
const canMount = Boolean(probe);
probe?.unmount();

const WIDTH = 2000;
const r = rng(11);
/** @param {string} id */
function doc(id) {
  const idx = new Set();
  while (idx.size < 60) idx.add(Math.floor(r() * WIDTH));
  const indices = [...idx].sort((a, b) => a - b);
  return { id, vector: { indices, values: indices.map(() => r() - 0.5) }, meta: { title: `t-${id}`, body: 'x'.repeat(200) } };
}

test('store: the disk fills up during writes: a clear ENOSPC error, every acknowledged write intact, writes resume once space is freed', { skip: !canMount && SKIP }, async (t) => {
  const d = /** @type {NonNullable<ReturnType<typeof smallDisk>>} */ (disk(4 << 20));
  const ballast = path.join(d.dir, 'ballast');
  fs.writeFileSync(ballast, Buffer.alloc(1 << 20));
  const dir = path.join(d.dir, 'store');
  /** @type {unknown[]} */
  const backgroundErrors = [];
  let store = openStore(dir, { flushDocs: 400, onBackgroundError: (/** @type {unknown} */ e) => backgroundErrors.push(e) });
  let c = store.collection('full', { width: WIDTH });
  /** @type {Map<string, ReturnType<typeof doc>>} */
  const acked = new Map();
  /** @type {any} */
  let failure = null;
  let batches = 0;
  for (let b = 0; b < 10_000 && !failure; b++) {
    const docs = Array.from({ length: 20 }, (_, i) => doc(`b${b}-${i}`));
    try {
      await c.upsert(docs);
      for (const x of docs) acked.set(x.id, x);
      batches++;
    } catch (err) {
      failure = err;
    }
  }
  assert.ok(failure, 'the disk filled up');
  assert.match(String(failure.message), /ENOSPC|no space/i, `the error names the cause: ${failure.message}`);
  const failedIds = Array.from({ length: 20 }, (_, i) => `b${batches}-${i}`);
  // Reads keep working on what is there.
  assert.equal(c.count(), acked.size);
  const some = [...acked.values()][3];
  assert.equal(c.search(some.vector, { k: 1, mode: 'exact' })[0].id, some.id);
  await store.close();

  // Reopen on the still-full disk: every acknowledged document, none of the failed batch.
  store = openStore(dir);
  c = store.collection('full');
  assert.equal(c.count(), acked.size, 'acknowledged writes survive, the failed batch is absent');
  for (const [id, x] of acked) {
    const got = c.get(id);
    assert.ok(got, `acknowledged ${id} present`);
    assert.deepEqual([...got.vector.indices], x.vector.indices);
  }
  for (const id of failedIds) assert.equal(c.get(id), null, `failed write ${id} absent`);
  const probeDoc = [...acked.values()][7];
  assert.equal(c.search(probeDoc.vector, { k: 1, mode: 'exact' })[0].id, probeDoc.id);

  // Free space: writes work again.
  fs.rmSync(ballast);
  await c.upsert([doc('after-1'), doc('after-2')]);
  await c.flush();
  assert.equal(c.count(), acked.size + 2);
  await store.close();
  report(t, 'disk-full-store', { acknowledgedDocs: acked.size, failedBatchDocs: failedIds.length, error: String(failure.code ?? failure.message).slice(0, 80), backgroundErrors: backgroundErrors.length });
});

test('store: the data folder is read-only: opening the store fails with a clear EROFS error naming the file; no file changes', { skip: !canMount && SKIP }, async (t) => {
  // (A tmpfs cannot be remounted read-only while a store holds files open for writing: the kernel refuses
  // with EBUSY. So this is the store's folder read-only at start; a store whose disk stops taking writes
  // while it is open is the disk-full case above.)
  const d = /** @type {NonNullable<ReturnType<typeof smallDisk>>} */ (disk(8 << 20));
  const dir = path.join(d.dir, 'store');
  let store = openStore(dir);
  let c = store.collection('ro', { width: WIDTH });
  const docs = Array.from({ length: 300 }, (_, i) => doc(`ro-${i}`));
  await c.upsert(docs.slice(0, 200));
  await c.flush(); // a segment ...
  await c.upsert(docs.slice(200)); // ... and a WAL tail
  await store.close();
  const before = snapshot(dir);

  d.readOnly();
  /** @type {string[]} */
  const errorsSeen = [];
  try {
    assert.throws(() => openStore(dir).collection('ro'), (err) => {
      errorsSeen.push(/** @type {Error} */ (err).message);
      assert.match(/** @type {Error} */ (err).message, /EROFS|read-only/i, 'the error names the cause');
      assert.ok(/** @type {Error} */ (err).message.includes(dir), 'and the file');
      return true;
    });
  } finally {
    d.readWrite();
  }
  assert.deepEqual(snapshot(dir), before, 'no file changed');
  store = openStore(dir);
  c = store.collection('ro');
  assert.equal(c.count(), 300, 'everything still there once writable again');
  assert.equal(c.search(docs[250].vector, { k: 1, mode: 'exact' })[0].id, docs[250].id);
  await c.upsert([doc('new')]);
  assert.equal(c.count(), 301);
  await store.close();
  report(t, 'readonly-store', { documents: 300, errors: errorsSeen.map((m) => m.slice(0, 100)) });
});

test('tokenise onto a full disk: the run fails with ENOSPC in its message; an earlier run\'s output on that disk is unchanged', { skip: !canMount && SKIP }, async (t) => {
  const d = /** @type {NonNullable<ReturnType<typeof smallDisk>>} */ (disk(3 << 20));
  const config = testConfig({ tokenize: { shardSize: 1000 }, queue: { attempts: 2, backoffMs: 100 } });
  const first = path.join(d.dir, 'first');
  await runTokenize({ corpus: SAMPLE, outDir: first, config, redisUrl: redis.url, workers: 1, ...quiet });
  const before = snapshot(first);
  // A corpus larger than the space left.
  const big = path.join(tmp, 'big.jsonl');
  const lines = sampleLines();
  fs.writeFileSync(big, Array.from({ length: 20 }, (_, k) => lines.map((l) => { const o = JSON.parse(l); o.id = `${o.id}-${k}`; return JSON.stringify(o); }).join('\n')).join('\n') + '\n');
  d.fill();
  fs.rmSync(path.join(d.dir, 'filler'));
  const filler = path.join(d.dir, 'filler2');
  fs.writeFileSync(filler, Buffer.alloc(Math.max(0, freeBytes(d.dir) - (200 << 10)))); // leave 200 KiB
  const t0 = Date.now();
  await assert.rejects(
    runTokenize({ corpus: big, outDir: path.join(d.dir, 'second'), config, redisUrl: redis.url, workers: 1, ...quiet }),
    (err) => {
      const e = /** @type {any} */ (err);
      assert.equal(e.code, 'SCDV_SHARD_FAILED', `the shard fails (the worker does not crash): ${e.message}`);
      assert.match(e.message, /ENOSPC|no space/i);
      return true;
    },
  );
  assert.deepEqual(snapshot(first), before, 'the earlier output is unchanged');
  report(t, 'disk-full-tokenize', { failedAfterSeconds: (Date.now() - t0) / 1000 });
});

test('replacing a model when the models folder is read-only: a clear EROFS error, the existing model unchanged', { skip: !canMount && SKIP }, async (t) => {
  const corpus = twoTopicCorpus();
  const config = tinyTrainConfig();
  // modelsDir() is fixed when the pipeline loads: mount the small disk there.
  const d = /** @type {NonNullable<ReturnType<typeof smallDisk>>} */ (disk(16 << 20));
  fs.rmSync(modelsDir(), { recursive: true, force: true });
  fs.symlinkSync(d.dir, modelsDir());
  await runTrain({ corpus, name: 'keep', config, redisUrl: redis.url, ...quiet });
  const before = snapshot(path.join(modelsDir(), 'keep'));
  d.readOnly();
  try {
    await assert.rejects(runTrain({ corpus, name: 'keep', config, redisUrl: redis.url, ...quiet, force: true }), (err) => {
      assert.match(/** @type {Error} */ (err).message, /EROFS|read-only/i);
      return true;
    });
  } finally {
    d.readWrite();
  }
  assert.deepEqual(snapshot(path.join(modelsDir(), 'keep')), before, 'the existing model is unchanged');
  assert.deepEqual(fs.readdirSync(modelsDir()), ['keep'], 'no temporary folder left');
  report(t, 'readonly-models', { ok: true });
});

/** @param {string} dir */
function freeBytes(dir) {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
}
