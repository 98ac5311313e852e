// The report's chart parts without a browser: nice ticks (≥ 3 per axis, log axes), label placement without
// overlaps, the reusable line chart (lineChartSvg) and its input errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { niceTicks, logTicks, makeScale, formatTick, estimateWidth, fitText } from '../../pipeline/report/axes.js';
import { placeLabels, boxesOverlap } from '../../pipeline/report/labels.js';
import { lineChartSvg, scatter } from '../../pipeline/report/svg.js';

test('niceTicks: at least three round ticks that cover the data, whatever the span', () => {
  const cases = [[0, 1], [404.9, 406.26], [-0.99, -0.07], [0, 841], [3, 3], [0, 0], [-1, 1], [1e-6, 3e-6], [12, 13], [0.5, 47]];
  for (const [lo, hi] of cases) {
    const t = niceTicks(lo, hi);
    assert.ok(t.ticks.length >= 3, `[${lo}, ${hi}]: ${t.ticks}`);
    assert.ok(t.ticks.length <= 11, `[${lo}, ${hi}]: too many ticks ${t.ticks}`);
    assert.ok(t.lo <= Math.min(lo, hi) && t.hi >= Math.max(lo, hi), `[${lo}, ${hi}] not covered by [${t.lo}, ${t.hi}]`);
    for (let i = 1; i < t.ticks.length; i++) assert.ok(Math.abs(t.ticks[i] - t.ticks[i - 1] - t.step) < t.step * 1e-9, `uneven ${t.ticks}`);
    // a nice step: 1, 2 or 5 times a power of ten
    const m = t.step / 10 ** Math.floor(Math.log10(t.step) + 1e-12);
    assert.ok([1, 2, 5].some((n) => Math.abs(m - n) < 1e-9), `step ${t.step}`);
  }
  assert.deepEqual(niceTicks(0, 841).ticks, [0, 200, 400, 600, 800, 1000]);
  assert.deepEqual(niceTicks(-1, 1).ticks, [-1, -0.5, 0, 0.5, 1]);
  assert.throws(() => niceTicks(0, Infinity), /SCDV_CHART_INPUT_INVALID|not finite/);
});

test('logTicks: powers of ten, with 2 and 5 between them over a short span; formatting', () => {
  assert.deepEqual(logTicks(6, 1981).ticks, [1, 10, 100, 1000, 10000]);
  assert.deepEqual(logTicks(3, 8).ticks, [1, 2, 5, 10]);
  assert.deepEqual(logTicks(0.02, 0.3).ticks, [0.01, 0.1, 1]);
  assert.deepEqual(logTicks(0.02, 0.08).ticks, [0.01, 0.02, 0.05, 0.1]);
  assert.throws(() => logTicks(0, 10), /above 0/);
  const s = makeScale([6, 1981], { log: true }, 0, 400);
  assert.equal(s.map(1), 0);
  assert.equal(s.map(10000), 400);
  assert.equal(s.map(100), 200);
  assert.deepEqual(s.ticks.map(s.format), ['1', '10', '100', '1,000', '10,000']);
  assert.equal(formatTick(-0.5, 0.5), '−0.5');
  assert.equal(formatTick(0.30000000000000004, 0.1), '0.3');
});

test('placeLabels: no two placed labels overlap, all stay inside, the most important one is placed first', () => {
  // 60 labels piled on nearly the same spot, as the word map's labels were
  const requests = Array.from({ length: 60 }, (_, i) => ({ x: 300 + (i % 7), y: 200 + (i % 5), text: `クラスター${i}の言葉`, priority: i }));
  const bounds = { x0: 0, y0: 0, x1: 600, y1: 400 };
  const { placed, dropped } = placeLabels(requests, { bounds });
  assert.equal(placed.length + dropped.length, 60);
  assert.ok(placed.length >= 2 && dropped.length > 0, `${placed.length} placed`);
  assert.equal(placed[0].text, 'クラスター59の言葉', 'highest priority first');
  for (let i = 0; i < placed.length; i++) {
    const b = placed[i].box;
    assert.ok(b.x0 >= 0 && b.y0 >= 0 && b.x1 <= 600 && b.y1 <= 400, JSON.stringify(b));
    for (let j = i + 1; j < placed.length; j++) assert.ok(!boxesOverlap(b, placed[j].box), `${placed[i].text} overlaps ${placed[j].text}`);
  }
  // spread-out points all get their label, right of the point
  const far = placeLabels([{ x: 10, y: 20, text: 'a' }, { x: 200, y: 20, text: 'b' }], { bounds });
  assert.deepEqual(far.placed.map((p) => [p.text, p.anchor]), [['a', 'start'], ['b', 'start']]);
  // near the right edge a label flips to the left of its point
  assert.equal(placeLabels([{ x: 595, y: 200, text: 'edge' }], { bounds }).placed[0].anchor, 'end');
  // the box's width is never under the text's: wide characters count 1 em
  assert.ok(estimateWidth('日本語', 10) >= 30 && estimateWidth('abc', 10) >= 15);
});

test('lineChartSvg: several series, log-log axes with ≥ 3 ticks each, a legend, a title per point', () => {
  const svg = lineChartSvg({
    title: 'Search time against collection size',
    series: [
      { name: 'p50', points: [{ x: 1000, y: 0.4 }, { x: 10000, y: 1.1 }, { x: 100000, y: 6.5 }] },
      { name: 'p99', points: [{ x: 1000, y: 1.2 }, { x: 10000, y: 4 }, { x: 100000, y: 30 }], dashed: true },
    ],
    x: { label: 'documents', log: true }, y: { label: 'ms', log: true },
  });
  assert.match(svg, /^<svg class="chart"/);
  const axis = (/** @type {string} */ a) => /** @type {string} */ (svg.match(new RegExp(`<g class="axis" data-axis="${a}" data-kind="log">(.*?)</g>`))?.[1]);
  assert.deepEqual([...axis('x').matchAll(/class="tick">([^<]*)</g)].map((m) => m[1]), ['1,000', '10,000', '100,000']);
  assert.ok([...axis('y').matchAll(/class="tick">/g)].length >= 3);
  assert.match(svg, /<g class="legend">.*p50.*p99/);
  assert.equal([...svg.matchAll(/<circle /g)].length, 6);
  assert.match(svg, /stroke-dasharray/);
  // one series: no legend unless asked
  assert.doesNotMatch(lineChartSvg({ title: 't', series: [{ name: 's', points: [{ x: 1, y: 2 }] }], x: { label: 'x' }, y: { label: 'y' } }), /class="legend"/);
  // bad input is an error that names the series, the point and the problem
  assert.throws(() => lineChartSvg({ title: 'scale', series: [{ name: 'p50', points: [{ x: 10, y: 1 }, { x: 0, y: 2 }] }], x: { label: 'docs', log: true }, y: { label: 'ms' } }),
    (/** @type {any} */ e) => e.code === 'SCDV_CHART_INPUT_INVALID' && /series "p50" point 2 has x = 0, which a log axis cannot show/.test(e.message));
  assert.throws(() => lineChartSvg({ title: 'empty', series: [], x: { label: 'x' }, y: { label: 'y' } }), /at least one series/);
  assert.throws(() => lineChartSvg({ title: 'nan', series: [{ name: 's', points: [{ x: 1, y: NaN }] }], x: { label: 'x' }, y: { label: 'y' } }), /point 1 has y = NaN/);
});

test('a legend text too long for the chart is cut with "…" and keeps the whole text as its hover title', () => {
  const long = '23: フィオレンティーナペストリーブティック (73 words)';
  assert.equal(fitText('short', 12, 200), 'short');
  const cut = fitText(long, 12, 200);
  assert.ok(cut.endsWith('…') && estimateWidth(cut, 12) <= 200 && long.startsWith(cut.slice(0, -1)), cut);
  const svg = scatter([{ x: 0, y: 0, color: '#4e79a7', title: 'a' }, { x: 1, y: 1, color: '#4e79a7', title: 'b' }],
    { title: 'map', xLabel: 'x', yLabel: 'y', width: 900, legend: [{ color: '#4e79a7', text: long }], legendTitle: 'largest 8 of 60 clusters' });
  const entry = /** @type {string[]} */ (svg.match(/<g class="entry"><title>([^<]*)<\/title>.*?<text x="([\d.]+)"[^>]*>([^<]*)<\/text>/));
  assert.equal(entry[1], long);
  assert.ok(entry[3].endsWith('…'));
  assert.ok(Number(entry[2]) + estimateWidth(entry[3], 12) <= 900, `legend text ends past the chart: ${entry[2]} + ${entry[3]}`);
});
