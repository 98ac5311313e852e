// Scales, ticks and axes of the report's charts (pipeline/report/svg.js, line-chart.js). Ticks are "nice" numbers
// (1, 2 or 5 × a power of ten; on a log axis the powers of ten, with 2 and 5 between them when the span is short),
// and every numeric axis gets at least three. Axes are marked up as <g class="axis" data-axis="x|y"
// data-kind="linear|log|category"> holding one <text class="tick"> per tick, which the browser test counts.
import { esc } from './html.js';
import { errors } from '../errors.js';

/** @param {number} x */
export const r1 = (x) => Math.round(x * 10) / 10;

/**
 * @typedef {object} Scale
 * @property {'linear'|'log'} kind
 * @property {number} lo domain start (after widening to nice ticks)
 * @property {number} hi domain end
 * @property {number[]} ticks within [lo, hi], at least 3
 * @property {(v: number) => string} format tick text
 * @property {(v: number) => number} map domain value to pixels (needs `at`)
 */

/**
 * Nice linear ticks that cover [lo, hi]: the domain widens to the outer ticks.
 * @param {number} low
 * @param {number} high
 * @param {number} [target] about this many ticks (at least 3 are returned)
 * @returns {{lo: number, hi: number, step: number, ticks: number[]}}
 */
export function niceTicks(low, high, target = 5) {
  if (!Number.isFinite(low) || !Number.isFinite(high)) throw errors.CHART_INPUT_INVALID('axis', `the domain [${low}, ${high}] is not finite`);
  if (high < low) [low, high] = [high, low];
  if (high === low) {
    const pad = low === 0 ? 1 : Math.abs(low) * 0.1;
    low -= pad;
    high += pad;
  }
  const want = Math.max(3, target);
  const raw = (high - low) / (want - 1);
  const mag = 10 ** Math.floor(Math.log10(raw));
  // Largest nice step that still gives at least 3 ticks over the widened domain.
  const candidates = [10, 5, 2, 1, 0.5].map((m) => m * mag).filter((s) => s <= raw * 1.5);
  for (const step of candidates.length ? candidates : [mag]) {
    const a = Math.floor(low / step + 1e-9) * step;
    const b = Math.ceil(high / step - 1e-9) * step;
    const n = Math.round((b - a) / step) + 1;
    if (n >= 3) return { lo: a, hi: b, step, ticks: Array.from({ length: n }, (_, i) => clean(a + i * step, step)) };
  }
  const step = (high - low) / 2;
  return { lo: low, hi: high, step, ticks: [low, low + step, high] };
}

/**
 * Ticks of a log axis over [lo, hi] (both > 0): the domain widens to powers of ten; 2 and 5 fill in when fewer
 * than three powers of ten would show.
 * @param {number} low
 * @param {number} high
 * @returns {{lo: number, hi: number, ticks: number[]}}
 */
export function logTicks(low, high) {
  if (!(low > 0) || !(high > 0)) throw errors.CHART_INPUT_INVALID('log axis', `a log axis needs values above 0, got [${low}, ${high}]`);
  if (high < low) [low, high] = [high, low];
  let a = Math.floor(Math.log10(low) + 1e-9);
  let b = Math.ceil(Math.log10(high) - 1e-9);
  if (b === a) b = a + 1;
  /** @type {number[]} */
  const ticks = [];
  const fill = b - a + 1 < 3 ? [1, 2, 5] : [1];
  for (let e = a; e <= b; e++) for (const m of fill) if (e < b || m === 1) ticks.push(clean(m * 10 ** e, 10 ** Math.min(e, 0)));
  return { lo: 10 ** a, hi: 10 ** b, ticks };
}

/**
 * Rounds away float noise (0.30000000000000004 -> 0.3) at the precision of the step.
 * @param {number} v
 * @param {number} step
 */
function clean(v, step) {
  const digits = Math.max(0, -Math.floor(Math.log10(step)) + 1);
  return Number(v.toFixed(Math.min(12, digits)));
}

/**
 * Tick text: thousands separators; decimals as the step needs; a minus sign, not a hyphen.
 * @param {number} value
 * @param {number} step
 */
export function formatTick(value, step) {
  const decimals = Math.max(0, Math.min(6, -Math.floor(Math.log10(step) + 1e-9)));
  const s = Math.abs(value).toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
  return value < 0 && Number(s.replace(/,/g, '')) !== 0 ? `−${s}` : s;
}

/**
 * A scale over data values onto pixels [p0, p1] (p1 < p0 for a y axis).
 * @param {number[]} values the data (non-finite ones ignored)
 * @param {{log?: boolean, min?: number, max?: number, target?: number, format?: (v: number) => string}} axis
 * @param {number} p0
 * @param {number} p1
 * @returns {Scale}
 */
export function makeScale(values, axis, p0, p1) {
  const finite = values.filter(Number.isFinite);
  const lo0 = axis.min ?? (finite.length ? Math.min(...finite) : 0);
  const hi0 = axis.max ?? (finite.length ? Math.max(...finite) : 1);
  if (axis.log) {
    const t = logTicks(lo0, hi0);
    const [la, lb] = [Math.log10(t.lo), Math.log10(t.hi)];
    return {
      kind: 'log', lo: t.lo, hi: t.hi, ticks: t.ticks,
      format: axis.format ?? ((v) => formatTick(v, v >= 1 ? 1 : v)),
      map: (v) => p0 + ((p1 - p0) * (Math.log10(v) - la)) / (lb - la),
    };
  }
  const t = niceTicks(lo0, hi0, axis.target ?? 5);
  return {
    kind: 'linear', lo: t.lo, hi: t.hi, ticks: t.ticks,
    format: axis.format ?? ((v) => formatTick(v, t.step)),
    map: (v) => p0 + ((p1 - p0) * (v - t.lo)) / (t.hi - t.lo),
  };
}

/**
 * A horizontal axis at pixel row `y`: tick marks, tick texts, the axis title centred below.
 * @param {Scale} scale
 * @param {{y: number, x0: number, x1: number, label: string}} at
 */
export function bottomAxis(scale, at) {
  const ticks = scale.ticks.map((v) => {
    const x = r1(scale.map(v));
    return `<line x1="${x}" y1="${at.y}" x2="${x}" y2="${at.y + 4}" class="axis"/>` +
      `<text x="${x}" y="${at.y + 20}" text-anchor="middle" class="tick">${esc(scale.format(v))}</text>`;
  }).join('');
  return `<g class="axis" data-axis="x" data-kind="${scale.kind}"><line x1="${at.x0}" y1="${at.y}" x2="${at.x1}" y2="${at.y}" class="axis"/>${ticks}` +
    `<text x="${r1((at.x0 + at.x1) / 2)}" y="${at.y + 38}" text-anchor="middle" class="lbl">${esc(at.label)}</text></g>`;
}

/**
 * A vertical axis at pixel column `x`: tick marks, tick texts, faint grid lines across the plot, the title rotated.
 * @param {Scale} scale
 * @param {{x: number, y0: number, y1: number, gridTo?: number, label: string, labelX?: number}} at
 */
export function leftAxis(scale, at) {
  const ticks = scale.ticks.map((v) => {
    const y = r1(scale.map(v));
    return (at.gridTo ? `<line x1="${at.x}" y1="${y}" x2="${at.gridTo}" y2="${y}" class="grid"/>` : '') +
      `<line x1="${at.x - 4}" y1="${y}" x2="${at.x}" y2="${y}" class="axis"/>` +
      `<text x="${at.x - 7}" y="${r1(y + 4)}" text-anchor="end" class="tick">${esc(scale.format(v))}</text>`;
  }).join('');
  const lx = at.labelX ?? 14;
  const ly = r1((at.y0 + at.y1) / 2);
  return `<g class="axis" data-axis="y" data-kind="${scale.kind}"><line x1="${at.x}" y1="${at.y0}" x2="${at.x}" y2="${at.y1}" class="axis"/>${ticks}` +
    `<text x="${lx}" y="${ly}" text-anchor="middle" class="lbl" transform="rotate(-90 ${lx} ${ly})">${esc(at.label)}</text></g>`;
}

/**
 * A horizontal axis of categories: a text under every `every`-th category (so texts never crowd).
 * @param {string[]} names
 * @param {(i: number) => number} center pixel x of category i
 * @param {{y: number, x0: number, x1: number, label: string, minGap?: number}} at
 */
export function categoryAxis(names, center, at) {
  const slot = names.length > 1 ? Math.abs(center(1) - center(0)) : Infinity;
  const widest = Math.max(1, ...names.map((n) => n.length)) * 7 + 6;
  const every = Math.max(1, Math.ceil(Math.max(at.minGap ?? 0, widest) / slot));
  const nice = [1, 2, 5, 10, 20, 25, 50, 100].find((n) => n >= every) ?? every;
  const ticks = names.map((n, i) => (i % nice ? '' : `<line x1="${r1(center(i))}" y1="${at.y}" x2="${r1(center(i))}" y2="${at.y + 4}" class="axis"/>` +
    `<text x="${r1(center(i))}" y="${at.y + 20}" text-anchor="middle" class="tick">${esc(n)}</text>`)).join('');
  return `<g class="axis" data-axis="x" data-kind="category"><line x1="${at.x0}" y1="${at.y}" x2="${at.x1}" y2="${at.y}" class="axis"/>${ticks}` +
    `<text x="${r1((at.x0 + at.x1) / 2)}" y="${at.y + 38}" text-anchor="middle" class="lbl">${esc(at.label)}</text></g>`;
}

/**
 * A text cut to fit `maxWidth` pixels (estimateWidth), ending in "…" when cut.
 * @param {string} text
 * @param {number} fontSize
 * @param {number} maxWidth
 */
export function fitText(text, fontSize, maxWidth) {
  if (estimateWidth(text, fontSize) <= maxWidth) return text;
  const chars = [...text];
  while (chars.length && estimateWidth(`${chars.join('')}…`, fontSize) > maxWidth) chars.pop();
  return `${chars.join('')}…`;
}

/**
 * A legend: one swatch and text per entry, in a column from (x, y), or in a row when `row` is set. With
 * `maxWidth`, a column's texts are cut to fit it (the whole text stays in the entry's hover title).
 * @param {{color: string, text: string, shape?: 'square'|'line'|'dot'}[]} entries
 * @param {{x: number, y: number, row?: boolean, gap?: number, maxWidth?: number, wrapAt?: number}} at (row: entries side by side, on a new row past wrapAt)
 */
export function legend(entries, at) {
  const spots = at.row ? legendRowSpots(entries, at) : entries.map((_, i) => ({ x: at.x, y: at.y + i * 18 }));
  const items = entries.map((e, i) => {
    const shown = at.maxWidth ? fitText(e.text, 12, at.maxWidth - 20) : e.text;
    const { x: ex, y: ey } = spots[i];
    const swatch = e.shape === 'line'
      ? `<line x1="${ex}" y1="${ey - 4}" x2="${ex + 14}" y2="${ey - 4}" stroke="${e.color}" stroke-width="2.5"/>`
      : e.shape === 'dot' ? `<circle cx="${ex + 6}" cy="${ey - 4}" r="4.5" fill="${e.color}"/>`
        : `<rect x="${ex}" y="${ey - 10}" width="12" height="12" rx="2" fill="${e.color}"/>`;
    const title = shown === e.text ? '' : `<title>${esc(e.text)}</title>`;
    return `<g class="entry">${title}${swatch}<text x="${ex + 20}" y="${ey}" class="lbl">${esc(shown)}</text></g>`;
  }).join('');
  return `<g class="legend">${items}</g>`;
}

/**
 * Where each entry of a legend in rows goes: left to right from at.x, on a new row (18 px lower) when the next
 * entry would pass at.wrapAt.
 * @param {{text: string}[]} entries
 * @param {{x: number, y: number, gap?: number, wrapAt?: number}} at
 * @returns {{x: number, y: number}[]}
 */
export function legendRowSpots(entries, at) {
  let x = at.x;
  let y = at.y;
  return entries.map((e) => {
    const width = 22 + estimateWidth(e.text, 12);
    if (at.wrapAt !== undefined && x > at.x && x + width > at.wrapAt) { x = at.x; y += 18; }
    const spot = { x, y };
    x += width + (at.gap ?? 16);
    return spot;
  });
}

/**
 * Estimated rendered width of a text in pixels: wide (CJK, full-width) characters take 1 em, others 0.36–1.05 em
 * by shape, sized for bold text (the map's labels); rounded up, so that boxes built on it are never narrower than
 * the real text.
 * @param {string} text
 * @param {number} fontSize
 */
export function estimateWidth(text, fontSize) {
  let em = 0;
  for (const ch of text) {
    const c = /** @type {number} */ (ch.codePointAt(0));
    if (c >= 0x1100 && (c <= 0x115f || (c >= 0x2e80 && c <= 0xa4cf) || (c >= 0xac00 && c <= 0xd7a3) || (c >= 0xf900 && c <= 0xfaff) ||
      (c >= 0xfe30 && c <= 0xfe4f) || (c >= 0xff00 && c <= 0xff60) || (c >= 0xffe0 && c <= 0xffe6) || c >= 0x20000)) em += 1.05;
    else if (ch === ' ') em += 0.32;
    else if (/[mwMW@%]/.test(ch)) em += 1.05; // bold DejaVu's m is 1.04 em
    else if (/[A-Z]/.test(ch)) em += 0.8;
    else if (/[il.,:;'|!]/.test(ch)) em += 0.36;
    else em += 0.7;
  }
  return Math.ceil(em * fontSize);
}

/**
 * The <svg> element of a chart: its viewBox, accessible name and a <title> for hover.
 * @param {number} width
 * @param {number} height
 * @param {string} label accessible name
 * @param {string} body
 */
export function chartSvg(width, height, label, body) {
  return `<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${esc(label)}">` +
    `<title>${esc(label)}</title>${body}</svg>`;
}

/**
 * Room a left axis needs (rotated title at x = 14, tick texts, tick marks): the plot's left padding.
 * @param {Scale} scale
 */
export function leftAxisWidth(scale) {
  return 30 + Math.max(0, ...scale.ticks.map((v) => estimateWidth(scale.format(v), 11)));
}

/**
 * Room a bottom axis needs right of the plot: half its last tick text (centred on the plot's edge).
 * @param {Scale} scale
 */
export function rightOverhang(scale) {
  return 4 + estimateWidth(scale.format(scale.ticks[scale.ticks.length - 1]), 11) / 2;
}
