// End to end on small real models trained from the bundled sample (tests/server/helpers.js): training writes
// analysis.json and report.html; the report renders in headless Chromium with every chart drawn; the eval
// table and its verdict follow eval.json and fit their card; `scdv eval` refreshes the report; `scdv inspect` and
// `scdv explain` decompose stored documents exactly.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { launchChromium, screenshotDir } from '../lib/browser.js';

const h = await import('../server/helpers.js');
h.usePureScdvLayout(); // explain decomposes the SCDV block word by word
const { REPO_ROOT, SAMPLE_CORPUS, modelsDir } = await import('../../pipeline/paths.js');
const { loadModel } = await import('../../pipeline/model/load.js');
const { writeReport } = await import('../../pipeline/report/index.js');
const { recordIndexed, forgetIndexed } = await import('../../pipeline/serving/index.js');
const { vectorLayout } = await import('../../pipeline/embed/layout.js');
const { loadConfig } = await import('../../pipeline/config.js');

const CLI = path.join(REPO_ROOT, 'pipeline', 'cli.js');
const modelDir = () => path.join(modelsDir(), h.MODEL_A);
/** The embed settings the test collections were indexed with. */
let configFile = '';

before(async () => {
  await h.setup();
  configFile = path.join(h.tmp, 'inspect-config.json');
  fs.writeFileSync(configFile, JSON.stringify({ embed: { keepCount: 36, hybrid: { alpha: 1 } } }));
});
after(async () => { await h.teardown(); });

/** @param {string[]} args */
function cli(args) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: process.env, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

// Per-query hits among the first 10 (eval.json's per_query): SCDV 2 above TF-IDF on every query (better),
// more_like_this 1 above or below SCDV in turn (tied).
const TFIDF_HITS = Array.from({ length: 100 }, (_, i) => (i * 7) % 9);
const SCDV_HITS = TFIDF_HITS.map((h) => h + 1 + (h % 2));
const MLT_HITS = SCDV_HITS.map((h, i) => h + (i % 2 ? 1 : -1));
const p10 = (/** @type {number[]} */ hits) => hits.reduce((a, b) => a + b, 0) / hits.length / 10;
const EVAL = {
  scdv: { p_at_1: 0.61, p_at_10: p10(SCDV_HITS), map_at_10: 0.4123, median_latency_ms: 0.98, queries: 100 },
  tfidf: { p_at_1: 0.55, p_at_10: p10(TFIDF_HITS), map_at_10: 0.37, median_latency_ms: 0.47 },
  mlt: { p_at_1: 0.5, p_at_10: p10(MLT_HITS), map_at_10: 0.35 },
  classifier: { accuracy: 0.87 },
  corpus: { path: '/some/where/a-rather-long-corpus-file-name.jsonl', documents: 100, labels: { a: 50, b: 50 } },
  settings: { split: 'dev', k: 10, embed: { keepFraction: 0.02, damping: 'none', hybrid: { alpha: 0.2, maxTerms: null }, note: 'x'.repeat(400) },
    layout: { kind: 'hybrid' }, note: '<img src=x onerror="document.title=\'pwned\'">' },
  per_query: { hits_at_10: { scdv: SCDV_HITS, tfidf: TFIDF_HITS, mlt: MLT_HITS } },
  date: '2026-11-21T12:00:00Z',
};

/**
 * Every table of #eval against the card it sits in (details opened), at the page's current width.
 * @param {import('playwright-core').Page} page
 */
async function evalTablesFit(page) {
  await page.$$eval('#eval details', (ds) => ds.forEach((d) => { /** @type {any} */ (d).open = true; }));
  return page.$$eval('#eval table', (ts) => ts.map((t) => {
    const card = /** @type {any} */ (t.closest('section'));
    const style = /** @type {any} */ (globalThis).getComputedStyle(card);
    const inner = card.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return { className: t.className, scrollWidth: t.scrollWidth, inner, cardScroll: card.scrollWidth, cardClient: card.clientWidth };
  }));
}

test('scdv train leaves analysis.json and report.html in the model folder', () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(modelDir(), 'manifest.json'), 'utf8'));
  assert.ok(manifest.files.includes('analysis.json'), manifest.files.join(', '));
  const a = JSON.parse(fs.readFileSync(path.join(modelDir(), 'analysis.json'), 'utf8'));
  assert.equal(a.n_clusters, 6);
  assert.ok(a.corpus && a.corpus.documents === 306, 'coherence was computed over the training corpus');
  assert.ok(a.clusters.every((/** @type {any} */ c) => c.coherence === null || (c.coherence >= -1 && c.coherence <= 1)));
  assert.ok(fs.statSync(path.join(modelDir(), 'report.html')).size > 10_000);
});

test('report.html renders offline in chromium: every chart drawn, eval table from eval.json, text escaped', async () => {
  const model = loadModel(h.MODEL_A);
  model.wordTopics.close();
  fs.writeFileSync(path.join(model.dir, 'eval.json'), JSON.stringify(EVAL));
  const file = await writeReport(model);
  const html = fs.readFileSync(file, 'utf8');
  assert.doesNotMatch(html, /<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)/, 'no script, no remote resource');

  const shots = screenshotDir();
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    /** @type {string[]} */
    const requests = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(`file://${file}`);
    assert.deepEqual(requests, [`file://${file}`], 'the page loads nothing else');
    const charts = await page.$$eval('svg.chart', (svgs) => svgs.map((s) => {
      const box = s.getBoundingClientRect();
      const marks = [...s.querySelectorAll('rect, circle, polyline')].filter((m) => {
        const b = m.getBoundingClientRect();
        return b.width > 0 || b.height > 0;
      });
      return { label: s.getAttribute('aria-label'), width: box.width, height: box.height, marks: marks.length };
    }));
    assert.equal(charts.length, 7, charts.map((c) => c.label).join(', '));
    for (const c of charts) {
      assert.ok(c.width > 100 && c.height > 100 && c.marks > 2, `chart "${c.label}" is drawn: ${JSON.stringify(c)}`);
    }
    const a = JSON.parse(fs.readFileSync(path.join(model.dir, 'analysis.json'), 'utf8'));
    assert.equal(await page.locator('#map circle').count(), a.map.words.length);
    assert.match(await page.locator('#map circle >> nth=0').locator('title').textContent() ?? '', /— cluster \d+/);
    assert.equal(await page.locator('#clusters tbody tr').count(), 6);
    // one bar per stage, and one for the time outside the stage timers
    assert.deepEqual(await page.locator('#timings svg > g:not(.axis):not(.legend) > text.lbl').allTextContents(), ['tokenize', 'word2vec', 'idf', 'gmm', 'topics', 'other']);
    // the eval table: one row per method (corpus and settings are not methods), human names, percentages
    const heads = await page.locator('#eval table.eval thead th').allTextContents();
    assert.deepEqual(heads, ['method', 'P@1', 'P@10', 'MAP@10', 'classifier accuracy', 'median search']);
    const evalRows = await page.locator('#eval table.eval tbody tr').allTextContents();
    assert.equal(evalRows.length, 4, evalRows.join(' | '));
    assert.equal(evalRows[0], `SCDV hybrid (α 0.2)61.0 %${(100 * EVAL.scdv.p_at_10).toFixed(1)} %41.2 %–0.98 ms`);
    assert.match(evalRows[1], /^TF-IDF55\.0 %/);
    assert.match(evalRows[2], /^more_like_this50\.0 %/);
    assert.match(evalRows[3], /^classifier–+87\.0 %–$/);
    // the verdict: SCDV better than TF-IDF, tied with more_like_this, in words
    const verdict = await page.locator('#verdict tbody tr').allTextContents();
    assert.equal(verdict.length, 2);
    assert.match(verdict[0], /^TF-IDF.*%\+\d+\.\d.*better$/);
    assert.match(verdict[1], /^more_like_this.*tied$/);
    assert.match(await page.locator('#verdict .headline').textContent() ?? '', /^Not clearly: tied with more_like_this, better than TF-IDF on P@10/);
    // every table fits its card, also in a narrow window
    for (const width of [1280, 640]) {
      await page.setViewportSize({ width, height: 900 });
      const fits = await evalTablesFit(page);
      assert.equal(fits.length, 3, 'verdict, eval and settings tables');
      for (const f of fits) assert.ok(f.scrollWidth <= f.inner && f.cardScroll <= f.cardClient, `${width} px: ${JSON.stringify(f)}`);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    assert.equal(await page.locator('#no-eval').count(), 0);
    assert.equal(await page.locator('img').count(), 0, 'text from eval.json is escaped, not markup');
    assert.notEqual(await page.title(), 'pwned');
    await page.screenshot({ path: path.join(shots, 'report.png'), fullPage: true });

    fs.rmSync(path.join(model.dir, 'eval.json'));
    await writeReport(model);
    await page.goto(`file://${file}`);
    assert.match(await page.locator('#eval').textContent() ?? '', /no evaluation yet — run scdv eval/);
  } finally {
    await browser.close();
  }
});

test('scdv eval refreshes report.html: the evaluation table and a verdict that agrees with its interval', async () => {
  const file = path.join(modelDir(), 'report.html');
  fs.rmSync(path.join(modelDir(), 'eval.json'), { force: true });
  const model = loadModel(h.MODEL_A);
  model.wordTopics.close();
  await writeReport(model);
  assert.match(fs.readFileSync(file, 'utf8'), /id="no-eval"/);

  const r = spawnSync(process.execPath, [CLI, 'eval', '--model', h.MODEL_A, '--corpus', SAMPLE_CORPUS, '--folds', '0', '--config', configFile],
    { encoding: 'utf8', env: process.env, timeout: 300_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /eval: report .*report\.html/);
  const ev = JSON.parse(fs.readFileSync(path.join(modelDir(), 'eval.json'), 'utf8'));
  for (const m of ['scdv', 'tfidf', 'mlt']) {
    const hits = ev.per_query.hits_at_10[m];
    assert.equal(hits.length, ev.scdv.queries, `${m}: one figure per scored query`);
    assert.ok(Math.abs(hits.reduce((/** @type {number} */ a, /** @type {number} */ b) => a + b, 0) / 10 / hits.length - ev[m].p_at_10) < 1e-9);
  }

  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`file://${file}`);
    assert.equal(await page.locator('#no-eval').count(), 0, 'the report was rewritten after the evaluation');
    const rows = await page.locator('#eval table.eval tbody tr').allTextContents();
    // --config sets the hybrid's α to 1: the pure SCDV layout
    assert.deepEqual(rows.map((t) => t.replace(/\d.*$/, '')), ['SCDV', 'TF-IDF', 'more_like_this']);
    assert.ok(rows.every((t) => / %/.test(t)), rows.join(' | '));
    const cells = await page.$$eval('#verdict tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
    assert.deepEqual(cells.map((c) => c[0]), ['TF-IDF', 'more_like_this']);
    const num = (/** @type {string} */ s) => Number(s.replace('−', '-').replace('±', ''));
    for (const [, , , interval, word] of cells) {
      const [low, high] = interval.split(' to ').map(num);
      assert.ok(low <= high, interval);
      assert.equal(word, low > 0 ? 'better' : high < 0 ? 'worse' : 'tied', `${word} for the interval ${interval}`);
    }
    for (const f of await evalTablesFit(page)) assert.ok(f.scrollWidth <= f.inner, JSON.stringify(f));
  } finally {
    await browser.close();
  }
});

test('scdv inspect clusters lists every cluster with flags and coherence', () => {
  const r = cli(['inspect', 'clusters', '--model', h.MODEL_A, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.clusters.length, 6);
  assert.deepEqual(out.clusters.map((/** @type {any} */ c) => c.cluster), [0, 1, 2, 3, 4, 5]);
  const vocabulary = new Set();
  for (const c of out.clusters) {
    assert.ok(Array.isArray(c.flags) && c.topWords.length === 10 && Number.isInteger(c.size) && c.size >= 0);
    // Top words are distinct, ranked by P(k|w)·idf, and each score is that product.
    assert.equal(new Set(c.topWords.map((/** @type {any} */ w) => w.word)).size, 10);
    for (let i = 0; i < c.topWords.length; i++) {
      const w = c.topWords[i];
      // (each figure is rounded to 5 decimals)
      assert.ok(Math.abs(w.score - w.p * w.idf) <= 5e-6 * (w.idf + 1), `cluster ${c.cluster} ${w.word}: score ${w.score} != p·idf`);
      if (i) assert.ok(c.topWords[i - 1].score >= w.score, `cluster ${c.cluster}: top words out of order`);
      vocabulary.add(w.word);
    }
    if (c.coherence != null) assert.ok(c.coherence >= -1 && c.coherence <= 1, `coherence ${c.coherence} outside NPMI's range`);
    // A flag is raised exactly when its rule holds.
    assert.equal(c.flags.includes('empty'), c.size === 0);
  }
  // Every word belongs to one most probable cluster: the sizes add up to the vocabulary the model keeps.
  const model = loadModel(h.MODEL_A);
  const vocabSize = model.wordTopics.nWords;
  model.wordTopics.close();
  assert.equal(out.clusters.reduce((/** @type {number} */ n, /** @type {any} */ c) => n + c.size, 0), vocabSize);
  const text = cli(['inspect', 'clusters', '--model', h.MODEL_A, '--sort', 'coherence']);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /top words by P\(k\|w\)·idf/);
  // --sort coherence lists the least coherent cluster first.
  const byCoherence = out.clusters.filter((/** @type {any} */ c) => c.coherence != null)
    .sort((/** @type {any} */ a, /** @type {any} */ b) => a.coherence - b.coherence || a.cluster - b.cluster);
  assert.ok(byCoherence.length > 1, 'fewer than two clusters have a coherence score');
  const firstTop = byCoherence[0].topWords[0].word;
  const lastTop = byCoherence[byCoherence.length - 1].topWords[0].word;
  assert.ok(text.stdout.indexOf(firstTop) < text.stdout.indexOf(lastTop), 'clusters not sorted by coherence');
});

test('scdv explain: the score splits exactly over topics and over each side\'s words; inspect doc shares sum to 1', () => {
  const docs = h.sampleDocs();
  const [a, b] = [docs[0].id, docs[1].id];
  const r = cli(['explain', '--model', h.MODEL_A, a, b, '--collection', 'articles', '--corpus', SAMPLE_CORPUS, '--config', configFile, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const e = JSON.parse(r.stdout);
  // (a cosine with the stored values: 11-bit codes keep it within ~1e-5 of 1, another text's is far below)
  assert.ok(Math.abs(e.a.agreementWithStored - 1) < 1e-5, `the text reproduces the stored vector: ${e.a.agreementWithStored}`);
  assert.ok(e.score > 0);
  const eps = 1e-4;
  assert.ok(Math.abs(e.check.topicSum - e.score) < eps, JSON.stringify(e.check));
  assert.ok(Math.abs(e.check.wordSumA - e.score) < eps && Math.abs(e.check.wordSumB - e.score) < eps, JSON.stringify(e.check));
  assert.deepEqual(e.warnings, []);

  // the same pair from the store alone: the same score and topics, no words
  const bare = JSON.parse(cli(['explain', '--model', h.MODEL_A, a, b, '--json']).stdout);
  // The store keeps 12-bit codes x a power-of-two unit (pipeline/store/README.md, "Stored values": a score moves by
  // at most unit * sum |q_i|, measured under 2e-4); the texts' vectors are exact, so the two scores differ by < 1e-3.
  assert.ok(Math.abs(bare.score - e.score) < 1e-3, `${bare.score} vs ${e.score}`);
  assert.equal(bare.wordsA, null);
  assert.equal(bare.warnings.length, 2);

  const d = cli(['inspect', 'doc', '--model', h.MODEL_A, '--id', a, '--corpus', SAMPLE_CORPUS, '--config', configFile, '--json']);
  assert.equal(d.code, 0, d.stderr);
  const doc = JSON.parse(d.stdout);
  assert.ok(Math.abs(doc.check.topicShareSum - 1) < eps && Math.abs(doc.check.wordShareSum - 1) < eps, JSON.stringify(doc.check));
  assert.ok(doc.words.length > 0 && doc.topics.length > 0);

  const t = cli(['explain', '--model', h.MODEL_A, '--text', 'スマートフォンのアプリと通信', 'Androidスマートフォンの新機種とアプリ', '--config', configFile]);
  assert.equal(t.code, 0, t.stderr);
  assert.match(t.stdout, /score \(cosine\) \d\.\d{4}, split over/);
  assert.match(t.stdout, /shared words/);
});

test('inspect and explain embed texts with the settings the collection was indexed with (indexed.json), not the config\'s', async () => {
  const docs = h.sampleDocs();
  const [a, b] = [docs[0].id, docs[1].id];
  const model = loadModel(h.MODEL_A);
  model.wordTopics.close();
  recordIndexed(h.MODEL_A, 'articles', vectorLayout(h.testConfig().embed, model.width, model.wordTopics.nWords));
  try {
    // No --config: the defaults (the hybrid layout, 2 % of the entries) are not what articles was indexed with.
    const r = cli(['explain', '--model', h.MODEL_A, a, b, '--collection', 'articles', '--corpus', SAMPLE_CORPUS, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const e = JSON.parse(r.stdout);
    // (a cosine with the stored values: 11-bit codes keep it within ~1e-5 of 1, another text's is far below)
    assert.ok(Math.abs(e.a.agreementWithStored - 1) < 1e-5, `the text reproduces the stored vector: ${e.a.agreementWithStored}`);
    assert.deepEqual(e.warnings, []);
    assert.ok(e.wordsA.length > 0, 'words are decomposed: the vectors have the pure SCDV layout');
  } finally {
    forgetIndexed(h.MODEL_A, 'articles');
  }
  // A collection of the hybrid layout is known as such from its width, also for stored vectors alone.
  await h.indexDocs(h.MODEL_A, 'hybrid', docs.slice(0, 5), loadConfig({ overrides: { embed: { keepCount: 36 } } }));
  const bare = JSON.parse(cli(['explain', '--model', h.MODEL_A, docs[0].id, docs[1].id, '--collection', 'hybrid', '--json']).stdout);
  assert.equal(bare.warnings.filter((/** @type {string} */ w) => /hybrid vector/.test(w)).length, 2, bare.warnings.join('; '));
  // Two texts in the default (hybrid) layout: the lexical block's part of the score, word by word, exactly.
  const texts = cli(['explain', '--model', h.MODEL_A, '--text', 'スマートフォンのアプリと通信', 'Androidスマートフォンの新機種とアプリ', '--json']);
  assert.equal(texts.code, 0, texts.stderr);
  const x = JSON.parse(texts.stdout);
  const lexicalTopic = x.topics.find((/** @type {any} */ t) => t.cluster === -1);
  assert.ok(lexicalTopic, 'the lexical block carries part of the score');
  assert.ok(Math.abs(x.check.lexicalWordSum - lexicalTopic.contribution) < 1e-5, `${x.check.lexicalWordSum} vs ${lexicalTopic.contribution}`);
  assert.deepEqual(x.lexicalWords.map((/** @type {any} */ w) => w.word).sort(), lexicalTopic.lexicalWords.map((/** @type {any} */ w) => w.word).sort());
  assert.ok(x.lexicalWords.some((/** @type {any} */ w) => w.word === 'スマートフォン' || w.word === 'アプリ'), JSON.stringify(x.lexicalWords));
  const shown = cli(['explain', '--model', h.MODEL_A, '--text', 'スマートフォンのアプリと通信', 'Androidスマートフォンの新機種とアプリ']);
  assert.match(shown.stdout, /^the lexical block word by word .*\n {2}\S+ \+\d\.\d{4}/m);
});

test('unknown model, collection, document and corpus id are clear errors', () => {
  const cases = [
    [['inspect', 'clusters', '--model', 'nope'], /model "nope" not found/],
    [['inspect', 'doc', '--model', h.MODEL_A, '--collection', 'nothing', '--id', 'x'], /collection "nothing" not found in the store of model srv-a/],
    [['inspect', 'doc', '--model', h.MODEL_A, '--id', 'no-such-doc'], /document "no-such-doc" not found in collection "articles"/],
    [['explain', '--model', h.MODEL_A, 'ad-phone', 'ad-movie', '--collection', 'ads', '--corpus', SAMPLE_CORPUS], /document "ad-phone" is not in corpus/],
    [['inspect', 'clusters', '--model', h.MODEL_A, '--cluster', '99'], /cluster 99 not found: model srv-a has clusters 0-5/],
    [['explain', '--model', h.MODEL_A, 'only-one'], /needs --model NAME and two documents/],
  ];
  for (const [args, re] of /** @type {[string[], RegExp][]} */ (cases)) {
    const r = cli(args);
    assert.notEqual(r.code, 0, args.join(' '));
    assert.match(r.stderr, re, args.join(' '));
    assert.doesNotMatch(r.stderr, /unexpected error/);
  }
});
