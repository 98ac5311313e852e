// Reading a model's clusters for a user: how to judge its coherence figure (the scale, and random word sets of
// the same sizes as a yardstick), and whether it has too many clusters for its corpus (with the command that trains
// a better-sized one). One implementation, used by report.html and by `scdv train`'s closing lines.
import { judgeClusters } from './clusters.js';

/**
 * The rules of the cluster-count advice.
 * - A corpus of N documents supports about √(N/2) topics: the usual rule of thumb for the number of groups among
 *   N items. More than `maxMultipleOfRule` × √(N/2) clusters is over-clustered.
 * - Clusters flagged empty, tiny or diffuse are components with (almost) no words of their own or overlapping
 *   others: wasted. More than `maxWastedShare` of them is over-clustered too.
 * - Clusters flagged incoherent are not counted: fewer clusters make them worse, not better (a larger cluster's
 *   top words by P(k|w)·idf are rarer words; on the sample, 12 clusters had 11 incoherent against 15 of 60), so
 *   coherence is judged against random word sets instead (coherenceScale).
 */
export const ADVICE_RULES = Object.freeze({
  /** More clusters than this multiple of √(N/2) is over-clustered. */
  maxMultipleOfRule: 2,
  /** Share of wasted (empty, tiny, diffuse) clusters above which the model is over-clustered. */
  maxWastedShare: 0.25,
  /** The advice never goes below this many clusters. */
  minClusters: 2,
});

/** Flags of a component that has too little of its own: signs of too many clusters. */
const WASTED_FLAGS = new Set(['empty', 'tiny', 'diffuse']);

/**
 * @typedef {object} ClusterAdvice
 * @property {number} clusters the model's
 * @property {number} flagged clusters with any flag
 * @property {number} wasted clusters flagged empty, tiny or diffuse
 * @property {number} incoherent clusters flagged incoherent
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
  const wasted = judged.filter((c) => c.flags.some((f) => WASTED_FLAGS.has(f))).length;
  const incoherent = judged.filter((c) => c.flags.includes('incoherent')).length;
  const documents = manifest.tokens?.trainingDocuments ?? analysis.corpus?.documents ?? null;
  const ruleOfThumb = documents ? Math.max(ADVICE_RULES.minClusters, Math.round(Math.sqrt(documents / 2))) : null;
  const tooManyWasted = clusters > 0 && wasted / clusters > ADVICE_RULES.maxWastedShare;
  const tooManyForCorpus = ruleOfThumb !== null && clusters > ADVICE_RULES.maxMultipleOfRule * ruleOfThumb;
  // What the corpus supports, and no more than the clusters that are not wasted; round figures above 20.
  let target = Math.min(ruleOfThumb ?? Infinity, clusters - wasted);
  if (target > 20) target = Math.round(target / 5) * 5;
  target = Math.max(ADVICE_RULES.minClusters, target);
  const overClustered = (tooManyWasted || tooManyForCorpus) && target < clusters;
  const figures = `${clusters} clusters, ${flagged} flagged (${incoherent} incoherent, ${wasted} empty, tiny or diffuse)` +
    (documents ? `, ${documents.toLocaleString('en-US')} training documents (rule of thumb √(N/2) ≈ ${ruleOfThumb})` : '');
  if (!overClustered) {
    const reason = incoherent > clusters * ADVICE_RULES.maxWastedShare
      ? `${figures}: the cluster count is not too high for this corpus. Fewer clusters do not cure incoherent ones (their top words get rarer): judge coherence against the random word sets.`
      : `${figures}: the cluster count looks right for this corpus.`;
    return { clusters, flagged, wasted, incoherent, documents, ruleOfThumb, overClustered, suggested: clusters, reason, command: null };
  }
  const why = [tooManyForCorpus ? `more than ${ADVICE_RULES.maxMultipleOfRule} × √(N/2) clusters for this corpus` : '',
    tooManyWasted ? `more than ${100 * ADVICE_RULES.maxWastedShare} % of the clusters empty, tiny or diffuse` : ''].filter(Boolean).join(' and ');
  const basis = ruleOfThumb !== null && ruleOfThumb <= clusters - wasted ? '√(N/2), rounded' : 'the clusters that are not empty, tiny or diffuse';
  const corpus = manifest.corpus?.path;
  const name = modelName ?? manifest.name ?? 'model';
  const command = corpus ? `scdv train --corpus ${shellQuote(corpus)} --name ${shellQuote(`${name}-k${target}`)} --clusters ${target}` : null;
  return {
    clusters, flagged, wasted, incoherent, documents, ruleOfThumb, overClustered, suggested: target,
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
