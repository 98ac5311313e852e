// Reading a model's clusters for a user: how to judge its coherence figure (the scale, and random word sets of
// the same sizes as a yardstick), and whether it has too many clusters for its corpus (with the command that trains
// a better-sized one). One implementation, used by report.html and by `scdv train`'s closing lines.
import { judgeClusters } from './clusters.js';

/**
 * The rules of the cluster-count advice.
 * - A corpus of N documents supports about √(N/2) topics: the usual rule of thumb for the number of clusters of
 *   N items, and what the cluster flags showed on the sample corpora (306 documents: 60 clusters left 21 flagged).
 * - A model is over-clustered when more than `maxFlaggedShare` of its clusters are flagged, or when it has more
 *   than `maxMultipleOfRule` × √(N/2) clusters.
 */
export const ADVICE_RULES = Object.freeze({
  /** Share of flagged clusters above which the model is called over-clustered. */
  maxFlaggedShare: 0.25,
  /** More clusters than this multiple of √(N/2) is over-clustered, flags or not. */
  maxMultipleOfRule: 2,
  /** The advice never goes below this many clusters. */
  minClusters: 2,
});

/**
 * @typedef {object} ClusterAdvice
 * @property {number} clusters the model's
 * @property {number} flagged clusters with any flag
 * @property {number | null} documents training documents (null: unknown)
 * @property {number | null} ruleOfThumb round(√(documents/2)), null without a document count
 * @property {boolean} overClustered
 * @property {number} suggested the cluster count to try (the model's own when it is not over-clustered)
 * @property {string} reason one sentence with the figures
 * @property {string | null} command the exact `scdv train` command, when a change is advised
 */

/**
 * @param {object} input
 * @param {Record<string, any>} input.analysis analysis.json
 * @param {import('./clusters.js').JudgedCluster[]} [input.judged] default: judgeClusters(analysis)
 * @param {Record<string, any>} [input.manifest] the model manifest (documents, corpus path)
 * @param {string} [input.modelName]
 * @returns {ClusterAdvice}
 */
export function clusterAdvice({ analysis, judged = judgeClusters(analysis), manifest = {}, modelName }) {
  const clusters = judged.length;
  const flagged = judged.filter((c) => c.flags.length).length;
  const documents = manifest.tokens?.trainingDocuments ?? analysis.corpus?.documents ?? null;
  const ruleOfThumb = documents ? Math.max(ADVICE_RULES.minClusters, Math.round(Math.sqrt(documents / 2))) : null;
  const tooManyFlagged = clusters > 0 && flagged / clusters > ADVICE_RULES.maxFlaggedShare;
  const tooManyForCorpus = ruleOfThumb !== null && clusters > ADVICE_RULES.maxMultipleOfRule * ruleOfThumb;
  // What the corpus supports; without a document count, the clusters that hold up. Round figures above 20.
  let target = ruleOfThumb ?? clusters - flagged;
  if (target > 20) target = Math.round(target / 5) * 5;
  target = Math.max(ADVICE_RULES.minClusters, target);
  const overClustered = (tooManyFlagged || tooManyForCorpus) && target < clusters;
  const figures = `${clusters} clusters, ${flagged} flagged (${Math.round((100 * flagged) / Math.max(1, clusters))} %)` +
    (documents ? `, ${documents.toLocaleString('en-US')} training documents (rule of thumb √(N/2) ≈ ${ruleOfThumb})` : '');
  if (!overClustered) {
    const reason = tooManyFlagged
      ? `${figures}: not more clusters than the corpus supports, so fewer clusters is not the cure for the flags; judge the coherence against random word sets above and read the flags in the cluster table.`
      : `${figures}: the cluster count looks right for this corpus.`;
    return { clusters, flagged, documents, ruleOfThumb, overClustered, suggested: clusters, reason, command: null };
  }
  const why = [tooManyFlagged ? `more than ${100 * ADVICE_RULES.maxFlaggedShare} % of the clusters are flagged` : '',
    tooManyForCorpus ? `more than ${ADVICE_RULES.maxMultipleOfRule} × √(N/2) clusters for this corpus` : ''].filter(Boolean).join(' and ');
  const basis = ruleOfThumb === null ? 'the unflagged ones' : '√(N/2), rounded';
  const corpus = manifest.corpus?.path;
  const name = modelName ?? manifest.name ?? 'model';
  const command = corpus ? `scdv train --corpus ${shellQuote(corpus)} --name ${shellQuote(`${name}-k${target}`)} --clusters ${target}` : null;
  return {
    clusters, flagged, documents, ruleOfThumb, overClustered, suggested: target,
    reason: `${figures}: over-clustered (${why}). Try about ${target} clusters (${basis}).`,
    command,
  };
}

/** @param {string} s */
const shellQuote = (s) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/**
 * @typedef {object} CoherenceScale
 * @property {number | null} mean the model's mean NPMI (null: not computed)
 * @property {{mean: number, p05: number, p95: number, sets: number} | null} random NPMI of random word sets of the
 *   same sizes and word frequencies, on the same corpus (null: an analysis.json from before it was computed)
 * @property {number | null} aboveRandom clusters whose coherence is above the random sets' 95th percentile
 * @property {number} scored clusters with a coherence figure
 * @property {'better than random'|'no better than random'|'worse than random'|'not judged'} word
 */

/**
 * How to read the coherence of a model: its mean against random word sets of the same sizes.
 * @param {Record<string, any>} analysis
 * @returns {CoherenceScale}
 */
export function coherenceScale(analysis) {
  const mean = analysis.coherence?.mean ?? null;
  const r = analysis.coherence?.random;
  const random = r && typeof r.mean === 'number' ? { mean: r.mean, p05: r.p05, p95: r.p95, sets: r.sets } : null;
  const scores = /** @type {any[]} */ (analysis.clusters ?? []).map((c) => c.coherence).filter((v) => typeof v === 'number');
  const aboveRandom = random ? scores.filter((v) => v > random.p95).length : null;
  /** @type {CoherenceScale['word']} */
  const word = mean === null || !random ? 'not judged' : mean > random.p95 ? 'better than random' : mean < random.p05 ? 'worse than random' : 'no better than random';
  return { mean, random, aboveRandom, scored: scores.length, word };
}

/**
 * The advice as the lines `scdv train` prints at its end (none when the model is not over-clustered).
 * @param {ClusterAdvice} advice
 * @param {string} modelName
 * @returns {string[]}
 */
export function adviceLines(advice, modelName) {
  if (!advice.overClustered) return [];
  return [`  advice: ${advice.reason}`, ...(advice.command ? [`    ${advice.command}`] : []),
    `    (flags per cluster: scdv inspect clusters --model ${shellQuote(modelName)} --flagged, or report.html)`];
}
