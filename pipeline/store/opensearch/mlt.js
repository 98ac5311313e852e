// The more_like_this baseline run by OpenSearch itself, not by the re-implementation in
// workers/scdv/eval_baselines.py: the comparison the production team made against Elasticsearch, made against the
// real engine. The evaluated documents' tokens (the very tokens the other methods see) go into a temporary index as
// one whitespace-joined text field analysed by the `whitespace` analyzer (no lower-casing, no stemming: the tokens
// are already what the model's tokenizer kept); every document then asks `more_like_this` for its neighbours by
// `_id`, with the engine's own defaults (the defaults of Elasticsearch the production team used, also the
// re-implementation's MltParams: max_query_terms 25, min_term_freq 2, min_doc_freq 5, minimum_should_match 30 %,
// BM25 k1 1.2 b 0.75, include false); the index is deleted at the end. With `queries` (`scdv eval --match`) the
// index holds the short texts (ads) and each query is a page's tokens as the `like` text: its interesting terms are
// then picked by the ads' document frequencies, as the engine picks them from the index it searches.
// One primary shard, no replica: document frequencies (idf, min_doc_freq) are then those of the whole corpus, as
// in the re-implementation; with several shards each shard would count its own.
import crypto from 'node:crypto';
import { errors } from '../../errors.js';
import { createClient, request } from './connection.js';

/** Documents per bulk request while filling the temporary index. */
const BULK_DOCS = 500;
/** The text field holding a document's tokens. */
const FIELD = 't';

/**
 * @typedef {object} MltOpenSearchResult
 * @property {number[][]} neighbours per document (corpus rows), best first, itself excluded (with `queries`: per query)
 * @property {number[]} latency_ms per query, as the client saw it (round trip included)
 * @property {number} queries_without_hits documents more_like_this returned nothing for (e.g. no interesting term)
 * @property {string} engine e.g. "OpenSearch 2.19.3"
 * @property {string} params which more_like_this parameters were used
 */

/**
 * Top-k more_like_this neighbours of every document, computed by OpenSearch on a temporary index.
 * @param {string[][]} tokens per document, the kept tokens
 * @param {{k: number, opensearch: import('../../config.js').Config['store']['opensearch'], log?: (m: string) => void, queries?: string[][]}} o
 *   queries: texts (their kept tokens) that ask for documents of `tokens` instead of each document itself; the
 *   neighbours are then per query
 * @returns {Promise<MltOpenSearchResult>}
 */
export async function mltOpenSearch(tokens, o) {
  const log = o.log ?? (() => {});
  const client = createClient(o.opensearch);
  const index = `${o.opensearch.indexPrefix}eval-mlt-${crypto.randomBytes(6).toString('hex')}`;
  /** Runs a client call, its failure mapped onto the catalogue (unreachable: SCDV_BACKEND_UNAVAILABLE). */
  const call = /** @type {<T>(what: string, f: () => Promise<T>) => Promise<T>} */ ((what, f) => request(f, { nodes: o.opensearch.nodes, what, model: 'eval' }));
  try {
    const engine = await call('ask the cluster its version', () => client.info());
    const version = `OpenSearch ${engine.body.version?.number ?? '?'}`;
    await call('create the temporary more_like_this index', () => client.indices.create({
      index,
      body: {
        settings: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: '-1' },
        mappings: { dynamic: 'strict', properties: { [FIELD]: { type: 'text', analyzer: 'whitespace' } } },
      },
    }));
    log(`eval: more_like_this on ${version}: indexing ${tokens.length} documents into ${index}`);
    for (let i = 0; i < tokens.length; i += BULK_DOCS) {
      /** @type {object[]} */
      const body = [];
      for (let j = i; j < Math.min(tokens.length, i + BULK_DOCS); j++) body.push({ index: { _id: String(j) } }, { [FIELD]: tokens[j].join(' ') });
      const r = await call('index the documents for more_like_this', () => client.bulk({ index, body }));
      if (r.body.errors) {
        const bad = r.body.items.find((/** @type {any} */ it) => it.index?.error)?.index;
        throw errors.BACKEND_REJECTED('opensearch', `document ${bad?._id} of the more_like_this index`, bad?.error?.reason ?? '?', bad?.error?.type ?? '?');
      }
    }
    await call('refresh the more_like_this index', () => client.indices.refresh({ index }));
    /** @type {number[][]} */
    const neighbours = [];
    /** @type {number[]} */
    const latency = [];
    let empty = 0;
    const asked = o.queries ? o.queries.length : tokens.length;
    for (let i = 0; i < asked; i++) {
      if (o.queries && o.queries[i].length === 0) { empty++; neighbours.push([]); latency.push(0); continue; }
      const t = performance.now();
      const r = await call('more_like_this', () => client.search({
        index,
        body: {
          size: o.k, _source: false, track_total_hits: false,
          query: { more_like_this: { fields: [FIELD], like: o.queries ? o.queries[i].join(' ') : [{ _index: index, _id: String(i) }] } },
        },
      }));
      latency.push(performance.now() - t);
      const hits = r.body.hits.hits.map((h) => Number(h._id));
      if (!hits.length) empty++;
      neighbours.push(hits);
    }
    return { neighbours, latency_ms: latency, queries_without_hits: empty, engine: version, params: 'engine defaults (Elasticsearch\'s)' };
  } finally {
    await client.indices.delete({ index }, { ignore: [404] }).catch(() => {});
    await client.close();
  }
}
