#!/usr/bin/env node
// Loading into the OpenSearch backend beside the native store, on the same vectors in the same run: the store
// write path of `scdv index` (upserts with refresh false, then flush), without the embedder (its rate is the
// native figure's ceiling for both; tests/bench/scdv-vectors.js prints it when it makes the vectors).
//
//   node tests/bench/opensearch-load.js --data X.csr --url http://127.0.0.1:9200 [--docs 100000]
//     [--bulk 500,1000] [--concurrency 2,4] [--pid JVM_PID] [--merge] [--variants product,plain,…] [--repeats R]
//
// Per variant, (bulk, concurrency) and repeat (variants interleaved in each repeat): a fresh collection, every
// document upserted (`bulk` a request, `concurrency` in flight), then flush (a refresh and the feature counts);
// documents/s over the whole, and with --pid the node's CPU milliseconds per document (from /proc: the
// load-independent figure on a shared machine), in all and in the writes alone (the rest is the flush: refresh and
// feature counts), and this process's CPU per document in the writes. 'product' (the default) loads as `scdv index`
// does (the store's beginLoad before the writes, endLoad after the flush); the other variants make the index first
// with the store's mapping and other settings (VARIANTS below: 'plain' is the store's index without the load's
// settings). With --merge, the last collection of each variant is merged as the end of a large `scdv index` merges
// it (pipeline/store/opensearch/compact.js: `_flush`, the retention leases, one segment) and its primaries' bytes per
// document printed. The native store: the same documents in batches of 1,000, flushed. Progress on stderr; the
// last stdout line is JSON (each run, the medians by variant, bulk and concurrency, the merges, the load).
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { readCsr, row } from './search.data.js';
import { processCpuMs } from './process-cpu.js';
import { loadConfig } from '../../pipeline/config.js';
import { openModelStore } from '../../pipeline/store/index.js';
import { openStore } from '../../pipeline/store/store.js';
import { OS_FORMAT, analysisSettings, mappingOf, namesOf } from '../../pipeline/store/opensearch/encoding.js';
import { compactIndex } from '../../pipeline/store/opensearch/compact.js';
import { createClient } from '../../pipeline/store/opensearch/connection.js';

const { values: opt } = parseArgs({ options: {
  data: { type: 'string' }, url: { type: 'string' }, docs: { type: 'string', default: '100000' },
  bulk: { type: 'string', default: '500,1000' }, concurrency: { type: 'string', default: '2,4' },
  pid: { type: 'string' }, merge: { type: 'boolean', default: false }, variants: { type: 'string', default: 'product' },
  repeats: { type: 'string', default: '1' }, native: { type: 'boolean', default: true },
} });
if (!opt.data || !opt.url) { console.error('usage: --data X.csr --url http://host:port [--docs N] [--bulk a,b] [--concurrency a,b] [--pid P] [--merge]'); process.exit(2); }
/** @param {string} m */
const log = (m) => process.stderr.write(`[opensearch-load] ${m}\n`);
const round = (/** @type {number} */ x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const loadAvg = () => os.loadavg().map((x) => round(x, 2));
const now = () => performance.now();
/** @returns {number} CPU seconds of the node's process so far (0 without --pid) */
const nodeCpu = () => {
  if (!opt.pid) return 0;
  return processCpuMs(Number(opt.pid)) / 1000;
};
/** @param {string} method @param {string} p */
const http = async (method, p) => /** @type {any} */ (await (await fetch(`${opt.url}${p}`, { method })).json());

const m = readCsr(opt.data);
const n = Math.min(m.rows, Number(opt.docs));
/** @param {number} i */
const doc = (i) => ({ id: `d${i}`, vector: row(m, i) });
/** @type {Record<string, number[]>} */
const load = { start: loadAvg() };

// Native store: the same documents, batches of 1,000, flushed.
const nativeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-load-native-'));
let t = now();
{
  const store = openStore(nativeDir, { maintenanceMs: 0 });
  const c = store.collection('load', { width: m.width });
  for (let i = 0; i < n; i += 1000) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + 1000); j++) batch.push(doc(j));
    await c.upsert(batch);
  }
  await c.flush();
  await store.close();
}
const nativeS = (now() - t) / 1000;
fs.rmSync(nativeDir, { recursive: true, force: true });
log(`native store: ${n} documents in ${nativeS.toFixed(1)} s (${Math.round(n / nativeS)} docs/s; load ${os.loadavg()[0].toFixed(1)})`);

const prefix = `scdv-load-${process.pid}-`;
const names = namesOf(prefix, 'load');
/**
 * Index bodies measured beside the product's own ('product': the store creates the index as `scdv index` does);
 * the others are made here, with the store's mapping and `_meta`, before the store's first write adopts them.
 * @type {Record<string, {settings?: Record<string, unknown>, source?: Record<string, unknown>}>}
 */
const VARIANTS = {
  plain: {},
  norefresh: { settings: { refresh_interval: '-1' } },
  refresh10: { settings: { refresh_interval: '10s' } },
  async: { settings: { 'translog.durability': 'async' } },
  norecovery: { source: { recovery_source_enabled: false } },
  tier: { settings: { 'merge.policy.segments_per_tier': 40, 'merge.policy.max_merge_at_once': 40 } },
  bestcomp: { settings: { codec: 'best_compression' } },
  all: { settings: { refresh_interval: '-1', 'translog.durability': 'async', 'merge.policy.segments_per_tier': 40, 'merge.policy.max_merge_at_once': 40 }, source: { recovery_source_enabled: false } },
};
const variants = opt.variants.split(',');
for (const v of variants) if (v !== 'product' && !VARIANTS[v]) { console.error(`unknown variant ${v} (product, ${Object.keys(VARIANTS).join(', ')})`); process.exit(2); }
/** @param {string} variant @param {string} name */
const precreate = async (variant, name) => {
  const v = VARIANTS[variant];
  const mapping = mappingOf({ scdv: { model: 'load', collection: name, width: m.width, created_at: new Date().toISOString(), format: OS_FORMAT } });
  const body = {
    settings: { index: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: '1s', ...analysisSettings(), ...(v.settings ?? {}) } },
    mappings: { ...mapping, _source: { ...mapping._source, ...(v.source ?? {}) } },
    aliases: { [names.writeAlias(name)]: {} },
  };
  const res = await fetch(`${opt.url}/${names.index(name)}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`creating ${variant}: ${await res.text()}`);
};
const runs = [];
/** @type {Record<string, any>[]} */
const merged = [];
const bulks = opt.bulk.split(',').map(Number);
const concs = opt.concurrency.split(',').map(Number);
const repeats = Number(opt.repeats);
for (let rep = 0; rep < repeats; rep++) {
  for (const variant of variants) {
    for (const bulk of bulks) {
      for (const conc of concs) {
        const config = loadConfig({ overrides: { store: { backend: 'opensearch', opensearch: { nodes: [opt.url], indexPrefix: prefix, shards: 1, replicas: 0, bulkDocs: bulk } } } });
        const store = await openModelStore('load', config);
        const name = `${variant}-b${bulk}c${conc}r${rep}`;
        if (variant !== 'product') await precreate(variant, name);
        const cpu0 = nodeCpu();
        const own0 = process.cpuUsage();
        t = now();
        // The product's load, as `scdv index` runs it: beginLoad before the writes, endLoad after the flush.
        if (variant === 'product') await /** @type {any} */ (store).beginLoad(name, m.width);
        const c = await store.collection(name, { width: m.width });
        let next = 0;
        await Promise.all(Array.from({ length: conc }, async () => {
          while (next < n) {
            const i = next;
            next += bulk;
            const batch = [];
            for (let j = i; j < Math.min(n, i + bulk); j++) batch.push(doc(j));
            await c.upsert(batch, { refresh: false });
          }
        }));
        const writeS = (now() - t) / 1000;
        const cpuW = nodeCpu();
        const ownW = process.cpuUsage(own0);
        await c.flush();
        if (variant === 'product') await /** @type {any} */ (store).endLoad(name);
        const s = (now() - t) / 1000;
        const r = { variant, repeat: rep, bulk, concurrency: conc, docs_per_s: Math.round(n / s), write_s: round(writeS), flush_s: round(s - writeS), node_cpu_ms_per_doc: opt.pid ? round((nodeCpu() - cpu0) * 1000 / n, 3) : null,
          node_cpu_ms_per_doc_writes: opt.pid ? round((cpuW - cpu0) * 1000 / n, 3) : null, client_cpu_ms_per_doc_writes: round((ownW.user + ownW.system) / 1000 / n, 3), load_1m: round(os.loadavg()[0], 2) };
        log(`${variant}, bulk ${bulk}, ${conc} in flight: ${r.docs_per_s} docs/s (writes ${r.write_s} s, flush and feature counts ${r.flush_s} s${opt.pid ? `; node CPU ${r.node_cpu_ms_per_doc} ms per document, ${r.node_cpu_ms_per_doc_writes} in the writes` : ''}; this process ${r.client_cpu_ms_per_doc_writes} ms per document in the writes; load ${r.load_1m})`);
        runs.push(r);
        const last = rep === repeats - 1 && bulk === bulks[bulks.length - 1] && conc === concs[concs.length - 1];
        if (last && opt.merge) {
          const index = names.index(name);
          const before = await c.stats();
          const tm = now();
          const cpuM = nodeCpu();
          // The product's sequence (pipeline/store/opensearch/compact.js): _flush, the retention leases, the merge.
          const done = await compactIndex({ client: createClient(config.store.opensearch), index, shards: 1, ctx: { nodes: [opt.url], what: 'merge', model: 'load' } });
          const waitS = done.waitedMs / 1000;
          const after = await c.stats();
          const mr = { variant, unmerged_bytes_per_doc: Math.round(before.bytes / before.docs), wait_leases_s: round(waitS), merge_s: round(done.mergeMs / 1000), leases_passed: done.leasesPassed, merge_node_cpu_ms_per_doc: opt.pid ? round((nodeCpu() - cpuM) * 1000 / n, 3) : null, bytes_per_doc: Math.round(after.bytes / after.docs), segments: after.segments, docs: after.docs };
          merged.push(mr);
          log(`${variant} merged: ${mr.bytes_per_doc} bytes per document in ${mr.segments} segment(s) (before: ${mr.unmerged_bytes_per_doc}; waited ${mr.wait_leases_s} s for the retention leases, merge ${mr.merge_s} s)`);
        }
        await store.dropCollection(name);
        await store.close();
      }
    }
  }
}
/** @param {number[]} xs */
const median = (xs) => { const a = [...xs].sort((x, y) => x - y); return a.length ? (a[(a.length - 1) >> 1] + a[a.length >> 1]) / 2 : null; };
/** @type {Record<string, any>} */
const medians = {};
for (const r of runs) {
  const key = `${r.variant} b${r.bulk} c${r.concurrency}`;
  (medians[key] ??= { rows: [] }).rows.push(r);
}
for (const [key, { rows }] of /** @type {[string, {rows: any[]}][]} */ (Object.entries(medians))) {
  medians[key] = { docs_per_s: median(rows.map((r) => r.docs_per_s)), node_cpu_ms_per_doc_writes: median(rows.map((r) => r.node_cpu_ms_per_doc_writes ?? NaN)), client_cpu_ms_per_doc_writes: median(rows.map((r) => r.client_cpu_ms_per_doc_writes)), runs: rows.length };
}
load.end = loadAvg();
console.log(JSON.stringify({ docs: n, width: m.width, nnz_per_doc: round((m.offsets[n] - m.offsets[0]) / n), native_docs_per_s: Math.round(n / nativeS), opensearch: runs, medians, merged, load_avg: load }));
