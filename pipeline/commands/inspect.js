// scdv inspect clusters | doc: what the GMM learned, and what carries one document's vector.
import { parseArgs } from 'node:util';
import { errors } from '../errors.js';
import { loadModel } from '../model/load.js';
import { loadAnalysis } from '../inspect/analysis.js';
import { judgeClusters, sortClusters, formatClusters, FLAG_THRESHOLDS } from '../inspect/clusters.js';
import { openInspectContext } from '../inspect/context.js';
import { resolveDocuments, inspectDocument } from '../inspect/document.js';
import { formatInspectDocument } from '../inspect/format.js';
import { configFromFlags, intFlag } from './common.js';

const log = (/** @type {string} */ m) => process.stderr.write(`${m}\n`);

/** @param {string[]} argv */
export async function run(argv) {
  const [sub, ...rest] = argv;
  if (sub === 'clusters') return clusters(rest);
  if (sub === 'doc') return doc(rest);
  throw errors.USAGE(`scdv inspect needs "clusters" or "doc" (got ${sub ?? 'nothing'}); see scdv --help`);
}

/** @param {string[]} argv */
async function clusters(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      model: { type: 'string' }, json: { type: 'boolean', default: false }, sort: { type: 'string', default: 'cluster' },
      cluster: { type: 'string' }, corpus: { type: 'string' }, refresh: { type: 'boolean', default: false },
      words: { type: 'string' }, flagged: { type: 'boolean', default: false },
    },
  });
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
    process.stdout.write(formatClusters(analysis, rows, { modelName: model.name, words: intFlag(values.words, '--words') ?? (k !== undefined ? analysis.top : 8) }));
  }
}

/** @param {string[]} argv */
async function doc(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      model: { type: 'string' }, collection: { type: 'string', default: 'articles' }, id: { type: 'string' },
      text: { type: 'string' }, corpus: { type: 'string' }, json: { type: 'boolean', default: false },
      top: { type: 'string' }, config: { type: 'string' },
    },
  });
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
