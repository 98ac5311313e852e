// `scdv eval` end to end on a small fixture: a tiny model trained on the bundled sample, the CLI's JSON line,
// models/<name>/eval.json, the hybrid layout through `scdv index` and the store, --classify, and bad input.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-eval-'));
process.env.SCDV_MODELS_DIR = path.join(tmp, 'models');
process.env.SCDV_DATA_DIR = path.join(tmp, 'data');
const { loadConfig } = await import('../../pipeline/config.js');
const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { runIndex } = await import('../../pipeline/stages/indexing.js');
const { runScdv } = await import('../lib/cli.js');
const { ensureModels, sampleTrain } = await import('../lib/tiny-model.js');

const lines = fs.readFileSync('tests/fixtures/livedoor/sample.jsonl', 'utf8').trim().split('\n');
// 126 documents of the sample: the first 14 of each of its 9 categories
const FIXTURE = path.join(tmp, 'fixture.jsonl');
/** @type {Record<string, number>} */
const taken = {};
fs.writeFileSync(FIXTURE, lines.filter((l) => { const c = JSON.parse(l).category; taken[c] = (taken[c] ?? 0) + 1; return taken[c] <= 14; }).join('\n') + '\n');
const N = 126;
const TRAIN_OVERRIDES = { train: sampleTrain(1) }; // 6 clusters of 24 dims: a 144-dim model
const config = (/** @type {Record<string, any>} */ embed = {}) => loadConfig({ overrides: { ...TRAIN_OVERRIDES, embed, index: { shardSize: 60 } } });

/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redis;
before(async () => {
  redis = await startPrivateRedis();
  await ensureModels({ corpus: FIXTURE, models: [{ name: 'tiny', overrides: TRAIN_OVERRIDES }], redisUrl: redis.url });
});
after(async () => {
  await redis.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** @param {string[]} args */
const scdv = (args) => runScdv(args, { REDIS_URL: redis.url });

const METRICS = ['p_at_1', 'p_at_10', 'map_at_10', 'mean_latency_ms', 'median_latency_ms'];

test('scdv eval --json: metrics of SCDV, TF-IDF and more_like_this on the last line, and models/<name>/eval.json', () => {
  // a 144-dim model: keep half of the dims (the default 2 % would keep 3)
  const r = scdv(['eval', '--model', 'tiny', '--corpus', FIXTURE, '--label-field', 'category', '--json', '--folds', '3', '--keep-fraction', '0.5']);
  assert.equal(r.code, 0, r.stderr);
  const j = r.last();
  assert.deepEqual(Object.keys(j), ['verdict', 'scdv', 'tfidf', 'mlt']);
  // the verdict, in the terminal and in the JSON: better / tied / worse against each baseline, with its interval,
  // and that the documents scored are the ones the model was trained on
  assert.ok(['better', 'tied', 'worse'].includes(j.verdict.answer), JSON.stringify(j.verdict));
  assert.deepEqual(j.verdict.comparisons.map((/** @type {any} */ c) => c.baseline), ['tfidf', 'mlt']);
  for (const c of j.verdict.comparisons) assert.ok(c.low <= c.diff && c.diff <= c.high && ['better', 'tied', 'worse'].includes(c.word), JSON.stringify(c));
  assert.equal(j.verdict.scored_on, 'training');
  assert.match(r.stderr, /^verdict: (Yes|No|Not clearly): .* on P@10/m);
  assert.match(r.stderr, /^ {2}(better|tied|worse) +vs TF-IDF: P@10 \d+\.\d vs \d+\.\d %, [+−±]\d+\.\d points \(95 % interval [+−±]\d+\.\d to [+−±]\d+\.\d\)$/m);
  assert.match(r.stderr, new RegExp(`scored the ${N} documents the model was trained on .*--holdout 0\\.2`));
  for (const m of ['scdv', 'tfidf', 'mlt']) {
    for (const key of METRICS) assert.ok(j[m][key] >= 0 && (key.includes('latency') || j[m][key] <= 1), `${m}.${key} = ${j[m][key]}`);
    assert.equal(j[m].queries, N);
  }
  assert.ok(j.scdv.accuracy > 0 && j.tfidf.accuracy > 0 && j.mlt.accuracy === undefined);
  // a tiny model is still far better than chance (9 categories: ~0.11)
  assert.ok(j.scdv.p_at_10 > 0.2 && j.tfidf.p_at_10 > 0.3, JSON.stringify(j));
  // the lexical block's vocabulary: the model's lexicon (its words with the stop words, embed.hybrid.stopwords keep)
  const vocab = fs.readFileSync(path.join(tmp, 'models', 'tiny', 'lexicon.txt'), 'utf8').trim().split('\n').length;
  assert.equal(j.scdv.width, 6 * 24 + vocab, 'the default layout is the hybrid (embed.hybrid.alpha 0.05)');
  const file = JSON.parse(fs.readFileSync(path.join(tmp, 'models', 'tiny', 'eval.json'), 'utf8'));
  assert.equal(file.format, 'scdv-eval/1');
  assert.deepEqual(file.scdv, j.scdv);
  assert.equal(file.corpus.documents, N);
  assert.equal(file.settings.k, 10);
  assert.equal(file.settings.layout.kind, 'hybrid');
  assert.equal(file.settings.embed.hybrid.alpha, 0.05);
  assert.equal(file.load_average.length, 3);
  assert.match(file.date, /^\d{4}-\d\d-\d\dT/);
  assert.match(r.stderr, /method\s+P@1\s+P@10/);
});

test('scdv eval --holdout: a model of the same settings trained on the rest, scored on documents it never saw', () => {
  const r = scdv(['eval', '--model', 'tiny', '--corpus', FIXTURE, '--holdout', '0.3', '--json', '--folds', '0', '--keep-fraction', '0.5']);
  assert.equal(r.code, 0, r.stderr);
  const j = r.last();
  assert.equal(j.verdict.scored_on, 'held-out');
  const file = JSON.parse(fs.readFileSync(path.join(tmp, 'models', 'tiny-holdout', 'eval.json'), 'utf8'));
  const { train_documents: trainDocs, test_documents: testDocs } = file.holdout;
  assert.equal(file.holdout.of, 'tiny');
  assert.ok(testDocs > 0.15 * N && testDocs < 0.45 * N && trainDocs + testDocs === N, JSON.stringify(file.holdout));
  assert.equal(file.corpus.training, false);
  const manifest = JSON.parse(fs.readFileSync(path.join(tmp, 'models', 'tiny-holdout', 'manifest.json'), 'utf8'));
  assert.deepEqual(manifest.hyperparameters, JSON.parse(fs.readFileSync(path.join(tmp, 'models', 'tiny', 'manifest.json'), 'utf8')).hyperparameters);
  // no held-out id among the documents it was trained on
  const trainedIds = new Set(fs.readFileSync(path.join(tmp, 'data', 'holdout', 'tiny', 'train.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).id));
  for (const l of fs.readFileSync(path.join(tmp, 'data', 'holdout', 'tiny', 'test.jsonl'), 'utf8').trim().split('\n')) assert.ok(!trainedIds.has(JSON.parse(l).id));
  assert.match(r.stderr, new RegExp(`scored ${testDocs} held-out documents, which model tiny-holdout .* never saw`));
  const bad = scdv(['eval', '--model', 'tiny', '--corpus', FIXTURE, '--holdout', '0.9']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--holdout must be a fraction from 0.05 to 0.5, got "0.9"/);
});

test('the hybrid layout: indexed through the store, recorded in the model, found by eval --collection', async () => {
  const hybrid = config({ hybrid: { alpha: 0.5 } });
  const s = await runIndex({ corpus: FIXTURE, model: 'tiny', collection: 'mixed', config: hybrid, redisUrl: redis.url, quiet: true, log: () => {} });
  assert.equal(s.documents, N);
  const indexed = JSON.parse(fs.readFileSync(path.join(tmp, 'models', 'tiny', 'indexed.json'), 'utf8'));
  const vocab = fs.readFileSync(path.join(tmp, 'models', 'tiny', 'lexicon.txt'), 'utf8').trim().split('\n').length;
  assert.equal(indexed.mixed.layout.kind, 'hybrid');
  assert.equal(indexed.mixed.layout.width, 6 * 24 + vocab);
  assert.equal(indexed.mixed.layout.embed.hybrid.alpha, 0.5);

  const ok = scdv(['eval', '--model', 'tiny', '--corpus', FIXTURE, '--collection', 'mixed', '--alpha', '0.5', '--json', '--no-baselines']);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.last().scdv.width, 6 * 24 + vocab);
  // the same layout computed afresh in a temporary collection gives the same neighbours, hence metrics
  const fresh = scdv(['eval', '--model', 'tiny', '--corpus', FIXTURE, '--alpha', '0.5', '--json', '--no-baselines', '--search-mode', 'exact']);
  const viaIndex = scdv(['eval', '--model', 'tiny', '--corpus', FIXTURE, '--collection', 'mixed', '--alpha', '0.5', '--json', '--no-baselines', '--search-mode', 'exact']);
  assert.equal(fresh.last().scdv.p_at_10, viaIndex.last().scdv.p_at_10);

  const wrong = scdv(['eval', '--model', 'tiny', '--corpus', FIXTURE, '--collection', 'mixed', '--alpha', '0.7']);
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /collection "mixed" was indexed with another vector layout \(.*alpha 0.5 vs 0.7/);
  // adding documents of another layout to the collection is refused before anything is written
  await assert.rejects(
    runIndex({ corpus: FIXTURE, model: 'tiny', collection: 'mixed', config: config({ hybrid: { alpha: 0.7 } }), redisUrl: redis.url, quiet: true, log: () => {} }),
    /SCDV_EMBED_LAYOUT_MISMATCH|another vector layout/,
  );
});

test('scdv eval --classify: LinearSVC test accuracy on the vectors and on TF-IDF', () => {
  const all = fs.readFileSync(FIXTURE, 'utf8').trim().split('\n');
  const train = path.join(tmp, 'train.jsonl');
  const testFile = path.join(tmp, 'test.jsonl');
  fs.writeFileSync(train, all.filter((_, i) => i % 4 !== 0).join('\n') + '\n');
  fs.writeFileSync(testFile, all.filter((_, i) => i % 4 === 0).join('\n') + '\n');
  const r = scdv(['eval', '--classify', '--model', 'tiny', '--train', train, '--test', testFile, '--label-field', 'category', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const j = r.last();
  assert.deepEqual(Object.keys(j), ['scdv', 'tfidf', 'scdv_vs_tfidf']);
  for (const m of ['scdv', 'tfidf']) {
    assert.ok(j[m].accuracy > 0.2 && j[m].accuracy <= 1, JSON.stringify(j));
    // a bootstrap interval over the test documents around the accuracy
    assert.ok(j[m].interval.low <= j[m].accuracy && j[m].accuracy <= j[m].interval.high, JSON.stringify(j[m]));
  }
  const d = j.scdv_vs_tfidf;
  assert.ok(Math.abs(d.diff - (j.scdv.accuracy - j.tfidf.accuracy)) < 1e-9 && d.low <= d.diff && d.diff <= d.high, JSON.stringify(d));
  assert.ok(['better', 'tied', 'worse'].includes(d.word));
  assert.match(r.stderr, /scdv − tfidf [+−]\d+\.\d\d points \[.*\] \(paired\): (better|tied|worse)/);
  const file = JSON.parse(fs.readFileSync(path.join(tmp, 'models', 'tiny', 'eval-classify.json'), 'utf8'));
  assert.equal(file.per_document.scdv.length, file.test_documents);
  assert.equal(file.per_document.scdv.filter((/** @type {number} */ c) => c === 1).length / file.test_documents, file.scdv.accuracy);
  // the classifier's vectors: eval.classify's alpha, keepFraction and lexical damping, not the served embed's
  const { eval: { classify }, embed } = loadConfig();
  assert.notEqual(classify.keepFraction, embed.keepFraction);
  assert.notEqual(classify.damping, embed.hybrid.damping);
  // and the lexical block the classifier was measured with (the model's vocabulary, idf^1), not the served one
  assert.notEqual(classify.stopwords, embed.hybrid.stopwords);
  assert.notEqual(classify.idfPower, embed.hybrid.idfPower);
  assert.deepEqual([file.settings.embed.hybrid.alpha, file.settings.embed.keepFraction, file.settings.embed.hybrid.damping, file.settings.embed.hybrid.stopwords, file.settings.embed.hybrid.idfPower],
    [classify.alpha, classify.keepFraction, classify.damping, classify.stopwords, classify.idfPower]);
  assert.deepEqual(file.settings.classify, classify);
  assert.match(r.stderr, new RegExp(`scdv +accuracy .*alpha ${classify.alpha}, keepFraction ${classify.keepFraction}\\)`));
  // --alpha / --keep-fraction with --classify set those, and are checked like any config value
  const half = scdv(['eval', '--classify', '--model', 'tiny', '--train', train, '--test', testFile, '--alpha', '0.5', '--keep-fraction', '0.5', '--json']);
  assert.equal(half.code, 0, half.stderr);
  const set = JSON.parse(fs.readFileSync(path.join(tmp, 'models', 'tiny', 'eval-classify.json'), 'utf8')).settings.embed;
  assert.deepEqual([set.hybrid.alpha, set.keepFraction], [0.5, 0.5]);
  const bad = scdv(['eval', '--classify', '--model', 'tiny', '--train', train, '--test', testFile, '--alpha', '2']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /eval\.classify\.alpha must be a number from 0 to 1, got 2/);
});

test('bad input: a line without the label, invalid JSON, a missing model, a bad flag', () => {
  const bad = path.join(tmp, 'bad.jsonl');
  fs.writeFileSync(bad, [lines[0], JSON.stringify({ id: 'x1', title: 't', body: '本文です' }), '{"id": ', lines[1]].join('\n') + '\n');
  const r = scdv(['eval', '--model', 'tiny', '--corpus', bad, '--label-field', 'category']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /eval corpus .*bad\.jsonl: 2 bad line\(s\).*field "category" \(the label, --label-field\) is missing or empty on 1 of 3 lines \(line 2\); the lines have the fields .*; line 3: invalid JSON/);
  // a label field no line has: said once, with the fields the lines do have
  const other = scdv(['eval', '--model', 'tiny', '--corpus', FIXTURE, '--label-field', 'nope']);
  assert.match(other.stderr, new RegExp(`field "nope" \\(the label, --label-field\\) is missing or empty on ${N} of ${N} lines \\(lines 1, 2, 3, 4, 5, …\\); the lines have the fields body, category, .*id, title`));
  assert.equal(other.stderr.split('field "nope"').length, 2, other.stderr);
  assert.match(scdv(['eval', '--model', 'absent', '--corpus', FIXTURE]).stderr, /model "absent" not found/);
  // the model is looked up before the corpus is read
  assert.match(scdv(['eval', '--model', 'absent', '--corpus', path.join(tmp, 'no-such.jsonl')]).stderr, /model "absent" not found/);
  const usage = scdv(['eval', '--model', 'tiny']);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /needs --model NAME and --corpus FILE/);
  assert.match(scdv(['eval', '--model', 'tiny', '--corpus', FIXTURE, '--alpha', '2']).stderr, /embed\.hybrid\.alpha must be a number from 0 to 1, got 2/);
});
