// Inline SVG charts drawn server-side: no script, no library, no network (docs/inspect.md says why not a charting
// library). Every numeric axis has at least three nice ticks (axes.js), every chart with more than one colour a
// legend, point labels are placed without overlaps (labels.js). Every mark carries a <title>, which browsers show
// on hover. All text goes through esc().
import { esc, fmt } from './html.js';
import { r1, makeScale, bottomAxis, leftAxis, leftAxisWidth, rightOverhang, categoryAxis, legend, chartSvg, estimateWidth, fitText } from './axes.js';
import { placeLabels } from './labels.js';

export { lineChartSvg, SERIES_COLORS } from './line-chart.js';

/** The colour that means "flagged" in the report, and only that. */
export const FLAGGED_COLOR = '#d62728';
/** Plain bars. */
export const BAR_COLOR = '#4e79a7';
/** What is not singled out: other clusters on the map, time outside the stages. */
export const MUTED_COLOR = '#b8bec8';

/**
 * Horizontal bars with labels and values, over a value axis with ticks.
 * @param {{label: string, value: number, note?: string, color?: string}[]} items
 * @param {{title: string, unit?: string, axisLabel: string, width?: number, legend?: {color: string, text: string}[]}} opts
 */
export function horizontalBars(items, opts) {
  const w = opts.width ?? 640;
  const rowH = 24;
  const left = Math.max(70, ...items.map((i) => estimateWidth(i.label, 12) + 14));
  const right = 20 + Math.max(...items.map((it) => estimateWidth(`${fmt(it.value, 2)}${opts.unit ?? ''}${it.note ? ` ${it.note}` : ''}`, 11)));
  const top = opts.legend ? 26 : 6;
  const plotH = items.length * rowH;
  const h = top + plotH + 50;
  const sx = makeScale([0, ...items.map((i) => i.value)], { min: 0 }, left, w - right);
  const body = items.map((it, i) => {
    const y = top + i * rowH;
    const bw = Math.max(1, sx.map(it.value) - left);
    const text = `${fmt(it.value, 2)}${opts.unit ?? ''}${it.note ? ` ${it.note}` : ''}`;
    return `<g><title>${esc(`${it.label}: ${text}`)}</title>` +
      `<text x="${left - 8}" y="${y + 16}" text-anchor="end" class="lbl">${esc(it.label)}</text>` +
      `<rect x="${left}" y="${y + 3}" width="${r1(bw)}" height="${rowH - 6}" fill="${it.color ?? BAR_COLOR}"/>` +
      `<text x="${r1(left + bw + 6)}" y="${y + 16}" class="val">${esc(text)}</text></g>`;
  }).join('');
  const axis = bottomAxis(sx, { y: top + plotH, x0: left, x1: w - right, label: opts.axisLabel });
  const key = opts.legend ? legend(opts.legend, { x: left, y: 15, row: true }) : '';
  return chartSvg(w, h, opts.title, axis + body + key);
}

/**
 * Vertical bars over bins [edges[i], edges[i+1]), on a log x axis when the bins are log-spaced.
 * @param {{edges: number[], counts: number[], log?: boolean}} hist
 * @param {{title: string, xLabel: string, yLabel: string, width?: number, height?: number, color?: string}} opts
 */
export function histogram(hist, opts) {
  const w = opts.width ?? 440;
  const h = opts.height ?? 240;
  const pad = { l: 0, r: 16, t: 12, b: 50 };
  const sy = makeScale([0, ...hist.counts], { min: 0 }, h - pad.b, pad.t);
  pad.l = leftAxisWidth(sy);
  const xAxis = { log: !!hist.log && hist.edges[0] > 0 };
  pad.r = Math.max(pad.r, rightOverhang(makeScale(hist.edges, xAxis, 0, 1)));
  const sx = makeScale(hist.edges, xAxis, pad.l, w - pad.r);
  const bars = hist.counts.map((c, i) => {
    const x0 = sx.map(hist.edges[i]);
    const x1 = sx.map(hist.edges[i + 1]);
    const y = sy.map(c);
    const range = `${fmt(hist.edges[i], 2)} – ${fmt(hist.edges[i + 1], 2)}`;
    return `<rect x="${r1(x0 + 0.5)}" y="${r1(y)}" width="${r1(Math.max(1, x1 - x0 - 1))}" height="${r1(h - pad.b - y)}" fill="${opts.color ?? BAR_COLOR}">` +
      `<title>${esc(`${range}: ${c.toLocaleString('en-US')} words`)}</title></rect>`;
  }).join('');
  const axes = leftAxis(sy, { x: pad.l, y0: pad.t, y1: h - pad.b, gridTo: w - pad.r, label: opts.yLabel }) +
    bottomAxis(sx, { y: h - pad.b, x0: pad.l, x1: w - pad.r, label: `${opts.xLabel}${hist.log ? ' (log scale)' : ''}` });
  return chartSvg(w, h, opts.title, axes + bars);
}

/**
 * Vertical bars, one per item, over a category axis (a text under every few bars) and a value axis.
 * @param {{label: string, tick: string, value: number, color: string, note?: string}[]} items
 * @param {{title: string, xLabel: string, yLabel: string, width?: number, height?: number, legend?: {color: string, text: string}[]}} opts
 */
export function columnBars(items, opts) {
  const w = opts.width ?? 900;
  const h = opts.height ?? 250;
  const pad = { l: 0, r: 12, t: opts.legend ? 30 : 12, b: 50 };
  const sy = makeScale([0, ...items.map((i) => i.value)], { min: 0 }, h - pad.b, pad.t);
  pad.l = leftAxisWidth(sy);
  const bw = (w - pad.l - pad.r) / Math.max(1, items.length);
  const bars = items.map((it, i) => {
    const y = sy.map(it.value);
    return `<rect x="${r1(pad.l + i * bw + 0.5)}" y="${r1(y)}" width="${r1(Math.max(1, bw - 1))}" height="${r1(Math.max(0.5, h - pad.b - y))}" fill="${it.color}">` +
      `<title>${esc(`${it.label}: ${fmt(it.value)}${it.note ? ` ${it.note}` : ''}`)}</title></rect>`;
  }).join('');
  const axes = leftAxis(sy, { x: pad.l, y0: pad.t, y1: h - pad.b, gridTo: w - pad.r, label: opts.yLabel }) +
    categoryAxis(items.map((i) => i.tick), (i) => pad.l + (i + 0.5) * bw, { y: h - pad.b, x0: pad.l, x1: w - pad.r, label: opts.xLabel, minGap: 24 });
  const key = opts.legend ? legend(opts.legend, { x: pad.l, y: 16, row: true }) : '';
  return chartSvg(w, h, opts.title, axes + bars + key);
}

/**
 * A scatter plot with axes and a legend at the right. Points with `label` get their text drawn where it fits
 * (most important first); the others keep their hover title.
 * @param {{x: number, y: number, color: string, title: string, label?: string, priority?: number}[]} points drawn in order (later on top)
 * @param {{title: string, xLabel: string, yLabel: string, width?: number, height?: number, legend?: {color: string, text: string}[], legendTitle?: string}} opts
 */
export function scatter(points, opts) {
  const w = opts.width ?? 900;
  const h = opts.height ?? 620;
  const legendW = opts.legend ? Math.min(300, 34 + Math.max(...opts.legend.map((e) => estimateWidth(e.text, 12)), estimateWidth(opts.legendTitle ?? '', 12))) : 0;
  const pad = { l: 0, r: 14 + legendW, t: 12, b: 50 };
  const sy = makeScale(points.map((p) => p.y), {}, h - pad.b, pad.t);
  pad.l = leftAxisWidth(sy);
  const sx = makeScale(points.map((p) => p.x), {}, pad.l, w - pad.r);
  const dots = points.map((p) => `<circle cx="${r1(sx.map(p.x))}" cy="${r1(sy.map(p.y))}" r="3.2" fill="${p.color}" fill-opacity="0.75"><title>${esc(p.title)}</title></circle>`).join('');
  const { placed } = placeLabels(points.filter((p) => p.label).map((p) => ({ x: sx.map(p.x), y: sy.map(p.y), text: /** @type {string} */ (p.label), priority: p.priority, color: p.color })),
    { bounds: { x0: pad.l + 2, y0: pad.t + 2, x1: w - pad.r - 2, y1: h - pad.b - 2 } });
  // A white halo keeps a label readable over the dots under it.
  const labels = placed.map((l) => `<text x="${r1(l.x)}" y="${r1(l.y)}" text-anchor="${l.anchor}" class="pt" fill="${l.color ?? '#333'}">${esc(l.text)}</text>`).join('');
  const frame = `<rect x="${pad.l}" y="${pad.t}" width="${w - pad.l - pad.r}" height="${h - pad.t - pad.b}" class="frame"/>`;
  const axes = leftAxis(sy, { x: pad.l, y0: pad.t, y1: h - pad.b, label: opts.yLabel }) +
    bottomAxis(sx, { y: h - pad.b, x0: pad.l, x1: w - pad.r, label: opts.xLabel });
  const lx = w - legendW + 8;
  const key = opts.legend
    ? (opts.legendTitle ? `<text x="${lx}" y="${pad.t + 12}" class="lbl legend-title">${esc(fitText(opts.legendTitle, 12, legendW - 14))}</text>` : '') +
      legend(opts.legend, { x: lx, y: pad.t + (opts.legendTitle ? 34 : 12), maxWidth: legendW - 14 })
    : '';
  return chartSvg(w, h, opts.title, frame + axes + dots + labels + key);
}

/**
 * Proportions with their intervals: per x category, one dot and whisker per series (e.g. CTR per similarity band,
 * one series per arm). Hover: the figure, its interval and its count.
 * @param {string[]} xs categories along the x axis, in order
 * @param {{name: string, color: string, points: {x: string, value: number, low: number, high: number, n: number}[]}[]} series
 * @param {{title: string, xLabel: string, yLabel: string, width?: number, height?: number}} opts
 */
export function intervalChart(xs, series, opts) {
  const w = opts.width ?? Math.max(440, 90 + xs.length * (24 + 14 * series.length));
  const h = opts.height ?? 260;
  const pad = { l: 0, r: 14, t: 30, b: 50 };
  const hi = Math.max(1e-6, ...series.flatMap((s) => s.points.map((p) => p.high)));
  const sy = makeScale([0, hi], { min: 0, format: (v) => `${fmt(100 * v, hi < 0.05 ? 2 : 1)} %` }, h - pad.b, pad.t);
  pad.l = leftAxisWidth(sy);
  const iw = w - pad.l - pad.r;
  const slot = iw / Math.max(1, xs.length);
  const marks = series.map((s, si) => s.points.map((p) => {
    const i = xs.indexOf(p.x);
    if (i < 0) return '';
    const cx = pad.l + slot * i + (slot * (si + 1)) / (series.length + 1);
    const label = `${s.name}, ${opts.xLabel} ${p.x}: ${(100 * p.value).toFixed(2)} % (95 % interval ${(100 * p.low).toFixed(2)}–${(100 * p.high).toFixed(2)} %, ${p.n.toLocaleString('en-US')} impressions)`;
    return `<g><title>${esc(label)}</title><line x1="${r1(cx)}" y1="${r1(sy.map(p.low))}" x2="${r1(cx)}" y2="${r1(sy.map(p.high))}" stroke="${s.color}" stroke-width="2"/>` +
      `<circle cx="${r1(cx)}" cy="${r1(sy.map(p.value))}" r="3.5" fill="${s.color}"/></g>`;
  }).join('')).join('');
  const axes = leftAxis(sy, { x: pad.l, y0: pad.t, y1: h - pad.b, gridTo: w - pad.r, label: opts.yLabel }) +
    categoryAxis(xs, (i) => pad.l + slot * (i + 0.5), { y: h - pad.b, x0: pad.l, x1: w - pad.r, label: opts.xLabel });
  // Above the plot, so that no point hides it.
  const key = legend(series.map((s) => ({ color: s.color, text: s.name, shape: /** @type {const} */ ('dot') })), { x: pad.l, y: 16, row: true });
  return chartSvg(w, h, opts.title, axes + marks + key);
}

/**
 * Values on one numeric axis, e.g. each cluster's coherence on NPMI's −1…1 scale: one dot per value (jittered
 * in height, so equal values stay visible), an optional shaded band (e.g. where random word sets fall) and marked
 * lines (e.g. the mean), with a legend.
 * @param {{value: number, title: string, color?: string}[]} dots
 * @param {{title: string, xLabel: string, min: number, max: number, width?: number,
 *   band?: {from: number, to: number, text: string}, marks?: {value: number, text: string, color: string}[], dotText: string}} opts
 */
export function stripChart(dots, opts) {
  const w = opts.width ?? 640;
  const h = 150;
  const pad = { l: 16, r: 16, t: 30, b: 50 };
  const sx = makeScale([opts.min, opts.max], { min: opts.min, max: opts.max }, pad.l, w - pad.r);
  const ih = h - pad.t - pad.b;
  const band = opts.band ? `<rect x="${r1(sx.map(opts.band.from))}" y="${pad.t}" width="${r1(Math.max(1, sx.map(opts.band.to) - sx.map(opts.band.from)))}" height="${ih}" fill="${MUTED_COLOR}" fill-opacity="0.55">` +
    `<title>${esc(`${opts.band.text}: ${fmt(opts.band.from, 3)} to ${fmt(opts.band.to, 3)}`)}</title></rect>` : '';
  const marks = (opts.marks ?? []).map((m) => `<line x1="${r1(sx.map(m.value))}" y1="${pad.t - 4}" x2="${r1(sx.map(m.value))}" y2="${pad.t + ih}" stroke="${m.color}" stroke-width="2.5">` +
    `<title>${esc(`${m.text}: ${fmt(m.value, 3)}`)}</title></line>`).join('');
  // Jitter by index (golden ratio), deterministic.
  const points = dots.map((d, i) => `<circle cx="${r1(sx.map(d.value))}" cy="${r1(pad.t + 6 + ((i * 0.618034) % 1) * (ih - 12))}" r="3.5" fill="${d.color ?? BAR_COLOR}" fill-opacity="0.8"><title>${esc(d.title)}</title></circle>`).join('');
  const axis = bottomAxis(sx, { y: pad.t + ih, x0: pad.l, x1: w - pad.r, label: opts.xLabel });
  const key = legend([{ color: BAR_COLOR, text: opts.dotText, shape: /** @type {const} */ ('dot') },
    ...(opts.band ? [{ color: MUTED_COLOR, text: opts.band.text }] : []),
    ...(opts.marks ?? []).map((m) => ({ color: m.color, text: m.text, shape: /** @type {const} */ ('line') }))], { x: pad.l, y: 16, row: true });
  return chartSvg(w, h, opts.title, band + axis + marks + points + key);
}
