// Where a match score stops meaning "related": the score distribution of unrelated pairs (an article and an ad,
// or two articles, of different livedoor categories) against related ones (same category), for a model with the
// default embedding settings (the hybrid layout): the distribution the derived default min_score is taken from
// (pipeline/match/threshold.js, docs/matching.md).
//
//   node tests/bench/match-threshold.js --model livedoor-sample [--corpus FILE] [--ads FILE] [--articles 1000]
//        [--pairs 20000] [--seed 1] [--json]
//
// Scores are what the store answers with: the dot product of two (L2-normalised) document vectors.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../pipeline/config.js';
import { createEmbedder } from '../../pipeline/embed/index.js';
import { newCollectionEmbed } from '../../pipeline/embed/layout.js';
import { parseDocument } from '../../pipeline/corpus/document.js';
import { REPO_ROOT, SAMPLE_CORPUS } from '../../pipeline/paths.js';
import { seededRandom } from '../../pipeline/random.js';

const { values: o } = parseArgs({
  options: {
    model: { type: 'string' }, corpus: { type: 'string', default: SAMPLE_CORPUS },
    ads: { type: 'string', default: `${REPO_ROOT}/tests/fixtures/ads/sample.jsonl` },
    articles: { type: 'string', default: '1000' }, pairs: { type: 'string', default: '20000' }, seed: { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
  },
});
if (!o.model) throw new Error('--model NAME is required (a model under models/)');

/** @param {string} file */
const readDocs = (file) => fs.readFileSync(file, 'utf8').split('\n').map((l, i) => parseDocument(Buffer.from(l), i + 1))
  .flatMap((r) => ('doc' in r && r.doc.category ? [r.doc] : []));

const random = seededRandom(Number(o.seed));
/** @template T @param {T[]} a @param {number} n */
function sample(a, n) {
  const c = a.slice();
  for (let i = c.length - 1; i > 0; i--) { const j = Math.floor(random() * (i + 1)); [c[i], c[j]] = [c[j], c[i]]; }
  return c.slice(0, n);
}

/** @param {{indices: ArrayLike<number>, values: ArrayLike<number>}} a @param {{indices: ArrayLike<number>, values: ArrayLike<number>}} b */
function dot(a, b) {
  let i = 0; let j = 0; let s = 0;
  while (i < a.indices.length && j < b.indices.length) {
    if (a.indices[i] === b.indices[j]) s += a.values[i++] * b.values[j++];
    else if (a.indices[i] < b.indices[j]) i++;
    else j++;
  }
  return s;
}

/** @param {number[]} xs sorted ascending @param {number} p 0..100 */
const pct = (xs, p) => xs[Math.min(xs.length - 1, Math.max(0, Math.ceil((p / 100) * xs.length) - 1))];
const sorted = (/** @type {number[]} */ xs) => Float64Array.from(xs).sort();
const PCTS = [50, 90, 95, 99, 99.9];

const config = loadConfig();
const embedder = await createEmbedder(o.model, config, { inMemory: true });
const articles = sample(readDocs(o.corpus), Number(o.articles));
const ads = readDocs(o.ads);
const av = await embedder.embedDocuments(articles);
// The ads as the product embeds an ad collection (adEmbed over the pages' settings).
const adEmbed = newCollectionEmbed(config.embed, config.adEmbed, 'ads');
const dv = await embedder.withSettings(adEmbed).embedDocuments(ads);

/** @type {number[]} */ const adUnrelated = [];
/** @type {number[]} */ const adRelated = [];
/** best same-category ad score of each article */
/** @type {number[]} */ const bestRelated = [];
/** the top ad of each article (what a match with k 1 answers): its score, and whether it is of the article's category */
/** @type {{score: number, same: boolean}[]} */ const top = [];
for (let i = 0; i < articles.length; i++) {
  let best = -Infinity;
  let first = { score: -Infinity, same: false };
  for (let j = 0; j < ads.length; j++) {
    const s = dot(av[i], dv[j]);
    const same = ads[j].category === articles[i].category;
    if (same) { adRelated.push(s); best = Math.max(best, s); } else adUnrelated.push(s);
    if (s > first.score) first = { score: s, same };
  }
  if (best > -Infinity) bestRelated.push(best);
  top.push(first);
}
/** @type {number[]} */ const artUnrelated = [];
/** @type {number[]} */ const artRelated = [];
for (let n = 0; n < Number(o.pairs); n++) {
  const i = Math.floor(random() * articles.length);
  const j = Math.floor(random() * articles.length);
  if (i === j) continue;
  (articles[i].category === articles[j].category ? artRelated : artUnrelated).push(dot(av[i], av[j]));
}
const dist = (/** @type {number[]} */ xs) => {
  const s = Array.from(sorted(xs));
  return { n: s.length, ...Object.fromEntries(PCTS.map((p) => [`p${p}`, Number(pct(s, p).toFixed(4))])) };
};
const result = {
  model: o.model, corpus: o.corpus, ads: o.ads, articles: articles.length, ad_count: ads.length,
  embed: { alpha: config.embed.hybrid.alpha, keepFraction: config.embed.keepFraction, damping: config.embed.damping },
  ads_embed: { alpha: adEmbed.hybrid.alpha, keepFraction: adEmbed.keepFraction },
  ad_unrelated: dist(adUnrelated), ad_related: dist(adRelated), article_unrelated: dist(artUnrelated), article_related: dist(artRelated),
  /** For thresholds: share of unrelated article-ad pairs kept, of related ones kept, of articles whose best same-category ad is kept. */
  thresholds: [0.02, 0.04, 0.05, 0.06, 0.08, 0.1, 0.12, 0.15, 0.2].map((t) => ({
    min_score: t,
    unrelated_ad_pairs_kept: Number((adUnrelated.filter((s) => s >= t).length / adUnrelated.length).toFixed(4)),
    unrelated_article_pairs_kept: Number((artUnrelated.filter((s) => s >= t).length / artUnrelated.length).toFixed(4)),
    related_ad_pairs_kept: Number((adRelated.filter((s) => s >= t).length / adRelated.length).toFixed(4)),
    articles_keeping_a_related_ad: Number((bestRelated.filter((s) => s >= t).length / bestRelated.length).toFixed(4)),
    articles_with_an_ad: Number((top.filter((x) => x.score >= t).length / top.length).toFixed(4)),
    top_ad_same_category: Number((top.filter((x) => x.score >= t && x.same).length / Math.max(1, top.filter((x) => x.score >= t).length)).toFixed(4)),
  })),
  top_ad_same_category_without_min_score: Number((top.filter((x) => x.same).length / top.length).toFixed(4)),
};
if (o.json) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else {
  process.stdout.write(`model ${o.model}: ${articles.length} articles of ${o.corpus}, ${ads.length} ads (embed alpha ${result.embed.alpha}; ads alpha ${result.ads_embed.alpha}, keepFraction ${result.ads_embed.keepFraction})\n`);
  for (const k of /** @type {const} */ (['ad_unrelated', 'ad_related', 'article_unrelated', 'article_related'])) {
    const d = result[k];
    process.stdout.write(`  ${k.padEnd(18)} n=${String(d.n).padStart(6)}  ${PCTS.map((p) => `p${p} ${/** @type {any} */ (d)[`p${p}`].toFixed(3)}`).join('  ')}\n`);
  }
  const cols = ['unrelated ad pairs kept', 'unrelated article pairs kept', 'related ad pairs kept', 'articles keeping a related ad', 'articles with an ad', 'top ad of the category'];
  const keys = /** @type {const} */ (['unrelated_ad_pairs_kept', 'unrelated_article_pairs_kept', 'related_ad_pairs_kept', 'articles_keeping_a_related_ad', 'articles_with_an_ad', 'top_ad_same_category']);
  process.stdout.write(`  top ad of the article's category without min_score: ${(100 * result.top_ad_same_category_without_min_score).toFixed(1)} %\n`);
  process.stdout.write(`  min_score | ${cols.join(' | ')}\n`);
  for (const t of result.thresholds) {
    process.stdout.write(`  ${t.min_score.toFixed(2).padStart(9)} | ${keys.map((k, i) => `${(100 * t[k]).toFixed(1)} %`.padStart(cols[i].length)).join(' | ')}\n`);
  }
}
embedder.model.wordTopics.close();
