#!/usr/bin/env node
// Candidate-generation settings of `fast` compared on one store, query by query:
//   node tests/bench/search.sweep.js --data X.csr --dir D [--docs N] [--queries 2000]
//        --settings 'label=budget:candidates[:ENV=V,...,minPostings=P];...'
// Builds one merged segment of the first N vectors into D the first time (kept for later runs), takes the exact
// top-10 of each query (stored documents, themselves excluded) as the truth (cached in D), then runs every
// setting on every query, the settings' order rotating from query to query so that all see the same machine
// load. Per setting: recall@10, mean postings decoded and documents rescored (load-independent), and the p50
// wall-clock and CPU time of a search (threads: 1). ENV=V pairs set environment variables read by an
// experimental build of the addon for that setting's searches.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openStore } from '../../pipeline/store/index.js';
import { fillCollection, readCsr, row } from './search.data.js';

const { values: opt } = parseArgs({ options: {
  data: { type: 'string' }, dir: { type: 'string' }, docs: { type: 'string' }, queries: { type: 'string', default: '2000' },
  settings: { type: 'string' }, reps: { type: 'string', default: '1' },
} });
if (!opt.data || !opt.dir || !opt.settings) throw new Error('usage: search.sweep.js --data X.csr --dir D --settings ...');
const m = readCsr(opt.data);
const n = Math.min(m.rows, Number(opt.docs ?? m.rows));
const log = (/** @type {string} */ s) => process.stderr.write(`[search.sweep] ${s}\n`);
const pct = (/** @type {number[]} */ xs, /** @type {number} */ p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const now = () => Number(process.hrtime.bigint()) / 1e6;
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };

const fresh = !fs.existsSync(opt.dir);
const store = openStore(opt.dir, { autoFlush: false, autoMerge: false, maintenanceMs: 0 });
const c = store.collection('bench', { width: m.width });
if (fresh) {
  await fillCollection(c, m, n);
  await c.merge();
  log(`built ${n} documents: ${JSON.stringify(c.stats().bytes_per_nnz)}`);
}
const nq = Math.min(Number(opt.queries), n);
const qs = Array.from({ length: nq }, (_, i) => Math.floor((i * 2654435761) % n));
const truthFile = path.join(opt.dir, `truth-${nq}.json`);
/** @type {string[][]} */
let truth;
if (fs.existsSync(truthFile)) {
  truth = JSON.parse(fs.readFileSync(truthFile, 'utf8'));
} else {
  truth = qs.map((q) => c.search(row(m, q), { k: 10, mode: 'exact', excludeIds: [String(q)] }).map((h) => h.id));
  fs.writeFileSync(truthFile, JSON.stringify(truth));
}

const settings = opt.settings.split(';').filter(Boolean).map((s) => {
  const [label, spec] = s.split('=', 2).length === 2 ? [s.slice(0, s.indexOf('=')), s.slice(s.indexOf('=') + 1)] : [s, s];
  const [budget, candidates, env = ''] = spec.split(':');
  /** @type {Record<string, string>} */
  const vars = {};
  let minPostings;
  for (const kv of env.split(',').filter(Boolean)) {
    const [k, v] = kv.split('=');
    if (k === 'minPostings') minPostings = Number(v);
    else vars[k] = v;
  }
  return { label, budget: Number(budget), candidates: Number(candidates), minPostings, vars, wall: /** @type {number[]} */ ([]), cpu: /** @type {number[]} */ ([]), hit: 0, postings: 0, rescored: 0, taat: 0, scan: 0, resc: 0, maxDiff: 0 };
});
const allVars = new Set(settings.flatMap((s) => Object.keys(s.vars)));
const load0 = os.loadavg();
for (let rep = 0; rep < Number(opt.reps); rep++) {
  for (let qi = 0; qi < nq; qi++) {
    const q = qs[qi];
    const v = row(m, q);
    const t = new Set(truth[qi]);
    for (let si = 0; si < settings.length; si++) {
      const s = settings[(si + qi) % settings.length];
      for (const k of allVars) delete process.env[k];
      Object.assign(process.env, s.vars);
      const o = { k: 10, threads: 1, budget: s.budget, candidates: s.candidates, excludeIds: [String(q)], ...(s.minPostings === undefined ? {} : { minPostings: s.minPostings }) };
      const c0 = cpuMs(), t0 = now();
      const { hits, stats } = c.profile(v, o);
      const t1 = now(), c1 = cpuMs();
      if (rep === 0) {
        s.hit += hits.filter((h) => t.has(h.id)).length;
        s.postings += stats.postings;
        s.rescored += stats.rescored;
      }
      s.wall.push(t1 - t0);
      s.cpu.push(c1 - c0);
      s.taat += stats.taatMs; s.scan += stats.scanMs; s.resc += stats.rescoreMs;
    }
  }
}
for (const k of allVars) delete process.env[k];
const runs = nq * Number(opt.reps);
const out = settings.map((s) => ({
  label: s.label, budget: s.budget, candidates: s.candidates, env: s.vars,
  recall_at_10: s.hit / (10 * nq), postings: Math.round(s.postings / nq), rescored: Math.round(s.rescored / nq),
  p50_ms: +pct(s.wall, 0.5).toFixed(3), cpu_p50_ms: +pct(s.cpu, 0.5).toFixed(3),
  taat_ms: +(s.taat / runs).toFixed(3), scan_ms: +(s.scan / runs).toFixed(3), rescore_ms: +(s.resc / runs).toFixed(3),
}));
for (const r of out) log(JSON.stringify(r));
process.stdout.write(`${JSON.stringify({ docs: n, queries: nq, load_avg_start: load0, load_avg_end: os.loadavg(), settings: out })}\n`);
await store.close();
