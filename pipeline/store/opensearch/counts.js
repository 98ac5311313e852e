// Documents per split-sign feature of a collection: what a fast search's postings budget is spent on
// (search.js candidateTerms). Counted in the engine by a scripted aggregation over the doc values `v`, kept in
// the versions index (one document per collection, `<model>--<collection>.df`: int32 counts, base64) so that
// every process reads them with one GET instead of counting. Made again by a writer's flush (the end of
// `scdv index`) and by any process that finds none, or finds them made at a size a quarter off the live count:
// they steer which candidates are looked at, never which scores are returned.
import { request } from './connection.js';

/** Widths up to this are counted (two int32 arrays of the width per shard); wider collections get no counts. */
const MAX_COUNTED_WIDTH = 1 << 22;
/** Counts made at a document count this far off the live one are made again. */
const STALE_RATIO = 0.25;

/**
 * @typedef {object} CountsContext
 * @property {import('@opensearch-project/opensearch').Client} client
 * @property {string} index the collection's index
 * @property {string} versions the versions index
 * @property {string} id the counts' document there
 * @property {number} width
 * @property {{nodes: string[], what: string, model: string, collection?: string}} ctx for errors
 */

const MAP = `def d = doc['v'];
if (d.size() != 0) {
  BytesRef b = d.value; byte[] a = b.bytes; int o = b.offset; int n = b.length >> 3; int vo = o + (n << 2);
  for (int i = 0; i < n; i++) {
    int p = o + (i << 2);
    int x = (a[p] & 255) | ((a[p + 1] & 255) << 8) | ((a[p + 2] & 255) << 16) | ((a[p + 3] & 255) << 24);
    int sign = a[vo + (i << 2) + 3] & 128;
    int mag = ((a[vo + (i << 2) + 3] & 127) << 24) | ((a[vo + (i << 2) + 2] & 255) << 16) | ((a[vo + (i << 2) + 1] & 255) << 8) | (a[vo + (i << 2)] & 255);
    if (mag != 0) { if (sign == 0) { state.p[x]++; } else { state.n[x]++; } }
  }
}`;
const REDUCE = `int w = params.width; int[] p = new int[w]; int[] n = new int[w];
for (s in states) { if (s != null) { for (int i = 0; i < w; i++) { p[i] += s[0][i]; n[i] += s[1][i]; } } }
return [p, n];`;

/** @param {Int32Array} a */
const toB64 = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');
/** @param {string} s */
const fromB64 = (s) => {
  const b = Buffer.from(s, 'base64');
  const out = new Int32Array(b.length >> 2);
  for (let i = 0; i < out.length; i++) out[i] = b.readInt32LE(4 * i);
  return out;
};

/**
 * @param {Int32Array} p
 * @param {Int32Array} n
 * @param {number} docs
 * @returns {import('./search.js').FeatureCounts}
 */
function countsOf(p, n, docs) {
  let postings = 0;
  for (let i = 0; i < p.length; i++) postings += p[i] + n[i];
  return { p, n, docs, postings };
}

/**
 * The kept counts, or null when there are none or they were made at a document count a quarter off today's.
 * @param {CountsContext} c
 * @returns {Promise<import('./search.js').FeatureCounts | null>}
 */
export async function readFeatureCounts(c) {
  if (c.width > MAX_COUNTED_WIDTH) return null;
  const [got, live] = await Promise.all([
    request(() => c.client.get({ index: c.versions, id: c.id }, { ignore: [404] }), c.ctx),
    request(() => c.client.count({ index: c.index }), c.ctx),
  ]);
  const body = /** @type {any} */ (got.body);
  if (!body?.found || typeof body._source?.p !== 'string') return null;
  const docs = Number(body._source.docs);
  const now = Number(/** @type {any} */ (live.body).count);
  if (Math.abs(now - docs) > STALE_RATIO * Math.max(docs, 1)) return null;
  const p = fromB64(body._source.p);
  const n = fromB64(body._source.n);
  return p.length === c.width && n.length === c.width ? countsOf(p, n, docs) : null;
}

/** The counting aggregation reads every document: ~16 s at 300k on a busy 3-node cluster, so a million outgrow the
 * client's request timeout (store.opensearch.requestTimeoutMs, 30 s), and a timed-out count would be retried from
 * the start. It gets a timeout of its own. */
const COUNT_TIMEOUT_MS = 10 * 60_000;

/**
 * Counts the collection's documents per feature in the engine and keeps the result (see the top of the file).
 * @param {CountsContext} c
 * @returns {Promise<import('./search.js').FeatureCounts | null>} null: too wide to count
 */
export async function computeFeatureCounts(c) {
  if (c.width > MAX_COUNTED_WIDTH) return null;
  const res = await request(() => c.client.search({ index: c.index, body: /** @type {any} */ ({
    size: 0, track_total_hits: true,
    aggs: { df: { scripted_metric: {
      params: { width: c.width },
      init_script: { source: 'state.p = new int[params.width]; state.n = new int[params.width];', lang: 'painless' },
      map_script: { source: MAP, lang: 'painless' },
      combine_script: { source: 'return [state.p, state.n];', lang: 'painless' },
      reduce_script: { source: REDUCE, lang: 'painless' },
    } } },
  }) }, { requestTimeout: COUNT_TIMEOUT_MS }), c.ctx);
  const body = /** @type {any} */ (res.body);
  const docs = Number(body.hits?.total?.value ?? 0);
  const [pl, nl] = body.aggregations.df.value;
  const counts = countsOf(Int32Array.from(pl), Int32Array.from(nl), docs);
  await request(() => c.client.index({ index: c.versions, id: c.id, body: { docs, postings: counts.postings, at: Date.now(), p: toB64(counts.p), n: toB64(counts.n) } }), c.ctx);
  return counts;
}
