#!/usr/bin/env node
// Loading into the OpenSearch backend beside the native store, on the same vectors in the same run: the store
// write path of `scdv index` (upserts with refresh false, then flush), without the embedder (its rate is the
// native figure's ceiling for both; tests/bench/scdv-vectors.js prints it when it makes the vectors).
//
//   node tests/bench/opensearch-load.js --data X.csr --url http://127.0.0.1:9200 [--docs 100000]
//     [--bulk 500,1000] [--concurrency 2,4] [--pid JVM_PID] [--merge]
//
// Per (bulk, concurrency): a fresh collection, every document upserted (`bulk` a request, `concurrency` in flight),
// then flush (a refresh and the feature counts); documents/s over the whole, and with --pid the node's CPU
// milliseconds per document (from /proc: the load-independent figure on a shared machine), in all and in the writes
// alone (the rest is the flush: refresh and feature counts), and this process's CPU per document in the writes. With --merge, the last
// collection is made durable in segments (`_flush`), its shard's retention leases are waited for (they pass a
// load's operations within ~30 s; until then a merge keeps each document's `_recovery_source`), force-merged to
// one segment, and its primaries' bytes per document printed. The native store: the same documents in batches of
// 1,000, flushed. Progress on stderr; the last stdout line is JSON.
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { readCsr, row } from './search.data.js';
import { loadConfig } from '../../pipeline/config.js';
import { openModelStore } from '../../pipeline/store/index.js';
import { openStore } from '../../pipeline/store/store.js';

const { values: opt } = parseArgs({ options: {
  data: { type: 'string' }, url: { type: 'string' }, docs: { type: 'string', default: '100000' },
  bulk: { type: 'string', default: '500,1000' }, concurrency: { type: 'string', default: '2,4' },
  pid: { type: 'string' }, merge: { type: 'boolean', default: false },
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
  const f = fs.readFileSync(`/proc/${opt.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
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
const runs = [];
/** @type {Record<string, any> | null} */
let merged = null;
const bulks = opt.bulk.split(',').map(Number);
const concs = opt.concurrency.split(',').map(Number);
for (const bulk of bulks) {
  for (const conc of concs) {
    const config = loadConfig({ overrides: { store: { backend: 'opensearch', opensearch: { nodes: [opt.url], indexPrefix: prefix, shards: 1, replicas: 0, bulkDocs: bulk } } } });
    const store = await openModelStore('load', config);
    const name = `b${bulk}c${conc}`;
    const c = await store.collection(name, { width: m.width });
    const cpu0 = nodeCpu();
    const own0 = process.cpuUsage();
    t = now();
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
    const s = (now() - t) / 1000;
    const r = { bulk, concurrency: conc, docs_per_s: Math.round(n / s), write_s: round(writeS), flush_s: round(s - writeS), node_cpu_ms_per_doc: opt.pid ? round((nodeCpu() - cpu0) * 1000 / n, 3) : null,
      node_cpu_ms_per_doc_writes: opt.pid ? round((cpuW - cpu0) * 1000 / n, 3) : null, client_cpu_ms_per_doc_writes: round((ownW.user + ownW.system) / 1000 / n, 3), load_1m: round(os.loadavg()[0], 2) };
    log(`bulk ${bulk}, ${conc} in flight: ${r.docs_per_s} docs/s (writes ${r.write_s} s, flush and feature counts ${r.flush_s} s${opt.pid ? `; node CPU ${r.node_cpu_ms_per_doc} ms per document, ${r.node_cpu_ms_per_doc_writes} in the writes` : ''}; this process ${r.client_cpu_ms_per_doc_writes} ms per document in the writes; load ${r.load_1m})`);
    runs.push(r);
    const last = bulk === bulks[bulks.length - 1] && conc === concs[concs.length - 1];
    if (last && opt.merge) {
      const index = `${prefix}load--${name}`;
      const before = await c.stats();
      const tm = now();
      await http('POST', `/${index}/_flush`);
      // Retention leases advance to the shard's checkpoint on their background sync (every 30 s).
      for (let k = 0; k < 90; k++) {
        const st = await http('GET', `/${index}/_stats/docs?level=shards`);
        const sh = Object.values(st.indices[index].shards)[0][0];
        const leases = sh.retention_leases?.leases ?? [];
        if (leases.length && leases.every((/** @type {any} */ l) => l.retaining_seq_no > sh.seq_no.max_seq_no)) break;
        await new Promise((res) => setTimeout(res, 1000));
      }
      const waitS = (now() - tm) / 1000;
      await http('POST', `/${index}/_forcemerge?max_num_segments=1`);
      await http('POST', `/${index}/_refresh`);
      const after = await c.stats();
      merged = { unmerged_bytes_per_doc: Math.round(before.bytes / before.docs), wait_leases_s: round(waitS), merge_s: round((now() - tm) / 1000 - waitS), bytes_per_doc: Math.round(after.bytes / after.docs), segments: after.segments, docs: after.docs };
      log(`merged: ${merged.bytes_per_doc} bytes per document in ${merged.segments} segment(s) (before: ${merged.unmerged_bytes_per_doc}; waited ${merged.wait_leases_s} s for the retention leases, merge ${merged.merge_s} s)`);
    }
    await store.dropCollection(name);
    await store.close();
  }
}
load.end = loadAvg();
console.log(JSON.stringify({ docs: n, width: m.width, nnz_per_doc: round((m.offsets[n] - m.offsets[0]) / n), native_docs_per_s: Math.round(n / nativeS), opensearch: runs, merged, load_avg: load }));
