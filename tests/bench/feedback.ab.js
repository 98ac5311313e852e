#!/usr/bin/env node
// Pseudo-relevance feedback on related lists, same run: precision and search CPU of a related list
// without feedback, with feedback as a re-scoring of a pool of P candidates (this checkout's
// pipeline/match/rerank.js) and, with --old <dir>, with the second-search feedback of another checkout (one
// whose feedback searched again with the expanded query). Every list is computed by searchCollection with the related-list defaults
// (collapsing on, search `fast`), the variants interleaved query by query in rotating order so that all see the
// same machine load; CPU per list is process.cpuUsage (the store searches on the libuv pool, in this process).
//   node tests/bench/feedback.ab.js --model dev-s1 --corpus dev.jsonl [--pools 30,50,100] [--old /work/main]
//     every document a query (itself excluded): P@1 / P@10 / MAP@10 of each variant, and its cost
//   node tests/bench/feedback.ab.js --data X.csr [--queries 2000] [--pools …] [--old …]
//     the cost on a collection of stored vectors (e.g. 100k), the first `queries` documents as queries
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../pipeline/config.js';
import { openStore } from '../../pipeline/store/index.js';
import { searchCollection } from '../../pipeline/match/rerank.js';
import { relatedListOptions, tokenizeAll } from '../../pipeline/eval/evaluate.js';
import { rankingMetrics } from '../../pipeline/eval/relevance-metrics.js';
import { readLabelledCorpus } from '../../pipeline/eval/corpus.js';
import { createEmbedder } from '../../pipeline/embed/index.js';
import { fillCollection, readCsr } from './search.data.js';

const { values: opt } = parseArgs({ options: {
  model: { type: 'string' }, corpus: { type: 'string' }, 'label-field': { type: 'string', default: 'category' },
  data: { type: 'string' }, queries: { type: 'string', default: '2000' }, pools: { type: 'string', default: '30,50,100' },
  old: { type: 'string' }, k: { type: 'string', default: '10' },
} });
if (!opt.data && !(opt.model && opt.corpus)) throw new Error('usage: feedback.ab.js --model M --corpus F | --data X.csr');
const log = (/** @type {string} */ s) => process.stderr.write(`[feedback.ab] ${s}\n`);
const config = loadConfig();
const server = config.server;
const k = Number(opt.k);
const base = relatedListOptions(server);
const fbCfg = server.rerank.relatedFeedback;
/** @type {typeof searchCollection | null} */
const oldSearch = opt.old ? (await import(path.resolve(opt.old, 'pipeline/match/rerank.js'))).searchCollection : null;

/** @typedef {{name: string, run: (c: any, v: any, exclude: string) => Promise<{hits: {id: string}[]}>}} Variant */
/** @type {Variant[]} */
const variants = [{ name: 'no feedback', run: (c, v, id) => searchCollection(c, v, { excludeIds: [id], mode: server.searchMode }, k, { ...base, feedback: null }, server) }];
if (oldSearch) {
  variants.push({ name: 'second search (old)', run: (c, v, id) => oldSearch(c, v, { excludeIds: [id], mode: server.searchMode }, k,
    { ...base, feedback: /** @type {any} */ ({ docs: fbCfg.docs, weight: fbCfg.weight }) }, server) });
}
for (const p of opt.pools.split(',').map(Number)) {
  variants.push({ name: `pool ${p}`, run: (c, v, id) => searchCollection(c, v, { excludeIds: [id], mode: server.searchMode }, k,
    { ...base, feedback: { docs: fbCfg.docs, weight: fbCfg.weight, pool: p } }, server) });
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-feedback-ab-'));
const store = openStore(tmp, { autoFlush: false, autoMerge: false, maintenanceMs: 0 });
try {
  /** @type {string[]} */
  let ids;
  /** @type {string[] | null} */
  let labels = null;
  let c;
  if (opt.data) {
    const m = readCsr(opt.data);
    c = store.collection('bench', { width: m.width });
    await fillCollection(c, m, m.rows);
    await c.merge();
    ids = Array.from({ length: Math.min(m.rows, Number(opt.queries)) }, (_, i) => String(i));
  } else {
    const corpus = await readLabelledCorpus(/** @type {string} */ (opt.corpus), opt['label-field'], { maxDocumentBytes: config.corpus.maxDocumentBytes });
    const embedder = await createEmbedder(/** @type {string} */ (opt.model), config, { inMemory: true });
    const tokens = await tokenizeAll(embedder, corpus.docs);
    c = store.collection('eval', { width: embedder.width });
    const writes = tokens.map((t, i) => ({ id: corpus.docs[i].id, vector: embedder.embedTokens(t), meta: { title: corpus.docs[i].title } }));
    await c.upsert(writes.filter((w) => w.vector.indices.length));
    await c.flush();
    await c.merge();
    embedder.model.wordTopics.close();
    ids = corpus.docs.map((d) => d.id);
    labels = corpus.docs.map((d) => d.label);
  }
  log(`${ids.length} queries, variants: ${variants.map((v) => v.name).join(' | ')}; load ${os.loadavg()[0].toFixed(1)}`);
  const row_ = new Map(ids.map((id, i) => [id, i]));
  const neighbours = variants.map(() => /** @type {number[][]} */ ([]));
  const cpu = variants.map(() => /** @type {number[]} */ ([]));
  const wall = variants.map(() => /** @type {number[]} */ ([]));
  for (const [qi, id] of ids.entries()) {
    const got = c.get(id);
    for (let j = 0; j < variants.length; j++) {
      const vi = (qi + j) % variants.length;
      if (!got) { neighbours[vi].push([]); continue; }
      const t = performance.now();
      const u = process.cpuUsage();
      const { hits } = await variants[vi].run(c, got.vector, id);
      const d = process.cpuUsage(u);
      wall[vi].push(performance.now() - t);
      cpu[vi].push((d.user + d.system) / 1000);
      neighbours[vi].push(hits.map((h) => /** @type {number} */ (row_.get(h.id) ?? -1)).filter((r) => r >= 0));
    }
  }
  const mean = (/** @type {number[]} */ xs) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
  const pct = (/** @type {number[]} */ xs, /** @type {number} */ p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? NaN;
  const cpu0 = mean(cpu[0]);
  console.log(`| variant | ${labels ? 'P@1 | P@10 | MAP@10 | ' : ''}CPU ms / list (mean) | × no feedback | wall p50 / p95 ms |`);
  console.log(`| --- | ${labels ? '---: | ---: | ---: | ' : ''}---: | ---: | --- |`);
  variants.forEach((v, j) => {
    const m = labels ? rankingMetrics(labels, neighbours[j]) : null;
    const rel = m ? `${(100 * m.p_at_1).toFixed(2)} | ${(100 * m.p_at_10).toFixed(2)} | ${(100 * m.map_at_10).toFixed(2)} | ` : '';
    console.log(`| ${v.name} | ${rel}${mean(cpu[j]).toFixed(3)} | ${(mean(cpu[j]) / cpu0).toFixed(2)} | ${pct(wall[j], 0.5).toFixed(2)} / ${pct(wall[j], 0.95).toFixed(2)} |`);
  });
  log(`load average at the end ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
} finally {
  await store.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
