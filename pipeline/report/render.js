// The training report page: one self-contained HTML file (inline CSS and SVG, no script, no network).
import { esc, fmt, table, clusterColor } from './html.js';
import { horizontalBars, histogram, lineChart, columnBars, scatter } from './svg.js';
import { renderEval } from './eval-table.js';
import { judgeClusters, FLAG_THRESHOLDS } from '../inspect/clusters.js';

const STAGES = ['tokenize', 'word2vec', 'idf', 'gmm', 'topics'];

export const CSS = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI","Noto Sans CJK JP","Hiragino Sans",sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2d44;color:#fff;padding:18px 28px}header h1{margin:0 0 4px;font-size:22px}header p{margin:0;opacity:.85}
main{padding:8px 28px 40px;max-width:1200px}
section{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:14px 18px;margin:16px 0}
h2{font-size:17px;margin:0 0 10px}.row{display:flex;flex-wrap:wrap;gap:24px}.row figure{margin:0}
figcaption{font-size:12px;color:#555;margin-top:2px}
table{border-collapse:collapse;font-size:13px}th,td{border-bottom:1px solid #e4e7ec;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f0f2f5}td.num{text-align:right}.facts td:first-child{color:#555}
.chart .lbl{font-size:12px;fill:#333}.chart .val,.chart .tick{font-size:11px;fill:#555}.chart .axis{stroke:#888}
.chart .frame{fill:#fcfcfd;stroke:#ccc}.chart .pt{font-size:11px;font-weight:600}
.flag{display:inline-block;background:#fde2e1;color:#9b1c1c;border-radius:3px;padding:0 5px;margin-right:3px;font-size:12px}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px}
.warn{color:#9b1c1c}.empty{color:#555;font-style:italic}code{background:#eef0f3;padding:0 3px;border-radius:3px}
.clusters td:nth-child(6){max-width:560px}
#eval table{width:100%;table-layout:fixed}#eval th,#eval td{overflow-wrap:anywhere}#eval .settings th:first-child{width:10em}#eval th.num{text-align:right}
#eval .note{font-size:12px;color:#555}.verdict{border-left:4px solid #1d2d44;padding:2px 0 2px 12px;margin-bottom:14px}
.verdict h3{margin:0 0 4px;font-size:15px}.verdict .headline{font-size:15px;margin:0 0 8px}
.word{font-weight:700}.word.better{color:#146c2e}.word.worse{color:#9b1c1c}.word.tied{color:#6b5900}
`;

/**
 * @param {object} input
 * @param {string} input.name model name
 * @param {Record<string, any>} input.manifest
 * @param {Record<string, any>} input.analysis see workers/scdv/analysis.py
 * @param {{result: Record<string, any> | null, error: string | null}} input.evaluation
 * @param {string} [input.clicks] the reader-clicks sections (pipeline/report/clicks.js), when the event log has impressions of the model
 * @param {string} [input.generatedAt]
 */
export function renderReport({ name, manifest: m, analysis: a, evaluation, clicks, generatedAt }) {
  const judged = judgeClusters(a);
  const sections = [
    overview(m, a),
    timings(m),
    vocabulary(a),
    gmm(a, judged),
    wordMap(a),
    clusterTable(a, judged),
    `<section id="eval"><h2>Evaluation</h2>${renderEval(evaluation)}</section>`,
    ...(clicks ? [clicks] : []),
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(`SCDV model ${name} — training report`)}</title>
<meta name="viewport" content="width=device-width,initial-scale=1"><style>${CSS}</style></head>
<body><header><h1>Model ${esc(name)}</h1><p>training report · trained ${esc(m.created_at ?? '?')} · generated ${esc(generatedAt ?? new Date().toISOString())}</p></header>
<main>
${sections.join('\n')}
</main></body></html>
`;
}

/** @param {Record<string, any>} m @param {Record<string, any>} a */
function overview(m, a) {
  const h = m.hyperparameters ?? {};
  const facts = [
    ['corpus', `${m.corpus?.path ?? '?'} (${fmt(m.corpus?.lines)} lines, sha256 ${String(m.corpus?.sha256 ?? '').slice(0, 12)}…)`],
    ['documents / tokens', `${fmt(m.tokens?.trainingDocuments)} / ${fmt(m.tokens?.tokens)}`],
    ['tokenizer', `${m.tokenizer?.dictionary?.name ?? '?'}, ${fmt(m.tokenizer?.stopwordCount)} stop-words`],
    ['vocabulary', fmt(m.counts?.vocabulary ?? a.n_words)],
    ['word2vec', `${h.word2vec?.vector_size} dims, window ${h.word2vec?.window}, min_count ${h.word2vec?.min_count}, ${h.word2vec?.epochs} epochs`],
    ['GMM', `${a.n_clusters} clusters, ${a.gmm.covariance_type} covariance, ${a.gmm.n_iter} EM iterations, ${a.gmm.converged ? 'converged' : 'not converged'}`],
    ['word-topic vectors', `${fmt(m.counts?.dims)} dims, density ${m.counts?.density == null ? '?' : `${(100 * m.counts.density).toFixed(2)} %`}`],
    ['coherence (mean NPMI)', a.coherence?.mean == null ? 'not computed (no tokenised corpus; scdv report --corpus FILE)' : `${fmt(a.coherence.mean, 3)} over ${fmt(a.corpus?.documents)} documents`],
  ];
  return `<section id="overview"><h2>Overview</h2>${table(['', ''], facts, { className: 'facts' })}</section>`;
}

/** @param {Record<string, any>} m */
function timings(m) {
  const t = m.timings ?? {};
  const items = STAGES.filter((s) => typeof t[`${s}_s`] === 'number')
    .map((s) => ({ label: s, value: t[`${s}_s`], note: m.stages?.[s]?.reused ? '(reused)' : '', color: s === 'gmm' ? '#c0504d' : '#4a7bb7' }));
  const chart = items.length ? horizontalBars(items, { title: 'Training time per stage', unit: ' s' }) : '<p class="empty">no timings in the manifest</p>';
  return `<section id="timings"><h2>Training time per stage</h2><figure>${chart}<figcaption>total ${fmt(t.total_s, 1)} s` +
    ` (reused stages show the time of the run that computed them)</figcaption></figure></section>`;
}

/** @param {Record<string, any>} a */
function vocabulary(a) {
  return `<section id="vocabulary"><h2>Vocabulary</h2><div class="row">` +
    `<figure>${histogram(a.vocab.count_histogram, { title: 'Word counts', xLabel: 'occurrences in the corpus' })}<figcaption>words per frequency band</figcaption></figure>` +
    `<figure>${histogram(a.vocab.idf_histogram, { title: 'IDF', xLabel: 'idf = ln((1+N)/(1+df)) + 1', color: '#6a9f58' })}<figcaption>words per idf band (high: rare)</figcaption></figure>` +
    `</div></section>`;
}

/**
 * @param {Record<string, any>} a
 * @param {import('../inspect/clusters.js').JudgedCluster[]} judged
 */
function gmm(a, judged) {
  const ll = /** @type {number[]} */ (a.gmm.loglik_history);
  const line = ll.length ? lineChart(ll, { title: 'GMM log-likelihood per EM iteration', xLabel: 'iteration', yLabel: 'mean log-likelihood' }) : '<p class="empty">no log-likelihood history</p>';
  const sizes = columnBars(judged.map((c) => ({
    label: `cluster ${c.cluster}`, value: c.size, color: c.flags.length ? '#c0504d' : clusterColor(c.cluster),
    note: `words${c.flags.length ? ` (${c.flags.join(', ')})` : ''} — ${c.topWords.slice(0, 5).map((w) => w.word).join(' ')}`,
  })), { title: 'Cluster sizes', xLabel: `cluster (0–${a.n_clusters - 1}); red: flagged`, width: 700 });
  return `<section id="gmm"><h2>Gaussian mixture</h2><div class="row">` +
    `<figure>${line}<figcaption>${ll.length} iterations, ${a.gmm.converged ? 'converged' : 'stopped at max_iter without converging'}</figcaption></figure>` +
    `<figure>${sizes}<figcaption>words whose most probable cluster it is</figcaption></figure></div></section>`;
}

/** @param {Record<string, any>} a */
function wordMap(a) {
  const mp = a.map;
  /** @type {Set<number>} */
  const labelled = new Set();
  const points = mp.words.map((/** @type {string} */ w, /** @type {number} */ i) => {
    const k = mp.cluster[i];
    // one text label per cluster: its best word on the map
    const label = mp.labelled[i] && !labelled.has(k) && a.clusters[k]?.top_words?.[0]?.word === w ? (labelled.add(k), w) : undefined;
    return { x: mp.x[i], y: mp.y[i], color: clusterColor(k), title: `${w} — cluster ${k} (P=${mp.p[i]})`, label };
  });
  const ev = mp.explained_variance_ratio ?? [0, 0];
  const chart = scatter(points, {
    title: 'Word vectors in 2-D (PCA), coloured by cluster',
    xLabel: `PC1 (${(100 * ev[0]).toFixed(1)} % of variance)`, yLabel: `PC2 (${(100 * ev[1]).toFixed(1)} %)`,
  });
  return `<section id="map"><h2>Word map</h2><figure>${chart}<figcaption>${fmt(mp.words.length)} of ${fmt(a.n_words)} words` +
    `${mp.sampled ? ' (sampled: every cluster\'s top words plus a random sample)' : ''}, projected on the first two principal components of the unit word vectors the GMM was fitted on; ` +
    'colour = most probable cluster; hover a point for its word; labels: each cluster\'s top word. A linear projection: clusters separated in 200 dims may overlap here.</figcaption></figure></section>';
}

/**
 * @param {Record<string, any>} a
 * @param {import('../inspect/clusters.js').JudgedCluster[]} judged
 */
function clusterTable(a, judged) {
  const rows = judged.map((c) => [
    { html: `<span class="sw" style="background:${clusterColor(c.cluster)}"></span>${c.cluster}` },
    c.size, fmt(c.weight, 3), c.coherence == null ? '–' : fmt(c.coherence, 2),
    { html: c.flags.map((f) => `<span class="flag">${esc(f)}</span>`).join('') || '' },
    c.topWords.map((w) => w.word).join(' '),
  ]);
  const note = a.corpus
    ? `Coherence: mean NPMI of each cluster's top ${a.top} word pairs over ${fmt(a.corpus.documents)} training documents (1: always together, 0: independent, −1: never together).`
    : 'Coherence was not computed: no tokenised training corpus was available (run <code>scdv report --corpus FILE</code>).';
  return `<section id="clusters"><h2>Clusters</h2><p>${note} Flags: incoherent (NPMI &lt; ${FLAG_THRESHOLDS.minCoherence}), ` +
    `empty, tiny (&lt; ${FLAG_THRESHOLDS.tinyShareOfMean} × the mean size), catch-all (&gt; ${FLAG_THRESHOLDS.catchAllMultipleOfMean} × the mean size), ` +
    `diffuse (mean P(k|w) of its words &lt; ${FLAG_THRESHOLDS.minMemberPosterior}). Top words by P(k|w)·idf.</p>` +
    table(['k', 'words', 'weight', 'NPMI', 'flags', 'top words'], rows, { className: 'clusters' }) + '</section>';
}
