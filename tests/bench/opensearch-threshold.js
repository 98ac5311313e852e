#!/usr/bin/env node
// The derived default min_score of /v1/match (pipeline/match/threshold.js deriveMatchThreshold, which `scdv index`
// and `scdv precompute` run when ads are written) on the OpenSearch backend: its documents read in batches (getMany,
// the product path) against a get per document (the same collection with getMany hidden: storedDocs' fallback),
// interleaved, on the same stored vectors, in the same run.
//
//   node tests/bench/opensearch-threshold.js --data X.csr --url http://127.0.0.1:9200 [--pages 3000] [--ads 108]
//     [--repeats 3]
//
// The first --pages vectors are the pages, the next --ads the ads; categories are assigned round-robin (9), so the
// threshold is taken from labelled pairs as with real ads. Progress on stderr; the last stdout line is JSON.
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { readCsr, row } from './search.data.js';
import { loadConfig } from '../../pipeline/config.js';
import { usePaths } from '../../pipeline/paths.js';

const { values: opt } = parseArgs({ options: {
  data: { type: 'string' }, url: { type: 'string' }, pages: { type: 'string', default: '3000' },
  ads: { type: 'string', default: '108' }, repeats: { type: 'string', default: '3' },
} });
if (!opt.data || !opt.url) { console.error('usage: --data X.csr --url http://host:port [--pages N] [--ads N] [--repeats N]'); process.exit(2); }
/** @param {string} m */
const log = (m) => process.stderr.write(`[opensearch-threshold] ${m}\n`);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-threshold-bench-'));
usePaths({ dataDir: path.join(tmp, 'data'), modelsDir: path.join(tmp, 'models'), storeDir: path.join(tmp, 'store') });
const { openModelStore } = await import('../../pipeline/store/index.js');
const { deriveMatchThreshold } = await import('../../pipeline/match/threshold.js');

const m = readCsr(opt.data);
const nPages = Math.min(m.rows, Number(opt.pages));
const nAds = Math.min(m.rows - nPages, Number(opt.ads));
const load0 = os.loadavg();
const prefix = `scdv-th-${process.pid}-`;
const config = loadConfig({ overrides: { store: { backend: 'opensearch', opensearch: { nodes: [opt.url], indexPrefix: prefix, shards: 1, replicas: 0 } } } });
const store = await openModelStore('bench', config);
try {
  const category = (/** @type {number} */ i) => `c${i % 9}`;
  const pages = await store.collection('pages', { width: m.width });
  const ads = await store.collection('ads', { width: m.width });
  for (let i = 0; i < nPages; i += 500) {
    await pages.upsert(Array.from({ length: Math.min(500, nPages - i) }, (_, j) => ({ id: `p${i + j}`, vector: row(m, i + j), meta: { category: category(i + j), known_words: 100, unknown_words: 10 } })));
  }
  await ads.upsert(Array.from({ length: nAds }, (_, j) => ({ id: `ad${j}`, vector: row(m, nPages + j), meta: { category: category(j) } })));
  await pages.flush();
  await ads.flush();
  log(`${nPages} pages and ${nAds} ads stored`);
  /** A view of a collection without getMany: every read a get (what storedDocs does where a store has no getMany). */
  const perDocument = (/** @type {any} */ c) => ({
    capabilities: { ...c.capabilities, getMany: false }, ids: () => c.ids(), get: (/** @type {string} */ id) => c.get(id),
    ...(c.scores ? { scores: (/** @type {string[]} */ ids, /** @type {any} */ v) => c.scores(ids, v) } : {}),
  });
  const variants = { batched: [pages, ads], per_document: [perDocument(pages), perDocument(ads)] };
  /** @type {Record<string, number[]>} */
  const ms = { batched: [], per_document: [] };
  /** @type {Record<string, number>} */
  const values = {};
  for (let r = 0; r < Number(opt.repeats); r++) {
    for (const [name, [p, a]] of Object.entries(variants)) {
      const t = performance.now();
      const d = await deriveMatchThreshold(p, a, { source: 'pages', quantile: 0.99, knownShareRatio: 0.5 });
      ms[name].push(performance.now() - t);
      values[name] = d?.value ?? NaN;
      log(`repeat ${r + 1} ${name}: ${ms[name].at(-1)?.toFixed(0)} ms (threshold ${values[name]}, ${d?.pages} pages, ${d?.ads} ads)`);
    }
  }
  if (values.batched !== values.per_document) throw new Error(`the two reads derived different thresholds: ${JSON.stringify(values)}`);
  const median = (/** @type {number[]} */ a) => [...a].sort((x, y) => x - y)[a.length >> 1];
  const out = {
    pages: nPages, ads: nAds, repeats: Number(opt.repeats), threshold: values.batched,
    batched_ms: Math.round(median(ms.batched)), per_document_ms: Math.round(median(ms.per_document)),
    ratio: Math.round((median(ms.per_document) / median(ms.batched)) * 10) / 10,
    load_average: [load0[0], os.loadavg()[0]].map((x) => Math.round(x * 100) / 100),
  };
  console.log(`threshold derivation on OpenSearch, ${nAds} ads against ${nPages} pages: batched ${out.batched_ms} ms, a get per document ${out.per_document_ms} ms (x${out.ratio}); load ${out.load_average.join(' → ')}`);
  console.log(JSON.stringify(out));
} finally {
  await fetch(`${opt.url}/${prefix}*`, { method: 'DELETE' }).catch(() => {});
  await store.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
