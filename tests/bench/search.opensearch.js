// The OpenSearch side of the store benchmark (search.bench.js --backend opensearch): the same vectors and queries
// as the native store's run, through the product's own OpenSearch backend (openModelStore with
// store.backend 'opensearch'), on a cluster of 1 or 2 nodes started by the test harness (tests/lib/opensearch.js),
// or on an existing one (--opensearch-url). Per cluster:
//  1. writes by batch size: up to --write-docs documents upserted in batches of 1, 10, 100 and 1,000, one bulk
//     request per batch, each call awaited (acknowledged: durable), without waiting for a refresh (the batch
//     indexing path of `scdv index`); each size into its own collection, a size given up after WRITE_SECONDS;
//     and batches of 1 with `refresh=wait_for` (the path of the server's PUT: searchable when acknowledged);
//  2. bulk load: every document in batches of 1,000, BULK_CONCURRENCY requests in flight, then flush (a refresh,
//     and the feature counts: search.js); force-merged to one segment per shard (as the native figure is after its
//     merge) and refreshed, then bytes per document = the primaries' store size / documents (a replica doubles
//     what the cluster holds: that is said, not counted);
//  3. search: --os-queries of the benchmark's queries (warm-up first), each its own vector with itself excluded:
//     p50/p99 latency as the client sees it (round trip, budgeted candidates, exact re-rank in the engine),
//     recall@k against the exact ground truth; queries/s with 1, 2 and 4 concurrent searchers; then mode 'exact'
//     on EXACT_QUERIES of them (p50, recall).
// Two nodes: 2 primary shards and a replica each (the scale-out layout); one node: 1 shard, no replica.
import os from 'node:os';
import { loadConfig } from '../../pipeline/config.js';
import { openModelStore } from '../../pipeline/store/index.js';
import { startOpenSearch } from '../lib/opensearch.js';

/** A batch size whose writes take longer than this is measured on the documents written so far. */
const WRITE_SECONDS = 30;
/** The API write path (refresh=wait_for) waits for the next refresh (1 s): a few seconds tell its rate. */
const API_WRITE_SECONDS = 10;
const BULK = 1000;
/** Bulk requests in flight while loading (two: one per core of the machine these figures come from). */
const BULK_CONCURRENCY = 2;
/** Queries measured in mode 'exact' (every term, proven: hundreds of ms each). */
const EXACT_QUERIES = 50;

/** @param {string} m */
const log = (m) => process.stderr.write(`[search.bench opensearch] ${m}\n`);
const now = () => Number(process.hrtime.bigint()) / 1e6;
const round = (/** @type {number} */ x, d = 3) => Math.round(x * 10 ** d) / 10 ** d;
/** @param {number[]} xs @param {number} p */
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))];
};

/**
 * @typedef {object} OpenSearchBenchInput
 * @property {import('./search.data.js').Csr} m the vectors
 * @property {Uint32Array} queries rows searched
 * @property {string[][]} truth exact top-k ids of each query (same order)
 * @property {number} k
 * @property {(r: number) => string} idOf
 * @property {(m: import('./search.data.js').Csr, r: number) => {indices: Uint32Array, values: Float32Array}} row
 * @property {number[]} nodes cluster sizes to measure, e.g. [1, 2]
 * @property {string | null} url an existing cluster instead of the harness's
 * @property {number} queryCount queries measured (the first ones of `queries`)
 * @property {number} writeDocs documents per write batch size
 * @property {number} heapMb JVM heap of each harness node
 * @property {string} prefix of the benchmark's index names (they are deleted at the end)
 */

/**
 * @param {OpenSearchBenchInput} o
 * @returns {Promise<Record<string, any>[]>} one result per cluster size
 */
export async function benchOpenSearch(o) {
  const out = [];
  for (const n of o.nodes) {
    /** @type {{urls: string[], stop: () => Promise<void>} | null} */
    let cluster = null;
    let urls;
    if (o.url) urls = [o.url];
    else {
      log(`starting a ${n}-node cluster (heap ${o.heapMb} MB each)`);
      const t = now();
      cluster = await startOpenSearch({ nodes: /** @type {1|2} */ (n), heapMb: o.heapMb, name: 'scdv-bench' });
      urls = cluster.urls;
      log(`  up in ${((now() - t) / 1000).toFixed(0)} s: ${urls.join(', ')}`);
    }
    try {
      out.push(await benchCluster(o, n, urls));
    } finally {
      await cluster?.stop();
    }
  }
  return out;
}

/**
 * @param {OpenSearchBenchInput} o
 * @param {number} nodes
 * @param {string[]} urls
 */
async function benchCluster(o, nodes, urls) {
  const { m, k, idOf, row } = o;
  const prefix = `${o.prefix}${process.pid}-${nodes}n-`;
  const config = loadConfig({ overrides: { store: { backend: 'opensearch', opensearch: {
    nodes: urls, indexPrefix: prefix, shards: nodes, replicas: nodes > 1 ? 1 : 0, bulkDocs: BULK,
  } } } });
  const store = await openModelStore('bench', config);
  const load0 = os.loadavg();
  try {
    // 1. writes by batch size
    /** @type {Record<string, number>} */
    const writeDocsPerS = {};
    for (const size of [1, 10, 100, 1000]) {
      writeDocsPerS[size] = await writeRate(o, store, `w${size}`, size, false, WRITE_SECONDS);
    }
    const apiWriteDocsPerS = await writeRate(o, store, 'api', 1, true, API_WRITE_SECONDS);

    // 2. bulk load
    const c = await osCollection(store, 'bench', m.width);
    const loadAvgLoad = os.loadavg();
    let t = now();
    let nextRow = 0;
    await Promise.all(Array.from({ length: BULK_CONCURRENCY }, async () => {
      while (nextRow < m.rows) {
        const i = nextRow;
        nextRow += BULK;
        const batch = [];
        for (let j = i; j < Math.min(m.rows, i + BULK); j++) batch.push({ id: idOf(j), vector: row(m, j) });
        await c.upsert(batch, { refresh: false });
      }
    }));
    const writeS = (now() - t) / 1000;
    await c.flush();
    const loadS = (now() - t) / 1000;
    log(`${nodes} node(s): bulk load of ${m.rows} documents in batches of ${BULK}, ${BULK_CONCURRENCY} in flight: ${loadS.toFixed(1)} s ` +
      `(${Math.round(m.rows / loadS)} docs/s; writes ${writeS.toFixed(1)} s, flush and feature counts ${(loadS - writeS).toFixed(1)} s; load ${loadAvgLoad[0].toFixed(1)})`);
    t = now();
    await http(urls[0], 'POST', `/${prefix}*/_forcemerge?max_num_segments=1`);
    await http(urls[0], 'POST', `/${prefix}*/_refresh`);
    const mergeS = (now() - t) / 1000;
    const st = await c.stats();
    if (st.docs !== m.rows) throw new Error(`${st.docs} documents in the index, ${m.rows} written`);
    const bytesPerDoc = st.bytes / st.docs;
    log(`  force-merged in ${mergeS.toFixed(1)} s: ${(st.bytes / 2 ** 20).toFixed(1)} MiB of primaries in ${st.segments} segment(s), ` +
      `${Math.round(bytesPerDoc)} bytes per document${nodes > 1 ? ' (the replica holds as much again)' : ''}`);

    // 3. search
    const nq = Math.min(o.queryCount, o.queries.length);
    const search = (/** @type {number} */ i) => c.search(row(m, o.queries[i]), { k, excludeIds: [idOf(o.queries[i])] });
    for (let i = 0; i < Math.min(nq, Math.max(20, nq / 10)); i++) await search(i);
    /** @type {number[]} */
    const lat = [];
    let rec = 0;
    for (let i = 0; i < nq; i++) {
      const t1 = now();
      const hits = await search(i);
      lat.push(now() - t1);
      const want = new Set(o.truth[i]);
      rec += hits.filter((h) => want.has(h.id)).length / Math.max(1, want.size);
    }
    /** @type {Record<number, number>} */
    const qps = {};
    for (const conc of [1, 2, 4]) {
      let next = 0;
      const t2 = now();
      await Promise.all(Array.from({ length: conc }, async () => {
        while (next < nq) await search(next++);
      }));
      qps[conc] = nq / ((now() - t2) / 1000);
    }
    const ne = Math.min(EXACT_QUERIES, nq);
    /** @type {number[]} */
    const exactLat = [];
    let exactRec = 0;
    for (let i = 0; i < ne; i++) {
      const t1 = now();
      const hits = await c.search(row(m, o.queries[i]), { k, excludeIds: [idOf(o.queries[i])], mode: 'exact' });
      exactLat.push(now() - t1);
      const want = new Set(o.truth[i]);
      exactRec += hits.filter((h) => want.has(h.id)).length / Math.max(1, want.size);
    }
    const r = {
      nodes, shards: nodes, replicas: nodes > 1 ? 1 : 0, queries: nq,
      exact_p50_ms: round(pct(exactLat, 0.5)), exact_p99_ms: round(pct(exactLat, 0.99)), exact_recall_at_10: round(exactRec / ne, 4), exact_queries: ne,
      bulk_docs: BULK, bulk_concurrency: BULK_CONCURRENCY,
      recall_at_10: round(rec / nq, 4), p50_ms: round(pct(lat, 0.5)), p99_ms: round(pct(lat, 0.99)),
      qps_1: round(qps[1], 1), qps_2: round(qps[2], 1), qps_4: round(qps[4], 1),
      bulk_load_docs_per_s: Math.round(m.rows / loadS),
      write_docs_per_s_by_batch: Object.fromEntries(Object.entries(writeDocsPerS).map(([s, v]) => [s, Math.round(v)])),
      api_write_docs_per_s: round(apiWriteDocsPerS, 1),
      bytes_per_doc: Math.round(bytesPerDoc), index_bytes: st.bytes, merge_s: round(mergeS, 1),
      load_avg: { start: load0.map((x) => round(x, 2)), bulk_load: loadAvgLoad.map((x) => round(x, 2)), end: os.loadavg().map((x) => round(x, 2)) },
    };
    log(`${nodes} node(s): p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, recall@${k} ${r.recall_at_10}; QPS 1: ${r.qps_1}, 2: ${r.qps_2}, 4: ${r.qps_4}; ` +
      `exact: p50 ${r.exact_p50_ms} ms, recall ${r.exact_recall_at_10}`);
    return r;
  } finally {
    for (const { name } of await store.listCollections()) await store.dropCollection(name);
    await store.close();
    await http(urls[0], 'DELETE', `/${prefix}*`).catch(() => {});
  }
}

/**
 * Documents per second upserted in batches of `size` into a fresh collection (dropped after), for at most
 * `seconds` (the rate is of the documents written by then).
 * @param {OpenSearchBenchInput} o
 * @param {import('../../pipeline/store/contract.js').StoreBackend} store
 * @param {string} name
 * @param {number} size
 * @param {boolean} refresh wait until searchable (the API path) or not (batch indexing)
 * @param {number} seconds
 */
async function writeRate(o, store, name, size, refresh, seconds) {
  const { m, row } = o;
  const wc = await osCollection(store, name, m.width);
  await wc.upsert([{ id: 'warm', vector: row(m, 0) }], { refresh });
  const t = now();
  let done = 0;
  while (done < o.writeDocs && now() - t < seconds * 1000) {
    const batch = [];
    for (let j = done; j < Math.min(o.writeDocs, done + size); j++) batch.push({ id: `w${j}`, vector: row(m, j % m.rows) });
    await wc.upsert(batch, { refresh });
    done += batch.length;
  }
  const s = (now() - t) / 1000;
  log(`writes of ${size}${refresh ? ' (refresh=wait_for)' : ''}: ${done} documents in ${s.toFixed(1)} s (${Math.round(done / s)} docs/s)`);
  await store.dropCollection(name);
  return done / s;
}

/**
 * A collection of the OpenSearch backend (its upsert takes {refresh}).
 * @param {import('../../pipeline/store/contract.js').StoreBackend} store
 * @param {string} name
 * @param {number} width
 */
async function osCollection(store, name, width) {
  return /** @type {import('../../pipeline/store/opensearch/collection.js').OpenSearchCollection} */ (await store.collection(name, { width }));
}

/**
 * A plain request to the cluster for what the store contract does not expose (force merge, index sizes).
 * @param {string} base
 * @param {string} method
 * @param {string} p
 * @returns {Promise<any>}
 */
async function http(base, method, p) {
  const r = await fetch(`${base}${p}`, { method });
  const body = await r.json();
  if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}
