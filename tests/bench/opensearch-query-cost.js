#!/usr/bin/env node
// Where an OpenSearch search's time and CPU go: variants of the product's own request (search.js's candidate terms,
// candidate query and in-engine re-rank), sent straight to the engine over one keep-alive HTTP agent, against an
// index the store benchmark loaded and kept (search.bench.js --os-keep). Per variant: the round trip's p50/p99, the
// engine's `took`, recall@10 against the exact top 10 (a brute force over the same vectors, each query a stored
// document, itself excluded), interleaved query by query (the first of a query rotates); then, variant by variant in
// blocks of 100 queries, the nodes' CPU a query from /proc (--pid P[,P…]: the figure a loaded machine distorts least).
//   node tests/bench/opensearch-query-cost.js --data X.csr --index bench-1n-bench--bench --pid <jvm pid[,pid…]>
//     [--url http://127.0.0.1:9200] [--docs N] [--queries 200] [--variants product,client,w300,b0.85,candidates,empty]
//     [--other INDEX]
// Variants: product (the store's body: budgeted terms, its window, 2k hits), listparams (the same with the query
// as two JSON lists of numbers, qi and qv, instead of one base64 string), client (the store's own search call,
// through its client: the client's share), wN (window N), bF (budget × F), wNbF, size10, nosource (no `_source`),
// candidates (the candidate query alone, no re-rank, no script fields), empty (a size-0 match_all: the floor),
// other (the product's body on --other, e.g. a `_split` of the index into 2 shards or a `_clone` whose `f`
// similarity was changed while closed). Last line: JSON of every variant's figures.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../pipeline/config.js';
import { openModelStore } from '../../pipeline/store/index.js';
import { candidateCount, candidateQuery, candidateTerms, EXACT_SCRIPT, exactHits, rescoredSearch, SCORE_SCRIPT } from '../../pipeline/store/opensearch/search.js';
import { readCsr, row } from './search.data.js';
import { processesCpuMs } from './process-cpu.js';

const { values: a } = parseArgs({ options: {
  data: { type: 'string' }, docs: { type: 'string' }, url: { type: 'string', default: 'http://127.0.0.1:9200' },
  index: { type: 'string', default: 'bench-1n-bench--bench' }, other: { type: 'string' }, pid: { type: 'string' },
  queries: { type: 'string', default: '200' }, variants: { type: 'string', default: 'product,client,w300,b0.85,candidates,empty' },
} });
if (!a.data) { console.error('usage: --data X.csr --index INDEX [--pid P] (see the header)'); process.exit(2); }
const say = (/** @type {string} */ m) => process.stderr.write(`[opensearch-query-cost] ${m}\n`);
const m = readCsr(a.data);
const N = Math.min(m.rows, Number(a.docs ?? m.rows));
const idsFile = `${a.data}.ids`;
const ids = fs.existsSync(idsFile) ? fs.readFileSync(idsFile, 'utf8').split('\n') : null;
const idOf = (/** @type {number} */ r) => (ids ? ids[r] : String(r));
const shardsOf = async (/** @type {string} */ index) => Number((await call('GET', `/${index}/_settings`))[index].settings.index.number_of_shards);

// The documents per split-sign feature, as the store's flush counts them (counts.js), over the same vectors.
const p = new Int32Array(m.width);
const n = new Int32Array(m.width);
let postings = 0;
for (let r = 0; r < N; r++) {
  const v = row(m, r);
  for (let j = 0; j < v.indices.length; j++) { if (v.values[j] > 0) p[v.indices[j]]++; else if (v.values[j] < 0) n[v.indices[j]]++; postings++; }
}
const counts = { p, n, postings, docs: N };
const cfg = loadConfig({}).store.opensearch;
const budget = Math.max(cfg.postingsBudget.min, Math.ceil(cfg.postingsBudget.fraction * postings));

const Q = Number(a.queries);
const step = Math.max(1, Math.floor(N / Q));
const qs = Array.from({ length: Math.min(Q, N) }, (_, j) => (j * step + 7) % N);
/** @type {Map<number, Set<string>>} */
const truth = new Map();
const dense = new Float64Array(m.width);
for (const q of qs) {
  const v = row(m, q);
  dense.fill(0);
  for (let j = 0; j < v.indices.length; j++) dense[v.indices[j]] = v.values[j];
  /** @type {[number, number][]} */
  const top = [];
  for (let r = 0; r < N; r++) {
    if (r === q) continue;
    const d = row(m, r);
    let s = 0;
    for (let j = 0; j < d.indices.length; j++) s += dense[d.indices[j]] * d.values[j];
    if (top.length < 10 || s > top[top.length - 1][0]) {
      top.push([s, r]);
      top.sort((x, y) => y[0] - x[0]);
      if (top.length > 10) top.pop();
    }
  }
  truth.set(q, new Set(top.map((x) => idOf(x[1]))));
}
say(`${N} documents, ${postings} postings, budget ${budget}; exact top 10 of ${qs.length} queries done`);

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
const u = new URL(a.url);
/**
 * @param {string} method @param {string} path @param {object} [body]
 * @returns {Promise<any>}
 */
function call(method, path, body) {
  const data = body === undefined ? '' : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path, method, agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } }, (res) => {
      /** @type {Buffer[]} */
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString())));
    });
    req.on('error', reject);
    req.end(data);
  });
}

const shards = await shardsOf(a.index);
const window = candidateCount(10, shards, cfg.candidates);
/**
 * The product's request for query row q, with a variant's changes.
 * @param {number} q @param {{w?: number, b?: number, size?: number, nosource?: boolean, candidates?: boolean, lists?: boolean}} o
 */
function body(q, o = {}) {
  const v = row(m, q);
  const terms = candidateTerms(v.indices, v.values, counts, Math.ceil(budget * (o.b ?? 1)), cfg.maxQueryTerms);
  /** @type {Record<string, any>} */
  const b = rescoredSearch(candidateQuery(v.indices, v.values, terms, { k: 10, exact: false, excludeIds: [idOf(q)] }), v.indices, v.values, o.w ?? window, o.size ?? 20);
  if (o.nosource) b._source = false;
  if (o.lists) {
    const params = { qi: Array.from(v.indices), qv: Array.from(v.values) };
    b.rescore.query.rescore_query.script_score.script = { lang: 'painless', source: withListQuery(SCORE_SCRIPT), params };
    b.script_fields.s.script = { lang: 'painless', source: withListQuery(EXACT_SCRIPT), params };
  }
  if (o.candidates) { delete b.rescore; delete b.script_fields; b._source = false; }
  return b;
}

/**
 * A re-rank script with the query read from the lists params.qi and params.qv instead of the base64 params.q.
 * @param {string} source
 */
function withListQuery(source) {
  const start = source.indexOf('if (c == null) {');
  const end = source.indexOf('} else { w = (float[]) c; }');
  return `${source.slice(0, start)}if (c == null) {
  List qi = params.qi; List qv = params.qv; int m = qi.size();
  w = new float[m == 0 ? 0 : (int) qi.get(m - 1) + 1];
  for (int j = 0; j < m; j++) { w[(int) qi.get(j)] = (float) (double) qv.get(j); }
  params['_w'] = w;
${source.slice(end)}`;
}

const config = loadConfig({ overrides: { store: { backend: 'opensearch', opensearch: { nodes: [a.url], indexPrefix: a.index.replace(/bench--bench$/, ''), replicas: 0 } } } });
const store = await openModelStore('bench', config);
/** @type {any} */
const coll = await store.collection('bench', { width: m.width });

/** @typedef {{ms: number, took?: number, ids: string[] | null}} Answer */
/** @param {string} path @param {object} b @returns {Promise<Answer>} */
async function timed(path, b) {
  const t = performance.now();
  const r = await call('POST', path, b);
  const ms = performance.now() - t;
  const hits = r.hits?.hits ?? [];
  const ids = hits.length && hits[0].fields ? exactHits(hits.map((/** @type {any} */ h) => (h._source ? h : { ...h, _source: { id: h._id } }))).slice(0, 10).map((h) => h.id) : null;
  return { ms, took: r.took, ids };
}
/** @param {string} spec @returns {(q: number) => Promise<Answer>} */
function variant(spec) {
  const search = `/${a.index}/_search`;
  if (spec === 'product') return (q) => timed(search, body(q));
  if (spec === 'listparams') return (q) => timed(search, body(q, { lists: true }));
  if (spec === 'size10') return (q) => timed(search, body(q, { size: 10 }));
  if (spec === 'nosource') return (q) => timed(search, body(q, { nosource: true }));
  if (spec === 'candidates') return (q) => timed(search, body(q, { candidates: true }));
  if (spec === 'empty') return () => timed(search, { size: 0, query: { match_all: {} } });
  if (spec === 'other') {
    if (!a.other) throw new Error('variant other needs --other INDEX');
    const other = /** @type {string} */ (a.other);
    return (q) => timed(`/${other}/_search`, body(q));
  }
  if (spec === 'client') {
    return async (q) => {
      const t = performance.now();
      const hits = await coll.search(row(m, q), { k: 10, excludeIds: [idOf(q)] });
      return { ms: performance.now() - t, ids: hits.map((/** @type {{id: string}} */ h) => h.id) };
    };
  }
  const wb = spec.match(/^(?:w(\d+))?(?:b([\d.]+))?$/);
  if (!wb || (!wb[1] && !wb[2])) throw new Error(`unknown variant ${spec}`);
  const o = { ...(wb[1] ? { w: Number(wb[1]) } : {}), ...(wb[2] ? { b: Number(wb[2]) } : {}) };
  return (q) => timed(search, body(q, o));
}
const names = a.variants.split(',');
const run = Object.fromEntries(names.map((k) => [k, variant(k)]));
for (const q of qs.slice(0, 30)) for (const k of names) await run[k](q); // warm-up

/** @type {Record<string, {ms: number[], took: number[], hit: number, tot: number}>} */
const res = Object.fromEntries(names.map((k) => [k, { ms: [], took: [], hit: 0, tot: 0 }]));
const load0 = os.loadavg()[0];
for (let i = 0; i < qs.length; i++) {
  for (let j = 0; j < names.length; j++) {
    const k = names[(i + j) % names.length];
    const r = await run[k](qs[i]);
    res[k].ms.push(r.ms);
    if (r.took !== undefined) res[k].took.push(r.took);
    if (r.ids) { const t = /** @type {Set<string>} */ (truth.get(qs[i])); res[k].tot += 10; res[k].hit += r.ids.filter((x) => t.has(x)).length; }
  }
}
const pct = (/** @type {number[]} */ xs, /** @type {number} */ f) => { const s = [...xs].sort((x, y) => x - y); return s.length ? s[Math.min(s.length - 1, Math.floor(s.length * f))] : null; };
const pids = a.pid ? a.pid.split(',').map(Number) : [];
/** CPU milliseconds of the nodes' processes so far (utime + stime, in clock ticks of 10 ms). */
const cpuMs = () => processesCpuMs(pids);
/** @type {Record<string, number | null>} */
const cpu = {};
for (const k of names) {
  if (!pids.length) { cpu[k] = null; continue; }
  const block = qs.slice(0, Math.min(100, qs.length));
  const c0 = cpuMs();
  for (const q of block) await run[k](q);
  cpu[k] = Math.round(((cpuMs() - c0) / block.length) * 100) / 100;
}
const load1 = os.loadavg()[0];
const out = Object.fromEntries(names.map((k) => {
  const r = res[k];
  const rec = { rt_p50_ms: pct(r.ms, 0.5), rt_p99_ms: pct(r.ms, 0.99), took_p50_ms: pct(r.took, 0.5), recall_at_10: r.tot ? r.hit / r.tot : null, node_cpu_ms: cpu[k] };
  console.log(`${k.padEnd(12)} round trip p50 ${rec.rt_p50_ms?.toFixed(2)} p99 ${rec.rt_p99_ms?.toFixed(2)} ms, took p50 ${rec.took_p50_ms ?? '-'} ms, ` +
    `recall@10 ${rec.recall_at_10?.toFixed(4) ?? '-'}, node CPU ${rec.node_cpu_ms ?? '-'} ms a query`);
  return [k, rec];
}));
say(`load ${load0.toFixed(2)} -> ${load1.toFixed(2)}, ${new Date().toISOString()}`);
console.log(JSON.stringify({ index: a.index, shards, docs: N, queries: qs.length, window, budget, load: [load0, load1], variants: out }));
process.exit(0);
