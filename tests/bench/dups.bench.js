#!/usr/bin/env node
// Near-duplicate collapsing (pipeline/match/rerank.js) on the livedoor dev split: how many near-copies reach a
// related list's top 10 with and without collapsing, what collapsing costs in precision@10 and latency, and how
// the similarities of copies compare with those of distinct articles (for the default threshold).
//
// npm run bench:dups [-- --copies 300 --thresholds 0.8,0.85,0.9,0.95 --alpha 0.2 --seed 1]
//
// Collections (embedded with the model bench-livedoor-dev, trained by tests/bench/train.bench.js when missing):
//   clean   the dev split as it is (2,896 articles)
//   copies  the same plus two near-copies of `--copies` seeded articles: A, the same body under another
//           article's title; B, the body with its middle paragraph replaced by a paragraph of another article.
//           Copies keep the original's category and date.
// Measured, each original with copies as a query (related by id, k = 10): copies of the query in its top 10, and
// pairs (a result and a copy of it, or two copies of one article) in the top 10; on `clean`, every article a
// query: precision@10 (same category) and latency, with and without collapsing.
// Last line: {"threshold":…, "copies_top10_off":…, "copies_top10_on":…, "p10_off":…, "p10_on":…, …} at the default.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const MODEL = 'bench-livedoor-dev';
process.env.SCDV_STORE_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-bench-dups-'));

const { values } = parseArgs({
  options: {
    copies: { type: 'string', default: '300' }, thresholds: { type: 'string', default: '0.8,0.85,0.9,0.95' },
    alpha: { type: 'string' }, seed: { type: 'string', default: '1' },
  },
});
const { loadConfig } = await import('../../pipeline/config.js');
const { storeDirFor } = await import('../../pipeline/paths.js');
const { parseDocument } = await import('../../pipeline/corpus/document.js');
const { createEmbedder } = await import('../../pipeline/embed/index.js');
const { documentMeta } = await import('../../pipeline/embed/meta.js');
const { sparseDot } = await import('../../pipeline/embed/vectorizer.js');
const { openStore } = await import('../../pipeline/store/index.js');
const { searchCollection } = await import('../../pipeline/match/rerank.js');
const { rng } = await import('../lib/random.js');

const { ensureBenchModel } = await import('./bench-model.js');
const corpus = ensureBenchModel(MODEL);
const config = loadConfig(values.alpha === undefined ? {} : { overrides: { embed: { hybrid: { alpha: Number(values.alpha) } } } });
const thresholds = String(values.thresholds).split(',').map(Number);
const T0 = config.server.rerank.duplicateThreshold;
if (!thresholds.includes(T0)) thresholds.push(T0);

/** @type {import('../../pipeline/corpus/document.js').Document[]} */
const docs = fs.readFileSync(corpus, 'utf8').split('\n').filter(Boolean).map((l, i) => {
  const r = parseDocument(Buffer.from(l), i + 1);
  if (!('doc' in r)) throw new Error(`line ${i + 1} of ${corpus}`);
  return r.doc;
});
const paragraphs = (/** @type {string} */ body) => body.split('\n').filter((p) => p.trim());

// ---- near-copies of seeded originals (each an original with at least 3 paragraphs, so B changes one of several)
const r = rng(Number(values.seed));
const pick = () => docs[Math.floor(r() * docs.length)];
/** @type {Map<string, string>} copy id -> original id */
const originalOf = new Map();
/** @type {typeof docs} */
const copies = [];
const chosen = new Set();
while (chosen.size < Number(values.copies)) {
  const d = pick();
  if (chosen.has(d.id) || paragraphs(d.body).length < 3) continue;
  chosen.add(d.id);
  let other = pick();
  while (other.category === d.category) other = pick();
  copies.push({ ...d, id: `${d.id}~title`, title: other.title });
  const ps = paragraphs(d.body);
  const mid = Math.floor(ps.length / 2);
  const op = paragraphs(other.body);
  ps[mid] = op[Math.floor(op.length / 2)];
  copies.push({ ...d, id: `${d.id}~para`, body: ps.join('\n') });
  originalOf.set(`${d.id}~title`, d.id).set(`${d.id}~para`, d.id);
}

// ---- embed once, store two collections
const t0 = Date.now();
const embedder = await createEmbedder(MODEL, config, { inMemory: true });
const all = [...docs, ...copies];
/** @type {Map<string, import('../../pipeline/embed/vectorizer.js').SparseVector>} */
const vectors = new Map();
for (let i = 0; i < all.length; i += 256) {
  const batch = all.slice(i, i + 256);
  const vs = await embedder.embedDocuments(batch);
  batch.forEach((d, j) => { if (vs[j].indices.length) vectors.set(d.id, { indices: vs[j].indices, values: vs[j].values }); });
}
const store = openStore(storeDirFor(MODEL));
const row = (/** @type {typeof docs[0]} */ d) => ({ id: d.id, vector: /** @type {any} */ (vectors.get(d.id)), meta: documentMeta(d) });
const clean = store.collection('clean', { width: embedder.width });
const withCopies = store.collection('copies', { width: embedder.width });
const kept = docs.filter((d) => vectors.has(d.id));
for (let i = 0; i < kept.length; i += 500) await clean.upsert(kept.slice(i, i + 500).map(row));
const keptAll = all.filter((d) => vectors.has(d.id));
for (let i = 0; i < keptAll.length; i += 500) await withCopies.upsert(keptAll.slice(i, i + 500).map(row));
await clean.flush(); await clean.merge(); await withCopies.flush(); await withCopies.merge();
process.stderr.write(`embedded and stored ${keptAll.length} documents (${copies.length} copies of ${chosen.size} articles) in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);

// ---- similarities: copies with their original; distinct articles with their nearest neighbour
const pct = (/** @type {number[]} */ xs, /** @type {number} */ p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const simTitle = [...chosen].map((id) => sparseDot(/** @type {any} */ (vectors.get(id)), /** @type {any} */ (vectors.get(`${id}~title`))));
const simPara = [...chosen].map((id) => sparseDot(/** @type {any} */ (vectors.get(id)), /** @type {any} */ (vectors.get(`${id}~para`))));
const mode = config.server.searchMode;
/** @type {number[]} */
const nearest = [];
for (const d of kept) {
  const hits = await clean.searchAsync(/** @type {any} */ (vectors.get(d.id)), { k: 1, mode, excludeIds: [d.id] });
  if (hits.length) nearest.push(hits[0].score);
}
const f3 = (/** @type {number} */ x) => x.toFixed(3);
console.log(`model ${MODEL}, alpha ${config.embed.hybrid.alpha}, ${kept.length} articles, ${copies.length} copies, ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(2)}`);
console.log(`similarity to the original, copy A (other title): min ${f3(Math.min(...simTitle))} p5 ${f3(pct(simTitle, 0.05))} median ${f3(pct(simTitle, 0.5))}`);
console.log(`similarity to the original, copy B (a paragraph changed): min ${f3(Math.min(...simPara))} p5 ${f3(pct(simPara, 0.05))} median ${f3(pct(simPara, 0.5))}`);
console.log(`nearest distinct article: median ${f3(pct(nearest, 0.5))} p99 ${f3(pct(nearest, 0.99))} p99.9 ${f3(pct(nearest, 0.999))} max ${f3(Math.max(...nearest))}; ` +
  `articles whose nearest is above ${thresholds.map((t) => `${t}: ${nearest.filter((s) => s > t).length}`).join(', ')}`);

// ---- the measurements
const none = { duplicateThreshold: null, halfLifeMs: null, recencyWeight: 0, maxPerSite: null, now: Date.now() };
const withT = (/** @type {number | null} */ t) => ({ ...none, duplicateThreshold: t });
/**
 * @param {import('../../pipeline/store/index.js').Collection} coll
 * @param {string} id
 * @param {number | null | 'pool'} t 'pool': no collapsing, but a search of the first pool's size (what of the cost is the larger search)
 */
async function relatedOf(coll, id, t) {
  const s = performance.now();
  if (t === 'pool') {
    const n = Math.max(config.server.rerank.poolMin, Math.ceil(10 * config.server.rerank.poolFactor));
    const hits = (await coll.searchAsync(/** @type {any} */ (vectors.get(id)), { mode, excludeIds: [id], k: n })).slice(0, 10);
    return { ids: hits.map((h) => h.id), ms: performance.now() - s, fetched: 0, searched: n, meta: hits.map((h) => (typeof h.meta === 'string' ? JSON.parse(h.meta) : h.meta)) };
  }
  const res = await searchCollection(coll, /** @type {any} */ (vectors.get(id)), { mode, excludeIds: [id] }, 10, withT(t), config.server);
  return { ids: res.hits.map((h) => h.id), ms: performance.now() - s, fetched: res.fetched, searched: res.searched, meta: res.hits.map((h) => (typeof h.meta === 'string' ? JSON.parse(h.meta) : h.meta)) };
}
const base = (/** @type {string} */ id) => originalOf.get(id) ?? id;
/** @type {(number | null | 'pool')[]} */
const variants = [null, 'pool', ...thresholds];
/** @type {Record<string, any>[]} */
const rows = variants.map((t) => ({
  threshold: t, copies_of_query_top10: 0, same_story_pairs_top10: 0, queries_with_copies: chosen.size, hits: 0, n: 0,
  /** @type {number[]} */ ms: [], fetched: 0, queries_needing_a_second_search: 0,
}));
for (const id of chosen) {
  for (const row of rows) {
    if (row.threshold === 'pool') continue;
    const r1 = await relatedOf(withCopies, id, row.threshold);
    row.copies_of_query_top10 += r1.ids.filter((x) => originalOf.get(x) === id).length;
    // Two results of one story (an article and its copy, or two copies) count once each beyond the first.
    row.same_story_pairs_top10 += r1.ids.length - new Set(r1.ids.map(base)).size;
  }
}
// Latency: the variants interleaved query by query, so that each sees the same load (the machine is shared).
for (const [q, d] of kept.entries()) {
  for (let v = 0; v < rows.length; v++) {
    const row = rows[(q + v) % rows.length];
    const r2 = await relatedOf(clean, d.id, row.threshold);
    row.hits += r2.meta.filter((m) => m.category === d.category).length;
    row.n += 10;
    row.ms.push(r2.ms);
    row.fetched += r2.fetched;
    if (r2.searched > Math.max(config.server.rerank.poolMin, Math.ceil(10 * config.server.rerank.poolFactor))) row.queries_needing_a_second_search++;
  }
}
for (const row of rows) {
  Object.assign(row, {
    p10: row.hits / row.n, mean_ms: row.ms.reduce((/** @type {number} */ a, /** @type {number} */ b) => a + b, 0) / row.ms.length,
    p50_ms: pct(row.ms, 0.5), p99_ms: pct(row.ms, 0.99), vectors_fetched_per_query: row.fetched / kept.length,
  });
}
console.log('\n| collapsing | copies of the query in its top 10 | same-story pairs in top 10 | P@10 (clean) | mean / p50 / p99 ms | vectors fetched per query | queries searched twice |');
console.log('| --- | ---: | ---: | ---: | --- | ---: | ---: |');
for (const x of rows) {
  console.log(`| ${x.threshold === null ? 'off' : x.threshold === 'pool' ? 'off, searching the pool' : `on, ${x.threshold}`} | ` +
    `${x.threshold === 'pool' ? '—' : `${x.copies_of_query_top10} of ${2 * x.queries_with_copies}`} | ${x.threshold === 'pool' ? '—' : x.same_story_pairs_top10} | ${(x.p10 * 100).toFixed(2)} | ` +
    `${x.mean_ms.toFixed(2)} / ${x.p50_ms.toFixed(2)} / ${x.p99_ms.toFixed(2)} | ${x.vectors_fetched_per_query.toFixed(1)} | ${x.queries_needing_a_second_search} |`);
}
await store.close();
embedder.model.wordTopics.close();
fs.rmSync(/** @type {string} */ (process.env.SCDV_STORE_DIR), { recursive: true, force: true });
const off = rows[0];
const on = /** @type {Record<string, any>} */ (rows.find((x) => x.threshold === T0));
console.log(JSON.stringify({
  threshold: T0, alpha: config.embed.hybrid.alpha, copies: copies.length, copies_top10_off: off.copies_of_query_top10, copies_top10_on: on.copies_of_query_top10,
  pairs_top10_off: off.same_story_pairs_top10, pairs_top10_on: on.same_story_pairs_top10, p10_off: off.p10, p10_on: on.p10,
  mean_ms_off: off.mean_ms, mean_ms_on: on.mean_ms, p99_ms_off: off.p99_ms, p99_ms_on: on.p99_ms,
}));
