// `scdv eval --match` end to end on the bundled sample: a tiny model, the titles-as-ads proxy and the bundled ad
// file, the rows and verdict of the CLI's JSON line, models/<name>/eval-match.json, how the proxy is built, and
// bad input.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-eval-match-'));
process.env.SCDV_MODELS_DIR = path.join(tmp, 'models');
process.env.SCDV_DATA_DIR = path.join(tmp, 'data');
const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { runScdv } = await import('../lib/cli.js');
const { ensureSampleModels, sampleTrain } = await import('../lib/tiny-model.js');
const { matchSets, matchListOptions, TITLE_EVERY } = await import('../../pipeline/eval/match-eval.js');
const { loadConfig } = await import('../../pipeline/config.js');

const SAMPLE = 'tests/fixtures/livedoor/sample.jsonl';
const ADS = 'tests/fixtures/ads/sample.jsonl';
const N = fs.readFileSync(SAMPLE, 'utf8').trim().split('\n').length;
const TRAIN_OVERRIDES = { train: sampleTrain(1) };

/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redis;
before(async () => {
  redis = await startPrivateRedis();
  await ensureSampleModels({ names: ['tiny'], redisUrl: redis.url }); // TRAIN_OVERRIDES on the sample, shared with other files
});
after(async () => {
  await redis.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** @param {string[]} args */
const scdv = (args) => runScdv(args, { REDIS_URL: redis.url });
const ROWS = ['scdv', 'scdv_block', 'lexical_block', 'tfidf', 'mlt'];

/** @param {any} j the JSON line @param {number} pages */
function checkRows(j, pages) {
  assert.deepEqual(Object.keys(j), ['verdict', 'pages', 'ads', ...ROWS]);
  assert.equal(j.pages, pages);
  for (const m of ROWS) {
    for (const key of ['p_at_1', 'p_at_10', 'map_at_10']) assert.ok(j[m][key] >= 0 && j[m][key] <= 1, `${m}.${key} = ${j[m][key]}`);
    assert.ok(j[m].queries > 0 && j[m].queries <= pages, `${m}.queries ${j[m].queries}`);
  }
  // the verdict of the product's matching against each baseline, with its interval
  assert.deepEqual(j.verdict.comparisons.map((/** @type {any} */ c) => c.baseline), ['tfidf', 'mlt']);
  for (const c of j.verdict.comparisons) assert.ok(c.low <= c.diff && c.diff <= c.high && ['better', 'tied', 'worse'].includes(c.word), JSON.stringify(c));
  assert.equal(j.verdict.comparisons[0].model, j.scdv.p_at_10);
}

test('scdv eval --match on the titles-as-ads proxy: every third title an ad, the product rows, TF-IDF and more_like_this, eval-match.json', () => {
  // a 144-dim model: keep half of the SCDV dims (the default 2 % would keep 3)
  const r = scdv(['eval', '--match', '--model', 'tiny', '--corpus', SAMPLE, '--keep-fraction', '0.5', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const j = r.last();
  const ads = Math.floor(N / TITLE_EVERY);
  assert.equal(j.ads, ads);
  checkRows(j, N - ads);
  // 9 categories, about a ninth of the ads each: matching on the meaning of titles is far better than chance
  assert.ok(j.scdv.p_at_10 > 0.3 && j.tfidf.p_at_10 > 0.2, JSON.stringify(j));
  assert.match(r.stderr, new RegExp(`^match: model tiny, ${N - ads} pages, ${ads} titles as ads`, 'm'));
  // the ads as the product embeds an ad collection (adEmbed), the pages as articles
  assert.match(r.stderr, /^product default \(hybrid α=0\.05; ads α=0\.5, keep 0\.1\) +\d+\.\d +\d+\.\d/m);
  assert.match(r.stderr, /^SCDV block alone +\d+\.\d/m);
  assert.match(r.stderr, /^lexical block alone +\d+\.\d/m);
  assert.match(r.stderr, /^verdict: (Yes|No|Not clearly): .* on P@10/m);
  const file = JSON.parse(fs.readFileSync(path.join(tmp, 'models', 'tiny', 'eval-match.json'), 'utf8'));
  assert.equal(file.format, 'scdv-eval-match/1');
  assert.deepEqual(file.scdv, j.scdv);
  assert.deepEqual(file.ads, { proxy: 'titles', every: 3, count: ads });
  assert.equal(file.settings.layout.kind, 'hybrid');
  assert.deepEqual([file.settings.ads_embed.hybrid.alpha, file.settings.ads_embed.keepFraction, file.settings.ads_embed.keepCount], [0.5, 0.1, null]);
  assert.equal(file.per_query.hits_at_10.scdv.length, j.scdv.queries);
  assert.ok(!fs.existsSync(path.join(tmp, 'models', 'tiny', 'eval.json')), 'the related lists\' eval.json is not written');
  // pure SCDV (alpha 1): the product row is the SCDV vectors, no block rows; it ranks as the SCDV block of the hybrid
  const pure = scdv(['eval', '--match', '--model', 'tiny', '--corpus', SAMPLE, '--keep-fraction', '0.5', '--alpha', '1', '--json', '--no-baselines']);
  assert.equal(pure.code, 0, pure.stderr);
  const p = pure.last();
  assert.deepEqual(Object.keys(p), ['verdict', 'pages', 'ads', 'scdv']);
  assert.ok(Math.abs(p.scdv.p_at_10 - j.scdv_block.p_at_10) < 0.02, `${p.scdv.p_at_10} vs ${j.scdv_block.p_at_10}`);
});

test('scdv eval --match --ads: the bundled ads against the sample\'s articles, relevant when of the article\'s category', () => {
  const r = scdv(['eval', '--match', '--model', 'tiny', '--corpus', SAMPLE, '--ads', ADS, '--keep-fraction', '0.5', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const j = r.last();
  assert.equal(j.ads, fs.readFileSync(ADS, 'utf8').trim().split('\n').length);
  checkRows(j, N);
  assert.ok(j.scdv.p_at_1 > 0.3, JSON.stringify(j.scdv));
  assert.match(r.stderr, new RegExp(`^match: model tiny, ${N} pages, ${j.ads} ads from .*ads/sample\\.jsonl`, 'm'));
});

test('scdv eval --match --ads-alpha, --ads-keep-fraction: the ads embedded with their own settings, the pages with theirs', () => {
  const base = scdv(['eval', '--match', '--model', 'tiny', '--corpus', SAMPLE, '--keep-fraction', '0.5', '--json', '--no-baselines']).last();
  const r = scdv(['eval', '--match', '--model', 'tiny', '--corpus', SAMPLE, '--keep-fraction', '0.5', '--ads-alpha', '0.9', '--ads-keep-fraction', '1', '--json', '--no-baselines']);
  assert.equal(r.code, 0, r.stderr);
  const j = r.last();
  const file = JSON.parse(fs.readFileSync(path.join(tmp, 'models', 'tiny', 'eval-match.json'), 'utf8'));
  assert.equal(file.settings.embed.hybrid.alpha, 0.05);
  assert.equal(file.settings.ads_embed.hybrid.alpha, 0.9);
  assert.equal(file.settings.ads_embed.keepFraction, 1);
  // the ads' SCDV block weighs √(0.05 · 0.9) instead of 0.05 in each page–ad score: another ranking
  assert.ok(j.scdv.p_at_10 !== base.scdv.p_at_10 || j.scdv.map_at_10 !== base.scdv.map_at_10, 'the ads\' settings change the product row');
  // a pure SCDV ad (alpha 1) is narrower than a hybrid page: refused with both widths
  const pure = scdv(['eval', '--match', '--model', 'tiny', '--corpus', SAMPLE, '--ads-alpha', '1', '--no-baselines']);
  assert.equal(pure.code, 2);
  assert.match(pure.stderr, /the ads' embed settings give vectors 144 wide, the pages' \d+: both must be hybrid/);
  const outside = scdv(['eval', '--model', 'tiny', '--corpus', SAMPLE, '--ads-alpha', '0.5']);
  assert.equal(outside.code, 2);
  assert.match(outside.stderr, /--ads-alpha goes with --match/);
});

test('scdv eval --match --expand-from: the ads expanded (adEmbed.expand) from documents that are not the scored pages; without it, not', () => {
  const lines = fs.readFileSync(SAMPLE, 'utf8').trim().split('\n');
  const pages = path.join(tmp, 'pages-half.jsonl');
  const from = path.join(tmp, 'from-half.jsonl');
  fs.writeFileSync(pages, lines.filter((_, i) => i % 2 === 0).join('\n') + '\n');
  fs.writeFileSync(from, lines.filter((_, i) => i % 2 === 1).join('\n') + '\n');
  const r = scdv(['eval', '--match', '--model', 'tiny', '--corpus', pages, '--expand-from', from, '--keep-fraction', '0.5', '--no-baselines']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout + r.stderr, /^product default \(hybrid α=0\.05; ads α=0\.5, keep 0\.1; expanded m=10, β=1\) +\d+\.\d/m);
  const file = JSON.parse(fs.readFileSync(path.join(tmp, 'models', 'tiny', 'eval-match.json'), 'utf8'));
  const e = file.settings.ads_expand;
  assert.deepEqual([e.neighbours, e.weight, e.from, e.from_documents], [10, 1, from, lines.length - Math.ceil(lines.length / 2)]);
  assert.ok(e.mean_nnz_expanded > e.mean_nnz_own, JSON.stringify(e));
  const plain = scdv(['eval', '--match', '--model', 'tiny', '--corpus', pages, '--keep-fraction', '0.5', '--no-baselines']);
  assert.equal(plain.code, 0, plain.stderr);
  assert.match(plain.stderr, /ads not expanded \(adEmbed\.expand needs pages other than the scored ones/);
  assert.equal(JSON.parse(fs.readFileSync(path.join(tmp, 'models', 'tiny', 'eval-match.json'), 'utf8')).settings.ads_expand, null);
  const both = scdv(['eval', '--match', '--model', 'tiny', '--corpus', pages, '--expand-from', from, '--holdout', '0.5']);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /--holdout expands the ads from its training half: --expand-from does not go with it/);
});

test('the proxy: the title of every third document, pages the others, so that no page meets its own title', () => {
  const docs = Array.from({ length: 7 }, (_, i) => ({ id: `d${i}`, title: `title ${i}`, body: `body ${i}`, label: i % 2 ? 'x' : 'y', line: i + 1 }));
  const { pages, ads, proxy } = matchSets(docs, null, 'c.jsonl');
  assert.equal(proxy, true);
  assert.deepEqual(ads, [{ id: 'title:d2', title: '', body: 'title 2', label: 'y' }, { id: 'title:d5', title: '', body: 'title 5', label: 'x' }]);
  assert.deepEqual(pages.map((d) => d.id), ['d0', 'd1', 'd3', 'd4', 'd6']);
  const titles = new Set(ads.map((a) => a.body));
  for (const p of pages) assert.ok(!titles.has(p.title), `page ${p.id} meets its own title`);
  // a chosen document without a title: an error naming its line, not an empty ad
  docs[5].title = '';
  assert.throws(() => matchSets(docs, null, 'c.jsonl'), (err) => {
    const e = /** @type {any} */ (err);
    assert.equal(e.code, 'SCDV_EVAL_CORPUS_INVALID');
    assert.match(e.message, /c\.jsonl.*1 of them have none \(line 6\).*--ads/);
    return true;
  });
  // the match route's default list: no collapsing unless server.rerank.collapseMatch, no feedback
  assert.equal(matchListOptions(loadConfig().server).duplicateThreshold, null);
  assert.equal(matchListOptions(loadConfig({ overrides: { server: { rerank: { collapseMatch: true } } } }).server).duplicateThreshold, loadConfig().server.rerank.duplicateThreshold);
});

test('scdv eval --match: bad input is a clear error', () => {
  const noMatch = scdv(['eval', '--model', 'tiny', '--corpus', SAMPLE, '--ads', ADS]);
  assert.equal(noMatch.code, 2);
  assert.match(noMatch.stderr, /--ads goes with --match/);
  const withCollection = scdv(['eval', '--match', '--model', 'tiny', '--corpus', SAMPLE, '--collection', 'ads']);
  assert.equal(withCollection.code, 2);
  assert.match(withCollection.stderr, /--collection does not go with --match/);
  // an ad without the label field
  const bad = path.join(tmp, 'bad-ads.jsonl');
  fs.writeFileSync(bad, `${JSON.stringify({ id: 'a1', body: '広告', category: 'sports-watch' })}\n${JSON.stringify({ id: 'a2', body: '広告' })}\n`);
  const r = scdv(['eval', '--match', '--model', 'tiny', '--corpus', SAMPLE, '--ads', bad]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /SCDV_EVAL_CORPUS_INVALID|bad-ads\.jsonl/);
  assert.match(r.stderr, /field "category" \(the label, --label-field\) is missing or empty on 1 of 2 lines \(line 2\)/);
  const holdout = scdv(['eval', '--match', '--model', 'tiny', '--corpus', SAMPLE, '--holdout', '0.9']);
  assert.equal(holdout.code, 2);
  assert.match(holdout.stderr, /--holdout must be a fraction from 0\.05 to 0\.5/);
});
