// The latest evaluation (models/<name>/eval.json, written by `scdv eval`), rendered generically: every
// top-level object of numbers is a method (a row); the numeric keys are the columns; `settings` and `date`
// are shown as they are. Keys may vary between versions of `scdv eval`: nothing here names a metric.
import fs from 'node:fs';
import path from 'node:path';
import { esc, fmt, table } from './html.js';

export const EVAL_FILE = 'eval.json';

/**
 * @param {string} modelDir
 * @returns {{result: Record<string, any> | null, error: string | null}}
 */
export function readEval(modelDir) {
  const file = path.join(modelDir, EVAL_FILE);
  if (!fs.existsSync(file)) return { result: null, error: null };
  try {
    const result = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (!result || typeof result !== 'object' || Array.isArray(result)) return { result: null, error: `${EVAL_FILE} is not a JSON object` };
    return { result, error: null };
  } catch (err) {
    return { result: null, error: `${EVAL_FILE} is unreadable: ${/** @type {Error} */ (err).message}` };
  }
}

/** @param {unknown} v */
const isPlain = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * @param {Record<string, any>} result
 * @returns {{columns: string[], rows: {method: string, values: Record<string, any>}[]}}
 */
export function evalRows(result) {
  /** @type {string[]} */
  const columns = [];
  const rows = [];
  for (const [method, v] of Object.entries(result)) {
    if (method === 'settings' || !isPlain(v)) continue;
    const metrics = Object.entries(v).filter(([, x]) => typeof x === 'number');
    if (!metrics.length) continue;
    for (const [k] of metrics) if (!columns.includes(k)) columns.push(k);
    rows.push({ method, values: v });
  }
  return { columns, rows };
}

/** @param {string} key @param {number} v */
function metric(key, v) {
  return /(_ms|seconds|_s)$/.test(key) ? fmt(v, 2) : fmt(v, 4);
}

/**
 * @param {{result: Record<string, any> | null, error: string | null}} ev
 */
export function renderEval(ev) {
  if (ev.error) return `<p class="warn">${esc(ev.error)}</p>`;
  if (!ev.result) return '<p class="empty" id="no-eval">no evaluation yet — run <code>scdv eval</code></p>';
  const { columns, rows } = evalRows(ev.result);
  const parts = [];
  if (ev.result.date) parts.push(`<p>evaluated ${esc(ev.result.date)}</p>`);
  parts.push(rows.length
    ? table(['method', ...columns], rows.map((r) => [r.method, ...columns.map((c) => (typeof r.values[c] === 'number' ? metric(c, r.values[c]) : '–'))]), { className: 'eval' })
    : '<p class="warn">eval.json holds no metrics</p>');
  if (isPlain(ev.result.settings)) {
    parts.push('<details><summary>settings</summary>' + table(['setting', 'value'], Object.entries(ev.result.settings)
      .map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)])) + '</details>');
  }
  return parts.join('\n');
}
