// The default min_score of /v1/match, derived per model and target collection (ads) from the scores of unrelated
// pairs: a page of the source collection (articles) and an ad whose `category` differs. A score has no fixed
// scale: it depends on the model, the embedding settings and the texts of both collections (the same ads score
// 0.04 or 0.15 with two models), so the threshold is measured where both collections meet, when the target is
// indexed or precomputed, and recorded beside the target's layout record (pipeline/serving: match_min_score).
//
// Unrelated pairs: both documents labelled (`category`) and the labels differ. Such a pair is one an ad server
// must not show, so the q-quantile of their scores (server.matchThreshold.quantile, 0.99) lets about 1 - q of
// them through. Some differently labelled pairs are related (smartphones in two categories), so the true rate of
// unrelated ads shown is lower. Without labels on either side (fewer than MIN_UNRELATED such pairs), the pairs are
// random ones: they include the related pairs too, so the threshold is higher (fewer ads, never more unrelated).
//
// Beside it, the known-word rule's default (KnownShareThreshold): `knownShareRatio` (0.5) times the median known share
// of the source's pages (the share of a page's distinct words found in the model, counted when it was written and
// kept in its metadata): a page of which the model knows less than half the share of words a typical page of the
// collection has gets no ads (pipeline/match/safety.js, pageBlock). A ratio to the median rather than a low quantile:
// the pages a model was trained on know more of their words than new pages do (the vocabulary is theirs), most of all
// in the tails, so a quantile of the training pages keeps a few percent of new ones from ads (docs/matching.md). Pages
// written before the counts were kept are not counted; fewer than MIN_COUNTED counted pages: none derived, the rule off.
import { seededRandom } from '../random.js';
import { sparseDot } from '../embed/vectorizer.js';
import { knownShare, storedWords } from './safety.js';
import { storedDocs } from './rerank.js';

/** The metadata field whose values tell related pairs from unrelated ones (the field results carry as `category`). */
export const LABEL_FIELD = 'category';
/** Pairs scored at most (pages sampled × ads sampled): about a second of work on the reference machine. */
export const MAX_PAIRS = 200_000;
/** Ads sampled at most; pages at most MAX_PAIRS / ads, and at most MAX_PAGES. */
export const MAX_ADS = 5_000;
export const MAX_PAGES = 2_000;
/** Fewer labelled unrelated pairs than this: the threshold comes from random pairs instead. */
export const MIN_UNRELATED = 1_000;
/** Fewer source pages with word counts than this: no known-share minimum derived. */
export const MIN_COUNTED = 100;
/** Documents read per call: OpenSearch's getMany answers them in one request, the native store reads each in memory. */
const READ_BATCH = 500;

/**
 * The stored documents of ids, READ_BATCH at a time (storedDocs: one getMany each where the store has it), the
 * missing ones (deleted meanwhile) left out.
 * @param {Pick<import('../store/index.js').CollectionHandle, 'get' | 'capabilities' | 'getMany'>} coll
 * @param {string[]} ids
 */
async function readDocs(coll, ids) {
  /** @type {import('../store/collection.js').StoredDoc[]} */
  const docs = [];
  for (let i = 0; i < ids.length; i += READ_BATCH) {
    for (const d of await storedDocs(coll, ids.slice(i, i + READ_BATCH))) if (d) docs.push(d);
  }
  return docs;
}

/**
 * The derived minimum known share of pages matched with a target collection.
 * @typedef {object} KnownShareThreshold
 * @property {number} value ratio × median, rounded down to 3 decimals: a page whose known share is below it gets no ads
 * @property {number} ratio
 * @property {number} median the median known share of the pages counted
 * @property {number} pages pages whose shares were counted
 */

/**
 * The derived threshold of a target collection, as recorded and shown in /v1/models and /v1/collections.
 * @typedef {object} MatchThreshold
 * @property {number} value the default min_score: the quantile of the unrelated scores, rounded up to 3 decimals
 * @property {number} quantile
 * @property {string} source the page collection it was measured against
 * @property {'different-category' | 'random'} basis which pairs count as unrelated
 * @property {number} pairs how many of those pairs were scored
 * @property {number} pages pages sampled
 * @property {number} ads ads sampled
 * @property {number | null} related_kept share of same-category pairs scoring at or above value (null: no labels)
 * @property {KnownShareThreshold | null} [known_share] the known-word rule's default for pages matched with this target
 *   (null: too few pages with counts; absent: derived before the rule)
 * @property {string} computed_at ISO 8601
 */

/**
 * @template T
 * @param {T[]} a
 * @param {number} n
 * @param {() => number} random
 */
function sample(a, n, random) {
  if (a.length <= n) return a;
  const c = a.slice();
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(random() * (c.length - i));
    [c[i], c[j]] = [c[j], c[i]];
  }
  return c.slice(0, n);
}

/** @param {unknown} meta */
const labelOf = (meta) => {
  const m = /** @type {Record<string, unknown> | null} */ (typeof meta === 'string' ? JSON.parse(meta) : meta);
  const v = m?.[LABEL_FIELD];
  return typeof v === 'string' && v !== '' ? v : null;
};

/**
 * The q-quantile of sorted scores (the smallest score with at least a share q at or below it).
 * @param {Float64Array} sorted ascending
 * @param {number} quantile
 */
export function quantileOf(sorted, quantile) {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(quantile * sorted.length) - 1))];
}

/**
 * Measures the threshold of `ads` against `pages` (both collections of one model). Null when there is nothing to
 * measure (an empty collection). Deterministic for the same contents (seeded sampling).
 * @param {Pick<import('../store/index.js').CollectionHandle, 'ids' | 'get' | 'getMany' | 'capabilities' | 'scores' | 'metas'>} pages
 * @param {Pick<import('../store/index.js').CollectionHandle, 'ids' | 'get' | 'getMany' | 'capabilities' | 'scores'>} ads
 * @param {{source: string, quantile: number, knownShareRatio: number, seed?: number}} options
 * @returns {Promise<MatchThreshold | null>}
 */
export async function deriveMatchThreshold(pages, ads, options) {
  const random = seededRandom(options.seed ?? 1);
  const knownShareRecord = await deriveKnownShare(pages, options.knownShareRatio, seededRandom((options.seed ?? 1) + 1));
  const adIds = sample([...(await ads.ids())].sort(), MAX_ADS, random);
  if (!adIds.length) return null;
  const pageIds = sample([...(await pages.ids())].sort(), Math.min(MAX_PAGES, Math.max(1, Math.floor(MAX_PAIRS / adIds.length))), random);
  /** @type {{id: string, label: string | null, vector: {indices: ArrayLike<number>, values: ArrayLike<number>}}[]} */
  const adDocs = [];
  for (const d of await readDocs(ads, adIds)) adDocs.push({ id: d.id, label: labelOf(d.meta), vector: d.vector });
  const ids = adDocs.map((a) => a.id);
  /** @type {number[]} */ const unrelated = [];
  /** @type {number[]} */ const related = [];
  /** @type {number[]} */ const all = [];
  let pagesSeen = 0;
  for (const page of await readDocs(pages, pageIds)) {
    const id = page.id;
    pagesSeen++;
    const label = labelOf(page.meta);
    const scores = ads.capabilities.scores
      ? await /** @type {NonNullable<typeof ads.scores>} */ (ads.scores)(ids, page.vector) : adDocs.map((a) => sparseDot(page.vector, a.vector));
    for (let j = 0; j < adDocs.length; j++) {
      const s = scores[j];
      if (adDocs[j].id === id || Number.isNaN(s)) continue; // the page itself (source = target), or an ad deleted meanwhile
      all.push(s);
      if (label === null || adDocs[j].label === null) continue;
      (label === adDocs[j].label ? related : unrelated).push(s);
    }
  }
  if (!all.length) return null;
  const labelled = unrelated.length >= MIN_UNRELATED;
  const basisScores = Float64Array.from(labelled ? unrelated : all).sort();
  const value = Math.min(1, Math.ceil(quantileOf(basisScores, options.quantile) * 1000 - 1e-9) / 1000);
  return {
    value, quantile: options.quantile, source: options.source, basis: labelled ? 'different-category' : 'random', pairs: basisScores.length,
    pages: pagesSeen, ads: adDocs.length,
    related_kept: labelled && related.length ? Math.round((related.filter((s) => s >= value).length / related.length) * 1000) / 1000 : null,
    known_share: knownShareRecord,
    computed_at: new Date().toISOString(),
  };
}

/**
 * The known-word rule's default from the pages of a source collection: `ratio` times the median known share of at
 * most MAX_PAGES of them (seeded sample) that carry word counts; null with fewer than MIN_COUNTED such pages.
 * @param {Pick<import('../store/index.js').CollectionHandle, 'ids' | 'get' | 'getMany' | 'capabilities' | 'metas'>} pages
 * @param {number} ratio
 * @param {() => number} random
 * @returns {Promise<KnownShareThreshold | null>}
 */
export async function deriveKnownShare(pages, ratio, random) {
  const ids = sample([...(await pages.ids())].sort(), MAX_PAGES, random);
  /** @type {unknown[]} */
  const metas = pages.metas ? await pages.metas(ids) : (await readDocs(pages, ids)).map((d) => d.meta); // OpenSearch has no metas()
  /** @type {number[]} */
  const shares = [];
  for (const meta of metas) {
    if (meta === null || meta === undefined) continue;
    const share = knownShare(storedWords(typeof meta === 'string' ? JSON.parse(meta) : meta));
    if (share !== null) shares.push(share);
  }
  if (shares.length < MIN_COUNTED) return null;
  const median = quantileOf(Float64Array.from(shares).sort(), 0.5);
  return { value: Math.floor(ratio * median * 1000 + 1e-9) / 1000, ratio, median: Math.round(median * 1000) / 1000, pages: shares.length };
}

/**
 * The minimum known share a match request applies when it sets none, and where it comes from: the config's number
 * when server.matchMinKnownShare is one; else the target's derived one; else none (never derived, or derived before
 * the rule or from pages without word counts): 0, the rule off.
 * @param {{matchMinKnownShare: number | null}} settings config.server
 * @param {MatchThreshold | undefined} derived
 * @returns {{value: number, from: 'config' | 'derived' | 'none'}}
 */
export function defaultMinKnownShare(settings, derived) {
  if (settings.matchMinKnownShare !== null) return { value: settings.matchMinKnownShare, from: 'config' };
  if (derived?.known_share) return { value: derived.known_share.value, from: 'derived' };
  return { value: 0, from: 'none' };
}

/**
 * The min_score a match request applies when it sets none, and where it comes from: the config's number when
 * server.matchMinScore is one; else the target's derived threshold; else (never derived: a collection written
 * through the API and not precomputed yet) server.matchThreshold.fallback.
 * @param {{matchMinScore: number | null, matchThreshold: {fallback: number}}} settings config.server
 * @param {MatchThreshold | undefined} derived
 * @returns {{value: number, from: 'config' | 'derived' | 'fallback'}}
 */
export function defaultMinScore(settings, derived) {
  if (settings.matchMinScore !== null) return { value: settings.matchMinScore, from: 'config' };
  if (derived) return { value: derived.value, from: 'derived' };
  return { value: settings.matchThreshold.fallback, from: 'fallback' };
}

/**
 * One line saying what a derived threshold is, for the commands' output.
 * @param {string} target
 * @param {MatchThreshold} threshold
 */
export function describeThreshold(target, threshold) {
  const pairs = threshold.basis === 'random' ? 'random pairs (no `category` on both sides)' : 'pairs of different categories';
  return `default min_score of "${target}": ${threshold.value} (the ${threshold.quantile * 100}th percentile of ${threshold.pairs.toLocaleString('en-US')} ` +
    `${threshold.source}–${target} ${pairs}${threshold.related_kept === null ? '' : `; ${(threshold.related_kept * 100).toFixed(1)} % of same-category pairs score at or above it`})` +
    (threshold.known_share ? `; pages of which the model knows less than ${threshold.known_share.value} of the distinct words get no ads ` +
      `(${threshold.known_share.ratio} × the median of ${threshold.known_share.pages.toLocaleString('en-US')} ${threshold.source}, ${threshold.known_share.median})`
      : `; no known-word minimum (fewer than ${MIN_COUNTED} ${threshold.source} with word counts)`);
}
