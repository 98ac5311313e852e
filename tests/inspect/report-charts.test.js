// The report's charts in headless Chromium, on a real over-clustered model: the bundled sample (306 documents)
// trained by `scdv train --clusters 60` (small word vectors, so it takes seconds). Every chart has a legend or
// axes with at least three ticks per numeric axis, a chart of several colours has a legend, no two texts of a
// chart overlap (getBBox in the page), nothing leaves its chart or its card, the page loads nothing else; a
// screenshot is kept. Then the advice: scdv train ends with it and the report shows it with the coherence scale.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { launchChromium, screenshotDir } from '../lib/browser.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-report-charts-'));
/** @type {NodeJS.ProcessEnv} */
const env = {
  ...process.env,
  SCDV_MODELS_DIR: path.join(tmp, 'models'), SCDV_DATA_DIR: path.join(tmp, 'data'), SCDV_STORE_DIR: path.join(tmp, 'store'),
};
delete env.REDIS_URL; // scdv train starts a private Redis
const { REPO_ROOT, SAMPLE_CORPUS } = await import('../../pipeline/paths.js');
const { sampleTrain } = await import('../lib/tiny-model.js');

const NAME = 'sample-k60';
const report = path.join(tmp, 'models', NAME, 'report.html');
let trainStderr = '';

before(() => {
  const config = path.join(tmp, 'config.json');
  fs.writeFileSync(config, JSON.stringify({ train: sampleTrain(1) }));
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'pipeline', 'cli.js'), 'train', '--corpus', SAMPLE_CORPUS, '--name', NAME,
    '--clusters', '60', '--config', config], { encoding: 'utf8', env, timeout: 300_000 });
  assert.equal(r.status, 0, r.stderr);
  trainStderr = r.stderr;
});
after(() => { fs.rmSync(tmp, { recursive: true, force: true }); });

/**
 * Everything the test measures of each chart, in the page.
 * @param {import('playwright-core').Page} page
 */
function measureCharts(page) {
  return page.$$eval('svg.chart', (svgs) => svgs.map((svg) => {
    const s = /** @type {any} */ (svg);
    const vb = s.viewBox.baseVal;
    // a text's box in the chart's coordinates: getBBox, through the text's own transform (rotated axis titles)
    const boxOf = (/** @type {any} */ t) => {
      const b = t.getBBox();
      const m = t.getCTM();
      const sm = s.getCTM();
      const inv = sm.inverse().multiply(m);
      const pts = [[b.x, b.y], [b.x + b.width, b.y], [b.x, b.y + b.height], [b.x + b.width, b.y + b.height]].map(([x, y]) => {
        const p = new (/** @type {any} */ (globalThis).DOMPoint)(x, y).matrixTransform(inv);
        return [p.x, p.y];
      });
      const xs = pts.map((p) => p[0]);
      const ys = pts.map((p) => p[1]);
      return { text: t.textContent, x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) };
    };
    const texts = [...s.querySelectorAll('text')].filter((t) => t.textContent.trim() !== '').map(boxOf);
    const axes = [...s.querySelectorAll('g.axis')].map((g) => ({ axis: g.getAttribute('data-axis'), kind: g.getAttribute('data-kind'), ticks: g.querySelectorAll('text.tick').length }));
    const legendEntries = s.querySelectorAll('g.legend g.entry').length;
    // colours of the data marks (bars, dots, lines), not of the frame or the legend's swatches
    const colours = new Set([...s.querySelectorAll('rect:not(.frame), circle, polyline, line:not(.axis):not(.grid)')]
      .filter((m) => !m.closest('g.legend') && !m.closest('g.axis'))
      .map((m) => m.getAttribute('fill') && m.getAttribute('fill') !== 'none' ? m.getAttribute('fill') : m.getAttribute('stroke')));
    const card = s.closest('section').getBoundingClientRect();
    const box = s.getBoundingClientRect();
    return {
      label: s.getAttribute('aria-label'), section: s.closest('section').id, texts, axes, legendEntries, colours: [...colours],
      width: vb.width, height: vb.height,
      inCard: box.left >= card.left - 0.5 && box.right <= card.right + 0.5 && box.top >= card.top - 0.5 && box.bottom <= card.bottom + 0.5,
    };
  }));
}

test('report charts: legends or ticked axes, no overlapping texts, nothing overflows, nothing loaded from outside', async () => {
  const html = fs.readFileSync(report, 'utf8');
  assert.doesNotMatch(html, /<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)/, 'no script, no remote resource');
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    /** @type {string[]} */
    const requests = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(`file://${report}`);
    const shot = path.join(screenshotDir(), 'report-charts.png');
    await page.screenshot({ path: shot, fullPage: true });
    assert.ok(fs.statSync(shot).size > 50_000, `screenshot ${shot}`);
    assert.deepEqual(requests, [`file://${report}`], 'the page loads nothing else');

    const charts = await measureCharts(page);
    assert.ok(charts.length >= 6, charts.map((c) => c.label).join(', '));
    /** @type {string[]} */
    const problems = [];
    for (const c of charts) {
      const name = `"${c.label}" (#${c.section})`;
      if (!c.legendEntries && !c.axes.length) problems.push(`${name}: neither a legend nor axes`);
      for (const a of c.axes) if (a.kind !== 'category' && a.ticks < 3) problems.push(`${name}: ${a.axis} axis has ${a.ticks} ticks`);
      if (c.colours.length > 1 && !c.legendEntries) problems.push(`${name}: ${c.colours.length} colours and no legend`);
      if (!c.inCard) problems.push(`${name}: overflows its card`);
      for (const t of c.texts) {
        if (t.x0 < -0.5 || t.y0 < -0.5 || t.x1 > c.width + 0.5 || t.y1 > c.height + 0.5) problems.push(`${name}: "${t.text}" sticks out of the chart`);
      }
      for (let i = 0; i < c.texts.length; i++) {
        for (let j = i + 1; j < c.texts.length; j++) {
          const [a, b] = [c.texts[i], c.texts[j]];
          const ox = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0);
          const oy = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
          if (ox > 0.5 && oy > 0.5) problems.push(`${name}: "${a.text}" overlaps "${b.text}"`);
        }
      }
    }
    assert.deepEqual(problems.slice(0, 20), [], `${problems.length} problems`);
    // the word map labels several words, and the legend names the coloured clusters
    const map = charts.find((c) => c.section === 'map');
    assert.ok(map && map.texts.filter((t) => /** @type {string} */ (t.text).length > 0).length > 10);
    assert.ok(map && map.legendEntries >= 8, `map legend: ${map?.legendEntries}`);
    // the overview has no empty header row; every table and figure stays in its card
    assert.equal(await page.locator('#overview thead').count(), 0);
    const overflow = await page.$$eval('section', (ss) => ss.filter((s) => s.scrollWidth > s.clientWidth).map((s) => s.id));
    assert.deepEqual(overflow, []);
  } finally {
    await browser.close();
  }
});

test('an over-clustered model: scdv train ends with the advice and its command; the report shows it with the coherence scale', async () => {
  const command = `scdv train --corpus ${SAMPLE_CORPUS} --name ${NAME}-k12 --clusters 12`;
  assert.match(trainStderr, /advice: 60 clusters, \d+ flagged \(\d+ incoherent, \d+ empty, tiny or diffuse\), 306 training documents \(rule of thumb √\(N\/2\) ≈ 12\): over-clustered/);
  assert.ok(trainStderr.includes(command), trainStderr);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`file://${report}`);
    const advice = await page.locator('#advice').textContent() ?? '';
    assert.ok(advice.includes(command), advice);
    // coherence against random word sets of the same sizes, on the same corpus
    const a = JSON.parse(fs.readFileSync(path.join(tmp, 'models', NAME, 'analysis.json'), 'utf8'));
    const r = a.coherence.random;
    assert.ok(r && r.sets === 600 && r.p05 <= r.mean && r.mean <= r.p95, JSON.stringify(r));
    assert.match(advice, new RegExp(`Random word sets .* give ${r.mean < 0 ? '−' : ''}${Math.abs(r.mean).toFixed(3)} on average`));
    assert.match(advice, /this model's clusters are (better than random|no better than random|worse than random)/);
    assert.equal(await page.locator('#advice svg.chart > circle').count(), a.clusters.filter((/** @type {any} */ c) => c.coherence !== null).length);
  } finally {
    await browser.close();
  }
});
