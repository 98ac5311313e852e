#!/usr/bin/env node
// How many candidates the OpenSearch backend must re-rank (store.opensearch.candidates): recall@k of its search
// against the exact top k (the native store's proven 'exact' mode) on real SCDV vectors (a .csr file of
// tests/bench/scdv-vectors.js), for candidate counts C, k = 10 and 100, one and two shards. Each query is a
// stored document (itself excluded), as related-article requests are.
// node tests/bench/opensearch-candidates.js --csr FILE.csr [--url http://127.0.0.1:9200] [--queries 200] [--docs N]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../pipeline/config.js';
import { openStore, openModelStore } from '../../pipeline/store/index.js';
import { readCsr, row } from './search.data.js';

const { values: a } = parseArgs({ options: {
  csr: { type: 'string' }, url: { type: 'string', default: 'http://127.0.0.1:9200' }, queries: { type: 'string', default: '200' },
  docs: { type: 'string' }, shards: { type: 'string', default: '1,2' }, candidates: { type: 'string', default: '10,20,30,50,100,200,500' },
} });
if (!a.csr) throw new Error('--csr FILE.csr is required');
const m = readCsr(a.csr);
const docs = Math.min(m.rows, Number(a.docs ?? m.rows));
const queries = Number(a.queries);
const say = (/** @type {string} */ s) => process.stderr.write(`${s}\n`);
const prefix = `scdv-cand-${process.pid}-`;
const id = (/** @type {number} */ i) => `d${i}`;

// Exact reference: the native store's proven top k.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-cand-'));
const native = openStore(dir);
const ref = native.collection('ref', { width: m.width });
const batch = (/** @type {number} */ s, /** @type {number} */ e) => Array.from({ length: e - s }, (_, j) => ({ id: id(s + j), vector: row(m, s + j), meta: {} }));
for (let s = 0; s < docs; s += 2000) await ref.upsert(batch(s, Math.min(docs, s + 2000)));
await ref.flush();
const step = Math.floor(docs / queries);
const qs = Array.from({ length: queries }, (_, j) => j * step);
/** @type {Map<number, Map<number, string[]>>} k -> query -> ids */
const truth = new Map();
for (const k of [10, 100]) {
  const per = new Map();
  for (const q of qs) per.set(q, (await ref.searchAsync(row(m, q), { k, mode: 'exact', excludeIds: [id(q)] })).map((h) => h.id));
  truth.set(k, per);
}
await native.close();
fs.rmSync(dir, { recursive: true, force: true });

const out = [];
try {
  for (const shards of a.shards.split(',').map(Number)) {
    const config = loadConfig({ overrides: { store: { backend: 'opensearch', opensearch: { nodes: [a.url], indexPrefix: prefix, shards, replicas: 0 } } } });
    const store = await openModelStore('cand', config);
    const c = await store.collection(`s${shards}`, { width: m.width });
    const t0 = Date.now();
    for (let s = 0; s < docs; s += 500) await c.upsert(batch(s, Math.min(docs, s + 500)), { refresh: false });
    await c.flush();
    say(`indexed ${docs} docs in ${shards} shard(s): ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    for (const k of [10, 100]) {
      for (const cand of a.candidates.split(',').map(Number).filter((x) => x >= k)) {
        let hit = 0;
        let total = 0;
        let ms = 0;
        for (const q of qs) {
          const want = /** @type {string[]} */ (truth.get(k)?.get(q));
          const t = performance.now();
          const got = new Set((await c.search(row(m, q), { k, candidates: cand, excludeIds: [id(q)] })).map((h) => h.id));
          ms += performance.now() - t;
          hit += want.filter((w) => got.has(w)).length;
          total += want.length;
        }
        const r = { shards, k, candidates: cand, recall: hit / total, mean_ms: ms / qs.length };
        say(JSON.stringify(r));
        out.push(r);
      }
    }
    await store.close();
  }
} finally {
  await fetch(`${a.url}/${prefix}*`, { method: 'DELETE' }).catch(() => {});
}
process.stdout.write(`${JSON.stringify({ docs, width: m.width, queries: qs.length, results: out })}\n`);
