// Click-through rates from the event log: every item of an impression is one trial, a click on it (matched by
// request id, else by the page's latest impression) its success. CTR per similarity band, position, genre
// (the page's category), site and arm, each with a Wilson 95 % interval and its count of impressions; and the
// cells where one arm loses significantly to another (Newcombe's interval of the difference wholly below 0).
import { readEvents } from './log.js';

export const Z95 = 1.959963984540054;

/**
 * Wilson score interval of a proportion.
 * @param {number} successes
 * @param {number} trials
 * @param {number} [z]
 * @returns {{low: number, high: number}}
 */
export function wilson(successes, trials, z = Z95) {
  if (trials === 0) return { low: 0, high: 1 };
  const p = successes / trials;
  const z2 = z * z;
  const centre = (p + z2 / (2 * trials)) / (1 + z2 / trials);
  const half = (z / (1 + z2 / trials)) * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials));
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

/**
 * Newcombe's interval (method 10) of the difference of two proportions, from their Wilson intervals.
 * @param {{clicks: number, impressions: number}} a
 * @param {{clicks: number, impressions: number}} b
 * @returns {{diff: number, low: number, high: number}} a − b
 */
export function differenceInterval(a, b) {
  const p1 = a.clicks / a.impressions;
  const p2 = b.clicks / b.impressions;
  const w1 = wilson(a.clicks, a.impressions);
  const w2 = wilson(b.clicks, b.impressions);
  const diff = p1 - p2;
  return {
    diff,
    low: diff - Math.sqrt((p1 - w1.low) ** 2 + (w2.high - p2) ** 2),
    high: diff + Math.sqrt((w1.high - p1) ** 2 + (p2 - w2.low) ** 2),
  };
}

/**
 * @typedef {object} Cell
 * @property {string} key
 * @property {number} impressions
 * @property {number} clicks
 * @property {number} ctr
 * @property {number} low Wilson 95 % interval
 * @property {number} high
 */

/**
 * @typedef {object} Loss
 * @property {'band'|'category'} dimension
 * @property {string} value the band or genre
 * @property {string} arm the arm that loses
 * @property {string} against the arm it loses to
 * @property {Cell} loser
 * @property {Cell} winner
 * @property {{diff: number, low: number, high: number}} difference loser − winner
 */

/**
 * @typedef {object} ClickReport
 * @property {{since: string | null, until: string | null, model: string | null, bandWidth: number, minImpressions: number}} settings
 * @property {{events: number, impressions: number, shown: number, clicks: number, unmatched_clicks: number, torn_lines: number, ctr: Cell}} totals
 *   impressions: lists shown; shown: items shown (the trials); clicks: matched clicks; unmatched_clicks: clicks
 *   with no impression in the range; torn_lines: log lines that are not whole events (skipped)
 * @property {Cell[]} bands @property {Cell[]} positions @property {Cell[]} categories @property {Cell[]} sites @property {Cell[]} arms
 * @property {Record<string, Cell[]>} armBands per arm, its bands
 * @property {Record<string, Cell[]>} armCategories per arm, its genres
 * @property {Loss[]} losses
 */

/**
 * The band of a score, e.g. 0.3 → "0.30-0.40" with width 0.1 (scores of 1 fall in the top band).
 * @param {number} score
 * @param {number} width
 */
export function bandOf(score, width) {
  const top = Math.ceil(1 / width - 1e-9) - 1;
  const i = Math.max(Math.min(Math.floor(score / width + 1e-9), top), score < 0 ? -1 : 0);
  if (i < 0) return `<0`;
  const digits = width < 0.1 ? 3 : 2;
  return `${(i * width).toFixed(digits)}-${Math.min(1, (i + 1) * width).toFixed(digits)}`;
}

class Counter {
  constructor() { /** @type {Map<string, {impressions: number, clicks: number}>} */ this.map = new Map(); }
  /** @param {string} key @param {boolean} clicked */
  add(key, clicked) {
    let c = this.map.get(key);
    if (!c) { c = { impressions: 0, clicks: 0 }; this.map.set(key, c); }
    c.impressions++;
    if (clicked) c.clicks++;
  }
  /** @param {(a: string, b: string) => number} [order] @returns {Cell[]} */
  cells(order = (a, b) => a.localeCompare(b, 'en', { numeric: true })) {
    return [...this.map.entries()].sort(([a], [b]) => order(a, b)).map(([key, c]) => cell(key, c.clicks, c.impressions));
  }
}

/** @param {string} key @param {number} clicks @param {number} impressions @returns {Cell} */
const cell = (key, clicks, impressions) => ({ key, impressions, clicks, ctr: impressions ? clicks / impressions : 0, ...wilson(clicks, impressions) });

/** @param {Record<string, any>} ev */
const timeOf = (ev) => Date.parse(ev.ts ?? ev.received_at ?? '');

/**
 * @param {string} dir the event log
 * @param {{since?: string, until?: string, bandWidth: number, minImpressions: number, model?: string}} opts since/until: ISO dates
 *   or date-times; model: only impressions that name this model
 * @returns {Promise<ClickReport>}
 */
export async function clickReport(dir, opts) {
  const since = opts.since ? Date.parse(opts.since) : -Infinity;
  // A bare date as --until means through the end of that day.
  const until = opts.until ? Date.parse(opts.until) + (/^\d{4}-\d{2}-\d{2}$/.test(opts.until) ? 86_399_999 : 0) : Infinity;
  /** @type {Record<string, any>[]} */ const impressions = [];
  /** @type {Record<string, any>[]} */ const clicks = [];
  let events = 0;
  const summary = await readEvents(dir, (ev) => {
    const t = timeOf(ev);
    // An event without a time (written by hand: the server always adds received_at) counts only without a range.
    if (Number.isNaN(t) ? Boolean(opts.since || opts.until) : !(t >= since && t <= until)) return;
    events++;
    if (ev.type === 'impression' && Array.isArray(ev.items)) { if (!opts.model || ev.model === opts.model) impressions.push(ev); }
    else if (ev.type === 'click' && typeof ev.clicked_id === 'string') clicks.push(ev);
  });
  // Clicks by answer; a click naming only its page goes to that page's latest impression before it.
  /** @type {Map<string, Record<string, any>>} */ const byRequest = new Map();
  /** @type {Map<string, Record<string, any>[]>} */ const byPage = new Map();
  for (const imp of impressions) {
    byRequest.set(imp.request_id, imp);
    if (imp.page_id !== undefined) {
      const list = byPage.get(imp.page_id) ?? [];
      list.push(imp);
      byPage.set(imp.page_id, list);
    }
  }
  /** @type {Set<string>} request id + clicked id, each counted once */
  const clicked = new Set();
  let unmatched = 0;
  for (const c of clicks) {
    let imp = c.request_id !== undefined ? byRequest.get(c.request_id) : undefined;
    if (!imp && c.request_id === undefined && c.page_id !== undefined) {
      const t = timeOf(c);
      imp = (byPage.get(c.page_id) ?? []).filter((i) => timeOf(i) <= t).sort((a, b) => timeOf(b) - timeOf(a))[0];
    }
    if (!imp || !imp.items.some((/** @type {any} */ it) => it.id === c.clicked_id)) { unmatched++; continue; }
    clicked.add(`${imp.request_id}\0${c.clicked_id}`);
  }
  const dims = { bands: new Counter(), positions: new Counter(), categories: new Counter(), sites: new Counter(), arms: new Counter() };
  /** @type {Map<string, Counter>} */ const armBands = new Map();
  /** @type {Map<string, Counter>} */ const armCategories = new Map();
  const perArm = (/** @type {Map<string, Counter>} */ m, /** @type {string} */ arm) => {
    let c = m.get(arm);
    if (!c) { c = new Counter(); m.set(arm, c); }
    return c;
  };
  let shown = 0;
  let hits = 0;
  for (const imp of impressions) {
    const arm = imp.arm ?? '(none)';
    for (const it of imp.items) {
      const hit = clicked.has(`${imp.request_id}\0${it.id}`);
      const band = bandOf(it.score, opts.bandWidth);
      const category = imp.category ?? it.category ?? '(none)';
      shown++;
      if (hit) hits++;
      dims.bands.add(band, hit);
      dims.positions.add(String(it.position), hit);
      dims.categories.add(category, hit);
      dims.sites.add(imp.site ?? it.site ?? '(none)', hit);
      dims.arms.add(arm, hit);
      perArm(armBands, arm).add(band, hit);
      perArm(armCategories, arm).add(category, hit);
    }
  }
  const toRecord = (/** @type {Map<string, Counter>} */ m) => Object.fromEntries([...m.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, c]) => [k, c.cells()]));
  const report = {
    settings: { since: opts.since ?? null, until: opts.until ?? null, model: opts.model ?? null, bandWidth: opts.bandWidth, minImpressions: opts.minImpressions },
    totals: { events, impressions: impressions.length, shown, clicks: hits, unmatched_clicks: unmatched, torn_lines: summary.torn, ctr: cell('all', hits, shown) },
    bands: dims.bands.cells(),
    positions: dims.positions.cells(),
    categories: dims.categories.cells(),
    sites: dims.sites.cells(),
    arms: dims.arms.cells(),
    armBands: toRecord(armBands),
    armCategories: toRecord(armCategories),
    losses: /** @type {Loss[]} */ ([]),
  };
  report.losses = [...findLosses('band', report.armBands, opts.minImpressions), ...findLosses('category', report.armCategories, opts.minImpressions)];
  return report;
}

/**
 * Every (cell, arm) whose CTR is significantly below another arm's in the same cell, both with at least
 * minImpressions impressions. Each pair is a separate 95 % test: with many cells, expect about one false flag
 * in twenty tied comparisons.
 * @param {'band'|'category'} dimension
 * @param {Record<string, Cell[]>} byArm
 * @param {number} minImpressions
 * @returns {Loss[]}
 */
export function findLosses(dimension, byArm, minImpressions) {
  const arms = Object.keys(byArm);
  const values = [...new Set(arms.flatMap((a) => byArm[a].map((c) => c.key)))].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  /** @type {Loss[]} */
  const out = [];
  for (const value of values) {
    for (const a of arms) {
      for (const b of arms) {
        if (a === b) continue;
        const ca = byArm[a].find((c) => c.key === value);
        const cb = byArm[b].find((c) => c.key === value);
        if (!ca || !cb || ca.impressions < minImpressions || cb.impressions < minImpressions) continue;
        const d = differenceInterval(ca, cb);
        if (d.high < 0) out.push({ dimension, value, arm: a, against: b, loser: ca, winner: cb, difference: d });
      }
    }
  }
  return out;
}
