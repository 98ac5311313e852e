#!/usr/bin/env node
// Batch precompute (`scdv precompute`'s processor, workers/precompute.js) on the OpenSearch backend beside the
// native store, on the same vectors in the same run: documents/s of related lists (k 10, the source collection
// searched for its own documents, each itself excluded) written to a private Redis.
//
//   node tests/bench/opensearch-precompute.js --data X.csr --url http://127.0.0.1:9200 [--docs 20000]
//     [--sources 1000] [--jobs 2] [--pid <jvm pid[,pid…]>]
//
// Both stores get the first --docs vectors (OpenSearch: flushed and force-merged to one segment, as after a load);
// then --sources of them are precomputed in batches of 500 (server.precompute.batchSize), --jobs batches at a time
// (server.precompute.concurrency). With --pid, the node's CPU a document during the precompute, from /proc (the
// figure a loaded machine distorts least). Progress on stderr; the last stdout line is JSON.
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { readCsr, row } from './search.data.js';
import { processesCpuMs } from './process-cpu.js';
import { loadConfig } from '../../pipeline/config.js';
import { usePaths } from '../../pipeline/paths.js';
import { startPrivateRedis, redisOptions } from '../../pipeline/queue/redis.js';

const { values: opt } = parseArgs({ options: {
  data: { type: 'string' }, url: { type: 'string' }, docs: { type: 'string', default: '20000' },
  sources: { type: 'string', default: '1000' }, jobs: { type: 'string', default: '2' }, pid: { type: 'string' },
} });
if (!opt.data || !opt.url) { console.error('usage: --data X.csr --url http://host:port [--docs N] [--sources N] [--jobs N]'); process.exit(2); }
/** @param {string} m */
const log = (m) => process.stderr.write(`[opensearch-precompute] ${m}\n`);
const round = (/** @type {number} */ x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-precompute-bench-'));
usePaths({ dataDir: path.join(tmp, 'data'), modelsDir: path.join(tmp, 'models'), storeDir: path.join(tmp, 'store') });
const { openModelStore } = await import('../../pipeline/store/index.js');
const { processPrecompute, closePrecomputeStores } = await import('../../workers/precompute.js');

const m = readCsr(opt.data);
const n = Math.min(m.rows, Number(opt.docs));
const sources = Math.min(n, Number(opt.sources));
const jobs = Number(opt.jobs);
const pids = opt.pid ? opt.pid.split(',').map(Number) : [];
const nodeCpuMs = () => processesCpuMs(pids);
const load0 = os.loadavg();
const redisServer = await startPrivateRedis();
const redis = new Redis(redisOptions(redisServer.url));
/** @type {Record<string, any>} */
const out = { docs: n, sources, jobs, k: 10 };
try {
  for (const backend of /** @type {const} */ (['native', 'opensearch'])) {
    const prefix = `scdv-pre-${process.pid}-`;
    const config = loadConfig({ overrides: { store: { backend, opensearch: { nodes: [opt.url], indexPrefix: prefix, shards: 1, replicas: 0, bulkDocs: 1000 } } } });
    const store = await openModelStore('bench', config);
    const c = await store.collection('docs', { width: m.width });
    let t = performance.now();
    for (let i = 0; i < n; i += 1000) {
      const batch = [];
      for (let j = i; j < Math.min(n, i + 1000); j++) batch.push({ id: `d${j}`, vector: row(m, j) });
      await c.upsert(batch, { refresh: false });
    }
    await c.flush();
    if (backend === 'opensearch') {
      await fetch(`${opt.url}/${prefix}bench--docs/_forcemerge?max_num_segments=1`, { method: 'POST' });
      await fetch(`${opt.url}/${prefix}bench--docs/_refresh`, { method: 'POST' });
    }
    log(`${backend}: ${n} documents loaded in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    const ids = Array.from({ length: sources }, (_, i) => `d${Math.floor((i * n) / sources)}`);
    /** @type {string[][]} */
    const batches = [];
    for (let i = 0; i < ids.length; i += 500) batches.push(ids.slice(i, i + 500));
    t = performance.now();
    const cpu0 = nodeCpuMs();
    let written = 0;
    let next = 0;
    await Promise.all(Array.from({ length: jobs }, async () => {
      while (next < batches.length) {
        const b = batches[next++];
        const r = await processPrecompute({ run: 'bench', model: 'bench', source: 'docs', target: 'docs', k: 10, ids: b, ttlSeconds: 600, prefix: `{bench${backend}}`, mode: 'fast' }, redis, undefined, config);
        written += r.written;
      }
    }));
    const s = (performance.now() - t) / 1000;
    out[backend] = { docs_per_s: round(sources / s), seconds: round(s, 2), written, load_1m: round(os.loadavg()[0], 2) };
    if (backend === 'opensearch' && pids.length) out[backend].node_cpu_ms_per_doc = round((nodeCpuMs() - cpu0) / sources, 2);
    log(`${backend}: precomputed ${written} related lists in ${s.toFixed(1)} s: ${out[backend].docs_per_s} documents/s (load ${os.loadavg()[0].toFixed(1)})`);
    await closePrecomputeStores();
    await store.close();
    // The collection and the store's versions index: nothing of the run stays on the node.
    if (backend === 'opensearch') await fetch(`${opt.url}/${prefix}*`, { method: 'DELETE' });
  }
} finally {
  redis.disconnect();
  await redisServer.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}
out.load_avg = { start: load0.map((x) => round(x, 2)), end: os.loadavg().map((x) => round(x, 2)) };
console.log(JSON.stringify(out));
