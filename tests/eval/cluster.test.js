// `scdv eval --cluster`: JMTEB's clustering protocol on a tiny model trained on the livedoor sample — the vectors
// come from the product's embed code (configured, pure SCDV, lexical block), the figures land in the table, the
// JSON line and eval.json, and the choice of clusterer is made on the validation halves.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-eval-cluster-'));
process.env.SCDV_MODELS_DIR = path.join(tmp, 'models');
process.env.SCDV_DATA_DIR = path.join(tmp, 'data');
const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { runScdv } = await import('../lib/cli.js');
const { ensureModels, sampleTrain } = await import('../lib/tiny-model.js');
const { clusterVariants } = await import('../../pipeline/eval/cluster.js');
const { DEFAULT_CONFIG } = await import('../../pipeline/config.js');

const lines = fs.readFileSync('tests/fixtures/livedoor/sample.jsonl', 'utf8').trim().split('\n');
// 126 documents of the sample: the first 14 of each of its 9 categories, the corpus and settings of
// tests/eval/eval-command.test.js, so that the two files share one trained model (tests/lib/tiny-model.js caches it)
const FIXTURE = path.join(tmp, 'fixture.jsonl');
/** @type {Record<string, number>} */
const taken = {};
fs.writeFileSync(FIXTURE, lines.filter((l) => { const c = JSON.parse(l).category; taken[c] = (taken[c] ?? 0) + 1; return taken[c] <= 14; }).join('\n') + '\n');
const N = 126;

/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redis;
before(async () => {
  redis = await startPrivateRedis();
  await ensureModels({ corpus: FIXTURE, models: [{ name: 'tiny', overrides: { train: sampleTrain(1) } }], redisUrl: redis.url });
});
after(async () => {
  await redis.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** @param {string[]} args */
const scdv = (args) => runScdv(args, { REDIS_URL: redis.url });

test('the variants: the configured vectors, pure SCDV (alpha 1) and the lexical block alone (alpha 0)', () => {
  const embed = DEFAULT_CONFIG.embed;
  const v = clusterVariants({ ...embed, hybrid: { ...embed.hybrid, alpha: 0.2 } });
  assert.deepEqual(Object.keys(v), ['hybrid', 'scdv', 'lexical']);
  assert.deepEqual([v.hybrid.hybrid.alpha, v.scdv.hybrid.alpha, v.lexical.hybrid.alpha], [0.2, 1, 0]);
  assert.equal(v.scdv.keepFraction, embed.keepFraction, 'the other embed settings are kept');
  assert.deepEqual(Object.keys(clusterVariants({ ...embed, hybrid: { ...embed.hybrid, alpha: 1 } })), ['scdv', 'lexical']);
});

test('scdv eval --cluster: v-measure per method on the test halves, the clusterer chosen on the validation halves', () => {
  const r = scdv(['eval', '--model', 'tiny', '--corpus', FIXTURE, '--json', '--folds', '0', '--keep-fraction', '0.5',
    '--cluster', '--cluster-seeds', '2']);
  assert.equal(r.code, 0, r.stderr);
  const j = r.last().cluster;
  assert.deepEqual(Object.keys(j), ['hybrid', 'scdv', 'lexical', 'tfidf']);
  const file = JSON.parse(fs.readFileSync(path.join(tmp, 'models', 'tiny', 'eval.json'), 'utf8')).cluster;
  assert.equal(file.protocol, 'jmteb-clustering');
  assert.deepEqual(file.clusterers, ['MiniBatchKMeans', 'AgglomerativeClustering', 'BisectingKMeans', 'Birch']);
  assert.deepEqual(file.seeds, [1, 2]);
  assert.deepEqual(file.alpha, { hybrid: DEFAULT_CONFIG.embed.hybrid.alpha, scdv: 1, lexical: 0 });
  assert.equal(file.documents, N);
  for (const [name, m] of Object.entries(file.methods)) {
    const { seeds, ...summary } = /** @type {Record<string, any>} */ (m);
    assert.deepEqual(j[name], summary, 'the JSON line is eval.json without the per-seed details');
    assert.equal(seeds.length, 2);
    for (const s of seeds) {
      assert.equal(s.k, 9);
      assert.equal(s.validation_documents + s.test_documents, N);
      const best = Math.max(...Object.values(s.validation).map((x) => /** @type {any} */ (x).v_measure));
      assert.equal(s.validation[s.chosen].v_measure, best, `${name}: chosen by validation v-measure`);
      assert.ok(s.test.v_measure >= 0 && s.test.v_measure <= 1);
    }
    const mean = seeds.reduce((/** @type {number} */ a, /** @type {any} */ s) => a + s.test.v_measure, 0) / 2;
    assert.ok(Math.abs(m.v_measure - mean) < 1e-12, `${name}: the mean of the test v-measures`);
  }
  // 9 categories, 63 test documents: chance-level clusters score ~0.2; the real vectors clearly more
  assert.ok(j.tfidf.v_measure > 0.3 && j.hybrid.v_measure > 0.3, JSON.stringify(j));
  // pure SCDV and the hybrid are different vectors, so their figures differ
  assert.notEqual(j.hybrid.v_measure, j.scdv.v_measure);
  assert.match(r.stderr, new RegExp(`clustering \\(JMTEB protocol\\): ${N} documents, k = 9`));
  assert.match(r.stderr, new RegExp(`hybrid \\(α=${DEFAULT_CONFIG.embed.hybrid.alpha}\\)\\s+0\\.\\d{4}`));
});

test('scdv eval --cluster-seeds out of range is a usage error naming the limit', () => {
  const r = scdv(['eval', '--model', 'tiny', '--corpus', FIXTURE, '--cluster', '--cluster-seeds', '0']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /--cluster-seeds must be 1-100/);
});
