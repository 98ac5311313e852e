#!/usr/bin/env node
// Same-run comparison of two builds of the store: `node tests/bench/search.ab.js --old <dir>
// --data X.csr [--docs N] [--queries Q] [--threads 1]`, where <dir> holds another checkout's `pipeline/`
// with its addon built (e.g. `git archive <rev> pipeline package.json | tar x -C <dir>`, then `npm run
// build:store` there). Both stores are built from the same vectors (one merged segment each); the queries
// (stored documents, themselves excluded) alternate old/new one by one so that both see the same machine load,
// and which build goes first alternates query by query.
// Prints sizes, p50/p99 and the p50 ratio of each, CPU time per search (process.cpuUsage: p50, ratio of the
// means; less disturbed by a loaded machine than wall clock), recall@10 of each against the old build's exact mode
// and of the new build against its own, and each build's largest score error against the float32 dot product of
// the vectors given (the stored values are quantised; goal: within 1e-3).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openStore } from '../../pipeline/store/index.js';
import { fillCollection, readCsr, row } from './search.data.js';

const { values: opt } = parseArgs({ options: {
  old: { type: 'string' }, data: { type: 'string' }, docs: { type: 'string' }, queries: { type: 'string', default: '500' },
  threads: { type: 'string', default: '1' }, budget: { type: 'string' }, candidates: { type: 'string' },
} });
if (!opt.old || !opt.data) throw new Error('usage: search.ab.js --old <dir> --data X.csr');
const oldStore = /** @type {{openStore: typeof openStore}} */ (await import(path.resolve(opt.old, 'pipeline/store/index.js')));
const m = readCsr(opt.data);
const n = Math.min(m.rows, Number(opt.docs ?? m.rows));
const log = (/** @type {string} */ s) => process.stderr.write(`[search.ab] ${s}\n`);
const pct = (/** @type {number[]} */ xs, /** @type {number} */ p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const now = () => Number(process.hrtime.bigint()) / 1e6;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-search-ab-'));
const NO_BG = { autoFlush: false, autoMerge: false, maintenanceMs: 0 };

/** @param {typeof openStore} open @param {string} name */
async function build(open, name) {
  const store = open(path.join(tmp, name), NO_BG);
  const c = store.collection('bench', { width: m.width });
  await fillCollection(c, m, n);
  const t = now();
  await c.merge();
  const s = c.stats();
  log(`${name}: merge ${((now() - t) / 1000).toFixed(1)} s, ${(s.bytes / 2 ** 20).toFixed(1)} MiB, ${s.bytes_per_nnz.total.toFixed(2)} bytes per non-zero (postings ${s.bytes_per_nnz.postings.toFixed(2)})`);
  return { store, c, s };
}

const A = await build(oldStore.openStore, 'old');
const B = await build(openStore, 'new');
const nq = Math.min(Number(opt.queries), n);
const qs = Array.from({ length: nq }, (_, i) => Math.floor((i * 2654435761) % n));
/** @type {any} */
const o = { k: 10, threads: Number(opt.threads) };
if (opt.budget) o.budget = Number(opt.budget);
if (opt.candidates) o.candidates = Number(opt.candidates);
const lat = { old: /** @type {number[]} */ ([]), new: /** @type {number[]} */ ([]) };
// CPU time of the process per search (ms): on a loaded machine it leaves out the time spent waiting for a core.
const cpu = { old: /** @type {number[]} */ ([]), new: /** @type {number[]} */ ([]) };
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
let recOld = 0, recNew = 0, recNewOwn = 0, maxDiff = 0;
const err = { old: 0, new: 0 };
/** Largest |score - float32 dot product of the vectors given| over hits. @param {{id: string, score: number}[]} hits @param {{indices: Uint32Array, values: Float32Array}} v */
const scoreError = (hits, v) => {
  const qd = new Map(Array.from(v.indices, (ix, j) => [ix, v.values[j]]));
  let e = 0;
  for (const h of hits) {
    const d = row(m, Number(h.id));
    let s = 0;
    for (let j = 0; j < d.indices.length; j++) s += (qd.get(d.indices[j]) ?? 0) * d.values[j];
    e = Math.max(e, Math.abs(h.score - s));
  }
  return e;
};
for (let rep = 0; rep < 2; rep++) {
  for (const [qi, q] of qs.entries()) {
    const v = row(m, q);
    const ex = [String(q)];
    /** @param {typeof A} build */
    const timed = (build) => {
      const c0 = cpuMs(), t0 = now();
      const hits = build.c.search(v, { ...o, excludeIds: ex });
      return { hits, ms: now() - t0, cpu: cpuMs() - c0 };
    };
    // Which build runs first alternates query by query: the second search of a pair finds the query's
    // vector and the shared pages warm, which would otherwise favour one side.
    let ro, rn;
    if (qi % 2 === 0) { ro = timed(A); rn = timed(B); } else { rn = timed(B); ro = timed(A); }
    const ho = ro.hits, hn = rn.hits;
    if (rep === 0) continue; // warm-up pass
    lat.old.push(ro.ms);
    lat.new.push(rn.ms);
    cpu.old.push(ro.cpu);
    cpu.new.push(rn.cpu);
    const truth = new Set(A.c.search(v, { k: 10, mode: 'exact', excludeIds: ex }).map((h) => h.id));
    recOld += ho.filter((h) => truth.has(h.id)).length / 10;
    recNew += hn.filter((h) => truth.has(h.id)).length / 10;
    const own = new Set(B.c.search(v, { k: 10, mode: 'exact', excludeIds: ex }).map((h) => h.id));
    recNewOwn += hn.filter((h) => own.has(h.id)).length / 10;
    err.old = Math.max(err.old, scoreError(ho, v));
    err.new = Math.max(err.new, scoreError(hn, v));
    const so = new Map(ho.map((h) => [h.id, h.score]));
    for (const h of hn) if (so.has(h.id)) maxDiff = Math.max(maxDiff, Math.abs(h.score - /** @type {number} */ (so.get(h.id))));
  }
}
const res = {
  docs: n, queries: nq, threads: o.threads,
  old: { p50_ms: pct(lat.old, 0.5), p99_ms: pct(lat.old, 0.99), recall_at_10: recOld / nq, bytes_per_nnz: A.s.bytes_per_nnz.total },
  new: { p50_ms: pct(lat.new, 0.5), p99_ms: pct(lat.new, 0.99), recall_at_10: recNew / nq, recall_at_10_own_exact: recNewOwn / nq, bytes_per_nnz: B.s.bytes_per_nnz.total },
  max_score_err_vs_float32: err,
  p50_ratio_new_over_old: pct(lat.new, 0.5) / pct(lat.old, 0.5),
  cpu_p50_ms: { old: pct(cpu.old, 0.5), new: pct(cpu.new, 0.5) },
  cpu_mean_ratio_new_over_old: cpu.new.reduce((a, b) => a + b, 0) / cpu.old.reduce((a, b) => a + b, 0),
  max_score_diff: maxDiff,
  load_avg: os.loadavg(),
};
log(JSON.stringify(res));
process.stdout.write(`${JSON.stringify(res)}\n`);
await A.store.close();
await B.store.close();
fs.rmSync(tmp, { recursive: true, force: true });
