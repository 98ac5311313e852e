// The latest evaluation (models/<name>/eval.json, written by `scdv eval`): the verdict panel on top, then one row
// per method with the figures a reader compares, in words and percentages; the rest stays in eval.json. A method
// is a top-level object holding at least one of the figures below; keys this page does not know are left out.
import fs from 'node:fs';
import path from 'node:path';
import { esc, fmt, table } from './html.js';
import { renderVerdict } from './verdict.js';

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

/** @param {number} v a fraction */
const percent = (v) => `${(100 * v).toFixed(1)} %`;
/** @param {number} v */
const ms = (v) => `${fmt(v, 2)} ms`;

/** The table's columns: eval.json key, heading, what it means (the heading's tooltip), format. */
export const EVAL_COLUMNS = /** @type {const} */ ([
  ['p_at_1', 'P@1', 'share of queries whose nearest document carries their label', percent],
  ['p_at_10', 'P@10', 'share of the 10 nearest documents that carry the query\'s label', percent],
  ['map_at_10', 'MAP@10', 'mean average precision of the first 10: rewards relevant documents ranked early', percent],
  ['accuracy', 'classifier accuracy', 'k-fold accuracy of a linear classifier (LinearSVC) on the vectors', percent],
  ['median_latency_ms', 'median search', 'median time of one query (SCDV: the store; baselines: brute force in scipy)', ms],
  ['p95_latency_ms', '95th pct search', '95th percentile time of one query', ms],
]);

/** Method names on the page; other methods keep their key (mlt_opensearch: engineMltLabel). */
const METHOD_NAMES = { tfidf: 'TF-IDF', mlt: 'more_like_this' };

/**
 * The name of the row OpenSearch's own more_like_this scored (eval.json `mlt_opensearch`), with the engine's major
 * and minor version: "OpenSearch 2.19.3" -> "more_like_this (OpenSearch 2.19)".
 * @param {string | undefined} engine
 */
export const engineMltLabel = (engine) => `more_like_this (${(engine ?? 'OpenSearch').replace(/^(\S+ \d+\.\d+)\.\d+.*$/, '$1')})`;

/**
 * The model's row name: its vector layout (and the hybrid's α) from the evaluation's settings.
 * @param {Record<string, any>} result
 */
export function modelLabel(result) {
  const s = result.settings;
  return s?.layout?.kind === 'hybrid' ? `SCDV hybrid (α ${s.embed?.hybrid?.alpha ?? '?'})` : 'SCDV';
}

/**
 * @param {Record<string, any>} result
 * @returns {{method: string, label: string, values: Record<string, any>}[]}
 */
export function evalRows(result) {
  const rows = [];
  for (const [method, v] of Object.entries(result)) {
    if (!isPlain(v) || !EVAL_COLUMNS.some(([key]) => typeof v[key] === 'number')) continue;
    const label = method === 'scdv' ? modelLabel(result) : method === 'mlt_opensearch' ? engineMltLabel(v.engine)
      : METHOD_NAMES[/** @type {keyof typeof METHOD_NAMES} */ (method)] ?? method;
    rows.push({ method, label, values: v });
  }
  return rows;
}

/**
 * @param {{result: Record<string, any> | null, error: string | null}} evaluation
 */
export function renderEval(evaluation) {
  if (evaluation.error) return `<p class="warn">${esc(evaluation.error)}</p>`;
  if (!evaluation.result) return '<p class="empty" id="no-eval">no evaluation yet — run <code>scdv eval</code></p>';
  const r = evaluation.result;
  const rows = evalRows(r);
  const columns = EVAL_COLUMNS.filter(([key]) => rows.some((row) => typeof row.values[key] === 'number'));
  const parts = [renderVerdict(r, modelLabel(r))];
  const about = [r.date && `evaluated ${esc(r.date)}`, r.corpus?.documents && `${fmt(r.corpus.documents)} documents`,
    r.label_field && `label <code>${esc(r.label_field)}</code>`].filter(Boolean);
  if (about.length) parts.push(`<p>${about.join(' · ')}</p>`);
  const head = `<tr><th>method</th>${columns.map(([, name, title]) => `<th class="num" title="${esc(title)}">${esc(name)}</th>`).join('')}</tr>`;
  const body = rows.map((row) => `<tr><td>${esc(row.label)}</td>${columns.map(([key, , , format]) => {
    const v = row.values[key];
    return `<td class="num">${typeof v === 'number' ? esc(format(v)) : '–'}</td>`;
  }).join('')}</tr>`).join('\n');
  parts.push(rows.length
    ? `<table class="eval"><thead>${head}</thead><tbody>${body}</tbody></table>` +
      `<p class="note">${columns.map(([, name, title]) => `<b>${esc(name)}</b>: ${esc(title)}`).join('; ')}.</p>`
    : '<p class="warn">eval.json holds no metrics</p>');
  if (isPlain(r.settings)) {
    parts.push('<details><summary>settings</summary>' + table(['setting', 'value'], Object.entries(r.settings)
      .map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)]), { className: 'settings' }) + '</details>');
  }
  return parts.join('\n');
}
