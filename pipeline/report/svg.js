// Inline SVG charts drawn server-side: no script, no library, no network. Every mark carries a <title>,
// which browsers show on hover. All text goes through esc().
import { esc, fmt } from './html.js';

/** @param {number} x */
const r1 = (x) => Math.round(x * 10) / 10;

/**
 * @param {number} w
 * @param {number} h
 * @param {string} label accessible name
 * @param {string} body
 */
function svg(w, h, label, body) {
  return `<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" aria-label="${esc(label)}">` +
    `<title>${esc(label)}</title>${body}</svg>`;
}

/**
 * Horizontal bars with labels and values.
 * @param {{label: string, value: number, note?: string, color?: string}[]} items
 * @param {{title: string, unit?: string, width?: number}} opts
 */
export function horizontalBars(items, opts) {
  const w = opts.width ?? 640;
  const rowH = 24;
  const left = 110;
  const right = 110;
  const h = items.length * rowH + 10;
  const max = Math.max(1e-9, ...items.map((i) => i.value));
  const body = items.map((it, i) => {
    const y = 5 + i * rowH;
    const bw = Math.max(1, ((w - left - right) * it.value) / max);
    const text = `${fmt(it.value, 2)}${opts.unit ?? ''}${it.note ? ` ${it.note}` : ''}`;
    return `<g><title>${esc(`${it.label}: ${text}`)}</title>` +
      `<text x="${left - 6}" y="${y + 16}" text-anchor="end" class="lbl">${esc(it.label)}</text>` +
      `<rect x="${left}" y="${y + 3}" width="${r1(bw)}" height="${rowH - 6}" fill="${it.color ?? '#4a7bb7'}"/>` +
      `<text x="${r1(left + bw + 6)}" y="${y + 16}" class="val">${esc(text)}</text></g>`;
  }).join('');
  return svg(w, h, opts.title, body);
}

/**
 * Vertical bars over bins [edges[i], edges[i+1]).
 * @param {{edges: number[], counts: number[], log?: boolean}} hist
 * @param {{title: string, xLabel: string, width?: number, height?: number, color?: string}} opts
 */
export function histogram(hist, opts) {
  const w = opts.width ?? 440;
  const h = opts.height ?? 230;
  const pad = { l: 46, r: 12, t: 10, b: 42 };
  const n = hist.counts.length;
  const max = Math.max(1, ...hist.counts);
  const bw = (w - pad.l - pad.r) / Math.max(1, n);
  const ih = h - pad.t - pad.b;
  const bars = hist.counts.map((c, i) => {
    const bh = (ih * c) / max;
    const range = `${fmt(hist.edges[i], 2)} – ${fmt(hist.edges[i + 1], 2)}`;
    return `<rect x="${r1(pad.l + i * bw + 0.5)}" y="${r1(pad.t + ih - bh)}" width="${r1(Math.max(1, bw - 1))}" height="${r1(bh)}" fill="${opts.color ?? '#4a7bb7'}">` +
      `<title>${esc(`${range}: ${c.toLocaleString('en-US')} words`)}</title></rect>`;
  }).join('');
  const ticks = [0, Math.floor(n / 2), n].map((i) => {
    const x = pad.l + i * bw;
    return `<text x="${r1(x)}" y="${h - pad.b + 16}" text-anchor="middle" class="tick">${esc(fmt(hist.edges[i] ?? 0, 1))}</text>`;
  }).join('');
  const axes = `<line x1="${pad.l}" y1="${pad.t + ih}" x2="${w - pad.r}" y2="${pad.t + ih}" class="axis"/>` +
    `<line x1="${pad.l}" y1="${pad.t}" x2="${pad.l}" y2="${pad.t + ih}" class="axis"/>` +
    `<text x="${pad.l - 6}" y="${pad.t + 10}" text-anchor="end" class="tick">${esc(max.toLocaleString('en-US'))}</text>` +
    `<text x="${pad.l - 6}" y="${pad.t + ih}" text-anchor="end" class="tick">0</text>` +
    `<text x="${(pad.l + w - pad.r) / 2}" y="${h - 6}" text-anchor="middle" class="lbl">${esc(opts.xLabel)}${hist.log ? ' (log scale)' : ''}</text>`;
  return svg(w, h, opts.title, axes + bars + ticks);
}

/**
 * A line with a dot per point (hover: its value).
 * @param {number[]} ys
 * @param {{title: string, xLabel: string, yLabel: string, width?: number, height?: number}} opts
 */
export function lineChart(ys, opts) {
  const w = opts.width ?? 440;
  const h = opts.height ?? 230;
  const pad = { l: 62, r: 14, t: 12, b: 42 };
  const iw = w - pad.l - pad.r;
  const ih = h - pad.t - pad.b;
  const lo = Math.min(...ys);
  const hi = Math.max(...ys);
  const span = hi - lo || 1;
  const x = (/** @type {number} */ i) => pad.l + (ys.length > 1 ? (iw * i) / (ys.length - 1) : iw / 2);
  const y = (/** @type {number} */ v) => pad.t + ih - (ih * (v - lo)) / span;
  const pts = ys.map((v, i) => `${r1(x(i))},${r1(y(v))}`).join(' ');
  const dots = ys.map((v, i) => `<circle cx="${r1(x(i))}" cy="${r1(y(v))}" r="3" fill="#c0504d"><title>${esc(`${opts.xLabel} ${i + 1}: ${fmt(v, 4)}`)}</title></circle>`).join('');
  const axes = `<line x1="${pad.l}" y1="${pad.t + ih}" x2="${w - pad.r}" y2="${pad.t + ih}" class="axis"/>` +
    `<line x1="${pad.l}" y1="${pad.t}" x2="${pad.l}" y2="${pad.t + ih}" class="axis"/>` +
    `<text x="${pad.l - 6}" y="${pad.t + 10}" text-anchor="end" class="tick">${esc(fmt(hi, 2))}</text>` +
    `<text x="${pad.l - 6}" y="${pad.t + ih}" text-anchor="end" class="tick">${esc(fmt(lo, 2))}</text>` +
    `<text x="${pad.l}" y="${h - pad.b + 16}" text-anchor="middle" class="tick">1</text>` +
    `<text x="${w - pad.r}" y="${h - pad.b + 16}" text-anchor="middle" class="tick">${ys.length}</text>` +
    `<text x="${(pad.l + w - pad.r) / 2}" y="${h - 6}" text-anchor="middle" class="lbl">${esc(opts.xLabel)}</text>` +
    `<text x="14" y="${pad.t + ih / 2}" text-anchor="middle" class="lbl" transform="rotate(-90 14 ${pad.t + ih / 2})">${esc(opts.yLabel)}</text>`;
  return svg(w, h, opts.title, `${axes}<polyline points="${pts}" fill="none" stroke="#c0504d" stroke-width="2"/>${dots}`);
}

/**
 * Vertical bars, one per item, coloured each.
 * @param {{label: string, value: number, color: string, note?: string}[]} items
 * @param {{title: string, xLabel: string, width?: number, height?: number}} opts
 */
export function columnBars(items, opts) {
  const w = opts.width ?? 900;
  const h = opts.height ?? 220;
  const pad = { l: 46, r: 10, t: 10, b: 36 };
  const max = Math.max(1, ...items.map((i) => i.value));
  const bw = (w - pad.l - pad.r) / Math.max(1, items.length);
  const ih = h - pad.t - pad.b;
  const bars = items.map((it, i) => {
    const bh = (ih * it.value) / max;
    return `<rect x="${r1(pad.l + i * bw + 0.5)}" y="${r1(pad.t + ih - bh)}" width="${r1(Math.max(1, bw - 1))}" height="${r1(Math.max(0.5, bh))}" fill="${it.color}">` +
      `<title>${esc(`${it.label}: ${fmt(it.value)}${it.note ? ` ${it.note}` : ''}`)}</title></rect>`;
  }).join('');
  const axes = `<line x1="${pad.l}" y1="${pad.t + ih}" x2="${w - pad.r}" y2="${pad.t + ih}" class="axis"/>` +
    `<text x="${pad.l - 6}" y="${pad.t + 10}" text-anchor="end" class="tick">${esc(fmt(max))}</text>` +
    `<text x="${pad.l - 6}" y="${pad.t + ih}" text-anchor="end" class="tick">0</text>` +
    `<text x="${(pad.l + w - pad.r) / 2}" y="${h - 8}" text-anchor="middle" class="lbl">${esc(opts.xLabel)}</text>`;
  return svg(w, h, opts.title, axes + bars);
}

/**
 * A scatter plot; points with `label` also get their text drawn.
 * @param {{x: number, y: number, color: string, title: string, label?: string}[]} points
 * @param {{title: string, xLabel: string, yLabel: string, width?: number, height?: number}} opts
 */
export function scatter(points, opts) {
  const w = opts.width ?? 900;
  const h = opts.height ?? 620;
  const pad = { l: 20, r: 20, t: 16, b: 34 };
  const xs = points.map((p) => p.x);
  const ys = points.map((p) => p.y);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  const [y0, y1] = [Math.min(...ys), Math.max(...ys)];
  const sx = (/** @type {number} */ v) => pad.l + ((w - pad.l - pad.r) * (v - x0)) / (x1 - x0 || 1);
  const sy = (/** @type {number} */ v) => pad.t + (h - pad.t - pad.b) * (1 - (v - y0) / (y1 - y0 || 1));
  const dots = points.map((p) => `<circle cx="${r1(sx(p.x))}" cy="${r1(sy(p.y))}" r="3.2" fill="${p.color}" fill-opacity="0.72"><title>${esc(p.title)}</title></circle>`).join('');
  const labels = points.filter((p) => p.label).map((p) =>
    `<text x="${r1(sx(p.x) + 4)}" y="${r1(sy(p.y) - 4)}" class="pt" fill="${p.color}">${esc(p.label)}</text>`).join('');
  const frame = `<rect x="${pad.l}" y="${pad.t}" width="${w - pad.l - pad.r}" height="${h - pad.t - pad.b}" class="frame"/>` +
    `<text x="${w / 2}" y="${h - 10}" text-anchor="middle" class="lbl">${esc(opts.xLabel)}</text>` +
    `<text x="${pad.l + 4}" y="${pad.t + 14}" class="lbl">${esc(opts.yLabel)}</text>`;
  return svg(w, h, opts.title, frame + dots + labels);
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
  const pad = { l: 62, r: 14, t: 30, b: 46 };
  const iw = w - pad.l - pad.r;
  const ih = h - pad.t - pad.b;
  const hi = Math.max(1e-6, ...series.flatMap((s) => s.points.map((p) => p.high)));
  const slot = iw / Math.max(1, xs.length);
  const y = (/** @type {number} */ v) => pad.t + ih - (ih * v) / hi;
  const marks = series.map((s, si) => s.points.map((p) => {
    const i = xs.indexOf(p.x);
    if (i < 0) return '';
    const cx = pad.l + slot * i + (slot * (si + 1)) / (series.length + 1);
    const label = `${s.name}, ${opts.xLabel} ${p.x}: ${(100 * p.value).toFixed(2)} % (95 % interval ${(100 * p.low).toFixed(2)}–${(100 * p.high).toFixed(2)} %, ${p.n.toLocaleString('en-US')} impressions)`;
    return `<g><title>${esc(label)}</title><line x1="${r1(cx)}" y1="${r1(y(p.low))}" x2="${r1(cx)}" y2="${r1(y(p.high))}" stroke="${s.color}" stroke-width="2"/>` +
      `<circle cx="${r1(cx)}" cy="${r1(y(p.value))}" r="3.5" fill="${s.color}"/></g>`;
  }).join('')).join('');
  const ticks = xs.map((x, i) => `<text x="${r1(pad.l + slot * (i + 0.5))}" y="${h - pad.b + 15}" text-anchor="middle" class="tick">${esc(x)}</text>`).join('');
  // Above the plot, so that no point hides it; the swatch's inline style wins over the label class's fill.
  const legend = series.map((s, si) => `<text x="${pad.l + 8 + si * 120}" y="14" class="lbl"><tspan style="fill:${s.color}">●</tspan> ${esc(s.name)}</text>`).join('');
  const axes = `<line x1="${pad.l}" y1="${pad.t + ih}" x2="${w - pad.r}" y2="${pad.t + ih}" class="axis"/>` +
    `<line x1="${pad.l}" y1="${pad.t}" x2="${pad.l}" y2="${pad.t + ih}" class="axis"/>` +
    `<text x="${pad.l - 6}" y="${pad.t + 10}" text-anchor="end" class="tick">${esc((100 * hi).toFixed(1))} %</text>` +
    `<text x="${pad.l - 6}" y="${pad.t + ih}" text-anchor="end" class="tick">0 %</text>` +
    `<text x="${(pad.l + w - pad.r) / 2}" y="${h - 6}" text-anchor="middle" class="lbl">${esc(opts.xLabel)}</text>` +
    `<text x="14" y="${pad.t + ih / 2}" text-anchor="middle" class="lbl" transform="rotate(-90 14 ${pad.t + ih / 2})">${esc(opts.yLabel)}</text>`;
  return svg(w, h, opts.title, axes + ticks + marks + legend);
}
