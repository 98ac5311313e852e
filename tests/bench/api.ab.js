#!/usr/bin/env node
// Same-run A/B of two server builds on bench:api's collection: both servers up (this checkout
// and --old, another checkout's pipeline/ and server/ with its addons built, e.g. `git archive <rev> pipeline server
// workers package.json | tar x -C <dir>`, node_modules/models/build/dictionaries/.venv linked from this one, then
// `npm run build:store` there), the constant route, live related by id and related for a text at --connections,
// --rounds rounds alternating old/new; medians of req/s, p99 and the server's CPU time per request (/proc: all its
// threads, and its event-loop thread alone; a loaded machine moves req/s with the scheduler's share, CPU per request much less).
//   node tests/bench/api.ab.js --old <dir> [--rounds 3] [--duration 6] [--connections 10] [--old-env JSON] [--new-env JSON] [--match]
// --old-env / --new-env: environment variables of that server (e.g. '{"SCDV_TOKENIZE_HUGE_PAGES":"false"}'); `--old .`
// compares this checkout with itself under two environments.
// Each run also reports the share of the machine's CPU time left idle (/proc/stat).
// --match adds precomputed /v1/match (ads for an article, k 10 and k 3): each server gets its own Redis, filled by its
// own checkout's `scdv precompute` (top 10 of the 2,000 ads for every article), so each reads entries as it writes them.
// Run `npm run bench:api` once first: it builds the collection (.scdv/bench/api) both servers read.
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { forkBenchServer, stopBenchServer } from './bench-server.js';
import { ensureBenchModel } from './bench-model.js';
import { scatteredIds, sentencePools, synthesize } from './synthetic-corpus.js';
import { startPrivateRedis } from '../../pipeline/queue/redis.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const BENCH_DIR = path.join(REPO, '.scdv', 'bench', 'api');
process.env.SCDV_DATA_DIR = path.join(BENCH_DIR, 'data');
process.env.SCDV_STORE_DIR = path.join(BENCH_DIR, 'store');

const { values: opt } = parseArgs({ options: {
  old: { type: 'string' }, rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '6' },
  connections: { type: 'string', default: '10' }, docs: { type: 'string', default: '100000' },
  'old-env': { type: 'string', default: '{}' }, 'new-env': { type: 'string', default: '{}' }, match: { type: 'boolean', default: false },
} });
if (!opt.old) throw new Error('usage: api.ab.js --old <dir>');
const nDocs = Number(opt.docs);
/** @param {number} pid server CPU time so far (all threads), ms @param {boolean} [loopOnly] its event-loop thread's alone */
const cpuOf = (pid, loopOnly = false) => {
  const st = fs.readFileSync(loopOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
  const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};
/** The machine's CPU time so far as [idle (idle + iowait), all], in ticks (/proc/stat's first line). */
const machineCpu = () => {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return [f[3] + f[4], f.reduce((a, b) => a + b, 0)];
};
const roots = { old: path.resolve(opt.old), new: REPO };
// One Redis for both, or (--match) one each, holding the entries its checkout's precompute wrote.
const redis = { old: await startPrivateRedis(), new: opt.match ? await startPrivateRedis() : null };
const redisOf = (/** @type {'old' | 'new'} */ build) => /** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */ (redis[build] ?? redis.old);
if (opt.match) {
  for (const build of /** @type {const} */ (['old', 'new'])) {
    execFileSync(process.execPath, [path.join(roots[build], 'pipeline', 'scdv.cjs'), 'precompute', '--model', 'bench-livedoor-dev', '--target', 'ads', '--k', '10'], {
      stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, REDIS_URL: redisOf(build).url },
    });
  }
}
const script = path.join(REPO, 'tests', 'bench', 'api.bench.js');
const servers = {
  old: forkBenchServer(script, { redisUrl: redisOf('old').url, server: {} }, { root: roots.old, name: 'old', env: JSON.parse(opt['old-env']) }),
  new: forkBenchServer(script, { redisUrl: redisOf('new').url, server: {} }, { name: 'new', env: JSON.parse(opt['new-env']) }),
};
try {
  const urls = { old: await servers.old.listening, new: await servers.new.listening };
  const everyId = scatteredIds(nDocs);
  const pools = sentencePools(ensureBenchModel('bench-livedoor-dev'));
  const texts = [...synthesize(pools, 500, 99)].map((d) => JSON.stringify({ title: d.title, text: d.body.slice(0, 1500), k: 10 }));
  let offset = 20000; // articles not asked for by bench:api's first levels
  /** @type {Record<string, (n: number) => Record<string, unknown>>} */
  const scenarios = {
    ceiling: () => ({ path: '/bench/ceiling' }),
    related_live: (n) => ({ path: `/v1/collections/articles/documents/${everyId[(offset + n) % nDocs]}/related?k=10` }),
    text: (n) => ({ method: 'POST', path: '/v1/collections/articles/related', headers: { 'content-type': 'application/json' }, body: texts[n % texts.length] }),
    ...(opt.match ? {
      match_k10: (/** @type {number} */ n) => ({ path: `/v1/match?collection=ads&for=${everyId[n % nDocs]}&k=10` }),
      match_k3: (/** @type {number} */ n) => ({ path: `/v1/match?collection=ads&for=${everyId[n % nDocs]}&k=3` }),
    } : {}),
  };
  /** @type {Record<string, {rps: number, p99: number, cpu: number, loop: number, idle: number, errors: number}[]>} */
  const runs = {};
  const load0 = fs.readFileSync('/proc/loadavg', 'utf8').trim();
  for (let round = 0; round < Number(opt.rounds); round++) {
    for (const [name, make] of Object.entries(scenarios)) {
      /** @type {('old' | 'new')[]} */
      const order = round % 2 ? ['new', 'old'] : ['old', 'new'];
      for (const build of order) {
        let n = 0;
        const run = (/** @type {number} */ secs) => autocannon({
          url: urls[build], connections: Number(opt.connections), duration: secs,
          requests: [{ setupRequest: (/** @type {any} */ req) => ({ ...req, ...make(n++) }) }],
        });
        await run(1);
        const pid = /** @type {number} */ (servers[build].proc.pid);
        const c0 = cpuOf(pid);
        const l0 = cpuOf(pid, true);
        const m0 = machineCpu();
        const r = await run(Number(opt.duration));
        const m1 = machineCpu();
        const idle = (m1[0] - m0[0]) / Math.max(1, m1[1] - m0[1]);
        const cpu = (cpuOf(pid) - c0) / Math.max(1, r.requests.total);
        const loop = (cpuOf(pid, true) - l0) / Math.max(1, r.requests.total);
        offset += n;
        (runs[`${name}_${build}`] ??= []).push({ rps: r.requests.average, p99: r.latency.p99, cpu, errors: r.errors + r.non2xx, loop, idle });
        process.stderr.write(`round ${round + 1} ${name.padEnd(13)} ${build}: ${r.requests.average.toFixed(0)} req/s, p99 ${r.latency.p99} ms, server CPU ${cpu.toFixed(3)} ms a request (event loop ${loop.toFixed(3)}), machine idle ${(100 * idle).toFixed(1)} %\n`);
      }
    }
  }
  const median = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1];
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const [key, xs] of Object.entries(runs)) {
    out[key] = { rps: median(xs.map((x) => x.rps)), p99_ms: median(xs.map((x) => x.p99)), cpu_ms_per_request: +median(xs.map((x) => x.cpu)).toFixed(3), loop_cpu_ms_per_request: +median(xs.map((x) => x.loop)).toFixed(3), idle_pct: +(100 * median(xs.map((x) => x.idle))).toFixed(1), errors: xs.reduce((a, x) => a + x.errors, 0) };
  }
  console.log(JSON.stringify({ ...out, load_avg: { start: load0, end: fs.readFileSync('/proc/loadavg', 'utf8').trim() } }));
} finally {
  await stopBenchServer(servers.old.proc);
  await stopBenchServer(servers.new.proc);
  await redis.old.stop();
  await redis.new?.stop();
}
