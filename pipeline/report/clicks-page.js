// Reader clicks on a page (scdv report clicks --html) and as a section of report.html: CTR per similarity band and
// position per arm with Wilson intervals, genres, sites, and the cells where an arm loses significantly.
import { esc, fmt, table } from './html.js';
import { intervalChart } from './svg.js';
import { CSS } from './render.js';

const ARM_COLORS = ['#4a7bb7', '#c0504d', '#6a9f58', '#8064a2', '#d08b2c', '#2c9fa3'];

/** @param {number} v */
const pct = (v) => `${(100 * v).toFixed(2)} %`;
/** @param {import('../events/clicks.js').Cell} c */
const interval = (c) => `${pct(c.low)} – ${pct(c.high)}`;

/**
 * @param {import('../events/clicks.js').Cell[]} cells
 * @param {string} what the first column
 */
function cellTable(cells, what) {
  return table([what, 'impressions', 'clicks', 'CTR', '95 % interval'],
    cells.map((c) => [c.key, c.impressions, c.clicks, pct(c.ctr), interval(c)]), { className: 'ctr' });
}

/**
 * One chart of a per-arm breakdown (bands or positions).
 * @param {Record<string, import('../events/clicks.js').Cell[]>} byArm
 * @param {string[]} xs
 * @param {string} title
 * @param {string} xLabel
 */
function armChart(byArm, xs, title, xLabel) {
  const series = Object.entries(byArm).map(([arm, cells], i) => ({
    name: arm, color: ARM_COLORS[i % ARM_COLORS.length],
    points: cells.map((c) => ({ x: c.key, value: c.ctr, low: c.low, high: c.high, n: c.impressions })),
  }));
  return intervalChart(xs, series, { title, xLabel, yLabel: 'CTR' });
}

/** @param {import('../events/clicks.js').Loss[]} losses @param {number} minImpressions */
function lossList(losses, minImpressions) {
  if (!losses.length) {
    return `<p id="no-losses">No arm loses significantly in any band or genre (cells with at least ${fmt(minImpressions)} impressions per arm).</p>`;
  }
  const rows = losses.map((l) => [
    l.dimension === 'band' ? `similarity ${l.value}` : `genre ${l.value}`,
    { html: `<span class="flag">${esc(l.arm)}</span>` }, l.against,
    `${pct(l.loser.ctr)} vs ${pct(l.winner.ctr)}`,
    `${(100 * l.difference.diff).toFixed(2)} (${(100 * l.difference.low).toFixed(2)} to ${(100 * l.difference.high).toFixed(2)})`,
    `${fmt(l.loser.impressions)} / ${fmt(l.winner.impressions)}`,
  ]);
  return `<div id="losses">${table(['where', 'loses', 'to', 'CTR', 'difference, points (95 %)', 'impressions'], rows, { className: 'losses' })}</div>`;
}

/**
 * The report's sections (without the page around them).
 * @param {import('../events/clicks.js').ClickReport} report
 */
export function renderClicks(report) {
  const t = report.totals;
  if (t.impressions === 0) return '<p class="empty" id="no-events">no impressions in the event log for this range</p>';
  const bands = [...new Set(report.bands.map((c) => c.key))];
  const range = [report.settings.since && `from ${esc(report.settings.since)}`, report.settings.until && `until ${esc(report.settings.until)}`].filter(Boolean).join(' ') || 'all events';
  const facts = [
    ['range', range], ['impressions (lists shown)', fmt(t.impressions)], ['items shown', fmt(t.shown)], ['clicks', fmt(t.clicks)],
    ['CTR', `${pct(t.ctr.ctr)} (${interval(t.ctr)})`], ['clicks without an impression', fmt(t.unmatched_clicks)],
    ['torn log lines skipped', fmt(t.torn_lines)],
  ];
  return [
    `<section id="clicks-overview"><h2>Reader clicks</h2>${table(null, facts, { className: 'facts' })}` +
      '<p class="note">Each item of a shown list is one impression; CTR = clicks / impressions, with a Wilson 95 % interval.</p></section>',
    `<section id="clicks-losses"><h2>Where an arm loses</h2>${lossList(report.losses, report.settings.minImpressions)}` +
      '<p class="note">A loss: the 95 % interval of the CTR difference (Newcombe) lies wholly below 0. Each cell is its own test: ' +
      'among many tied cells, about one in twenty is flagged by chance.</p></section>',
    `<section id="clicks-bands"><h2>CTR per similarity band</h2><figure>${armChart(report.armBands, bands, 'CTR per similarity band and arm', 'similarity band')}` +
      `<figcaption>score of the shown item (the arm method's cosine), band width ${report.settings.bandWidth}</figcaption></figure>${cellTable(report.bands, 'band')}</section>`,
    `<section id="clicks-arms"><h2>CTR per arm</h2>${cellTable(report.arms, 'arm')}</section>`,
    `<section id="clicks-positions"><h2>CTR per position</h2>${cellTable(report.positions, 'position')}</section>`,
    `<section id="clicks-genres"><h2>CTR per genre (the page's category)</h2><figure>${armChart(report.armCategories, report.categories.map((c) => c.key), 'CTR per genre and arm', 'genre')}</figure>` +
      `${cellTable(report.categories, 'genre')}</section>`,
    `<section id="clicks-sites"><h2>CTR per site</h2>${cellTable(report.sites, 'site')}</section>`,
  ].join('\n');
}

/**
 * A self-contained page (inline CSS and SVG, no script, no network), in the training report's style.
 * @param {import('../events/clicks.js').ClickReport} report
 * @param {{generatedAt?: string}} [opts]
 */
export function renderClicksPage(report, opts = {}) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Reader clicks — CTR report</title>
<meta name="viewport" content="width=device-width,initial-scale=1"><style>${CSS}.note{font-size:12px;color:#555}</style></head>
<body><header><h1>Reader clicks</h1><p>CTR report${report.settings.model ? ` · model ${esc(report.settings.model)}` : ''} · generated ${esc(opts.generatedAt ?? new Date().toISOString())}</p></header>
<main>
${renderClicks(report)}
</main></body></html>
`;
}
