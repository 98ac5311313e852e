#!/usr/bin/env node
// Does the order of a segment's local documents matter to search? (Document ids reordered so that
// bounds bite.) `node tests/bench/search.order.js --data X.csr [--docs N] [--queries Q] [--orders id,row,cluster,...]`
// builds one merged segment per order with this checkout's store, from the same vectors, and runs the same
// queries (stored documents, themselves excluded, threads 1) against each, interleaved query by query so that
// all see the same machine load. A segment orders its documents by (published_at, id) and the bench vectors
// have no time, so an order is made by choosing the ids: rank r of the order gets the id "o" + r zero-padded
// (results are mapped back to rows). Orders:
//   id       the bench's usual ids String(row), so byte order of "0".."n-1" (the baseline)
//   row      the file's row order
//   category the .categories sidecar, then row
//   cluster  the dominant SCDV cluster (largest sum of squares over dims c·d..c·d+d-1, c < K; --clusters K
//            --clusterDims d), then the second, then row
//   topdim   the dim of largest |value|, then row
// Prints per order: bytes per non-zero, postings read per query, p50/p99 wall, cpu p50, recall@10 against the
// first order's exact mode, and the largest score difference from the first order's hits.
// For callgrind: `--build-only --order O --dir D` writes one order's store to D; then
//   valgrind --tool=callgrind --toggle-collect='*searchSegment*' node tests/bench/search.order.js --search-only \
//     --order O --dir D --data X.csr --queries 50
// runs the queries (as search.cg.js does, with the order's ids) against it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openStore } from '../../pipeline/store/index.js';
import { readCsr, row } from './search.data.js';

const { values: opt } = parseArgs({ options: {
  data: { type: 'string' }, docs: { type: 'string' }, queries: { type: 'string', default: '500' },
  orders: { type: 'string', default: 'id,row,cluster' }, clusters: { type: 'string', default: '60' },
  clusterDims: { type: 'string', default: '200' }, 'build-only': { type: 'boolean' }, order: { type: 'string' },
  dir: { type: 'string' }, 'search-only': { type: 'boolean' },
} });
if (!opt.data) throw new Error('usage: search.order.js --data X.csr');
const m = readCsr(opt.data);
const n = Math.min(m.rows, Number(opt.docs ?? m.rows));
const K = Number(opt.clusters), D = Number(opt.clusterDims);
const log = (/** @type {string} */ s) => process.stderr.write(`[search.order] ${s}\n`);
const pct = (/** @type {number[]} */ xs, /** @type {number} */ p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const now = () => Number(process.hrtime.bigint()) / 1e6;
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const NO_BG = { autoFlush: false, autoMerge: false, maintenanceMs: 0 };

/**
 * Rows in the order's sequence.
 * @param {string} order
 * @returns {number[]}
 */
export function orderRows(order) {
  const rows = Array.from({ length: n }, (_, i) => i);
  if (order === 'row') return rows;
  if (order === 'category') {
    const cats = fs.readFileSync(`${opt.data}.categories`, 'utf8').split('\n');
    return rows.sort((a, b) => (cats[a] < cats[b] ? -1 : cats[a] > cats[b] ? 1 : a - b));
  }
  if (order === 'cluster') {
    const k1 = new Int32Array(n), k2 = new Int32Array(n);
    const mass = new Float64Array(K);
    for (let r = 0; r < n; r++) {
      mass.fill(0);
      for (let p = m.offsets[r]; p < m.offsets[r + 1]; p++) {
        const c = Math.floor(m.indices[p] / D);
        if (c < K) mass[c] += m.values[p] * m.values[p];
      }
      let a = 0, b = -1;
      for (let c = 1; c < K; c++) if (mass[c] > mass[a]) a = c;
      for (let c = 0; c < K; c++) if (c !== a && (b < 0 || mass[c] > mass[b])) b = c;
      k1[r] = a; k2[r] = b;
    }
    return rows.sort((a, b) => k1[a] - k1[b] || k2[a] - k2[b] || a - b);
  }
  if (order === 'topdim') {
    const top = new Int32Array(n);
    for (let r = 0; r < n; r++) {
      let best = m.offsets[r];
      for (let p = best; p < m.offsets[r + 1]; p++) if (Math.abs(m.values[p]) > Math.abs(m.values[best])) best = p;
      top[r] = m.indices[best];
    }
    return rows.sort((a, b) => top[a] - top[b] || a - b);
  }
  throw new Error(`unknown order ${order}`);
}

/**
 * The id each row gets under an order.
 * @param {string} order
 * @returns {string[]}
 */
export function orderIds(order) {
  if (order === 'id') return Array.from({ length: n }, (_, i) => String(i));
  const ids = new Array(n);
  orderRows(order).forEach((r, rank) => { ids[r] = `o${String(rank).padStart(8, '0')}`; });
  return ids;
}

/** @param {string} order @param {string} dir */
async function build(order, dir) {
  const ids = orderIds(order);
  const store = openStore(dir, NO_BG);
  const c = store.collection('bench', { width: m.width });
  for (let i = 0; i < n; i += 10000) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + 10000); j++) batch.push({ id: ids[j], vector: row(m, j) });
    await c.upsert(batch);
    if ((i / 10000) % 4 === 3) await c.flush();
  }
  await c.flush();
  await c.merge();
  const s = c.stats();
  log(`${order}: ${(s.bytes / 2 ** 20).toFixed(1)} MiB, ${s.bytes_per_nnz.total.toFixed(3)} bytes per non-zero (postings ${s.bytes_per_nnz.postings.toFixed(3)})`);
  const rowOf = new Map(ids.map((id, r) => [id, r]));
  return { order, store, c, s, ids, rowOf };
}

if (opt['build-only']) {
  if (!opt.order || !opt.dir) throw new Error('--build-only needs --order and --dir');
  const b = await build(opt.order, opt.dir);
  await b.store.close();
  process.exit(0);
}

if (opt['search-only']) {
  if (!opt.order || !opt.dir) throw new Error('--search-only needs --order and --dir');
  const ids = orderIds(opt.order);
  const store = openStore(opt.dir, NO_BG);
  const c = store.collection('bench');
  const nq = Number(opt.queries);
  let sum = 0;
  for (let i = 0; i < nq; i++) {
    const q = Math.floor((i * 2654435761) % n);
    const hits = c.search(row(m, q), { k: 10, threads: 1, excludeIds: [ids[q]] });
    sum += hits.length ? hits[0].score : 0;
  }
  process.stdout.write(`${nq} queries, checksum ${sum}\n`);
  await store.close();
  process.exit(0);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-search-order-'));
const orders = opt.orders.split(',');
const B = [];
for (const o of orders) B.push(await build(o, path.join(tmp, o)));
const nq = Math.min(Number(opt.queries), n);
const qs = Array.from({ length: nq }, (_, i) => Math.floor((i * 2654435761) % n));
const lat = B.map(() => /** @type {number[]} */ ([]));
const cpu = B.map(() => /** @type {number[]} */ ([]));
const postings = B.map(() => 0);
const recall = B.map(() => 0);
const maxDiff = B.map(() => 0);
for (let rep = 0; rep < 2; rep++) {
  for (let qi = 0; qi < qs.length; qi++) {
    const q = qs[qi];
    const v = row(m, q);
    /** @type {{id: string, score: number}[][]} */
    const hits = [];
    // rotate which order goes first, so none is always the one that finds the caches warm
    for (let j = 0; j < B.length; j++) {
      const b = (qi + j) % B.length;
      const x = B[b];
      const c0 = cpuMs(), t0 = now();
      hits[b] = x.c.search(v, { k: 10, threads: 1, excludeIds: [x.ids[q]] });
      const c1 = cpuMs(), t1 = now();
      if (rep === 1) { lat[b].push(t1 - t0); cpu[b].push(c1 - c0); }
    }
    if (rep === 0) continue;
    const base = B[0];
    const truth = new Set(base.c.search(v, { k: 10, mode: 'exact', excludeIds: [base.ids[q]] }).map((h) => base.rowOf.get(h.id)));
    const baseScore = new Map(hits[0].map((h) => [base.rowOf.get(h.id), h.score]));
    B.forEach((x, b) => {
      recall[b] += hits[b].filter((h) => truth.has(x.rowOf.get(h.id))).length / 10;
      for (const h of hits[b]) {
        const s0 = baseScore.get(x.rowOf.get(h.id));
        if (s0 !== undefined) maxDiff[b] = Math.max(maxDiff[b], Math.abs(h.score - s0));
      }
      postings[b] += x.c.profile(v, { k: 10, threads: 1, excludeIds: [x.ids[q]] }).stats.postings;
    });
  }
}
const res = {
  docs: n, queries: nq, load_avg: os.loadavg().map((x) => Number(x.toFixed(2))),
  orders: B.map((x, b) => ({
    order: x.order, bytes_per_nnz: Number(x.s.bytes_per_nnz.total.toFixed(3)), postings_bytes_per_nnz: Number(x.s.bytes_per_nnz.postings.toFixed(3)),
    postings_per_query: Math.round(postings[b] / nq), p50_ms: pct(lat[b], 0.5), p99_ms: pct(lat[b], 0.99),
    cpu_p50_ms: pct(cpu[b], 0.5), cpu_mean_ms: cpu[b].reduce((s, t) => s + t, 0) / nq,
    recall_at_10: recall[b] / nq, max_score_diff_vs_first: maxDiff[b],
  })),
};
process.stdout.write(`${JSON.stringify(res, null, 1)}\n`);
for (const x of B) await x.store.close();
fs.rmSync(tmp, { recursive: true, force: true });
