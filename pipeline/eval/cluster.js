// `scdv eval --cluster`: the JMTEB leaderboard's clustering protocol (validation/test split, the best of four
// scikit-learn clusterers chosen by v-measure on validation, its v-measure on test; workers/scdv/eval_cluster.py)
// on the product's document vectors — as configured, pure SCDV (alpha 1) and the lexical block alone (alpha 0),
// every one from pipeline/embed/ with the model's own tokenizer — and on TF-IDF of the same tokens.
import path from 'node:path';
import { Embedder } from '../embed/index.js';
import { writeExchange } from './exchange.js';
import { runPythonModule } from '../python.js';

/**
 * The vector variants to cluster: name -> embed config. The configured vectors keep their name by what they are
 * (hybrid when 0 < alpha < 1), and pure SCDV and the lexical block alone are added when they differ from it.
 * @param {import('../config.js').Config['embed']} embed
 * @returns {Record<string, import('../config.js').Config['embed']>}
 */
export function clusterVariants(embed) {
  const alpha = embed.hybrid?.alpha ?? 1;
  const withAlpha = (/** @type {number} */ a) => ({ ...embed, hybrid: { ...embed.hybrid, alpha: a } });
  /** @type {Record<string, import('../config.js').Config['embed']>} */
  const out = {};
  if (alpha > 0 && alpha < 1) out.hybrid = embed;
  out.scdv = withAlpha(1);
  out.lexical = withAlpha(0);
  return out;
}

/**
 * Run the protocol over `seeds` seeds (the same stratified halves for every method of one seed).
 * @param {Embedder} embedder the configured embedder (its tokenizer and model are shared by the variants)
 * @param {string[][]} tokens every document's kept tokens
 * @param {string[]} labels
 * @param {{dir: string, seeds: number, tfidf: boolean, embed: import('../config.js').Config['embed'], log: (m: string) => void}} options
 *   dir: an empty scratch folder; tfidf: also cluster TF-IDF of the tokens
 * @returns {Promise<Record<string, any>>} eval.json's `cluster` (workers/scdv/eval_cluster.py documents it)
 */
export async function clusterEval(embedder, tokens, labels, options) {
  const args = [];
  const alphas = /** @type {Record<string, number>} */ ({});
  for (const [name, cfg] of Object.entries(clusterVariants(options.embed))) {
    const e = new Embedder(embedder.tokenizer, embedder.model, cfg);
    const vectors = tokens.map((t) => { const v = e.embedTokens(t); return { indices: v.indices, values: v.values }; });
    const folder = path.join(options.dir, `cluster-${name}`);
    writeExchange(folder, { tokens, labels, vectors, width: e.width });
    args.push('--vectors', `${name}=${folder}`);
    alphas[name] = cfg.hybrid?.alpha ?? 1;
  }
  if (options.tfidf) args.push('--tfidf', path.join(options.dir, 'cluster-scdv'));
  const r = await runPythonModule('scdv.eval_cluster', [...args, '--seeds', String(options.seeds)], {
    onProgress: (p) => { if (p.phase) options.log(`eval: cluster ${p.phase}, seed ${p.seed}…`); },
  });
  const { type: _type, stage: _stage, ...result } = r;
  return { ...result, alpha: alphas };
}
