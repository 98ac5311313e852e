// `scdv eval` scores OpenSearch's own more_like_this (the real engine, not the re-implementation) on the same
// tokens: the row appears, is a sane number, agrees with the re-implementation on a small fixture, and leaves no
// index behind. Needs a node: SCDV_TEST_OPENSEARCH_URL, or one started by the harness (tests/lib/opensearch.js).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-mlt-os-'));
process.env.SCDV_MODELS_DIR = path.join(tmp, 'models');
process.env.SCDV_DATA_DIR = path.join(tmp, 'data');
const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { REPO_ROOT } = await import('../../pipeline/paths.js');
const { ensureModels, sampleTrain } = await import('../lib/tiny-model.js');
const { testOpenSearch } = await import('../lib/opensearch.js');

const lines = fs.readFileSync('tests/fixtures/livedoor/sample.jsonl', 'utf8').trim().split('\n');
// 126 documents of the sample: the first 14 of each of its 9 categories (as tests/eval/eval-command.test.js)
const FIXTURE = path.join(tmp, 'fixture.jsonl');
/** @type {Record<string, number>} */
const taken = {};
fs.writeFileSync(FIXTURE, lines.filter((l) => { const c = JSON.parse(l).category; taken[c] = (taken[c] ?? 0) + 1; return taken[c] <= 14; }).join('\n') + '\n');
const N = 126;

/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redis;
/** @type {Awaited<ReturnType<typeof testOpenSearch>> | undefined} */
let node;
let url = '';
let prefix = '';
before(async () => {
  [node, redis] = await Promise.all([testOpenSearch('mlt'), startPrivateRedis()]);
  ({ url, prefix } = node);
  await ensureModels({ corpus: FIXTURE, models: [{ name: 'tiny', overrides: { train: sampleTrain(1) } }], redisUrl: redis.url });
});
after(async () => {
  await redis?.stop();
  await node?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** @param {string[]} args @param {Record<string, string>} [env] */
function scdv(args, env = {}) {
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'pipeline', 'cli.js'), ...args], {
    env: { ...process.env, REDIS_URL: redis.url, SCDV_OPENSEARCH_NODES: url, SCDV_OPENSEARCH_INDEX_PREFIX: prefix, ...env }, encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, last: () => JSON.parse(r.stdout.trim().split('\n').pop() ?? '') };
}

const EVAL = ['eval', '--model', 'tiny', '--corpus', FIXTURE, '--label-field', 'category', '--json', '--folds', '0', '--keep-fraction', '0.5'];

/** Indices of this test's prefix still on the cluster. */
async function leftIndices() {
  const r = await fetch(`${url}/_cat/indices/${prefix}*?format=json`);
  return /** @type {{index: string}[]} */ (await r.json()).map((x) => x.index);
}

test('scdv eval --mlt opensearch: a "more_like_this (OpenSearch 2.19)" row next to the re-implementation, and no index left', async () => {
  const r = scdv([...EVAL, '--mlt', 'opensearch']);
  assert.equal(r.code, 0, r.stderr);
  const j = r.last();
  assert.deepEqual(Object.keys(j), ['verdict', 'scdv', 'tfidf', 'mlt', 'mlt_opensearch']);
  const real = j.mlt_opensearch;
  assert.match(real.engine, /^OpenSearch 2\.19\./);
  assert.match(r.stderr, /^more_like_this \(OpenSearch 2\.19\)\s+\d/m, 'the table row');
  assert.equal(real.queries, N);
  // sane: far above chance (9 categories: ~0.11) and, on the same tokens with the same defaults, close to the
  // re-implementation (which differs only in Lucene's lossy length norms and tie order)
  assert.ok(real.p_at_10 > 0.3 && real.p_at_10 <= 1, JSON.stringify(real));
  assert.ok(Math.abs(real.p_at_10 - j.mlt.p_at_10) < 0.05, `OpenSearch ${real.p_at_10} vs re-implementation ${j.mlt.p_at_10}`);
  assert.ok(real.p_at_1 >= 0 && real.p_at_1 <= 1 && real.map_at_10 > 0 && real.mean_latency_ms > 0);
  // a document without interesting terms gets no hit (others may too: no document matches 30 % of its terms)
  assert.ok(real.queries_without_hits >= j.mlt.queries_without_terms, `${real.queries_without_hits} < ${j.mlt.queries_without_terms}`);
  const file = JSON.parse(fs.readFileSync(path.join(tmp, 'models', 'tiny', 'eval.json'), 'utf8'));
  assert.deepEqual(file.mlt_opensearch, real);
  assert.equal(file.per_query.hits_at_10.mlt_opensearch.length, file.per_query.hits_at_10.mlt.length);
  const report = fs.readFileSync(path.join(tmp, 'models', 'tiny', 'report.html'), 'utf8');
  assert.match(report, /more_like_this \(OpenSearch 2\.19\)/);
  assert.deepEqual(await leftIndices(), [], 'the temporary index is deleted');
});

test('without --mlt the row follows store.backend: native -> none; --mlt python -> none even on opensearch', () => {
  const native = scdv(EVAL);
  assert.equal(native.code, 0, native.stderr);
  assert.equal(native.last().mlt_opensearch, undefined);
  const auto = scdv(EVAL, { SCDV_STORE_BACKEND: 'opensearch' });
  assert.equal(auto.code, 0, auto.stderr);
  assert.ok(auto.last().mlt_opensearch.p_at_10 > 0.3);
  const python = scdv([...EVAL, '--mlt', 'python'], { SCDV_STORE_BACKEND: 'opensearch' });
  assert.equal(python.code, 0, python.stderr);
  assert.equal(python.last().mlt_opensearch, undefined);
});

test('scdv eval --match --mlt opensearch: the ads (titles) are the index, each page its like text; close to the re-implementation', async () => {
  const r = scdv(['eval', '--match', '--model', 'tiny', '--corpus', FIXTURE, '--json', '--keep-fraction', '0.5', '--mlt', 'opensearch']);
  assert.equal(r.code, 0, r.stderr);
  const j = r.last();
  assert.deepEqual(Object.keys(j), ['verdict', 'pages', 'ads', 'scdv', 'scdv_block', 'lexical_block', 'tfidf', 'mlt', 'mlt_opensearch']);
  const real = j.mlt_opensearch;
  assert.match(real.engine, /^OpenSearch 2\.19\./);
  assert.match(r.stderr, /^more_like_this \(OpenSearch 2\.19\)\s+\d/m, 'the table row');
  assert.equal(real.queries, j.mlt.queries);
  // the same defaults on the same tokens: the engine and the re-implementation pick the same terms (by the ads'
  // document frequencies) and differ only in Lucene's lossy length norms and tie order
  assert.ok(Math.abs(real.p_at_10 - j.mlt.p_at_10) < 0.05, `OpenSearch ${real.p_at_10} vs re-implementation ${j.mlt.p_at_10}`);
  assert.ok(real.queries_without_hits >= j.mlt.queries_without_terms, `${real.queries_without_hits} < ${j.mlt.queries_without_terms}`);
  assert.deepEqual(j.verdict.comparisons.map((/** @type {any} */ c) => c.baseline), ['tfidf', 'mlt', 'mlt_opensearch']);
  assert.deepEqual(await leftIndices(), [], 'the temporary index is deleted');
});
