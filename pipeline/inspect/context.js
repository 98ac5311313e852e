// What `scdv inspect doc` and `scdv explain` share: the model's embedder and the cluster labels.
import { createEmbedder } from '../embed/index.js';
import { collectionEmbedConfig } from '../serving/index.js';
import { loadAnalysis } from './analysis.js';

/**
 * @param {string} modelName
 * @param {import('../config.js').Config} config embed settings for texts when none are recorded for the collection
 * @param {{collection?: string, corpus?: string, log?: (m: string) => void}} opts
 * @returns {Promise<import('./doc-explain.js').InspectContext & {close: () => void}>}
 */
export async function openInspectContext(modelName, config, opts) {
  // Texts are embedded with the settings the collection was indexed with (when recorded), as the server does,
  // so that a recomputed vector compares with the stored one.
  const embed = await collectionEmbedConfig(modelName, opts.collection, config);
  const embedder = await createEmbedder(modelName, embed === config.embed ? config : { ...config, embed });
  let analysis = null;
  try {
    analysis = await loadAnalysis(embedder.model, { log: opts.log });
  } catch (err) {
    // Labels are a help, not a need: the decomposition stands without them.
    opts.log?.(`warning: no cluster labels: ${/** @type {Error} */ (err).message}`);
  }
  return {
    embedder, embedCfg: embed, collection: opts.collection, corpus: opts.corpus, analysis, store: config.store,
    close: () => embedder.model.wordTopics.close(),
  };
}
