// scdv eval: relevance of a model's document vectors against TF-IDF and more_like_this (pipeline/eval/).
import { CLI_DEFAULTS } from '../config.js';
import { errors } from '../errors.js';
import { EVAL_DEFAULTS, runEval } from '../eval/evaluate.js';
import fs from 'node:fs';
import { adEmbedSettings } from '../embed/layout.js';
import { loadModel } from '../model/load.js';
import { refreshReport } from '../report/index.js';
import { engineMltLabel } from '../report/eval-table.js';
import { verdictJson, verdictLines } from '../report/verdict.js';
import { configFromFlags, intFlag, withRedis } from './common.js';
import { CONFIG_OPTION, opt } from './define.js';

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: 'Relevance of a model\'s document vectors: P@1, P@10, MAP@10 of same-label neighbours vs TF-IDF and ' +
    'more_like_this (into models/NAME/eval.json); or, with --classify, LinearSVC accuracy on the vectors vs on ' +
    'TF-IDF; or, with --sweep, train and evaluate a grid of settings (docs/relevance.md); or, with --match, pages against ' +
    'short texts (ads): P@1, P@10 of the page\'s label for the product\'s matching vs TF-IDF and more_like_this (docs/matching.md).',
  options: [
    opt('--model <name>', 'the model (required, except with --sweep)'),
    opt('--corpus <file>', 'labelled corpus: JSON Lines with --label-field on every line'),
    opt('--label-field <field>', "the corpus field holding each document's label", { default: CLI_DEFAULTS.labelField }),
    opt('--collection <name>', 'search this indexed collection instead of embedding the corpus afresh'),
    opt('--k <k>', `neighbours per query, 1-1000 (default: ${EVAL_DEFAULTS.k})`),
    opt('--folds <n>', `folds of the k-NN accuracy; 0 or 1: none (default: ${EVAL_DEFAULTS.folds})`),
    opt('--search-mode <mode>', 'store search', { config: 'server.searchMode', choices: ['fast', 'exact'] }),
    opt('--damping <d>', 'term repetition damping', { config: 'embed.damping', choices: ['binary', 'log', 'raw', 'saturate'] }),
    opt('--keep-fraction <f>', 'fraction of a vector\'s weight kept', { config: 'embed.keepFraction' }),
    opt('--keep-count <n>', 'non-zeros kept per document (null: --keep-fraction of the width)', { config: 'embed.keepCount' }),
    opt('--alpha <a>', 'hybrid layout: weight of the SCDV block (1: pure SCDV)', { config: 'embed.hybrid.alpha' }),
    opt('--max-terms <n>', 'hybrid layout: heaviest words kept in the TF-IDF block (null: all)', { config: 'embed.hybrid.maxTerms' }),
    opt('--holdout <fraction>', 'a held-out check: train NAME-holdout on the rest of --corpus with the model\'s settings ' +
      'and score this fraction of it (0.05-0.5, e.g. 0.2), which that model never saw; without it the corpus scored is ' +
      'usually the training corpus'),
    opt('--no-baselines', 'skip TF-IDF and more_like_this'),
    opt('--match', 'ad matching: the pages of --corpus against short texts (--ads, else every third document\'s title), ' +
      'relevant when of the page\'s label; the product\'s default matching, its SCDV and lexical blocks alone, TF-IDF and ' +
      'more_like_this (into models/NAME/eval-match.json)'),
    opt('--ads <file>', 'with --match: the ads, JSON Lines with --label-field on every line (default: the titles-as-ads proxy)'),
    opt('--ads-alpha <a>', 'with --match: embed the ads with this hybrid alpha (the pages keep --alpha)', { config: 'adEmbed.alpha' }),
    opt('--ads-keep-fraction <f>', 'with --match: embed the ads keeping this fraction of the SCDV block (the pages keep --keep-fraction)', { config: 'adEmbed.keepFraction' }),
    opt('--expand-from <file>', 'with --match: expand the ads (adEmbed.expand) from these documents, embedded as pages; they must not be ' +
      'the scored pages (an ad would find them). With --holdout: the training half. Neither: the ads are not expanded'),
    opt('--ads-expand-weight <w>', 'with --match: the weight of the ads\' borrowed pages (0: no expansion)', { config: 'adEmbed.expand.weight' }),
    opt('--ads-expand-neighbours <m>', 'with --match: pages each ad borrows from', { config: 'adEmbed.expand.neighbours' }),
    opt('--cluster', 'also the JMTEB clustering protocol: v-measure on test halves of the best of MiniBatchKMeans, ' +
      'Agglomerative, BisectingKMeans and Birch chosen on validation halves, for the vectors, pure SCDV, the lexical ' +
      'block and TF-IDF (eval.json "cluster")'),
    opt('--cluster-seeds <n>', `with --cluster: seeds, each a new stratified validation/test split, 1-100 (default: ${EVAL_DEFAULTS.clusterSeeds})`),
    opt('--mlt <where>', 'opensearch: also score OpenSearch\'s own more_like_this on the cluster of store.opensearch ' +
      '(row mlt_opensearch, a temporary index); python: the re-implementation only (default: opensearch when ' +
      'store.backend is opensearch)', { choices: ['python', 'opensearch'] }),
    opt('--lang <lang>', 'check that the model was trained for this language; with --sweep, train for it', { config: 'tokenizer.lang', choices: ['ja', 'en'] }),
    opt('--json', 'the figures as JSON on the last line of stdout (the table goes to stderr)'),
    opt('--classify', 'LinearSVC test accuracy on the vectors vs on TF-IDF (needs --train and --test); the vectors ' +
      'use eval.classify\'s alpha and keepFraction, which --alpha and --keep-fraction then set'),
    opt('--train <file>', 'with --classify: the labelled training corpus'),
    opt('--test <file>', 'with --classify: the labelled test corpus'),
    opt('--sweep', 'train and evaluate a grid of settings on --corpus'),
    opt('--grid <file>', 'with --sweep: the grid as JSON (default: the grid of docs/relevance.md)'),
    opt('--out <file>', 'with --sweep: where the Markdown table goes'),
    CONFIG_OPTION,
  ],
  examples: [
    'scdv eval --model news --corpus labelled.jsonl --label-field category',
    'scdv eval --classify --model news --train train.jsonl --test test.jsonl',
    'scdv eval --sweep --corpus labelled.jsonl --out table.md',
    'scdv eval --match --model news --corpus labelled.jsonl --holdout 0.5',
  ],
  run,
};

/** @param {Record<string, any>} values */
async function run(values) {
  if (values.lang !== undefined && values.lang !== 'ja' && values.lang !== 'en') throw errors.USAGE(`--lang must be ja or en, got "${values.lang}"`);
  // Documents are tokenised as the model was trained (its manifest); --lang for a sweep's training, or as a check.
  const config = configFromFlags(values, { ...(values.classify ? classifyOverrides(values) : { embed: embedOverrides(values) }), ...(values.lang ? { tokenizer: { lang: values.lang } } : {}) });
  if (values.lang && values.model) checkModelLang(values.model, values.lang);
  const out = values.json ? process.stderr : process.stdout;
  if (values.classify) {
    if (!values.model || !values.train || !values.test) throw errors.USAGE('scdv eval --classify needs --model NAME --train FILE --test FILE [--label-field F]');
    const { runClassify } = await import('../eval/classify.js');
    const r = await runClassify({ model: values.model, train: values.train, test: values.test, labelField: values['label-field'] ?? CLI_DEFAULTS.labelField, config });
    out.write(formatClassify(r));
    if (values.json) process.stdout.write(`${JSON.stringify({ scdv: r.scdv, tfidf: r.tfidf, scdv_vs_tfidf: r.scdv_vs_tfidf })}\n`);
    return;
  }
  const mode = values['search-mode'];
  if (mode !== undefined && mode !== 'fast' && mode !== 'exact') throw errors.USAGE(`--search-mode must be fast or exact, got "${mode}"`);
  if (values.sweep) {
    if (!values.corpus) throw errors.USAGE('scdv eval --sweep needs --corpus FILE [--grid grid.json] [--out table.md]');
    const { DEFAULT_GRID, parseGrid, runSweep, sweepTable } = await import('../stages/sweep.js');
    let grid = DEFAULT_GRID;
    if (values.grid) {
      let raw;
      try { raw = JSON.parse(fs.readFileSync(values.grid, 'utf8')); } catch (err) { throw errors.USAGE(`--grid ${values.grid}: ${/** @type {Error} */ (err).message}`); }
      grid = parseGrid(raw);
    }
    const baseOverrides = values.config ? JSON.parse(fs.readFileSync(values.config, 'utf8')) : {};
    const r = await withRedis((redisUrl) => runSweep({
      corpus: /** @type {string} */ (values.corpus), labelField: values['label-field'] ?? CLI_DEFAULTS.labelField, grid, redisUrl, baseOverrides,
      out: values.out, searchMode: /** @type {'fast'|'exact'|undefined} */ (mode),
    }));
    out.write(sweepTable(r));
    out.write(`table: ${r.file}\n`);
    if (values.json) process.stdout.write(`${JSON.stringify({ best: r.best, file: r.file })}\n`);
    return;
  }
  if (!values.model || !values.corpus) throw errors.USAGE(`scdv eval needs --model NAME and --corpus FILE (and --label-field F, default ${CLI_DEFAULTS.labelField})`);
  const k = intFlag(values.k, '--k');
  if (k !== undefined && (k < 1 || k > 1000)) throw errors.USAGE('--k must be 1-1000');
  for (const flag of ['ads', 'ads-alpha', 'ads-keep-fraction', 'expand-from', 'ads-expand-weight', 'ads-expand-neighbours']) if (values[flag] !== undefined && !values.match) throw errors.USAGE(`--${flag} goes with --match`);
  if (values.match) return runMatch(values, config, k, mode, out);
  const clusterSeeds = intFlag(values['cluster-seeds'], '--cluster-seeds');
  if (clusterSeeds !== undefined && (clusterSeeds < 1 || clusterSeeds > 100)) throw errors.USAGE('--cluster-seeds must be 1-100');
  const evalOpts = {
    model: values.model, corpus: values.corpus, labelField: values['label-field'] ?? CLI_DEFAULTS.labelField, config,
    collection: values.collection ?? null, k, folds: intFlag(values.folds, '--folds'), cluster: Boolean(values.cluster), clusterSeeds,
    searchMode: /** @type {'fast'|'exact'|undefined} */ (mode), baselines: !values['no-baselines'], mlt: mltFlag(values.mlt),
  };
  let r;
  if (values.holdout !== undefined) {
    const fraction = holdoutFraction(values.holdout);
    if (values.collection) throw errors.USAGE('--holdout trains a model of its own: it cannot score an indexed --collection');
    const { runHoldoutEval } = await import('../stages/holdout.js');
    r = await withRedis((redisUrl) => runHoldoutEval({ ...evalOpts, fraction, redisUrl }));
  } else {
    r = await runEval(evalOpts);
  }
  out.write(formatEval(r));
  await refreshReport(r.model, (m) => process.stderr.write(`${m}\n`));
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ verdict: verdictJson(r), scdv: r.scdv, tfidf: r.tfidf, mlt: r.mlt, ...(r.mlt_opensearch ? { mlt_opensearch: r.mlt_opensearch } : {}),
      ...(r.cluster ? { cluster: clusterSummary(r.cluster) } : {}) })}\n`);
  }
}

/**
 * scdv eval --match [--ads FILE] [--holdout F].
 * @param {Record<string, any>} values
 * @param {import('../config.js').Config} config
 * @param {number | undefined} k
 * @param {'fast'|'exact'|undefined} mode
 * @param {NodeJS.WritableStream} out
 */
async function runMatch(values, config, k, mode, out) {
  for (const flag of ['collection', 'cluster', 'folds', 'cluster-seeds', 'classify']) if (values[flag] !== undefined && values[flag] !== false) throw errors.USAGE(`--${flag} does not go with --match`);
  const { runMatchEval } = await import('../eval/match-eval.js');
  const opts = {
    model: values.model, corpus: values.corpus, labelField: values['label-field'] ?? CLI_DEFAULTS.labelField, ads: values.ads ?? null, config, k, adEmbed: adEmbedOf(values, config),
    searchMode: mode, baselines: !values['no-baselines'], mlt: mltFlag(values.mlt), expandFrom: values['expand-from'] ?? null,
  };
  if (values.holdout !== undefined && values['expand-from'] !== undefined) throw errors.USAGE('--holdout expands the ads from its training half: --expand-from does not go with it');
  let r;
  if (values.holdout !== undefined) {
    const fraction = holdoutFraction(values.holdout);
    const { runHoldoutEval } = await import('../stages/holdout.js');
    r = await withRedis((redisUrl) => runHoldoutEval({ ...opts, fraction, redisUrl, match: { ads: opts.ads } }));
  } else {
    r = await runMatchEval(opts);
  }
  out.write(formatMatch(r));
  if (values.json) {
    const rows = Object.fromEntries(MATCH_ROWS.filter((m) => r[m]).map((m) => [m, r[m]]));
    process.stdout.write(`${JSON.stringify({ verdict: verdictJson(r), pages: r.pages, ads: r.ads.count, ...rows })}\n`);
  }
}

/**
 * The ads' embed settings: the product's for an ad collection (adEmbed over the pages' embed; the pages' when
 * adEmbed.collections is empty), with --ads-alpha and --ads-keep-fraction over them.
 * @param {Record<string, any>} v
 * @param {import('../config.js').Config} config
 */
function adEmbedOf(v, config) {
  if (v['ads-alpha'] === undefined && v['ads-keep-fraction'] === undefined) return undefined; // runMatchEval's: the product's
  const product = config.adEmbed.collections.length ? adEmbedSettings(config.embed, config.adEmbed) : config.embed;
  const e = embedOverrides({ alpha: v['ads-alpha'], 'keep-fraction': v['ads-keep-fraction'] });
  const embed = { ...product, ...e, hybrid: { ...product.hybrid, ...(e.hybrid ?? {}) } };
  if (!(embed.hybrid.alpha >= 0 && embed.hybrid.alpha <= 1)) throw errors.USAGE(`--ads-alpha must be in [0, 1], got ${v['ads-alpha']}`);
  if (!(embed.keepFraction > 0 && embed.keepFraction <= 1)) throw errors.USAGE(`--ads-keep-fraction must be in (0, 1], got ${v['ads-keep-fraction']}`);
  return embed;
}

/** The rows of `scdv eval --match`, in the table's order. */
const MATCH_ROWS = ['scdv', 'scdv_block', 'lexical_block', 'tfidf', 'mlt', 'mlt_opensearch'];

/** @param {Record<string, any>} result eval-match.json */
export function formatMatch(result) {
  const pct = (/** @type {number|undefined} */ x) => (x === undefined ? '-' : (100 * x).toFixed(1));
  const alpha = result.settings.embed.hybrid.alpha;
  const adsEmbed = result.settings.ads_embed;
  const label = (/** @type {string} */ name) => ({
    scdv: (result.settings.layout.kind === 'hybrid' ? `product default (hybrid α=${alpha}` : 'product default (SCDV') + (adsEmbed ? `; ads α=${adsEmbed.hybrid.alpha}, keep ${adsEmbed.keepFraction}` : '') +
      (result.settings.ads_expand ? `; expanded m=${result.settings.ads_expand.neighbours}, β=${result.settings.ads_expand.weight})` : ')'),
    scdv_block: 'SCDV block alone', lexical_block: 'lexical block alone', tfidf: 'TF-IDF (sublinear, same tokens)', mlt: 'more_like_this',
  })[name] ?? engineMltLabel(result[name].engine);
  const rows = [['method', 'P@1', 'P@10', 'MAP@10', 'mean ms']];
  for (const name of MATCH_ROWS) {
    const m = result[name];
    if (m) rows.push([label(name), pct(m.p_at_1), pct(m.p_at_10), pct(m.map_at_10), m.mean_latency_ms.toFixed(3)]);
  }
  const w = rows[0].map((_, j) => Math.max(...rows.map((row) => row[j].length)));
  const ads = result.ads.proxy ? `${result.ads.count} titles as ads (every ${result.ads.every}rd document's)` : `${result.ads.count} ads from ${result.ads.path}`;
  return [
    `match: model ${result.model}, ${result.pages} pages, ${ads}; relevant: an ad with the page's ${result.label_field}; top ${result.settings.k}, search ${result.settings.search_mode}`,
    ...rows.map((row) => row.map((c, j) => (j ? c.padStart(w[j]) : c.padEnd(w[j]))).join('  ')),
    `(product rows: the store's search as /v1/match does it, min_score aside; baselines: brute force in scipy. load average ${result.load_average.join(' ')}; ${result.seconds.toFixed(1)} s)`,
    ...verdictLines(result),
  ].join('\n') + '\n';
}

/**
 * --holdout's fraction.
 * @param {string} v
 */
function holdoutFraction(v) {
  const fraction = Number(v);
  if (v.trim() === '' || !(fraction >= 0.05 && fraction <= 0.5)) throw errors.USAGE(`--holdout must be a fraction from 0.05 to 0.5, got "${v}"`);
  return fraction;
}

/**
 * --mlt python|opensearch (absent: auto, by store.backend).
 * @param {unknown} v
 * @returns {'auto'|'python'|'opensearch'}
 */
function mltFlag(v) {
  if (v === undefined) return 'auto';
  if (v !== 'python' && v !== 'opensearch') throw errors.USAGE(`--mlt must be python or opensearch, got "${v}"`);
  return v;
}

/**
 * --damping, --keep-fraction, --keep-count, --alpha, --max-terms -> config.embed overrides.
 * @param {Record<string, any>} values
 */
export function embedOverrides(values) {
  /** @type {Record<string, any>} */
  const e = {};
  const num = (/** @type {string} */ flag) => {
    const n = Number(values[flag]);
    if (values[flag] === '' || !Number.isFinite(n)) throw errors.USAGE(`--${flag} must be a number, got "${values[flag]}"`);
    return n;
  };
  if (values.damping !== undefined) e.damping = values.damping;
  if (values['keep-fraction'] !== undefined) e.keepFraction = num('keep-fraction');
  if (values['keep-count'] !== undefined) e.keepCount = intFlag(values['keep-count'], '--keep-count');
  if (values.alpha !== undefined || values['max-terms'] !== undefined) {
    e.hybrid = {};
    if (values.alpha !== undefined) e.hybrid.alpha = num('alpha');
    if (values['max-terms'] !== undefined) e.hybrid.maxTerms = intFlag(values['max-terms'], '--max-terms');
  }
  return e;
}

/**
 * With --classify, --alpha and --keep-fraction set the classifier's vectors (eval.classify), not the served ones.
 * @param {Record<string, any>} v
 */
function classifyOverrides(v) {
  const { keepFraction, hybrid, ...embed } = embedOverrides(v);
  /** @type {Record<string, any>} */
  const classify = {};
  if (keepFraction !== undefined) classify.keepFraction = keepFraction;
  if (hybrid?.alpha !== undefined) classify.alpha = hybrid.alpha;
  if (hybrid?.maxTerms !== undefined) embed.hybrid = { maxTerms: hybrid.maxTerms };
  return { embed, ...(Object.keys(classify).length ? { eval: { classify } } : {}) };
}

/** @param {Record<string, any>} result */
export function formatEval(result) {
  const pct = (/** @type {number|undefined} */ x) => (x === undefined ? '-' : (100 * x).toFixed(1));
  const ms = (/** @type {number|undefined} */ x) => (x === undefined ? '-' : x.toFixed(3));
  const rows = [['method', 'P@1', 'P@10', 'MAP@10', 'acc(5-fold)', 'mean ms', 'median ms']];
  for (const name of ['scdv', 'tfidf', 'mlt', 'mlt_opensearch']) {
    const m = result[name];
    if (!m) continue;
    rows.push([name === 'scdv' && result.settings.layout.kind === 'hybrid' ? `scdv (hybrid α=${result.settings.embed.hybrid.alpha})`
      : name === 'mlt_opensearch' ? engineMltLabel(m.engine) : name,
      pct(m.p_at_1), pct(m.p_at_10), pct(m.map_at_10), pct(m.accuracy), ms(m.mean_latency_ms), ms(m.median_latency_ms)]);
  }
  const w = rows[0].map((_, j) => Math.max(...rows.map((row) => row[j].length)));
  const lines = rows.map((row) => row.map((c, j) => (j ? c.padStart(w[j]) : c.padEnd(w[j]))).join('  '));
  return [
    `model ${result.model}, ${result.corpus.documents} documents, label ${result.label_field}, search ${result.settings.search_mode}, ` +
      `vectors ${result.settings.layout.kind} width ${result.scdv.width}, ${result.scdv.mean_nnz.toFixed(0)} non-zeros each` +
      (result.scdv.no_vector ? `, ${result.scdv.no_vector} without a vector` : ''),
    ...lines,
    `(SCDV latency: the store's search; baselines: brute force in scipy${result.mlt_opensearch ? ', more_like_this (OpenSearch): a search request to the cluster' : ''}. load average ${result.load_average.join(' ')}; ${result.seconds.toFixed(1)} s)`,
    ...verdictLines(result),
  ].join('\n') + '\n' + (result.cluster ? formatCluster(result.cluster) : '');
}

/**
 * eval.json's `cluster` without the per-seed details: {method: {v_measure, v_measure_std, min, max, chosen}}.
 * @param {Record<string, any>} result
 */
export function clusterSummary(result) {
  return Object.fromEntries(Object.entries(result.methods).map(([name, m]) => {
    const { seeds: _seeds, ...summary } = /** @type {Record<string, any>} */ (m);
    return [name, summary];
  }));
}

/**
 * The clustering table of `scdv eval --cluster`.
 * @param {Record<string, any>} result eval.json's `cluster`
 */
export function formatCluster(result) {
  const label = (/** @type {string} */ name) => (name === 'tfidf' ? 'tfidf' : `${name} (α=${result.alpha[name]})`);
  const rows = [['method', 'v-measure', '± std', 'min', 'max', 'chosen on validation']];
  for (const [name, m] of Object.entries(/** @type {Record<string, any>} */ (result.methods))) {
    rows.push([label(name), m.v_measure.toFixed(4), m.v_measure_std.toFixed(4), m.v_measure_min.toFixed(4), m.v_measure_max.toFixed(4),
      Object.entries(m.chosen).map(([k, n]) => `${k} ×${n}`).join(', ')]);
  }
  const w = rows[0].map((_, j) => Math.max(...rows.map((row) => row[j].length)));
  return [
    `clustering (JMTEB protocol): ${result.documents} documents, k = ${result.labels}; seeds ${result.seeds.join(' ')}, each a stratified ` +
      'validation/test split; the best of ' + result.clusterers.join(' / ') + ' by validation v-measure, its test v-measure',
    ...rows.map((row) => row.map((x, j) => (j === 0 || j === 5 ? x.padEnd(w[j]) : x.padStart(w[j]))).join('  ').trimEnd()),
  ].join('\n') + '\n';
}

/** @param {Record<string, any>} result */
export function formatClassify(result) {
  const pct = (/** @type {number} */ x) => (100 * x).toFixed(2);
  const signed = (/** @type {number} */ x) => `${x < 0 ? '−' : ''}${pct(Math.abs(x))}`;
  const ci = (/** @type {{low: number, high: number}} */ i) => `[${signed(i.low)}, ${signed(i.high)}]`;
  const d = result.scdv_vs_tfidf;
  const level = `${Math.round(100 * d.confidence)} %`;
  return [
    `classify: train ${result.train_documents}, test ${result.test_documents} documents; LinearSVC, C by ${result.scdv.cv_folds}-fold CV on train; ` +
      `${level} bootstrap intervals over the test documents`,
    `  scdv   accuracy ${pct(result.scdv.accuracy)} % ${ci(result.scdv.interval)}  (C ${result.scdv.C}; alpha ${result.settings.embed.hybrid.alpha}, ` +
      `keepFraction ${result.settings.embed.keepFraction})`,
    `  tfidf  accuracy ${pct(result.tfidf.accuracy)} % ${ci(result.tfidf.interval)}  (C ${result.tfidf.C})`,
    `  scdv − tfidf ${d.diff >= 0 ? '+' : '−'}${pct(Math.abs(d.diff))} points ${ci(d)} (paired): ${d.word}`,
  ].join('\n') + '\n';
}

/**
 * --lang must match the language the model was trained for (its tokenizer is what eval uses).
 * @param {string} model
 * @param {string} lang
 */
function checkModelLang(model, lang) {
  const m = loadModel(model);
  m.wordTopics.close();
  const trained = m.manifest.tokenizer?.config?.lang ?? 'ja';
  if (trained !== lang) throw errors.USAGE(`--lang ${lang}: model ${model} was trained for "${trained}" text (train it with --lang ${lang})`);
}
