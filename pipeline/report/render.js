// The training report page: one self-contained HTML file (inline CSS and SVG, no script, no network).
import { esc, fmt, table, clusterColors } from './html.js';
import { horizontalBars, histogram, lineChartSvg, columnBars, scatter, stripChart, FLAGGED_COLOR, BAR_COLOR, MUTED_COLOR } from './svg.js';
import { renderEval } from './eval-table.js';
import { renderVerdictSummary } from './verdict.js';
import { judgeClusters, FLAG_THRESHOLDS } from '../inspect/clusters.js';
import { clusterAdvice, coherenceScale } from '../inspect/advice.js';

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
.chart{max-width:100%;height:auto}.chart .lbl{font-size:12px;fill:#333}.chart .val,.chart .tick{font-size:11px;fill:#555}.chart line.axis{stroke:#888}.chart .grid{stroke:#e8eaee}
.chart .frame{fill:#fcfcfd;stroke:#ccc}.chart .pt{font-size:11px;font-weight:600;paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
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
 * @param {string} [input.clicks] the reader-clicks sections (pipeline/report/clicks-page.js), when the event log has impressions of the model
 * @param {string} [input.generatedAt]
 */
export function renderReport({ name, manifest, analysis, evaluation, clicks, generatedAt }) {
  const judged = judgeClusters(analysis);
  const colors = clusterColors(judged);
  const sections = [
    renderVerdictSummary(evaluation.result, coherenceScale(analysis).word),
    overview(manifest, analysis),
    adviceSection(name, manifest, analysis, judged),
    timings(manifest),
    vocabulary(analysis),
    gmm(analysis, judged),
    wordMap(analysis, judged, colors),
    clusterTable(analysis, judged, colors),
    `<section id="eval"><h2>Evaluation</h2>${renderEval(evaluation)}</section>`,
    ...(clicks ? [clicks] : []),
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(`SCDV model ${name} — training report`)}</title>
<meta name="viewport" content="width=device-width,initial-scale=1"><style>${CSS}</style></head>
<body><header><h1>Model ${esc(name)}</h1><p>training report · trained ${esc(manifest.created_at ?? '?')} · generated ${esc(generatedAt ?? new Date().toISOString())}</p></header>
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
    ['coherence (mean NPMI)', a.coherence?.mean == null ? 'not computed (no tokenised corpus; scdv report --corpus FILE)'
      : `${fmt(a.coherence.mean, 3)} over ${fmt(a.corpus?.documents)} documents` +
        (a.coherence.random ? `; random word sets ${fmt(a.coherence.random.mean, 3)}: ${coherenceScale(a).word} (see below)` : '')],
  ];
  return `<section id="overview"><h2>Overview</h2>${table(null, facts, { className: 'facts' })}</section>`;
}

/**
 * "Are the clusters any good, and are there too many?": coherence on its scale against random word sets, and the
 * cluster-count advice (pipeline/inspect/advice.js, which scdv train prints too).
 * @param {string} name
 * @param {Record<string, any>} m
 * @param {Record<string, any>} a
 * @param {import('../inspect/clusters.js').JudgedCluster[]} judged
 */
function adviceSection(name, m, a, judged) {
  const scale = coherenceScale(a);
  const advice = clusterAdvice({ analysis: a, judged, manifest: m, modelName: name });
  const n3 = (/** @type {number} */ v) => fmt(v, 3).replace('-', '−');
  let coherence;
  if (scale.mean === null) {
    coherence = '<p class="empty">Coherence was not computed: no tokenised training corpus was available (run <code>scdv report --corpus FILE</code>).</p>';
  } else {
    const r = scale.random;
    const versus = r
      ? ` Random word sets of the same sizes and word frequencies, scored on the same ${fmt(a.corpus?.documents)} documents, give ` +
        `${n3(r.mean)} on average (90 % of ${fmt(r.sets)} sets between ${n3(r.p05)} and ${n3(r.p95)}): this model's clusters are ` +
        `<b class="word ${scale.word === 'better than random' ? 'better' : scale.word === 'worse than random' ? 'worse' : 'tied'}">${scale.word}</b>; ` +
        `${scale.aboveRandom} of ${scale.scored} clusters score above 95 % of the random sets.`
      : ` No random yardstick in this analysis (computed before it existed): <code>scdv report --model ${esc(name)} --refresh</code> adds it ` +
        '(with <code>--corpus FILE</code> when the training run\'s work folder is gone).';
    const chart = stripChart(judged.filter((c) => c.coherence !== null).map((c) => ({
      value: /** @type {number} */ (c.coherence), title: `cluster ${c.cluster}: NPMI ${n3(/** @type {number} */ (c.coherence))} — ${c.topWords.slice(0, 5).map((w) => w.word).join(' ')}`,
      color: c.flags.length ? FLAGGED_COLOR : BAR_COLOR,
    })), {
      title: 'Cluster coherence on the NPMI scale', xLabel: 'NPMI: −1 never together · 0 as chance · 1 always together', min: -1, max: 1,
      dotText: 'a cluster (red: flagged)', band: r ? { from: r.p05, to: r.p95, text: 'random sets, 5–95 %' } : undefined,
      marks: [{ value: scale.mean, text: 'model mean', color: '#1d2d44' }],
    });
    coherence = `<p>Coherence is the mean NPMI of each cluster's top ${a.top} word pairs over the training documents: ` +
      `1 when the words always appear in the same documents, 0 when they meet as often as chance would have it, −1 when they never meet. ` +
      `Rare top words on a small corpus rarely meet, so the figure is judged against random word sets, not against 0. ` +
      `This model: <b>${n3(scale.mean)}</b>.${versus}</p><figure>${chart}</figure>`;
  }
  const count = `<p${advice.overClustered ? ' class="warn"' : ''}>Cluster count: ${esc(advice.reason)}</p>` +
    (advice.command ? `<p>Train one with ${advice.suggested} clusters, then compare the two with <code>scdv eval</code> and their reports: <code>${esc(advice.command)}</code></p>` : '');
  return `<section id="advice"><h2>Clusters: coherence and count</h2>${coherence}${count}</section>`;
}

/** @param {Record<string, any>} m */
function timings(m) {
  const t = m.timings ?? {};
  const items = STAGES.filter((s) => typeof t[`${s}_s`] === 'number')
    .map((s) => ({ label: s, value: t[`${s}_s`], note: m.stages?.[s]?.reused ? '(reused)' : '', color: BAR_COLOR }));
  const anyReused = STAGES.some((s) => m.stages?.[s]?.reused);
  const stagesSum = items.reduce((n, i) => n + i.value, 0);
  // The stage timers cover each stage's own work; the rest of the run is shown, not left unexplained.
  const outside = typeof t.total_s === 'number' && !anyReused ? t.total_s - stagesSum : null;
  if (outside !== null && outside > 0.05) items.push({ label: 'other', value: outside, note: '', color: MUTED_COLOR });
  const chart = items.length
    ? horizontalBars(items, {
      title: 'Training time per stage', unit: ' s', axisLabel: 'seconds',
      legend: outside !== null && outside > 0.05 ? [{ color: BAR_COLOR, text: 'stage (its own timer)' }, { color: MUTED_COLOR, text: 'other: outside the stage timers' }] : undefined,
    })
    : '<p class="empty">no timings in the manifest</p>';
  const caption = anyReused
    ? `total ${fmt(t.total_s, 1)} s for this run; reused stages show the time of the run that computed them, so the bars do not add up to it`
    : `total ${fmt(t.total_s, 1)} s = stages ${fmt(stagesSum, 1)} s + other ${fmt(Math.max(0, outside ?? 0), 1)} s: queue waits, starting the Python workers and loading ` +
      'their inputs, writing the training corpus, and the model analysis behind this report';
  return `<section id="timings"><h2>Training time per stage</h2><figure>${chart}<figcaption>${caption}</figcaption></figure></section>`;
}

/** @param {Record<string, any>} a */
function vocabulary(a) {
  return `<section id="vocabulary"><h2>Vocabulary</h2><div class="row">` +
    `<figure>${histogram(a.vocab.count_histogram, { title: 'Word counts', xLabel: 'occurrences in the corpus', yLabel: 'words' })}<figcaption>words per frequency band</figcaption></figure>` +
    `<figure>${histogram(a.vocab.idf_histogram, { title: 'IDF', xLabel: 'idf = ln((1+N)/(1+df)) + 1', yLabel: 'words', color: '#59a14f' })}<figcaption>words per idf band (high: rare)</figcaption></figure>` +
    `</div></section>`;
}

/**
 * @param {Record<string, any>} a
 * @param {import('../inspect/clusters.js').JudgedCluster[]} judged
 */
function gmm(a, judged) {
  const ll = /** @type {number[]} */ (a.gmm.loglik_history);
  const line = ll.length
    ? lineChartSvg({
      title: 'GMM log-likelihood per EM iteration', series: [{ name: 'mean log-likelihood', points: ll.map((y, i) => ({ x: i + 1, y })) }],
      x: { label: 'EM iteration', min: 1 }, y: { label: 'mean log-likelihood' },
    })
    : '<p class="empty">no log-likelihood history</p>';
  const sizes = columnBars(judged.map((c) => ({
    label: `cluster ${c.cluster}`, tick: String(c.cluster), value: c.size, color: c.flags.length ? FLAGGED_COLOR : BAR_COLOR,
    note: `words${c.flags.length ? ` (${c.flags.join(', ')})` : ''} — ${c.topWords.slice(0, 5).map((w) => w.word).join(' ')}`,
  })), {
    title: 'Cluster sizes', xLabel: 'cluster', yLabel: 'words', width: 640,
    legend: [{ color: BAR_COLOR, text: 'not flagged' }, { color: FLAGGED_COLOR, text: 'flagged (see the cluster table)' }],
  });
  return `<section id="gmm"><h2>Gaussian mixture</h2><div class="row">` +
    `<figure>${line}<figcaption>${ll.length} iterations, ${a.gmm.converged ? 'converged' : 'stopped at max_iter without converging'}</figcaption></figure>` +
    `<figure>${sizes}<figcaption>words whose most probable cluster it is</figcaption></figure></div></section>`;
}

/**
 * @param {Record<string, any>} a
 * @param {import('../inspect/clusters.js').JudgedCluster[]} judged
 * @param {Map<number, string>} colors the coloured (largest) clusters
 */
function wordMap(a, judged, colors) {
  const mp = a.map;
  const rankOf = new Map([...colors.keys()].map((k, i) => [k, i]));
  const points = mp.words.map((/** @type {string} */ w, /** @type {number} */ i) => {
    const k = mp.cluster[i];
    const rank = rankOf.get(k);
    const top = a.clusters[k]?.top_words?.findIndex((/** @type {any} */ t) => t.word === w) ?? -1;
    // Labels: the top words of the coloured clusters; the best word of the largest cluster is placed first.
    const label = rank !== undefined && mp.labelled[i] && top >= 0 ? w : undefined;
    return {
      x: mp.x[i], y: mp.y[i], color: colors.get(k) ?? MUTED_COLOR, title: `${w} — cluster ${k} (P=${mp.p[i]})`, label,
      priority: label ? (10 - top) * 100 - /** @type {number} */ (rank) : 0, coloured: rank !== undefined,
    };
  });
  // Muted points first, so that the coloured ones are drawn on top.
  points.sort((/** @type {{coloured: boolean}} */ p, /** @type {{coloured: boolean}} */ q) => Number(p.coloured) - Number(q.coloured));
  const sizeOf = new Map(judged.map((c) => [c.cluster, c]));
  const entries = [...colors].map(([k, color]) => ({ color, text: `${k}: ${sizeOf.get(k)?.topWords[0]?.word ?? ''} (${fmt(sizeOf.get(k)?.size)} words)` }));
  if (judged.length > colors.size) entries.push({ color: MUTED_COLOR, text: `${judged.length - colors.size} other clusters` });
  const ev = mp.explained_variance_ratio ?? [0, 0];
  const chart = scatter(points, {
    title: 'Word vectors in 2-D (PCA), coloured by cluster',
    xLabel: `PC1 (${(100 * ev[0]).toFixed(1)} % of variance)`, yLabel: `PC2 (${(100 * ev[1]).toFixed(1)} %)`,
    legend: entries, legendTitle: `largest ${colors.size} of ${judged.length} clusters`,
  });
  return `<section id="map"><h2>Word map</h2><figure>${chart}<figcaption>${fmt(mp.words.length)} of ${fmt(a.n_words)} words` +
    `${mp.sampled ? ' (sampled: every cluster\'s top words plus a random sample)' : ''}, projected on the first two principal components of the unit word vectors the GMM was fitted on; ` +
    `colour: the ${colors.size} largest clusters (grey: the others); labels: their top words, where they fit without overlapping; hover a point for its word and cluster. ` +
    'A linear projection: clusters separated in 200 dims may overlap here.</figcaption></figure></section>';
}

/**
 * @param {Record<string, any>} a
 * @param {import('../inspect/clusters.js').JudgedCluster[]} judged
 * @param {Map<number, string>} colors
 */
function clusterTable(a, judged, colors) {
  const rows = judged.map((c) => [
    { html: `<span class="sw" style="background:${colors.get(c.cluster) ?? MUTED_COLOR}"></span>${c.cluster}` },
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
