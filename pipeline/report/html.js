// HTML helpers of the training report: escaping (every text put into the page goes through esc) and tables.

/**
 * Escape text for HTML element content and attribute values.
 * @param {unknown} value
 */
export function esc(value) {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/**
 * A number for display: integers with thousands separators, others to `digits` significant decimals.
 * @param {unknown} value
 * @param {number} [digits]
 */
export function fmt(value, digits = 3) {
  if (value === null || value === undefined) return '–';
  if (typeof value !== 'number') return String(value);
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  return Math.abs(value) >= 1000 ? value.toLocaleString('en-US', { maximumFractionDigits: 1 }) : value.toFixed(digits);
}

/**
 * A table; cells are escaped unless given as {html: string}. Without headers (null), no header row.
 * @param {string[] | null} headers
 * @param {(string|number|null|undefined|{html: string})[][]} rows
 * @param {{className?: string}} [opts]
 */
export function table(headers, rows, opts = {}) {
  /** @param {any} c */
  const cell = (c) => (c && typeof c === 'object' && 'html' in c ? c.html : esc(typeof c === 'number' ? fmt(c) : c ?? '–'));
  const head = headers ? `<thead><tr>${headers.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead>` : '';
  return `<table${opts.className ? ` class="${esc(opts.className)}"` : ''}>${head}` +
    `<tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${cell(c)}</td>`).join('')}</tr>`).join('\n')}</tbody></table>`;
}

/**
 * Colours of the clusters that get one: the largest, one distinct colour each (no red: red means "flagged").
 * Eye and legend tell apart about eight colours, not sixty; the other clusters are drawn muted.
 */
export const CLUSTER_PALETTE = Object.freeze(['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#17becf', '#9c755f', '#bcbd22', '#2f4b7c']);

/**
 * The colour of each cluster: the CLUSTER_PALETTE.length largest get the palette, in size order; the rest none.
 * @param {{cluster: number, size: number}[]} clusters
 * @returns {Map<number, string>} cluster id -> colour, for the coloured ones only
 */
export function clusterColors(clusters) {
  const largest = [...clusters].sort((a, b) => b.size - a.size || a.cluster - b.cluster).slice(0, CLUSTER_PALETTE.length);
  return new Map(largest.filter((c) => c.size > 0).map((c, i) => [c.cluster, CLUSTER_PALETTE[i]]));
}
