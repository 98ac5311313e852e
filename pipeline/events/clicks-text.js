// `scdv report clicks` as text: one table per breakdown, then the losses.

/** @param {number} v */
const pct = (v) => `${(100 * v).toFixed(2)}%`;

/**
 * @param {string} title
 * @param {import('./clicks.js').Cell[]} cells
 */
function block(title, cells) {
  const rows = cells.map((c) => [c.key, String(c.impressions), String(c.clicks), pct(c.ctr), `${pct(c.low)}-${pct(c.high)}`]);
  const head = [title, 'impressions', 'clicks', 'CTR', '95% interval'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (/** @type {string[]} */ r) => r.map((v, i) => (i === 0 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ');
  return [line(head), ...rows.map(line)].join('\n');
}

/**
 * @param {import('./clicks.js').ClickReport} report
 * @returns {string}
 */
export function formatClickReport(report) {
  const t = report.totals;
  const out = [
    `events ${t.events}, impressions ${t.impressions} (items shown ${t.shown}), clicks ${t.clicks}, CTR ${pct(t.ctr.ctr)} (${pct(t.ctr.low)}-${pct(t.ctr.high)})` +
      `${t.unmatched_clicks ? `, clicks without an impression ${t.unmatched_clicks}` : ''}${t.torn_lines ? `, torn log lines skipped ${t.torn_lines}` : ''}`,
  ];
  if (t.impressions === 0) return `${out[0]}\n`;
  out.push('', block('arm', report.arms), '', block('similarity band', report.bands));
  for (const [arm, cells] of Object.entries(report.armBands)) if (Object.keys(report.armBands).length > 1) out.push('', block(`band, arm ${arm}`, cells));
  out.push('', block('position', report.positions), '', block('genre', report.categories), '', block('site', report.sites), '');
  if (!report.losses.length) out.push(`no arm loses significantly in any band or genre (cells with at least ${report.settings.minImpressions} impressions per arm)`);
  for (const l of report.losses) {
    out.push(`LOSS: arm ${l.arm} loses to ${l.against} in ${l.dimension} ${l.value}: CTR ${pct(l.loser.ctr)} vs ${pct(l.winner.ctr)}, ` +
      `difference ${(100 * l.difference.diff).toFixed(2)} points (95%: ${(100 * l.difference.low).toFixed(2)} to ${(100 * l.difference.high).toFixed(2)}), ` +
      `${l.loser.impressions} vs ${l.winner.impressions} impressions`);
  }
  return `${out.join('\n')}\n`;
}
