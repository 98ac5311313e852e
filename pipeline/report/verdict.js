// The report's answer to "is this model good?": SCDV against each baseline on P@10, the difference with a paired
// bootstrap confidence interval over queries (eval.json's per_query figures), in plain words.
import { BOOTSTRAP, intervalWord, pairedBootstrap } from '../eval/metrics.js';
import { esc } from './html.js';

/** The verdict's statistics: fixed, so that every report of the same eval.json says the same. */
export const VERDICT_BOOTSTRAP = BOOTSTRAP;

/** Baselines the model is judged against, with their names on the page. */
const BASELINES = /** @type {const} */ ([['tfidf', 'TF-IDF'], ['mlt', 'more_like_this'], ['mlt_opensearch', 'more_like_this (OpenSearch)']]);

/**
 * @typedef {object} Comparison
 * @property {string} baseline eval.json key
 * @property {string} label name on the page
 * @property {number} model P@10 of the model
 * @property {number} other P@10 of the baseline
 * @property {number} diff model − baseline (a fraction)
 * @property {{low: number, high: number} | null} interval null when eval.json has no per-query figures
 * @property {'better'|'tied'|'worse'|'not judged'} word tied when the interval contains 0
 */

/**
 * @param {Record<string, any>} result eval.json
 * @returns {Comparison[]}
 */
export function compareWithBaselines(result) {
  const hits = result.per_query?.hits_at_10 ?? {};
  /** @type {Comparison[]} */
  const out = [];
  for (const [key, label] of BASELINES) {
    const a = result.scdv;
    const b = result[key];
    if (typeof a?.p_at_10 !== 'number' || typeof b?.p_at_10 !== 'number') continue;
    const ha = hits.scdv;
    const hb = hits[key];
    const paired = Array.isArray(ha) && Array.isArray(hb) && ha.length > 0 && ha.length === hb.length;
    const interval = paired ? pairedBootstrap(ha.map((h) => h / 10), hb.map((h) => h / 10), VERDICT_BOOTSTRAP) : null;
    /** @type {Comparison['word']} */
    const word = interval ? intervalWord(interval) : 'not judged';
    out.push({ baseline: key, label, model: a.p_at_10, other: b.p_at_10, diff: interval ? interval.diff : a.p_at_10 - b.p_at_10, interval, word });
  }
  return out;
}

/** @param {number} x a fraction -> signed percentage points */
const points = (x) => {
  const shown = Math.abs(100 * x).toFixed(1);
  return `${shown === '0.0' ? '±' : x > 0 ? '+' : '−'}${shown}`;
};

/**
 * @param {Comparison[]} comparisons
 * @returns {string}
 */
function headline(comparisons) {
  const judged = comparisons.filter((c) => c.word !== 'not judged');
  if (!judged.length) return 'Not judged: eval.json has no per-query figures (run <code>scdv eval</code> again).';
  const names = (/** @type {Comparison[]} */ cs) => cs.map((c) => esc(c.label)).join(' and ');
  const worse = judged.filter((c) => c.word === 'worse');
  const tied = judged.filter((c) => c.word === 'tied');
  if (worse.length) return `No: <b>worse</b> than ${names(worse)} on P@10. Try other settings (<code>scdv eval --sweep</code>) before serving it.`;
  if (tied.length) {
    const better = judged.filter((c) => c.word === 'better');
    return `Not clearly: <b>tied</b> with ${names(tied)}${better.length ? `, better than ${names(better)}` : ''} on P@10 — the difference is within the noise of these queries.`;
  }
  return `Yes: <b>better</b> than ${names(judged)} on P@10.`;
}

/**
 * The verdict panel (empty when eval.json has no SCDV or baseline figures, e.g. an eval with --no-baselines).
 * @param {Record<string, any>} result eval.json
 * @param {string} modelLabel the model's row name
 */
export function renderVerdict(result, modelLabel) {
  const comparisons = compareWithBaselines(result);
  if (!comparisons.length) return '';
  const pct = VERDICT_BOOTSTRAP.confidence * 100;
  const rows = comparisons.map((c) => `<tr><td>${esc(c.label)}</td><td class="num">${(100 * c.other).toFixed(1)} %</td>` +
    `<td class="num">${points(c.diff)}</td>` +
    `<td class="num">${c.interval ? `${points(c.interval.low)} to ${points(c.interval.high)}` : '–'}</td>` +
    `<td class="word ${c.word.replace(' ', '-')}">${c.word}</td></tr>`).join('');
  const queries = result.scdv?.queries;
  return `<div class="verdict" id="verdict"><h3>Is this model good?</h3><p class="headline">${headline(comparisons)}</p>` +
    `<table class="verdict-table"><thead><tr><th>${esc(modelLabel)} (P@10 ${(100 * result.scdv.p_at_10).toFixed(1)} %) against</th>` +
    '<th class="num">its P@10</th><th class="num">difference (points)</th>' +
    `<th class="num">${pct} % interval</th><th>verdict</th></tr></thead><tbody>${rows}</tbody></table>` +
    `<p class="note">P@10: the share of each document's 10 nearest documents that carry its label, averaged over ` +
    `${typeof queries === 'number' ? queries.toLocaleString('en-US') : 'the'} queries. The interval comes from a paired bootstrap ` +
    `over queries (${VERDICT_BOOTSTRAP.resamples.toLocaleString('en-US')} resamples): <b>better</b> or <b>worse</b> when it ` +
    'lies wholly above or below 0, <b>tied</b> when it contains 0.</p></div>';
}
