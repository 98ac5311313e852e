// The OpenSearch side of the store benchmark (search.bench.js --backend opensearch): the same vectors and queries
// as the native store's run, through the product's own OpenSearch backend (openModelStore with
// store.backend 'opensearch'), on a cluster of --nodes local nodes started by the test harness (tests/lib/opensearch.js),
// or on an existing one (--opensearch-url). Per cluster:
//  1. writes by batch size (skipped with --write-docs 0 or --os-skip-load): up to --write-docs documents upserted in
//     batches of 1, 10, 100 and 1,000, one bulk request per batch, each call awaited (acknowledged: durable), without
//     waiting for a refresh (the batch indexing path of `scdv index`); each size into its own collection, a size
//     given up after WRITE_SECONDS; and batches of 1 with `refresh=wait_for` (the path of the server's PUT:
//     searchable when acknowledged);
//  2. bulk load (skipped with --os-skip-load: the collection must hold every document of --data): every document in
//     batches of --os-bulk, --os-bulk-concurrency requests in flight, into an index made with --os-load-replicas
//     replicas, then flush (a refresh, and the feature counts: search.js); then `_flush` (a commit), a wait until
//     every shard copy's retention leases pass its operations (else a merge keeps each document's
//     `_recovery_source`: docs/scale-out.md), force-merged to one segment per shard and refreshed; then, when
//     --replicas is more than the load's, the replicas are added (copied from the merged primaries: no indexing
//     twice) and green waited for. Bytes per document = the primaries' store size / documents (and the cluster's);
//  3. search: --os-queries of the benchmark's queries (warm-up first), each its own vector with itself excluded:
//     p50/p99 latency as the client sees it (round trip, budgeted candidates, exact re-rank in the engine),
//     recall@k against the exact ground truth, the largest difference of a returned score from the exact dot
//     product (float64 over the float32 vectors), errors, and the CPU milliseconds a query of the local nodes (from
//     /proc: the figure a loaded shared machine does not distort) and of this process; queries/s with 1, 2 and 4
//     concurrent searchers; then mode
//     'exact' on --os-exact-queries of them (p50, recall);
//  4. with --os-kill I (a cluster of several nodes): node I is stopped (--os-kill-signal KILL or TERM), the cluster
//     waited for until it has one node less and is yellow (not red), and step 3 measured again; with --os-recover
//     the node is started again (same folder and ports) and green waited for, with the time it took.
// A cluster of n nodes gets --shards (default n) primary shards and --replicas (default 1 with several nodes, else
// 0). With --os-dir the harness's cluster lives in that folder, its nodes outlive this process, and
// DIR/cluster.json records them (URLs, pids, ports); with --os-keep neither the cluster nor the loaded collection is
// removed at the end, so a later run attaches with --opensearch-url URL[,URL…] --os-skip-load (--os-dir DIR too for
// --os-kill: the pids and ports). The collection's index is `<--os-prefix><n>n-bench--bench` (with this process's
// pid in the prefix unless --os-keep or --os-skip-load).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../pipeline/config.js';
import { openModelStore } from '../../pipeline/store/index.js';
import { alive, startNode } from '../../pipeline/store/opensearch/node.js';
import { startOpenSearch } from '../lib/opensearch.js';
import { processCpuMs } from './process-cpu.js';

/** A batch size whose writes take longer than this is measured on the documents written so far. */
const WRITE_SECONDS = 30;
/** The API write path (refresh=wait_for) waits for the next refresh (1 s): a few seconds tell its rate. */
const API_WRITE_SECONDS = 10;
/** Requests of a million-document collection (its feature counts, a merge's answer) take minutes. */
const REQUEST_TIMEOUT_MS = 600_000;
const CLUSTER_NAME = 'scdv-bench';

/** @param {string} m */
const log = (m) => process.stderr.write(`[search.bench opensearch] ${m}\n`);
const now = () => Number(process.hrtime.bigint()) / 1e6;
const round = (/** @type {number} */ x, d = 3) => Math.round(x * 10 ** d) / 10 ** d;
const loadAvg = () => os.loadavg().map((x) => round(x, 2));
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));
/** @param {number[]} xs @param {number} p */
const pct = (xs, p) => {
  if (!xs.length) return NaN;
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
 * @property {string[] | null} url an existing cluster instead of the harness's (its node URLs)
 * @property {number} queryCount queries measured (the first ones of `queries`)
 * @property {number} writeDocs documents per write batch size
 * @property {number} heapMb JVM heap of each harness node
 * @property {string} prefix of the benchmark's index names
 * @property {number | null} shards primary shards (null: one per node)
 * @property {number | null} replicas (null: 1 with several nodes, else 0)
 * @property {number | null} loadReplicas replicas while loading (null: as `replicas`)
 * @property {number} bulk documents a bulk request
 * @property {number} bulkConcurrency bulk requests in flight
 * @property {number} exactQueries queries measured in mode 'exact'
 * @property {string | null} dir the harness cluster's folder (kept), or the attached cluster's (its cluster.json)
 * @property {boolean} keep leave the cluster running and the collection in it
 * @property {boolean} skipLoad attach to a loaded collection
 * @property {number | null} kill node to stop after the first measurement
 * @property {'SIGKILL' | 'SIGTERM'} killSignal
 * @property {boolean} recover start the stopped node again and wait for green
 * @property {() => number[]} [pids] the running local nodes' pids (set per cluster)
 */

/**
 * @typedef {object} NodeRecord what cluster.json keeps of a node: enough to stop it and start it again
 * @property {string} name
 * @property {string} url
 * @property {number} httpPort
 * @property {number} transportPort
 * @property {string} dir
 * @property {number} pid
 */

/**
 * @param {OpenSearchBenchInput} o
 * @returns {Promise<Record<string, any>[]>} one result per cluster size
 */
export async function benchOpenSearch(o) {
  const out = [];
  for (const n of o.nodes) {
    /** @type {Awaited<ReturnType<typeof startOpenSearch>> | null} */
    let cluster = null;
    /** @type {string[]} */
    let urls;
    /** @type {{cluster: string, heapMb: number, nodes: NodeRecord[]} | null} */
    let rec = null;
    if (o.url) {
      urls = o.url;
      if (o.dir && fs.existsSync(path.join(o.dir, 'cluster.json'))) rec = JSON.parse(fs.readFileSync(path.join(o.dir, 'cluster.json'), 'utf8'));
    } else {
      log(`starting a ${n}-node cluster (heap ${o.heapMb} MB each${o.dir ? `, in ${o.dir}` : ''})`);
      const t = now();
      cluster = await startOpenSearch({ nodes: n, heapMb: o.heapMb, name: CLUSTER_NAME, fastStart: false, ...(o.dir ? { dir: o.dir, detached: true } : {}) });
      urls = cluster.urls;
      rec = { cluster: CLUSTER_NAME, heapMb: o.heapMb, nodes: cluster.nodes.map((x) => ({ name: x.name, url: x.url, httpPort: x.httpPort, transportPort: x.transportPort, dir: x.dir, pid: /** @type {number} */ (x.pid) })) };
      if (o.dir) writeRecord(o.dir, rec);
      log(`  up in ${((now() - t) / 1000).toFixed(0)} s: ${urls.join(', ')}`);
    }
    /** @type {number[]} pids started again by this run (stopped with the cluster unless kept) */
    const restarted = [];
    try {
      out.push(await benchCluster(o, n, urls, rec, restarted));
    } finally {
      if (!o.keep) {
        await cluster?.stop();
        for (const pid of restarted) await stopPid(pid, 'SIGTERM');
      } else if (cluster) {
        log(`cluster kept running: ${urls.join(',')}${o.dir ? ` (folder ${o.dir}, nodes in ${path.join(o.dir, 'cluster.json')})` : ''}`);
      }
    }
  }
  return out;
}

/** @param {string} dir @param {any} rec */
function writeRecord(dir, rec) {
  fs.writeFileSync(path.join(dir, 'cluster.json'), JSON.stringify({ ...rec, urls: rec.nodes.map((/** @type {NodeRecord} */ x) => x.url), at: new Date().toISOString() }, null, 2) + '\n');
}

/** @param {number} pid @param {NodeJS.Signals} signal resolves once the process is gone */
async function stopPid(pid, signal) {
  if (!alive(pid)) return;
  process.kill(pid, signal);
  const deadline = Date.now() + 60_000;
  while (alive(pid)) {
    if (Date.now() > deadline) process.kill(pid, 'SIGKILL');
    await sleep(100);
  }
}

/**
 * @param {OpenSearchBenchInput} o
 * @param {number} nodes
 * @param {string[]} urls
 * @param {{cluster: string, heapMb: number, nodes: NodeRecord[]} | null} rec
 * @param {number[]} restarted
 */
async function benchCluster(o, nodes, urls, rec, restarted) {
  const { m } = o;
  o = { ...o, pids: () => (rec ? rec.nodes.map((x) => x.pid).filter(alive) : []) };
  const shards = o.shards ?? nodes;
  const replicas = o.replicas ?? (nodes > 1 ? 1 : 0);
  const loadReplicas = Math.min(replicas, o.loadReplicas ?? replicas);
  const prefix = o.keep || o.skipLoad ? `${o.prefix}${nodes}n-` : `${o.prefix}${process.pid}-${nodes}n-`;
  const config = loadConfig({ overrides: { store: { backend: 'opensearch', opensearch: {
    nodes: urls, indexPrefix: prefix, shards, replicas: loadReplicas, bulkDocs: o.bulk, requestTimeoutMs: REQUEST_TIMEOUT_MS,
  } } } });
  const store = await openModelStore('bench', config);
  const index = `${prefix}bench--bench`;
  const load0 = loadAvg();
  /** @type {Record<string, any>} */
  const r = { nodes, shards, replicas, load_replicas: loadReplicas, urls, index, heap_mb: rec?.heapMb ?? null };
  let dropAtEnd = !o.keep;
  try {
    // 1. writes by batch size
    if (o.writeDocs > 0 && !o.skipLoad) {
      /** @type {Record<string, number>} */
      const writeDocsPerS = {};
      for (const size of [1, 10, 100, 1000]) writeDocsPerS[size] = await writeRate(o, store, `w${size}`, size, false, WRITE_SECONDS);
      r.write_docs_per_s_by_batch = Object.fromEntries(Object.entries(writeDocsPerS).map(([s, v]) => [s, Math.round(v)]));
      r.api_write_docs_per_s = round(await writeRate(o, store, 'api', 1, true, API_WRITE_SECONDS), 1);
    } else {
      r.write_docs_per_s_by_batch = {};
    }

    // 2. bulk load
    const c = await osCollection(store, 'bench', m.width);
    if (o.skipLoad) {
      const docs = await c.count();
      if (docs !== m.rows) throw new Error(`--os-skip-load: ${index} at ${urls[0]} holds ${docs} documents, the vectors file ${m.rows}: load it again without --os-skip-load`);
      // the index's own layout, not the options' defaults
      const set = (await http(urls[0], 'GET', `/${index}/_settings`))[index].settings.index;
      Object.assign(r, { shards: Number(set.number_of_shards), replicas: Number(set.number_of_replicas), load_replicas: null });
      log(`attached to ${index} (${docs} documents, ${r.shards} shard(s), ${r.replicas} replica(s)) at ${urls.join(', ')}`);
      dropAtEnd = false;
    } else {
      const loadAvgLoad = loadAvg();
      const t = now();
      let nextRow = 0;
      let done = 0;
      let lastLog = t;
      await Promise.all(Array.from({ length: o.bulkConcurrency }, async () => {
        while (nextRow < m.rows) {
          const i = nextRow;
          nextRow += o.bulk;
          const batch = [];
          for (let j = i; j < Math.min(m.rows, i + o.bulk); j++) batch.push({ id: o.idOf(j), vector: o.row(m, j) });
          await c.upsert(batch, { refresh: false });
          done += batch.length;
          if (now() - lastLog > 60_000) {
            lastLog = now();
            log(`  loaded ${done}/${m.rows} (${Math.round(done / ((lastLog - t) / 1000))} docs/s, load ${loadAvg()[0]})`);
          }
        }
      }));
      const writeS = (now() - t) / 1000;
      const loadAvgWritten = loadAvg();
      await c.flush();
      const loadS = (now() - t) / 1000;
      log(`${nodes} node(s), ${shards} shard(s), ${loadReplicas} replica(s) while loading: ${m.rows} documents in bulks of ${o.bulk}, ${o.bulkConcurrency} in flight: ` +
        `${loadS.toFixed(1)} s (${Math.round(m.rows / loadS)} docs/s; writes ${writeS.toFixed(1)} s = ${Math.round(m.rows / writeS)} docs/s, ` +
        `flush and feature counts ${(loadS - writeS).toFixed(1)} s; load ${loadAvgLoad[0]} -> ${loadAvgWritten[0]})`);
      Object.assign(r, { bulk_docs: o.bulk, bulk_concurrency: o.bulkConcurrency, bulk_load_docs_per_s: Math.round(m.rows / loadS),
        bulk_write_docs_per_s: Math.round(m.rows / writeS), load_s: round(loadS, 1), counts_s: round(loadS - writeS, 1) });
      const before = await c.stats();
      r.unmerged_bytes_per_doc = Math.round(before.bytes / before.docs);
      const merge = await forceMerge(urls[0], index);
      Object.assign(r, merge);
      if (replicas > loadReplicas) {
        const t2 = now();
        // every index of the prefix: the collection's and the versions index beside it (made with the load's
        // replicas too: left without one, losing its node turns the cluster red)
        await http(urls[0], 'PUT', `/${prefix}*/_settings`, { index: { number_of_replicas: replicas } });
        await waitStatus(urls[0], 'green', nodes, 3_600_000);
        r.replicas_s = round((now() - t2) / 1000, 1);
        log(`  ${replicas} replica(s) copied from the merged primaries in ${r.replicas_s} s (green)`);
      }
      r.load_avg_load = { start: loadAvgLoad, written: loadAvgWritten, end: loadAvg() };
    }
    const st = await c.stats();
    if (st.docs !== m.rows) throw new Error(`${st.docs} documents in the index, ${m.rows} written`);
    const all = (await http(urls[0], 'GET', `/${index}/_stats/store,segments`))._all.total;
    Object.assign(r, { docs: st.docs, bytes_per_doc: Math.round(st.bytes / st.docs), index_bytes: st.bytes, segments: st.segments,
      cluster_bytes_per_doc: Math.round(all.store.size_in_bytes / st.docs), cluster_index_bytes: all.store.size_in_bytes, cluster_segments: all.segments.count });
    log(`  ${(st.bytes / 2 ** 20).toFixed(1)} MiB of primaries in ${st.segments} segment(s), ${r.bytes_per_doc} bytes per document; ` +
      `the cluster holds ${(all.store.size_in_bytes / 2 ** 20).toFixed(1)} MiB in ${all.segments.count} segment(s) (${r.cluster_bytes_per_doc} bytes per document)`);
    r.jvm = await jvmStats(urls[0], rec);

    // 3. search, every node up
    const idRow = new Map();
    for (let i = 0; i < m.rows; i++) idRow.set(o.idOf(i), i);
    Object.assign(r, await measure(o, c, idRow, `${nodes} node(s)`));
    r.jvm_after_search = await jvmStats(urls[0], rec);

    // 4. a node down
    if (o.kill !== null && nodes > 1) {
      if (!rec) throw new Error('--os-kill needs the nodes\' pids: a cluster this run started, or --os-dir with its cluster.json');
      const victim = rec.nodes[o.kill];
      if (!victim) throw new Error(`--os-kill ${o.kill}: the cluster has nodes 0..${rec.nodes.length - 1}`);
      const manager = (await http(urls[0], 'GET', '/_cat/cluster_manager?format=json'))[0]?.node;
      const left = rec.nodes.filter((x) => x !== victim).map((x) => x.url);
      log(`stopping node ${o.kill} (${victim.name}, pid ${victim.pid}${manager === victim.name ? ', the elected cluster manager' : ''}) with ${o.killSignal}`);
      const t = now();
      await stopPid(victim.pid, o.killSignal);
      const health = await waitStatus(left[0], 'yellow', nodes - 1, 300_000, true);
      if (health.status === 'red') log('  the cluster is red: a primary shard had no copy on the nodes left');
      /** @type {Record<string, any>} */
      const down = { node: victim.name, signal: o.killSignal, was_cluster_manager: manager === victim.name, to_yellow_s: round((now() - t) / 1000, 1), health_at_start: health };
      log(`  ${health.number_of_nodes} node(s), ${health.status} after ${down.to_yellow_s} s (${health.unassigned_shards} shard copies unassigned)`);
      Object.assign(down, await measure(o, c, idRow, `${nodes - 1} of ${nodes} node(s)`));
      down.health_at_end = await health1(left[0]);
      r.node_down = down;
      if (o.recover) {
        const t2 = now();
        const peers = rec.nodes.map((x) => ({ name: x.name, transportPort: x.transportPort }));
        const node = startNode({ dir: victim.dir, cluster: rec.cluster, name: victim.name, httpPort: victim.httpPort, transportPort: victim.transportPort,
          peers, heapMb: rec.heapMb, detached: true, jvmOptions: [] });
        victim.pid = /** @type {number} */ (node.pid);
        restarted.push(victim.pid);
        if (o.dir) writeRecord(o.dir, rec);
        await waitStatus(left[0], 'green', nodes, 1_800_000);
        down.recovered_green_s = round((now() - t2) / 1000, 1);
        log(`  node ${victim.name} started again (pid ${victim.pid}): green after ${down.recovered_green_s} s`);
      }
    }
    r.load_avg = { start: load0, end: loadAvg() };
    return r;
  } finally {
    if (dropAtEnd) {
      for (const { name } of await store.listCollections()) await store.dropCollection(name);
    } else {
      for (const { name } of await store.listCollections()) if (name !== 'bench') await store.dropCollection(name);
    }
    await store.close();
    if (dropAtEnd) await http(urls[0], 'DELETE', `/${prefix}*`).catch(() => {});
  }
}

/**
 * Latency, recall, score exactness and errors over the measured queries, then queries/s with 1, 2 and 4
 * searchers, then mode 'exact'.
 * @param {OpenSearchBenchInput} o
 * @param {import('../../pipeline/store/opensearch/collection.js').OpenSearchCollection} c
 * @param {Map<string, number>} idRow
 * @param {string} label
 */
async function measure(o, c, idRow, label) {
  const { m, k, idOf, row } = o;
  const nq = Math.min(o.queryCount, o.queries.length);
  const pidsOf = o.pids ?? (() => []);
  const loadBefore = loadAvg();
  let errors = 0;
  /** @type {string[]} */
  const errorKinds = [];
  /** @param {number} i @param {'fast' | 'exact'} [mode] */
  const search = async (i, mode = 'fast') => {
    try {
      return await c.search(row(m, o.queries[i]), { k, excludeIds: [idOf(o.queries[i])], ...(mode === 'exact' ? { mode } : {}) });
    } catch (err) {
      errors++;
      const code = /** @type {any} */ (err).code ?? /** @type {Error} */ (err).message.slice(0, 120);
      if (!errorKinds.includes(code)) errorKinds.push(code);
      return null;
    }
  };
  /** The largest |returned score − exact dot product| of the hits. @param {number} q @param {{id: string, score: number}[]} hits */
  const scoreError = (q, hits) => {
    const qr = row(m, o.queries[q]);
    const dense = new Map();
    for (let j = 0; j < qr.indices.length; j++) dense.set(qr.indices[j], qr.values[j]);
    let worst = 0;
    for (const h of hits) {
      const d = row(m, /** @type {number} */ (idRow.get(h.id)));
      let s = 0;
      for (let j = 0; j < d.indices.length; j++) s += (dense.get(d.indices[j]) ?? 0) * d.values[j];
      worst = Math.max(worst, Math.abs(s - h.score));
    }
    return worst;
  };
  /** @param {(string[] | null)[]} got @param {number} n */
  const recallOf = (got, n) => {
    let rec = 0;
    for (let i = 0; i < n; i++) {
      const want = new Set(o.truth[i]);
      rec += (got[i] ?? []).filter((id) => want.has(id)).length / Math.max(1, want.size);
    }
    return rec / n;
  };
  for (let i = 0; i < Math.min(nq, Math.max(20, nq / 10)); i++) await search(i);
  const warmErrors = errors;
  errors = 0;
  /** @type {number[]} */
  const lat = [];
  /** @type {(string[] | null)[]} */
  const got = [];
  let worst = 0;
  const cpu0 = clusterCpu(pidsOf());
  const own0 = process.cpuUsage();
  for (let i = 0; i < nq; i++) {
    const t1 = now();
    const hits = await search(i);
    if (hits) {
      lat.push(now() - t1);
      worst = Math.max(worst, scoreError(i, hits));
    }
    got.push(hits ? hits.map((h) => h.id) : null);
  }
  const seqErrors = errors;
  const cpuSeq = clusterCpu(pidsOf());
  const ownSeq = process.cpuUsage(own0);
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
  const ne = Math.min(o.exactQueries, nq);
  /** @type {number[]} */
  const exactLat = [];
  /** @type {(string[] | null)[]} */
  const exactGot = [];
  let exactWorst = 0;
  for (let i = 0; i < ne; i++) {
    const t1 = now();
    const hits = await search(i, 'exact');
    if (hits) {
      exactLat.push(now() - t1);
      exactWorst = Math.max(exactWorst, scoreError(i, hits));
    }
    exactGot.push(hits ? hits.map((h) => h.id) : null);
  }
  const r = {
    queries: nq, recall_at_10: round(recallOf(got, nq), 4), p50_ms: round(pct(lat, 0.5)), p99_ms: round(pct(lat, 0.99)),
    // CPU a query, load-independent: the local nodes' (from /proc; null when they are not local) and this
    // process's (the client: request, answer, and the score check), over the sequential pass
    cluster_cpu_ms_per_query: cpu0 === null || cpuSeq === null ? null : round((cpuSeq - cpu0) / nq, 2),
    client_cpu_ms_per_query: round((ownSeq.user + ownSeq.system) / 1000 / nq, 2),
    max_score_error: Number(worst.toExponential(2)), errors: seqErrors, errors_all: errors + seqErrors, warmup_errors: warmErrors, error_kinds: errorKinds,
    qps_1: round(qps[1], 1), qps_2: round(qps[2], 1), qps_4: round(qps[4], 1),
    exact_queries: ne, exact_p50_ms: ne ? round(pct(exactLat, 0.5)) : null, exact_p99_ms: ne ? round(pct(exactLat, 0.99)) : null,
    exact_recall_at_10: ne ? round(recallOf(exactGot, ne), 4) : null, exact_max_score_error: ne ? Number(exactWorst.toExponential(2)) : null,
    load_avg_search: { before: loadBefore, after: loadAvg() },
  };
  log(`${label}: p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, recall@${k} ${r.recall_at_10}, largest score error ${r.max_score_error}, ` +
    `cluster CPU ${r.cluster_cpu_ms_per_query} ms a query (client ${r.client_cpu_ms_per_query}), ` +
    `errors ${r.errors} of ${nq} (${r.errors_all} in all${errorKinds.length ? `: ${errorKinds.join(', ')}` : ''}); QPS 1: ${r.qps_1}, 2: ${r.qps_2}, 4: ${r.qps_4}; ` +
    `exact (${ne}): p50 ${r.exact_p50_ms} ms, recall ${r.exact_recall_at_10}; load ${loadBefore[0]} -> ${r.load_avg_search.after[0]}`);
  return r;
}

/**
 * `_flush` (a commit), a wait until every shard copy's retention leases pass its max_seq_no (their background sync
 * runs every 30 s; before, a merge keeps `_recovery_source`), then a force merge to one segment and `_refresh`.
 * @param {string} url
 * @param {string} index
 */
async function forceMerge(url, index) {
  const t = now();
  await http(url, 'POST', `/${index}/_flush`);
  for (let k = 0; k < 180; k++) {
    const st = await http(url, 'GET', `/${index}/_stats/docs?level=shards`);
    const copies = /** @type {any[]} */ (Object.values(st.indices[index].shards).flat());
    if (copies.every((sh) => {
      const leases = sh.retention_leases?.leases ?? [];
      return leases.length && leases.every((/** @type {any} */ l) => l.retaining_seq_no > sh.seq_no.max_seq_no);
    })) break;
    await sleep(1000);
  }
  const waitS = (now() - t) / 1000;
  const t1 = now();
  const res = await http(url, 'POST', `/${index}/_forcemerge?max_num_segments=1&wait_for_completion=false`);
  if (res.task) {
    for (;;) {
      const task = await http(url, 'GET', `/_tasks/${res.task}`);
      if (task.completed) {
        if (task.error) throw new Error(`force merge of ${index}: ${JSON.stringify(task.error).slice(0, 300)}`);
        break;
      }
      await sleep(2000);
    }
  }
  await http(url, 'POST', `/${index}/_refresh`);
  const out = { wait_leases_s: round(waitS, 1), merge_s: round((now() - t1) / 1000, 1) };
  log(`  force-merged to one segment a shard in ${out.merge_s} s (after ${out.wait_leases_s} s for the retention leases)`);
  return out;
}

/** @param {string} url */
async function health1(url) {
  const h = await http(url, 'GET', '/_cluster/health');
  return { status: h.status, number_of_nodes: h.number_of_nodes, active_shards: h.active_shards, relocating_shards: h.relocating_shards,
    initializing_shards: h.initializing_shards, unassigned_shards: h.unassigned_shards };
}

/**
 * Wait until the cluster has `nodes` nodes and is at least `status` (exactly: no longer green, red included — a
 * cluster that just lost a node is green until the manager notices, and red is what a lost primary looks like).
 * @param {string} url
 * @param {'green' | 'yellow'} status
 * @param {number} nodes
 * @param {number} timeoutMs
 * @param {boolean} [exactly]
 */
async function waitStatus(url, status, nodes, timeoutMs, exactly = false) {
  const deadline = Date.now() + timeoutMs;
  let last = null;
  for (;;) {
    try {
      last = await health1(url);
      const ok = exactly ? last.status !== 'green' : (status === 'yellow' ? last.status !== 'red' : last.status === 'green');
      if (ok && last.number_of_nodes === nodes) return last;
    } catch (err) {
      last = /** @type {Error} */ (err).message;
    }
    if (Date.now() > deadline) throw new Error(`${url}: not ${status} with ${nodes} node(s) within ${timeoutMs} ms (${JSON.stringify(last)})`);
    await sleep(500);
  }
}

/**
 * Heap used and committed per node, and the nodes' resident memory (of the local nodes `rec` names).
 * @param {string} url
 * @param {{nodes: NodeRecord[]} | null} rec
 */
async function jvmStats(url, rec) {
  const s = await http(url, 'GET', '/_nodes/stats/jvm,process,os');
  return Object.values(s.nodes).map((/** @type {any} */ n) => ({
    name: n.name, heap_used_mb: Math.round(n.jvm.mem.heap_used_in_bytes / 2 ** 20), heap_max_mb: Math.round(n.jvm.mem.heap_max_in_bytes / 2 ** 20),
    non_heap_mb: Math.round(n.jvm.mem.non_heap_used_in_bytes / 2 ** 20), resident_mb: Math.round(readRss(rec?.nodes.find((x) => x.name === n.name)?.pid ?? 0)),
    old_gc_count: n.jvm.gc.collectors.old?.collection_count ?? null,
  })).sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * CPU milliseconds the local nodes have used so far (user + system, /proc), or null when one is not readable.
 * @param {number[]} pids
 */
function clusterCpu(pids) {
  if (!pids.length) return null;
  let ms = 0;
  for (const pid of pids) {
    try {
      ms += processCpuMs(pid);
    } catch {
      return null;
    }
  }
  return ms;
}

/** @param {number} pid resident megabytes of a local process (0 when unknown) */
function readRss(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
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
 * @param {object} [body]
 * @returns {Promise<any>}
 */
async function http(base, method, p, body) {
  const r = await fetch(`${base}${p}`, { method, ...(body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}) });
  const out = await r.json();
  if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(out).slice(0, 300)}`);
  return out;
}
