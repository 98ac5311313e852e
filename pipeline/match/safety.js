// Brand safety of ad matching: which pages get no ads at all, and which ads a page must not get. One place per
// decision, used by every path that answers a match (GET and POST /v1/match, live or from a precomputed entry) and
// by precompute jobs, so that a precomputed list and a live one are cut by the same rules:
//
// - pageBlock: a page gets no ads when a request's rule names it (block_category, block_site, block_keyword),
//   when its vector is close to a sensitive topic of its collection (server.brandSafety), or when the model knows
//   too few of its words (unknown_words: the share of its distinct words found in the model is below the minimum,
//   server.matchMinKnownShare or the target's derived one, pipeline/match/threshold.js). The answer carries the
//   rule as `blocked`.
// - searchMatches: an ad that excludes the page's site or category (its exclude_sites, exclude_categories) is left
//   out of the page's list, and the list is filled up from the next ads (the store searched again without it).
// - sensitivity: the similarity of a page's vector to the seed texts of the sensitive topics, embedded by the same
//   embedder as the pages (the server's for live answers, the coordinator's for precompute jobs, which record it in
//   the entry: the served entry is judged against the threshold configured when it is served).
//
// Keywords (block_keyword) are matched as an ad-operations list is expected to match on Japanese text: there are no
// spaces between words, and a tokeniser splits compounds its own way (東日本大震災 is one token of the neologd
// dictionary, so a tokenised match of 震災 would miss it), so a keyword written in Japanese matches wherever its
// characters appear (substring), and one written in Latin letters or digits only where it is a whole word (not inside
// a longer run of Latin letters or digits: "gun" does not block "begun"). Both sides are compared after NFKC
// normalisation and lower-casing (全角 ＡＢＣ and ABC, half-width ｶﾀｶﾅ and カタカナ are the same).
import { hashOf } from '../config.js';
import { sparseDot } from '../embed/vectorizer.js';
import { searchCollection } from './rerank.js';

/**
 * A request's rules (GET query parameters and POST body fields alike).
 * @typedef {object} BlockRules
 * @property {string[]} [block_category] the page's category is one of these: no ads
 * @property {string[]} [block_site] the page's site is one of these (or a subdomain of one): no ads
 * @property {string[]} [block_keyword] the page's title, text or keywords contain one of these: no ads
 */

/**
 * What the rules know of a page: its stored metadata (GET: the body is not stored, so the title and keywords are
 * what keywords are looked for in) or the request's fields (POST).
 * @typedef {object} PageFacts
 * @property {string} [category]
 * @property {string} [site]
 * @property {string} [title]
 * @property {string} [text]
 * @property {string[]} [keywords]
 * @property {WordCounts} [words] its distinct words found and not found in the model (the embedder's counts: POST, the
 *   text's; GET, those stored with the document when it was written; absent for a document written before they were)
 */

/** @typedef {{known: number, unknown: number}} WordCounts distinct words found / not found in the model */

/**
 * Why a page gets no ads, as the answer's `blocked` names it.
 * @typedef {{rule: 'block_category' | 'block_site', value: string}
 *   | {rule: 'block_keyword', value: string, field: 'title' | 'text' | 'keywords'}
 *   | {rule: 'sensitive_topic', topic: string, similarity: number, threshold: number}
 *   | {rule: 'unknown_words', known_share: number, known_words: number, unknown_words: number, min_known_share: number}} Block
 */

/** @typedef {{topic: string, text: string}} Seed a sensitive topic and the text that stands for it */
/** @typedef {{threshold: number, seeds: Seed[], digest: string}} SafetySettings a page collection's sensitive-topic rule */
/** @typedef {{topic: string, indices: ArrayLike<number>, values: ArrayLike<number>}} SeedVector */
/** @typedef {{topic: string, similarity: number}} Sensitivity the closest seed of a page and its similarity */
/** @typedef {{id: string, by: 'exclude_sites' | 'exclude_categories'}} ExcludedAd an ad left out of a page's list */

/** Most searches of one list while ads that exclude the page keep turning up (each search leaves out those found). */
export const MAX_EXCLUSION_SEARCHES = 8;

/** @param {BlockRules} rules whether a request sets any rule of its own */
export const hasRules = (rules) => !!(rules.block_category?.length || rules.block_site?.length || rules.block_keyword?.length);

/** @param {string} text text as keywords are compared */
export const normaliseText = (text) => text.normalize('NFKC').toLowerCase();

const LATIN_WORD = /^[\p{Script=Latin}\p{Nd}][\p{Script=Latin}\p{Nd}\s.'&+-]*$/u;
const LATIN_CHAR = /[\p{Script=Latin}\p{Nd}]/u;

/**
 * Whether normalised text contains a keyword: anywhere for a Japanese (or any non-Latin) keyword, as a whole word
 * for a keyword of Latin letters and digits (the comment at the top of this file).
 * @param {string} text normalised (normaliseText)
 * @param {string} keyword as written
 */
export function containsKeyword(text, keyword) {
  const k = normaliseText(keyword).trim();
  if (k === '') return false;
  if (!LATIN_WORD.test(k)) return text.includes(k);
  for (let at = text.indexOf(k); at !== -1; at = text.indexOf(k, at + 1)) {
    if ((at === 0 || !LATIN_CHAR.test(text[at - 1])) && (at + k.length >= text.length || !LATIN_CHAR.test(text[at + k.length]))) return true;
  }
  return false;
}

/**
 * Whether a page's site is a listed one: the same name (case aside), or a subdomain of a listed domain
 * (news.example.com is within example.com).
 * @param {string | undefined} site
 * @param {string[] | undefined} listed
 */
export function siteListed(site, listed) {
  if (!site || !listed?.length) return undefined;
  const s = site.toLowerCase();
  return listed.find((l) => { const x = l.toLowerCase(); return s === x || s.endsWith(`.${x}`); });
}

/**
 * The share of a page's distinct words that the model knows (null: not counted, a document stored before the counts
 * were; or no words at all).
 * @param {WordCounts | undefined | null} words
 */
export function knownShare(words) {
  if (!words || words.known + words.unknown === 0) return null;
  return words.known / (words.known + words.unknown);
}

/**
 * The rule that keeps a page from ads, or null: the request's (category, site, keyword, in that order), then its
 * collection's sensitive topics, then the known-word rule.
 * @param {PageFacts} page
 * @param {BlockRules} rules
 * @param {Sensitivity | null} sensitivity the page's (null: not measured, the rule is off)
 * @param {SafetySettings | null} settings the page collection's sensitive-topic rule (null: off)
 * @param {number} [minKnownShare] a page whose known share (knownShare of page.words) is below this gets no ads
 *   (0 or absent: off; a page without counts is not judged by it)
 * @returns {Block | null}
 */
export function pageBlock(page, rules, sensitivity, settings, minKnownShare = 0) {
  if (rules.block_category?.length && page.category !== undefined && rules.block_category.includes(page.category)) {
    return { rule: 'block_category', value: page.category };
  }
  const site = siteListed(page.site, rules.block_site);
  if (site !== undefined) return { rule: 'block_site', value: site };
  if (rules.block_keyword?.length) {
    const fields = /** @type {const} */ ([['title', page.title], ['text', page.text], ['keywords', page.keywords?.join('\n')]]);
    for (const [field, raw] of fields) {
      if (!raw) continue;
      const text = normaliseText(raw);
      const hit = rules.block_keyword.find((k) => containsKeyword(text, k));
      if (hit !== undefined) return { rule: 'block_keyword', value: hit, field };
    }
  }
  if (settings && sensitivity && sensitivity.similarity >= settings.threshold) {
    return { rule: 'sensitive_topic', topic: sensitivity.topic, similarity: round(sensitivity.similarity), threshold: settings.threshold };
  }
  const share = minKnownShare > 0 ? knownShare(page.words) : null;
  if (share !== null && share < minKnownShare) {
    const words = /** @type {WordCounts} */ (page.words);
    return { rule: 'unknown_words', known_share: round(share), known_words: words.known, unknown_words: words.unknown, min_known_share: minKnownShare };
  }
  return null;
}

/** @param {number} x */
const round = (x) => Math.round(x * 1e4) / 1e4;

/**
 * The page facts of a stored document's metadata.
 * @param {unknown} meta an object or its JSON text
 * @returns {PageFacts}
 */
export function storedPage(meta) {
  const m = /** @type {Record<string, any>} */ ((typeof meta === 'string' ? JSON.parse(meta) : meta) ?? {});
  /** @type {PageFacts} */
  const page = {};
  if (typeof m.category === 'string') page.category = m.category;
  if (typeof m.site === 'string') page.site = m.site;
  if (typeof m.title === 'string') page.title = m.title;
  if (Array.isArray(m.ad?.keywords)) page.keywords = m.ad.keywords;
  const words = storedWords(m);
  if (words) page.words = words;
  return page;
}

/**
 * The word counts kept in a stored document's metadata (pipeline/embed/meta.js), or null (written before they were).
 * @param {Record<string, any>} m the parsed metadata
 * @returns {WordCounts | null}
 */
export function storedWords(m) {
  return Number.isInteger(m.known_words) && Number.isInteger(m.unknown_words) ? { known: m.known_words, unknown: m.unknown_words } : null;
}

/** @type {WeakMap<object, Map<string, SafetySettings | null>>} settings by config section and page collection */
const settingsCache = new WeakMap();

/**
 * The sensitive-topic rule of a page collection: its own entry of server.brandSafety.collections over the
 * section's threshold and seeds; null when off (threshold null or no seeds). digest: what a precomputed entry's
 * measurement must have been made against to be judged by it.
 * @param {import('../config.js').Config['server']['brandSafety']} cfg
 * @param {string} source the page collection (text queries: the request's `source`)
 * @returns {SafetySettings | null}
 */
export function safetySettings(cfg, source) {
  let bySource = settingsCache.get(cfg);
  if (!bySource) settingsCache.set(cfg, bySource = new Map());
  const known = bySource.get(source);
  if (known !== undefined) return known;
  const own = cfg.collections.find((c) => c.collection === source);
  const threshold = own && own.threshold !== undefined ? own.threshold : cfg.threshold;
  const seeds = own?.seeds ?? cfg.seeds;
  const settings = threshold === null || !seeds.length ? null : { threshold, seeds, digest: hashOf(seeds) };
  bySource.set(source, settings);
  return settings;
}

/** @type {WeakMap<object, Map<string, Promise<SeedVector[]>>>} embedded seeds by embedder owner and digest */
const seedCache = new WeakMap();

/**
 * The seeds' vectors, embedded once per owner (a serving model, a coordinator's embedder) and seed list.
 * @param {object} owner
 * @param {SafetySettings} settings
 * @param {(docs: {title?: string, body: string}[]) => Promise<{indices: ArrayLike<number>, values: ArrayLike<number>}[]>} embed
 *   the owner's embedder (the same as the pages')
 * @returns {Promise<SeedVector[]>}
 */
export function seedVectors(owner, settings, embed) {
  let byDigest = seedCache.get(owner);
  if (!byDigest) seedCache.set(owner, byDigest = new Map());
  let p = byDigest.get(settings.digest);
  if (!p) {
    p = embed(settings.seeds.map((s) => ({ body: s.text }))).then((vs) => vs.map((v, i) => ({
      topic: settings.seeds[i].topic, indices: Array.from(v.indices), values: Array.from(v.values),
    })));
    p.catch(() => byDigest.delete(settings.digest)); // a failed embedding is tried again by the next request
    byDigest.set(settings.digest, p);
  }
  return p;
}

/**
 * The closest seed to a page's vector: the highest dot product (the store's score), the first seed on ties.
 * @param {{indices: ArrayLike<number>, values: ArrayLike<number>}} vector
 * @param {SeedVector[]} seeds
 * @returns {Sensitivity | null} null without seeds
 */
export function sensitivity(vector, seeds) {
  /** @type {Sensitivity | null} */
  let best = null;
  for (const s of seeds) {
    const similarity = sparseDot(vector, s);
    if (!best || similarity > best.similarity) best = { topic: s.topic, similarity };
  }
  return best;
}

/**
 * Which exclusion of an ad (its stored metadata) names the page, if any.
 * @param {unknown} meta an object or its JSON text
 * @param {PageFacts} page
 * @returns {ExcludedAd['by'] | null}
 */
export function exclusionOf(meta, page) {
  if (typeof meta === 'string' && !meta.includes('"exclude_')) return null; // most ads exclude nothing: no parse
  const ad = /** @type {Record<string, any>} */ ((typeof meta === 'string' ? JSON.parse(meta) : meta) ?? {}).ad;
  if (!ad) return null;
  if (siteListed(page.site, ad.exclude_sites) !== undefined) return 'exclude_sites';
  if (page.category !== undefined && Array.isArray(ad.exclude_categories) && ad.exclude_categories.includes(page.category)) return 'exclude_categories';
  return null;
}

/**
 * searchCollection for a page's list of ads, without the ads that exclude the page's site or category: while the
 * list holds such ads, the store is searched again with them left out (excludeIds), so the list is the best `want`
 * of the ads the page may show, as exact as the search. A page with neither site nor category is searched once.
 * @param {Parameters<typeof searchCollection>[0]} coll the target collection (ads)
 * @param {import('../embed/vectorizer.js').SparseVector} vector the page's
 * @param {Record<string, any>} storeOptions as searchCollection's
 * @param {number} want
 * @param {import('./rerank.js').RerankOptions} options
 * @param {{maxK: number, rerank: {poolFactor: number, poolMin: number}}} server
 * @param {PageFacts} page
 * @returns {Promise<Awaited<ReturnType<typeof searchCollection>> & {excluded: ExcludedAd[]}>}
 */
export async function searchMatches(coll, vector, storeOptions, want, options, server, page) {
  /** @type {ExcludedAd[]} */
  const excluded = [];
  let opts = storeOptions;
  for (let round = 1; ; round++) {
    const r = await searchCollection(coll, vector, opts, want, options, server);
    if (page.site === undefined && page.category === undefined) return { ...r, excluded };
    /** @type {ExcludedAd[]} */
    const found = [];
    const hits = r.hits.filter((h) => {
      const by = exclusionOf(h.meta, page);
      if (by) found.push({ id: h.id, by });
      return !by;
    });
    excluded.push(...found);
    if (!found.length || round === MAX_EXCLUSION_SEARCHES) return { ...r, hits, excluded };
    opts = { ...opts, excludeIds: [...(opts.excludeIds ?? []), ...found.map((f) => f.id)] };
  }
}
