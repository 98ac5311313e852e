// tokenizer.lang 'en' (`scdv train --lang en`, `scdv eval --lang en`): the regex tokeniser, and a tiny English model
// trained and evaluated end to end on a hand-written fixture (tests/fixtures/english/).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-eval-en-'));
process.env.SCDV_MODELS_DIR = path.join(tmp, 'models');
process.env.SCDV_DATA_DIR = path.join(tmp, 'data');
const { loadConfig } = await import('../../pipeline/config.js');
const { createTokenizer } = await import('../../pipeline/tokenizer/index.js');
const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { REPO_ROOT } = await import('../../pipeline/paths.js');
const { ensureModels } = await import('../lib/tiny-model.js');

const FIXTURE = path.join(REPO_ROOT, 'tests', 'fixtures', 'english', 'sample.jsonl');

/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redis;
before(async () => {
  redis = await startPrivateRedis();
  // English and four topics: its own settings (not tiny-model.js's sampleTrain, made for the Japanese sample).
  const overrides = { tokenizer: { lang: 'en' }, train: { word2vec: { vector_size: 16, epochs: 5, min_count: 2, workers: 2 }, gmm: { n_components: 4 } } };
  await ensureModels({ corpus: FIXTURE, models: [{ name: 'en-tiny', overrides }], redisUrl: redis.url });
});
after(async () => {
  await redis.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('the English tokeniser: NFKC, lower case, words, apostrophes joined, stop words and digits dropped', async () => {
  const t = await createTokenizer(loadConfig({ overrides: { tokenizer: { lang: 'en', stopwords: { families: null, extra: ['chef'] } } } }).tokenizer);
  assert.deepEqual(t.tokenize("The Chef's KNIFE doesn't cut 42 ｔｏｍａｔｏｅｓ, a café-style dish!"), ['chefs', 'knife', 'cut', 'tomatoes', 'café', 'style', 'dish']);
  assert.deepEqual(await t.tokenizeBatch(['Rain and wind', '']), ['rain wind', '']);
  assert.equal(t.describe().dictionary.name, 'english-regex');
});

test('scdv eval --lang en on an English model: the same metrics and baselines; a Japanese model is refused', () => {
  const run = (/** @type {string[]} */ args) => spawnSync(process.execPath, [path.join(REPO_ROOT, 'pipeline', 'cli.js'), ...args], { encoding: 'utf8' });
  const manifest = JSON.parse(fs.readFileSync(path.join(tmp, 'models', 'en-tiny', 'manifest.json'), 'utf8'));
  assert.equal(manifest.tokenizer.config.lang, 'en');
  assert.equal(manifest.tokenizer.dictionary.name, 'english-regex');
  const r = run(['eval', '--model', 'en-tiny', '--corpus', FIXTURE, '--lang', 'en', '--json', '--folds', '3', '--keep-fraction', '0.5']);
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout.trim().split('\n').pop() ?? '');
  assert.equal(j.scdv.queries, 48);
  // four well separated topics: the lexical baseline and the hybrid vectors both find them
  assert.ok(j.tfidf.p_at_10 > 0.6 && j.scdv.p_at_10 > 0.6, JSON.stringify(j));
  const wrong = run(['eval', '--model', 'en-tiny', '--corpus', FIXTURE, '--lang', 'ja']);
  assert.equal(wrong.status, 2);
  assert.match(wrong.stderr, /model en-tiny was trained for "en" text/);
});
