// Multi-series line chart with optional log axes: the training report's GMM curve and `npm run bench:scale`'s
// log-log chart are drawn by this one function. Static SVG (no script), every point hoverable.
import { esc, fmt } from './html.js';
import { errors } from '../errors.js';
import { r1, makeScale, bottomAxis, leftAxis, leftAxisWidth, rightOverhang, legend, legendRowSpots, chartSvg } from './axes.js';

/** Series colours, in order (none is the report's "flagged" red). */
export const SERIES_COLORS = Object.freeze(['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#76b7b2', '#9c755f', '#d4a62a', '#2f4b7c', '#ff9da7', '#17becf']);

/**
 * @typedef {object} LineSeries
 * @property {string} name legend text
 * @property {{x: number, y: number, label?: string}[]} points in x order; label: hover text (default "name: x, y")
 * @property {string} [color] default: SERIES_COLORS by position
 * @property {boolean} [dots] a dot per point (default true)
 * @property {boolean} [dashed]
 */

/**
 * @typedef {object} LineAxis
 * @property {string} label axis title
 * @property {boolean} [log] log10 scale: every value on it must be above 0
 * @property {number} [min] domain start (default: the data's, widened to a nice tick)
 * @property {number} [max]
 * @property {(v: number) => string} [format] tick text
 */

/**
 * @typedef {object} LineChartSpec
 * @property {string} title accessible name (and hover title) of the chart
 * @property {LineSeries[]} series at least one, each with at least one point
 * @property {LineAxis} x
 * @property {LineAxis} y
 * @property {number} [width] pixels (default 440)
 * @property {number} [height] pixels (default 240)
 * @property {boolean} [legend] default: when there is more than one series
 */

/**
 * A line chart as an inline SVG string: at least three nice ticks per axis (powers of ten on a log axis),
 * a legend above the plot, a <title> per point.
 * @param {LineChartSpec} spec
 * @returns {string}
 */
export function lineChartSvg(spec) {
  if (!spec.series?.length || spec.series.some((s) => !s.points?.length)) {
    throw errors.CHART_INPUT_INVALID(spec.title, `every chart needs at least one series and every series at least one point`);
  }
  for (const s of spec.series) {
    s.points.forEach((p, i) => {
      for (const a of /** @type {const} */ (['x', 'y'])) {
        if (!Number.isFinite(p[a])) throw errors.CHART_INPUT_INVALID(spec.title, `series "${s.name}" point ${i + 1} has ${a} = ${p[a]}, not a finite number`);
        if (spec[a].log && p[a] <= 0) throw errors.CHART_INPUT_INVALID(spec.title, `series "${s.name}" point ${i + 1} has ${a} = ${p[a]}, which a log axis cannot show (values must be above 0)`);
      }
    });
  }
  const showLegend = spec.legend ?? spec.series.length > 1;
  const w = spec.width ?? 440;
  const h = spec.height ?? 240;
  const keyEntries = spec.series.map((s) => ({ text: s.name }));
  // A legend too wide for one row wraps; the plot starts below its last row.
  const keyRows = showLegend ? 1 + (legendRowSpots(keyEntries, { x: 0, y: 0, wrapAt: w - 70 }).at(-1)?.y ?? 0) / 18 : 0;
  const pad = { l: 0, r: 16, t: showLegend ? 12 + 18 * keyRows : 12, b: 50 };
  const all = spec.series.flatMap((s) => s.points);
  const sy = makeScale(all.map((p) => p.y), spec.y, h - pad.b, pad.t);
  pad.l = leftAxisWidth(sy);
  pad.r = Math.max(pad.r, rightOverhang(makeScale(all.map((p) => p.x), spec.x, 0, 1)));
  const sx = makeScale(all.map((p) => p.x), spec.x, pad.l, w - pad.r);
  const color = (/** @type {LineSeries} */ s, /** @type {number} */ i) => s.color ?? SERIES_COLORS[i % SERIES_COLORS.length];
  const lines = spec.series.map((s, i) => {
    const c = color(s, i);
    const pts = s.points.map((p) => `${r1(sx.map(p.x))},${r1(sy.map(p.y))}`).join(' ');
    const dots = s.dots === false ? '' : s.points.map((p) => `<circle cx="${r1(sx.map(p.x))}" cy="${r1(sy.map(p.y))}" r="3" fill="${c}">` +
      `<title>${esc(p.label ?? `${s.name}: ${spec.x.label} ${fmt(p.x, 4)}, ${spec.y.label} ${fmt(p.y, 4)}`)}</title></circle>`).join('');
    return `<g class="series"><polyline points="${pts}" fill="none" stroke="${c}" stroke-width="2"${s.dashed ? ' stroke-dasharray="5 3"' : ''}/>${dots}</g>`;
  }).join('');
  const axes = leftAxis(sy, { x: pad.l, y0: pad.t, y1: h - pad.b, gridTo: w - pad.r, label: spec.y.label }) +
    bottomAxis(sx, { y: h - pad.b, x0: pad.l, x1: w - pad.r, label: spec.x.label });
  const key = showLegend ? legend(spec.series.map((s, i) => ({ color: color(s, i), text: s.name, shape: /** @type {const} */ ('line') })), { x: pad.l, y: 16, row: true, wrapAt: w - pad.r }) : '';
  return chartSvg(w, h, spec.title, axes + lines + key);
}
