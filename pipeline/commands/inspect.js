// scdv inspect clusters | doc: what the GMM learned, and what carries one document's vector.
import { CLI_DEFAULTS } from '../config.js';
import { errors } from '../errors.js';
import { loadModel } from '../model/load.js';
import { loadAnalysis } from '../inspect/analysis.js';
import { judgeClusters, sortClusters, formatClusters, FLAG_THRESHOLDS } from '../inspect/clusters.js';
import { openInspectContext } from '../inspect/context.js';
import { resolveDocuments, inspectDocument } from '../inspect/doc-explain.js';
import { formatInspectDocument } from '../inspect/doc-explain-format.js';
import { configFromFlags, intFlag } from './common.js';
import { CONFIG_OPTION, opt } from './define.js';

const log = (/** @type {string} */ m) => process.stderr.write(`${m}\n`);

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: 'What the GMM learned (clusters), and what carries one document\'s vector (doc).',
  subcommands: {
    clusters: {
      summary: 'the clusters: size, top words by P(k|w)·idf, NPMI coherence, flags',
      options: [
        opt('--model <name>', 'the model (required)'),
        opt('--sort <by>', 'row order', { default: CLI_DEFAULTS.clusterSort, choices: ['cluster', 'coherence', 'size'] }),
        opt('--cluster <k>', 'only this cluster (with all its top words)'),
        opt('--flagged', 'only flagged clusters'),
        opt('--words <n>', `top words shown per cluster (default: ${CLI_DEFAULTS.clusterWords}; all of them with --cluster)`),
        opt('--corpus <file>', "corpus for the coherence figures (default: the model's training corpus)"),
        opt('--refresh', 'recompute models/NAME/analysis.json'),
        opt('--json', 'as JSON'),
      ],
      examples: ['scdv inspect clusters --model news --sort coherence --flagged'],
      run: clusters,
    },
    doc: {
      summary: "the topics and words that carry one document's vector",
      options: [
        opt('--model <name>', 'the model (required)'),
        opt('--id <id>', 'a document of --collection'),
        opt('--collection <name>', 'the collection holding --id', { default: CLI_DEFAULTS.collection }),
        opt('--text <text>', 'a text instead of --id'),
        opt('--corpus <file>', "the corpus holding the document's text (for the words)"),
        opt('--top <n>', 'topics and words listed'),
        opt('--json', 'as JSON'),
        CONFIG_OPTION,
      ],
      examples: ['scdv inspect doc --model news --id sports-1 --corpus corpus.jsonl', 'scdv inspect doc --model news --text "スマホの新機種"'],
      run: doc,
    },
  },
  examples: ['scdv inspect clusters --model news', 'scdv inspect doc --model news --id sports-1 --corpus corpus.jsonl'],
};

/** @param {Record<string, any>} values */
async function clusters(values) {
  if (!values.model) throw errors.USAGE('scdv inspect clusters needs --model NAME');
  if (!['cluster', 'coherence', 'size'].includes(values.sort ?? '')) throw errors.USAGE(`--sort must be cluster, coherence or size, got "${values.sort}"`);
  const model = loadModel(values.model);
  model.wordTopics.close();
  const analysis = await loadAnalysis(model, { corpus: values.corpus, refresh: values.refresh, log });
  let rows = sortClusters(judgeClusters(analysis), /** @type {'cluster'|'coherence'|'size'} */ (values.sort));
  const k = intFlag(values.cluster, '--cluster');
  if (k !== undefined) {
    rows = rows.filter((r) => r.cluster === k);
    if (!rows.length) throw errors.CLUSTER_NOT_FOUND(k, model.name, analysis.n_clusters - 1);
  }
  if (values.flagged) rows = rows.filter((r) => r.flags.length);
  if (values.json) {
    process.stdout.write(JSON.stringify({
      model: model.name, n_words: analysis.n_words, n_clusters: analysis.n_clusters, top: analysis.top,
      corpus: analysis.corpus, coherence: analysis.coherence, gmm: analysis.gmm, thresholds: FLAG_THRESHOLDS, clusters: rows,
    }, null, 2) + '\n');
  } else {
    process.stdout.write(formatClusters(analysis, rows, { modelName: model.name, words: intFlag(values.words, '--words') ?? (k !== undefined ? analysis.top : CLI_DEFAULTS.clusterWords) }));
  }
}

/** @param {Record<string, any>} values */
async function doc(values) {
  if (!values.model) throw errors.USAGE('scdv inspect doc needs --model NAME');
  if (values.id === undefined && values.text === undefined) throw errors.USAGE('scdv inspect doc needs --id ID (with --collection C) or --text "…"');
  const config = configFromFlags(values);
  const ctx = await openInspectContext(values.model, config, { collection: values.collection, corpus: values.corpus, log });
  try {
    const [d] = await resolveDocuments(ctx, [{ id: values.id, text: values.text }]);
    const r = inspectDocument(ctx, d, { top: intFlag(values.top, '--top') });
    process.stdout.write(values.json ? JSON.stringify(r, null, 2) + '\n' : formatInspectDocument(r));
  } finally {
    ctx.close();
  }
}
