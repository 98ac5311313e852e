// The lexical block's own vocabulary (models/<name>/lexicon.txt, embed.hybrid.stopwords 'keep') and its idf power
// (embed.hybrid.idfPower), on a real model trained by `scdv train` on a small corpus whose documents also carry
// stop words (記事, 情報: page-structure and generic families).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { rng } from '../lib/random.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-lexicon-'));
process.env.SCDV_MODELS_DIR = path.join(tmp, 'models');
process.env.SCDV_DATA_DIR = path.join(tmp, 'data');
const { loadConfig } = await import('../../pipeline/config.js');
const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { createEmbedder, modelLayout } = await import('../../pipeline/embed/index.js');
const { ANIMALS, VEHICLES, TWO_TOPIC_TRAIN, ensureModels } = await import('../lib/tiny-model.js');

/** Two-topic documents; the animal ones say 記事 (article), the vehicle ones 情報 (information): stop words. */
/** @param {string} file */
function writeCorpus(file) {
  const r = rng(11);
  const lines = [];
  for (let i = 0; i < 240; i++) {
    const [group, stop] = i % 2 === 0 ? [ANIMALS, '記事'] : [VEHICLES, '情報'];
    lines.push(JSON.stringify({ id: `d${i}`, body: `${stop}。${Array.from({ length: 10 }, () => group[Math.floor(r() * group.length)]).join('と')}。` }));
  }
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redis;
before(async () => {
  redis = await startPrivateRedis();
  const corpus = writeCorpus(path.join(tmp, 'corpus.jsonl'));
  await ensureModels({ corpus, models: [{ name: 'lex', overrides: { train: TWO_TOPIC_TRAIN } }], redisUrl: redis.url });
});
after(async () => { await redis.stop(); fs.rmSync(tmp, { recursive: true, force: true }); });

const embedCfg = (/** @type {Record<string, any>} */ hybrid) => loadConfig({ overrides: { embed: { hybrid } } });
const words = (/** @type {string} */ f) => fs.readFileSync(path.join(tmp, 'models', 'lex', f), 'utf8').split('\n').filter(Boolean).map((l) => l.split('\t'));
const TEXT = '記事。犬と猫と犬と馬。';

test('scdv train writes lexicon.txt: the corpus without the stop lists, idf smoothed as vocab.txt', () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(tmp, 'models', 'lex', 'manifest.json'), 'utf8'));
  assert.ok(manifest.files.includes('lexicon.txt'));
  assert.deepEqual({ ...manifest.lexicon, words: undefined }, { stopwords: 'kept', minCount: 1, words: undefined, documents: 240 });
  const lex = new Map(words('lexicon.txt').map(([w, c, idf]) => [w, { c: Number(c), idf: Number(idf) }]));
  const vocab = new Map(words('vocab.txt').map(([w, c, idf]) => [w, { c: Number(c), idf: Number(idf) }]));
  assert.ok(!vocab.has('記事') && !vocab.has('情報'), 'the model never saw the stop words');
  assert.deepEqual(lex.get('記事'), { c: 120, idf: Number((Math.log(241 / 121) + 1).toPrecision(9)) });
  for (const [w, v] of vocab) assert.ok(Math.abs(/** @type {any} */ (lex.get(w)).idf - v.idf) < 1e-6, `${w}: same idf in both files`);
  assert.equal(lex.size, vocab.size + 2);
});

test('with stopwords keep the lexical block has the stop words, weighted idf^idfPower; the SCDV block is unchanged', async () => {
  const keep = await createEmbedder('lex', embedCfg({ alpha: 0.5, stopwords: 'keep', idfPower: 0.5 }));
  const drop = await createEmbedder('lex', embedCfg({ alpha: 0.5, stopwords: 'drop', idfPower: 0.5 }));
  const lexRows = words('lexicon.txt');
  assert.equal(keep.layout.lexicalWidth, lexRows.length);
  assert.equal(keep.layout.embed.hybrid.stopwords, 'keep');
  assert.equal(drop.layout.lexicalWidth, words('vocab.txt').length);
  // what `scdv index` records and `scdv demo` compares: the embedder's own layout
  assert.deepEqual(modelLayout(keep.model, keep.layout.embed), keep.layout);
  assert.deepEqual(modelLayout(keep.model, embedCfg({ alpha: 0.5, stopwords: 'keep', idfPower: 0.5 }).embed), keep.layout);
  const k = keep.embedText(TEXT);
  const d = drop.embedText(TEXT);
  const w = keep.layout.scdvWidth;
  const scdv = (/** @type {{indices: Uint32Array, values: Float32Array}} */ e) => [...e.indices].map((i, j) => [i, e.values[j]]).filter(([i]) => i < w);
  assert.deepEqual(scdv(k), scdv(d), 'the same SCDV block: stop words have no word-topic vector');
  // the lexical block: 記事, 犬, 猫, 馬 (binary), each idf^0.5, L2-normalised, times √(1 − α)
  const row = (/** @type {string} */ x) => lexRows.findIndex(([y]) => y === x);
  const lexical = new Map([...k.indices].map((i, j) => [i, k.values[j]]).filter(([i]) => i >= w).map(([i, v]) => [lexRows[i - w][0], v]));
  assert.deepEqual([...lexical.keys()].sort(), ['犬', '猫', '馬', '記事'].sort());
  const weights = ['犬', '猫', '馬', '記事'].map((x) => Math.sqrt(Number(lexRows[row(x)][2])));
  const norm = Math.hypot(...weights);
  ['犬', '猫', '馬', '記事'].forEach((x, i) => assert.ok(Math.abs(/** @type {number} */ (lexical.get(x)) - weights[i] / norm * Math.sqrt(0.5)) < 1e-6, x));
  // 'drop': the model's vocabulary, so no dimension for 記事
  assert.equal([...d.indices].filter((i) => i >= w).length, 3);
});

test('a layout recorded before the options (no stopwords, no idfPower) embeds as before: model vocabulary, idf^1', async () => {
  const cfg = embedCfg({ alpha: 0.5 });
  delete (/** @type {Record<string, any>} */ (cfg.embed.hybrid)).stopwords;
  delete (/** @type {Record<string, any>} */ (cfg.embed.hybrid)).idfPower;
  const old = await createEmbedder('lex', cfg);
  assert.equal(old.layout.lexicalWidth, words('vocab.txt').length);
  assert.equal(old.layout.embed.hybrid.stopwords, undefined, 'the recorded layout is not changed');
  const e = old.embedText(TEXT);
  const w = old.layout.scdvWidth;
  const vocab = words('vocab.txt');
  const lexical = [...e.indices].map((i, j) => [i, e.values[j]]).filter(([i]) => i >= w);
  const idf = lexical.map(([i]) => Number(vocab[i - w][2]));
  lexical.forEach(([, v], j) => assert.ok(Math.abs(v - idf[j] / Math.hypot(...idf) * Math.sqrt(0.5)) < 1e-6));
});

test('stopwords keep on a model without lexicon.txt falls back to its vocabulary and records drop; bad values are refused', async () => {
  const dir = path.join(tmp, 'models', 'old');
  fs.cpSync(path.join(tmp, 'models', 'lex'), dir, { recursive: true });
  const manifestFile = path.join(dir, 'manifest.json');
  const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
  fs.writeFileSync(manifestFile, JSON.stringify({ ...manifest, name: 'old', files: manifest.files.filter((/** @type {string} */ f) => f !== 'lexicon.txt') }));
  fs.rmSync(path.join(dir, 'lexicon.txt'));
  const e = await createEmbedder('old', embedCfg({ alpha: 0.5, stopwords: 'keep' }));
  assert.equal(e.layout.embed.hybrid.stopwords, 'drop');
  assert.deepEqual(modelLayout(e.model, embedCfg({ alpha: 0.5, stopwords: 'keep' }).embed), e.layout);
  assert.equal(e.layout.lexicalWidth, words('vocab.txt').length);
  assert.deepEqual(e.tokenizer.tokenize(TEXT).sort(), ['犬', '猫', '犬', '馬'].sort(), 'the trained tokenizer, stop lists on');
  fs.writeFileSync(manifestFile, JSON.stringify({ ...manifest, name: 'old' })); // lists lexicon.txt, which is gone
  await assert.rejects(createEmbedder('old', embedCfg({ alpha: 0.5, stopwords: 'keep' })), (err) => /** @type {any} */ (err).code === 'SCDV_MODEL_CORRUPT' && /lexicon\.txt/.test(/** @type {Error} */ (err).message));
  assert.throws(() => embedCfg({ stopwords: 'some' }), /embed\.hybrid\.stopwords must be keep or drop, got "some"/);
  assert.throws(() => embedCfg({ idfPower: Infinity }), /embed\.hybrid\.idfPower must be a finite number, got Infinity/);
});
