// Ad matching: the documents of a target collection (ads) that best match an article. GET answers from the
// precomputed Redis entry when it is fresh (see pipeline/match/), else searches live; POST embeds a page. Brand safety
// and the known-word rule (pipeline/match/safety.js) decide in both paths alike: a blocked page gets no ads and the
// answer names the rule.
import { errors } from '../../pipeline/errors.js';
import { errorResponses, invalid } from '../error-replies.js';
import { idProblem } from '../../pipeline/corpus/document.js';
import { entryResults, lookupMatch, resultItem } from '../../pipeline/match/index.js';
import { defaultMinKnownShare, defaultMinScore } from '../../pipeline/match/threshold.js';
import { rerankSignature, searchCollection } from '../../pipeline/match/rerank.js';
import {
  hasRules, knownShare, pageBlock, safetySettings, searchMatches, seedVectors, sensitivity, storedPage,
} from '../../pipeline/match/safety.js';
import { collectionName, documentId, kSchema, resultsSchema, textSchema, titleSchema } from '../schemas.js';
import { droppedFields, droppedSchema, embedRequestText, rerankOptions, rerankProperties } from '../search-request.js';
import { armFields, armParams, serveArm } from '../arm-serving.js';

/**
 * The results at or above min_score, and how many were cut (the answer says so).
 * @param {import('../../pipeline/store/index.js').SearchHit[]} hits
 * @param {{value: number, from: string}} min
 */
function aboveMinScore(hits, min) {
  const kept = hits.filter((h) => h.score >= min.value);
  return { min_score: min.value, min_score_from: min.from, below_min_score: hits.length - kept.length, results: kept.map(resultItem) };
}

/** The end of a precomputed answer after its results' bytes. */
const CLOSE_BRACE = Buffer.from('}');

/**
 * The answer's fields when a rule keeps the page from ads: no results, and the rule.
 * @param {import('../../pipeline/match/safety.js').Block} blocked
 * @param {{value: number, from: string}} min
 */
const blockedFields = (blocked, min) => ({ min_score: min.value, min_score_from: min.from, below_min_score: 0, blocked, results: [] });

/**
 * The answer's fields of the known-word rule: the minimum applied, where it comes from, and the page's share (null:
 * not counted, a document stored before its word counts were).
 * @param {{value: number, from: string}} known
 * @param {import('../../pipeline/match/safety.js').WordCounts | null | undefined} words
 */
const knownFields = (known, words) => {
  const share = knownShare(words);
  return { min_known_share: known.value, min_known_share_from: known.from, known_share: share === null ? null : Math.round(share * 1e4) / 1e4 };
};

/** @param {import('../../pipeline/match/safety.js').ExcludedAd[]} excluded the answer's excluded_ads, when any */
const excludedFields = (excluded) => (excluded.length ? { excluded_ads: excluded } : {});

/**
 * The sensitivity of a page's vector to its collection's seeds (null when the rule is off), the seeds embedded as
 * the pages of `source` are (once per model and layout).
 * @param {import('../model-state.js').ServingModel} sm
 * @param {import('../../pipeline/match/safety.js').SafetySettings | null} st
 * @param {{indices: ArrayLike<number>, values: ArrayLike<number>}} vector
 * @param {string} source
 * @param {number} maxAgeMs
 */
async function sensitivityOf(sm, st, vector, source, maxAgeMs) {
  if (!st) return null;
  const { embed } = await sm.collectionEmbed(source, maxAgeMs);
  return sensitivity(vector, await seedVectors(sm.embedderOf(embed), st, (docs) => sm.embedDocuments(docs, embed)));
}

/**
 * The min_score of a request: its own, else the default for the target collection (pipeline/match/threshold.js).
 * @param {number | undefined} asked
 * @param {import('../model-state.js').ServingModel} sm
 * @param {string} collection
 * @param {import('../../pipeline/config.js').Config['server']} s
 * @returns {{value: number, from: 'request' | 'config' | 'derived' | 'fallback'}}
 */
function minScoreOf(asked, sm, collection, s) {
  if (asked !== undefined) return { value: asked, from: 'request' };
  return defaultMinScore(s, s.matchMinScore === null ? sm.matchThreshold(collection, s.modelPollMs) : undefined);
}

/**
 * The min_known_share of a request: its own, else the default for the target collection (pipeline/match/threshold.js).
 * @param {number | undefined} asked
 * @param {import('../model-state.js').ServingModel} sm
 * @param {string} collection
 * @param {import('../../pipeline/config.js').Config['server']} s
 * @returns {{value: number, from: 'request' | 'config' | 'derived' | 'none'}}
 */
function minKnownShareOf(asked, sm, collection, s) {
  if (asked !== undefined) return { value: asked, from: 'request' };
  return defaultMinKnownShare(s, s.matchMinKnownShare === null ? sm.matchThreshold(collection, s.modelPollMs) : undefined);
}

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {import('../app.js').AppContext} ctx
 */
export default function matchRoutes(app, ctx) {
  const { config, models, metrics } = ctx;
  const s = config.server;
  const mode = s.searchMode;
  const minScore = {
    type: 'number', minimum: -1, maximum: 1,
    description: 'drop results scoring below this; -1 keeps every result. Default: ' + (s.matchMinScore === null
      ? `the collection's derived threshold (the ${s.matchThreshold.quantile * 100}th percentile of unrelated page-ad scores, `
        + `shown in /v1/collections; ${s.matchThreshold.fallback} until derived), docs/matching.md`
      : `server.matchMinScore ${s.matchMinScore}`),
  };
  const minKnownShare = {
    type: 'number', minimum: 0, maximum: 1,
    description: 'a page knowing a smaller share of its distinct words (found in the model) gets no ads (blocked: unknown_words); 0: off. Default: '
      + (s.matchMinKnownShare === null
        ? `the collection's derived minimum (${s.matchThreshold.knownShareRatio} × the median known share of the source's pages, shown in /v1/collections; off until derived)`
        : `server.matchMinKnownShare ${s.matchMinKnownShare}`) + '. A stored page written before its word counts were kept is not judged by it (known_share null); docs/matching.md',
  };
  const words = (/** @type {number} */ maxLength, /** @type {string} */ d) => ({ type: 'array', maxItems: 100, items: { type: 'string', minLength: 1, maxLength }, description: d });
  const blockProperties = {
    block_category: words(200, 'no ads when the page\'s category is one of these (repeat the parameter for several)'),
    block_site: words(200, 'no ads when the page\'s site is one of these or a subdomain of one'),
    block_keyword: words(100, 'no ads when the page\'s title, text (POST) or keywords contain one of these: Japanese anywhere, Latin letters as a whole word, '
      + 'after NFKC and lower-casing (docs/matching.md, "Brand-safety controls")'),
  };
  const blockedSchema = {
    type: 'object',
    description: 'present when a rule keeps the page from ads (results are then empty): the request\'s block_category, block_site or block_keyword '
      + '(value: the entry that matched; field: where the keyword is), its collection\'s sensitive_topic (server.brandSafety: the closest topic, '
      + 'the page\'s similarity to it and the threshold it reached), or unknown_words (the model knows too few of its words: its known share, '
      + 'its distinct words found and not found in the model, and the min_known_share it is below)',
    properties: {
      rule: { type: 'string', enum: ['block_category', 'block_site', 'block_keyword', 'sensitive_topic', 'unknown_words'] },
      value: { type: 'string' }, field: { type: 'string', enum: ['title', 'text', 'keywords'] },
      topic: { type: 'string' }, similarity: { type: 'number' }, threshold: { type: 'number' },
      known_share: { type: 'number' }, known_words: { type: 'integer' }, unknown_words: { type: 'integer' }, min_known_share: { type: 'number' },
    },
    required: ['rule'],
  };
  const response = {
    200: {
      type: 'object',
      properties: {
        ...armFields, model: { type: 'string' }, source: { type: 'string' }, collection: { type: 'string' }, for: { type: 'string' },
        served_from: { type: 'string', enum: ['precomputed', 'live'] }, computed_at: { type: 'string' }, ...droppedSchema,
        min_score: { type: 'number', description: 'the min_score applied' },
        min_score_from: {
          type: 'string', enum: ['request', 'config', 'derived', 'fallback'],
          description: 'where min_score comes from: the request, server.matchMinScore, the collection\'s derived threshold, or the fallback (none derived yet)',
        },
        below_min_score: { type: 'integer', description: 'results among the first k cut because they scored below min_score (0: none)' },
        min_known_share: { type: 'number', description: 'the min_known_share applied (0: the known-word rule is off)' },
        min_known_share_from: {
          type: 'string', enum: ['request', 'config', 'derived', 'none'],
          description: 'where min_known_share comes from: the request, server.matchMinKnownShare, the collection\'s derived minimum, or none derived (off)',
        },
        known_share: {
          type: ['number', 'null'],
          description: 'the share of the page\'s distinct words found in the model; null: not counted (a stored page written before its word counts were kept)',
        },
        blocked: blockedSchema,
        excluded_ads: {
          type: 'array',
          description: 'ads left out of this page\'s list because they exclude its site or category (their exclude_sites, exclude_categories); absent: none',
          items: { type: 'object', properties: { id: { type: 'string' }, by: { type: 'string', enum: ['exclude_sites', 'exclude_categories'] } }, required: ['id', 'by'] },
        },
        results: resultsSchema,
      },
      required: ['request_id', 'arm', 'model', 'collection', 'served_from', 'min_score', 'min_score_from', 'below_min_score',
        'min_known_share', 'min_known_share_from', 'known_share', 'results'],
    },
    ...errorResponses,
  };

  app.get('/v1/match', {
    schema: {
      tags: ['match'],
      summary: 'The documents of `collection` (e.g. ads) best matching an article of `source`: precomputed when fresh, else live',
      querystring: {
        type: 'object',
        additionalProperties: false,
        required: ['collection', 'for'],
        properties: {
          collection: collectionName, source: { ...collectionName, default: 'articles' }, for: documentId, k: kSchema(s), min_score: minScore,
          min_known_share: minKnownShare,
          ...blockProperties, ...armParams,
          ...rerankProperties(s, 'match'),
        },
      },
      response,
    },
  }, async (request, reply) => {
    const q = /** @type {{collection: string, source: string, for: string, k: number, min_score?: number, min_known_share?: number, user?: string}
      & import('../search-request.js').RerankRequest & import('../../pipeline/match/safety.js').BlockRules} */ (request.query);
    const rr = rerankOptions(q, s, 'querystring');
    const ruled = hasRules(q);
    const st = safetySettings(s.brandSafety, q.source);
    const sm = models.acquire();
    try {
      const minScore = minScoreOf(q.min_score, sm, q.collection, s);
      const min = minScore.value;
      const known = minKnownShareOf(q.min_known_share, sm, q.collection, s);
      const arm = serveArm(ctx, sm, q.user ?? q.for);
      const names = { model: sm.name, source: q.source, collection: q.collection, for: q.for };
      if (ctx.hub && arm.asIndexed) {
        ctx.hub.batchThisTurn();
        const { entry, reason } = await lookupMatch(ctx.hub.redis, config.queue.prefix, {
          model: sm.name, source: q.source, target: q.collection, id: q.for, k: q.k, rerank: rerankSignature(rr),
        });
        // With the sensitive-topic rule on, an entry is served only when its page was measured against these seeds.
        if (entry && (!st || entry.head.safety?.seeds === st.digest)) {
          metrics.precomputed.inc({ served_from: 'precomputed' });
          const { head } = entry;
          // The page's word counts are the entry's; an entry computed before they were recorded reads them from the store.
          let words = head.words;
          if (ruled || st || known.value > 0) {
            // The request's rules need the page's metadata (the store's, not Redis); the topic's verdict is the entry's.
            const page = ruled || words === undefined ? await storedPageOf(sm, q.source, q.for) : {};
            if (words === undefined) words = page.words ?? null;
            else if (words) page.words = words;
            const blocked = pageBlock(page, q, head.safety ?? null, st, known.value);
            if (blocked) {
              return {
                request_id: arm.request_id, arm: arm.arm, ...names, served_from: 'precomputed', computed_at: head.computed_at,
                ...blockedFields(blocked, minScore), ...knownFields(known, words),
              };
            }
          }
          const knownText = JSON.stringify(knownFields(known, words)).slice(1, -1);
          const dropped = head.dropped === undefined ? '' : `"duplicates_dropped":${head.dropped.length},"dropped":${JSON.stringify(head.dropped)},`;
          const excluded = head.excluded_ads === undefined ? '' : `"excluded_ads":${JSON.stringify(head.excluded_ads)},`;
          // The stored results' bytes, cut to k and min_score (a slice: neither decoded nor parsed).
          const { bytes: results, below } = entryResults(entry, q.k, min);
          const fields = `{"model":${JSON.stringify(sm.name)},"source":${JSON.stringify(q.source)},"collection":${JSON.stringify(q.collection)},` +
            `"for":${JSON.stringify(q.for)},"served_from":"precomputed","computed_at":${JSON.stringify(head.computed_at)},${dropped}${excluded}` +
            `"min_score":${min},"min_score_from":"${minScore.from}","below_min_score":${below},${knownText},"results":`;
          // The arm's fields spliced into the text before the results (a prefix of the object: splice only reads its '{').
          return reply.type('application/json; charset=utf-8').send(Buffer.concat([Buffer.from(arm.splice(fields)), results, CLOSE_BRACE]));
        }
        metrics.precomputed.inc({ served_from: reason === 'redis-down' ? 'live-redis-down' : 'live' });
      } else {
        metrics.precomputed.inc({ served_from: 'live-redis-down' });
      }
      const target = await sm.collection(q.collection);
      const doc = await (await sm.collection(q.source)).get(q.for);
      if (!doc) throw errors.DOCUMENT_NOT_FOUND(q.for, q.source);
      await sm.checkComparable(q.source, q.collection, s.modelPollMs);
      const page = storedPage(doc.meta);
      const blocked = pageBlock(page, q, await sensitivityOf(sm, st, doc.vector, q.source, s.modelPollMs), st, known.value);
      if (blocked) return { request_id: arm.request_id, arm: arm.arm, ...names, served_from: 'live', ...blockedFields(blocked, minScore), ...knownFields(known, page.words) };
      const end = metrics.searchDuration.startTimer({ kind: 'match' });
      const r = await searchMatches(arm.on(target), doc.vector, { mode, ...(q.source === q.collection ? { excludeIds: [q.for] } : {}) }, q.k, rr, s, page);
      end();
      return {
        request_id: arm.request_id, arm: arm.arm, ...names, served_from: 'live', ...droppedFields(rr, r), ...excludedFields(r.excluded),
        ...aboveMinScore(r.hits, minScore), ...knownFields(known, page.words),
      };
    } finally {
      models.release(sm);
    }
  });

  app.post('/v1/match', {
    schema: {
      tags: ['match'],
      summary: 'The documents of `collection` (e.g. ads) best matching a page\'s text (embedded at request time)',
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['collection', 'text'],
        properties: {
          collection: collectionName, title: titleSchema, text: textSchema, k: kSchema(s), min_score: minScore, min_known_share: minKnownShare,
          ...armParams, page_id: documentId,
          source: { ...collectionName, default: 'articles', description: 'the collection of pages this page belongs to: its brand-safety settings apply (server.brandSafety)' },
          site: { type: 'string', maxLength: 200, description: 'the page\'s site: for block_site and the ads\' exclude_sites' },
          category: { type: 'string', maxLength: 200, description: 'the page\'s category: for block_category and the ads\' exclude_categories' },
          keywords: words(100, 'the page\'s keywords: for block_keyword'),
          ...blockProperties, ...rerankProperties(s, 'match'),
        },
      },
      response,
    },
  }, async (request) => {
    const b = /** @type {{collection: string, title?: string, text: string, k: number, min_score?: number, min_known_share?: number, user?: string, page_id?: string,
      source: string, site?: string, category?: string, keywords?: string[]}
      & import('../search-request.js').RerankRequest & import('../../pipeline/match/safety.js').BlockRules} */ (request.body);
    const pageProblem = b.page_id === undefined ? undefined : idProblem(b.page_id);
    if (pageProblem) throw invalid('body.page_id', pageProblem);
    const rr = rerankOptions(b, s, 'body');
    const st = safetySettings(s.brandSafety, b.source);
    /** @type {import('../../pipeline/match/safety.js').PageFacts} */
    const page = { category: b.category, site: b.site, title: b.title, text: b.text, keywords: b.keywords };
    const sm = models.acquire();
    try {
      const min = minScoreOf(b.min_score, sm, b.collection, s);
      const known = minKnownShareOf(b.min_known_share, sm, b.collection, s);
      const target = await sm.collection(b.collection);
      const arm = serveArm(ctx, sm, b.user ?? b.page_id);
      const names = { model: sm.name, collection: b.collection };
      // The request's own rules before the text is embedded (a blocked page costs no embedding), then its topic.
      const ruled = hasRules(b) ? pageBlock(page, b, null, null) : null;
      if (ruled) return { request_id: arm.request_id, arm: arm.arm, ...names, served_from: 'live', ...blockedFields(ruled, min), ...knownFields(known, null) };
      // The page is embedded as the pages of its collection are (`source`'s layout), then scored against the ads' vectors.
      await sm.checkComparable(b.source, b.collection, s.modelPollMs);
      const v = await embedRequestText(sm, b, metrics, b.source, s.modelPollMs);
      page.words = { known: v.knownWords, unknown: v.unknownWords };
      const blocked = pageBlock(page, {}, await sensitivityOf(sm, st, v, b.source, s.modelPollMs), st, known.value);
      if (blocked) return { request_id: arm.request_id, arm: arm.arm, ...names, served_from: 'live', ...blockedFields(blocked, min), ...knownFields(known, page.words) };
      const end = metrics.searchDuration.startTimer({ kind: 'match-text' });
      const r = await searchMatches(arm.on(target), { indices: v.indices, values: v.values }, { mode }, b.k, rr, s, page);
      end();
      return {
        request_id: arm.request_id, arm: arm.arm, ...names, served_from: 'live', ...droppedFields(rr, r), ...excludedFields(r.excluded),
        ...aboveMinScore(r.hits, min), ...knownFields(known, page.words),
      };
    } finally {
      models.release(sm);
    }
  });
}

/**
 * The page facts of a stored document (for a request's rules on a precomputed answer); 404 when it is not stored.
 * @param {import('../model-state.js').ServingModel} sm
 * @param {string} source
 * @param {string} id
 */
async function storedPageOf(sm, source, id) {
  const coll = await sm.collection(source);
  const [meta] = coll.metas ? await coll.metas([id]) : [(await coll.get(id))?.meta ?? null];
  if (meta === null || meta === undefined) throw errors.DOCUMENT_NOT_FOUND(id, source);
  return storedPage(meta);
}
