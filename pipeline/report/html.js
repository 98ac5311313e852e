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
 * @param {unknown} v
 * @param {number} [digits]
 */
export function fmt(v, digits = 3) {
  if (v === null || v === undefined) return '–';
  if (typeof v !== 'number') return String(v);
  if (!Number.isFinite(v)) return String(v);
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  return Math.abs(v) >= 1000 ? v.toLocaleString('en-US', { maximumFractionDigits: 1 }) : v.toFixed(digits);
}

/**
 * A table; cells are escaped unless given as {html: string}.
 * @param {string[]} headers
 * @param {(string|number|null|undefined|{html: string})[][]} rows
 * @param {{className?: string}} [opts]
 */
export function table(headers, rows, opts = {}) {
  /** @param {any} c */
  const cell = (c) => (c && typeof c === 'object' && 'html' in c ? c.html : esc(typeof c === 'number' ? fmt(c) : c ?? '–'));
  return `<table${opts.className ? ` class="${esc(opts.className)}"` : ''}><thead><tr>${headers.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead>` +
    `<tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${cell(c)}</td>`).join('')}</tr>`).join('\n')}</tbody></table>`;
}

/**
 * Colour of cluster k: hues spread by the golden angle, so neighbouring ids differ.
 * @param {number} k
 */
export function clusterColor(k) {
  const hue = (k * 137.508) % 360;
  const light = [42, 55, 34][k % 3];
  return `hsl(${hue.toFixed(1)},68%,${light}%)`;
}
