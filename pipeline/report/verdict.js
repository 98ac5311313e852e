// The report's answer to "is this model good?": SCDV against each baseline on P@10, the difference with a paired
// bootstrap confidence interval over queries (eval.json's per_query figures), in plain words.
import { BOOTSTRAP, intervalWord, pairedBootstrap } from '../eval/relevance-metrics.js';
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

/**
 * What the eval scored: the corpus the model was trained on (eval.json's corpus sha256 is the training corpus's),
 * a held-out part of it (`scdv eval --holdout`), or another corpus.
 * @param {Record<string, any>} result eval.json
 * @returns {{kind: 'training'|'held-out'|'other', text: string}}
 */
export function scoredOn(result) {
  const h = result.holdout;
  if (h) {
    return { kind: 'held-out', text: `scored ${h.test_documents} held-out documents, which model ${h.model} (${result.model}'s settings, ` +
      `trained on the other ${h.train_documents}) never saw` };
  }
  if (result.corpus?.training) {
    return { kind: 'training', text: `scored the ${result.corpus.documents} documents the model was trained on (its word vectors and ` +
      'topics were fit on their words, not on their labels); --holdout 0.2 trains on 80 % and scores the other 20 %' };
  }
  return { kind: 'other', text: `scored ${result.corpus?.documents ?? '?'} documents of a corpus other than the training corpus` };
}

/**
 * The verdict as plain text (what `scdv eval` prints; the report says the same): the answer, then each baseline
 * with its difference and interval, then what was scored. [] when there is nothing to judge (--no-baselines).
 * @param {Record<string, any>} result eval.json
 * @returns {string[]}
 */
export function verdictLines(result) {
  const comparisons = compareWithBaselines(result);
  if (!comparisons.length) return [];
  const pct = VERDICT_BOOTSTRAP.confidence * 100;
  const answer = headline(comparisons).replace(/<[^>]+>/g, '').replace(/&amp;/g, '&');
  return [
    `verdict: ${answer}`,
    ...comparisons.map((c) => `  ${c.word.padEnd(10)} vs ${c.label}: P@10 ${(100 * c.model).toFixed(1)} vs ${(100 * c.other).toFixed(1)} %, ` +
      `${points(c.diff)} points` + (c.interval ? ` (${pct} % interval ${points(c.interval.low)} to ${points(c.interval.high)})` : '')),
    `  (${scoredOn(result).text})`,
  ];
}

/**
 * The verdict for `scdv eval --json`: {"answer", "comparisons": [{baseline, word, diff, low, high}], "scored_on"}
 * (fractions, not points), or null when there is nothing to judge.
 * @param {Record<string, any>} result eval.json
 */
export function verdictJson(result) {
  const comparisons = compareWithBaselines(result);
  if (!comparisons.length) return null;
  const judged = comparisons.filter((c) => c.word !== 'not judged');
  const answer = !judged.length ? 'not judged' : judged.some((c) => c.word === 'worse') ? 'worse'
    : judged.some((c) => c.word === 'tied') ? 'tied' : 'better';
  return {
    answer,
    comparisons: comparisons.map((c) => ({ baseline: c.baseline, word: c.word, model: c.model, other: c.other, diff: c.diff, low: c.interval?.low ?? null, high: c.interval?.high ?? null })),
    scored_on: scoredOn(result).kind,
  };
}

/**
 * The report's first section: the verdict's answer, what was scored, and what a "no better than random" cluster
 * coherence means beside it ('' when eval.json has nothing to judge).
 * @param {Record<string, any> | null} result eval.json
 * @param {string} coherenceWord coherenceScale(analysis).word
 */
export function renderVerdictSummary(result, coherenceWord) {
  const comparisons = result ? compareWithBaselines(result) : [];
  if (!result || !comparisons.length) return '';
  const coherence = coherenceWord === 'no better than random' || coherenceWord === 'worse than random'
    ? `<p class="note">The clusters' coherence is ${esc(coherenceWord)} (<a href="#advice">below</a>): it counts how often a ` +
      'cluster\'s top words occur in the same training documents, which a small corpus rarely shows. It does not decide ' +
      'whether the vectors find related documents; the verdict above measures that.</p>'
    : '';
  return `<section id="answer"><h2>Is this model good?</h2><p class="headline">${headline(comparisons)} ` +
    '(<a href="#verdict">details</a>)</p>' +
    `<p class="note">The evaluation ${esc(scoredOn(result).text)}.</p>${coherence}</section>`;
}
