// What `scdv inspect doc` and `scdv explain` share: the model's embedder and the cluster labels.
import { createEmbedder } from '../embed/index.js';
import { loadAnalysis } from './analysis.js';

/**
 * @param {string} modelName
 * @param {import('../config.js').Config} config embed settings as used when the collection was indexed
 * @param {{collection?: string, corpus?: string, log?: (m: string) => void}} opts
 * @returns {Promise<import('./document.js').InspectContext & {close: () => void}>}
 */
export async function openInspectContext(modelName, config, opts) {
  const embedder = await createEmbedder(modelName, config);
  let analysis = null;
  try {
    analysis = await loadAnalysis(embedder.model, { log: opts.log });
  } catch (err) {
    // Labels are a help, not a need: the decomposition stands without them.
    opts.log?.(`warning: no cluster labels: ${/** @type {Error} */ (err).message}`);
  }
  return {
    embedder, embedCfg: config.embed, collection: opts.collection, corpus: opts.corpus, analysis,
    close: () => embedder.model.wordTopics.close(),
  };
}
