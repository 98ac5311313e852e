// Vector store benchmark: index build, size, latency, throughput and recall, against exact brute force
// (scipy) and Seismic (pyseismic-lsr), on the same vectors.
//
//   node tests/bench/search.bench.js --data vectors.csr [--docs N]  real vectors (format: search.data.js); --docs: the first N
//   node tests/bench/search.bench.js --generate 100000             SCDV-like synthetic vectors (cached in /tmp)
//        [--coherence 0.5] [--seed 42] [--queries 2000] [--k 10] [--segments 16] [--write-docs 5000]
//        [--budget B] [--candidates C] [--skip-seismic] [--seismic-timeout S] [--seismic-sweep 10:0.7,40:0.7,...]
//        [--skip-scipy] [--store DIR] [--keep]
//        [--backend native|opensearch [--nodes 1,2] [--opensearch-url URL[,URL...]] [--os-queries 500] [--os-heap-mb 1024]
//         [--os-prefix bench-] [--shards S] [--replicas R] [--os-load-replicas R0] [--os-bulk 1000]
//         [--os-bulk-concurrency 2] [--os-exact-queries 50] [--os-dir DIR] [--os-keep] [--os-skip-load]
//         [--os-kill I [--os-kill-signal KILL|TERM] [--os-recover]]]
//
// The cluster case, e.g. a million documents on three local nodes, 6 primaries and a replica, loaded without the
// replica (added after the force merge, copied from the merged primaries), a node SIGKILLed and started again,
// the cluster left running in DIR for another run:
//   node tests/bench/search.bench.js --data 1m.csr --skip-seismic --write-docs 0 --queries 1000 --backend opensearch
//     --nodes 3 --shards 6 --replicas 1 --os-load-replicas 0 --os-bulk 500 --os-bulk-concurrency 4 --os-heap-mb 2048
//     --os-dir DIR --os-keep --os-kill 2 --os-recover
// and later, on the same vectors, queried again without loading (the URLs are in DIR/cluster.json):
//   node tests/bench/search.bench.js --data 1m.csr --skip-seismic --write-docs 0 --queries 1000 --backend opensearch
//     --nodes 3 --opensearch-url URL1,URL2,URL3 --os-skip-load --os-keep [--os-dir DIR --os-kill 2 --os-recover]
// (options of the OpenSearch side: tests/bench/search.opensearch.js).
//
// Steps, in one run:
//  1. queries: --queries distinct stored documents (seeded), each searched with its own vector, itself excluded;
//  2. ground truth: scipy exact brute force (tests/bench/search.baselines.py in .venv), with its latency;
//  3. build: upsert in batches of 10,000 with flushes into --segments segments, then search on the many
//     small segments; then merge into one segment (build time = upserts + flushes + merge; size; bytes/nnz);
//  4. one segment: single-query latency p50/p99 (sync search, after a warm-up), recall@10, QPS with 1, 2 and 4
//     concurrent searchers (searchAsync on the libuv pool); the same with the search kept on one thread
//     (threads: 1, what every search did before large segments were split over idle cores) and split in two
//     (threads: 2, forced), interleaved query by query with the default so that all see the same machine
//     load (which of them searches a query first rotates: the first pays for bringing its lists into the
//     cache); and mode 'exact';
//  5. Seismic: built from the same vectors, queried with query_cut 10, heap_factor 0.7 (given up after
//     --seismic-timeout seconds, default 3600), then swept over --seismic-sweep query_cut:heap_factor settings
//     on the same index: its fastest setting with recall@10 >= 0.99 (else its best recall) is reported as
//     seismic_eq_p50_ms / seismic_eq_recall_at_10 (the store's default must be no slower at equal recall);
//     then that setting and the store (one thread) again, block by block on the same load (search.duel.js):
//     seismic_eq_interleaved;
//  6. writes: --write-docs documents upserted in batches of 1, 10, 100 and 1,000 (each call awaited, durable);
//  7. --backend opensearch: the same vectors, queries and ground truth on OpenSearch (search.opensearch.js), on a
//     cluster of each --nodes size (1 to 9) started by the test harness (or the one at --opensearch-url); the last line
//     then holds the OpenSearch figures (of the first cluster size) with "backend":"opensearch", every size under
//     "clusters", and the native store's under "native".
// Progress and the report go to stderr; the last stdout line is JSON.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openStore } from '../../pipeline/store/index.js';
import { generate, readCsr, rng, row, writeCsr } from './search.data.js';
import { benchOpenSearch } from './search.opensearch.js';
import { duel, startSeismic } from './search.duel.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const PYTHON = path.join(REPO, '.venv', 'bin', 'python');
const BASELINES = fileURLToPath(new URL('./search.baselines.py', import.meta.url));

/** @param {string} m */
const log = (m) => process.stderr.write(`[search.bench] ${m}\n`);

const { values: opt } = parseArgs({
  options: {
    data: { type: 'string' },
    docs: { type: 'string' },
    generate: { type: 'string' },
    coherence: { type: 'string', default: '0.5' },
    seed: { type: 'string', default: '42' },
    queries: { type: 'string', default: '2000' },
    k: { type: 'string', default: '10' },
    segments: { type: 'string', default: '16' },
    'write-docs': { type: 'string', default: '5000' },
    budget: { type: 'string' },
    candidates: { type: 'string' },
    'skip-seismic': { type: 'boolean', default: false },
    'seismic-timeout': { type: 'string', default: '3600' },
    'seismic-sweep': { type: 'string', default: '10:0.7,20:0.7,40:0.7,60:0.7,80:0.7,120:0.7,200:0.7,400:0.7,40:0.9,80:0.9,40:0.5,80:0.5' },
    'skip-scipy': { type: 'boolean', default: false },
    store: { type: 'string' },
    keep: { type: 'boolean', default: false },
    backend: { type: 'string', default: 'native' },
    nodes: { type: 'string', default: '1,2' },
    'opensearch-url': { type: 'string' },
    'os-queries': { type: 'string', default: '500' },
    'os-heap-mb': { type: 'string', default: '1024' },
    'os-prefix': { type: 'string', default: 'bench-' },
    shards: { type: 'string' },
    replicas: { type: 'string' },
    'os-load-replicas': { type: 'string' },
    'os-bulk': { type: 'string', default: '1000' },
    'os-bulk-concurrency': { type: 'string', default: '2' },
    'os-exact-queries': { type: 'string', default: '50' },
    'os-dir': { type: 'string' },
    'os-keep': { type: 'boolean', default: false },
    'os-skip-load': { type: 'boolean', default: false },
    'os-kill': { type: 'string' },
    'os-kill-signal': { type: 'string', default: 'KILL' },
    'os-recover': { type: 'boolean', default: false },
  },
});
if (opt.backend !== 'native' && opt.backend !== 'opensearch') throw new Error(`--backend must be native or opensearch, got ${opt.backend}`);
const clusterSizes = opt.nodes.split(',').map(Number);
if (!clusterSizes.length || clusterSizes.some((n) => !Number.isInteger(n) || n < 1 || n > 9)) throw new Error(`--nodes takes cluster sizes of 1 to 9 nodes, e.g. 1,2 or 3, got ${opt.nodes}`);
/** @param {string} name @param {number} min */
const intOpt = (name, min) => {
  const v = /** @type {Record<string, any>} */ (opt)[name];
  if (v === undefined) return null;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} takes an integer of at least ${min}, got ${v}`);
  return n;
};
if (opt['os-kill-signal'] !== 'KILL' && opt['os-kill-signal'] !== 'TERM') throw new Error(`--os-kill-signal must be KILL or TERM, got ${opt['os-kill-signal']}`);
if (opt['os-skip-load'] && !opt['opensearch-url']) throw new Error('--os-skip-load attaches to a loaded cluster: give its --opensearch-url');
if ((opt['os-keep'] || opt['os-skip-load']) && clusterSizes.length !== 1) throw new Error('--os-keep and --os-skip-load take one cluster size (--nodes N)');

/** @param {number[]} xs @param {number} p */
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))];
};
/**
 * Every order of 0..n-1.
 * @param {number} n
 * @returns {number[][]}
 */
const permutations = (n) => (n <= 1 ? [[0].slice(0, n)] : permutations(n - 1).flatMap((p) => Array.from({ length: n }, (_, at) => [...p.slice(0, at), n - 1, ...p.slice(at)])));
const mean = (/** @type {number[]} */ xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const round = (/** @type {number} */ x, d = 3) => Math.round(x * 10 ** d) / 10 ** d;
const now = () => Number(process.hrtime.bigint()) / 1e6;
const loadAvg = () => os.loadavg().map((x) => round(x, 2));

function loadData() {
  if (opt.data) {
    log(`reading ${opt.data}`);
    const all = readCsr(opt.data);
    const n = opt.docs === undefined ? all.rows : Number(opt.docs);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--docs takes a positive integer, got ${opt.docs}`);
    if (n >= all.rows) return { m: all, file: opt.data };
    // the first n documents, as a file of their own for the scipy ground truth
    const end = all.offsets[n];
    const m = { rows: n, width: all.width, offsets: all.offsets.subarray(0, n + 1), indices: all.indices.subarray(0, end), values: all.values.subarray(0, end), ids: all.ids ? all.ids.slice(0, n) : null };
    const file = path.join(os.tmpdir(), `${path.basename(opt.data, '.csr')}-first-${n}.csr`);
    writeCsr(file, m);
    log(`  its first ${n} of ${all.rows} documents (--docs) -> ${file}`);
    return { m, file };
  }
  const n = Number(opt.generate ?? 100000);
  const coherence = Number(opt.coherence);
  const seed = Number(opt.seed);
  const file = path.join(os.tmpdir(), `scdv-synth-${n}-c${coherence}-s${seed}.csr`);
  if (fs.existsSync(file)) {
    log(`reading cached synthetic vectors ${file}`);
    return { m: readCsr(file), file };
  }
  log(`generating ${n} SCDV-like vectors (60 clusters x 200 dims, coherence ${coherence}, seed ${seed})`);
  const t = now();
  const m = generate({ docs: n, coherence, seed });
  writeCsr(file, m);
  log(`  generated in ${((now() - t) / 1000).toFixed(1)} s -> ${file}`);
  return { m, file };
}

/**
 * @param {string} cmd
 * @param {string[]} args
 * @param {number} [timeoutS] give up (kill it) after this long: returns false
 */
function python(cmd, args, timeoutS) {
  const r = spawnSync(PYTHON, [BASELINES, cmd, ...args], { stdio: ['ignore', 'ignore', 'inherit'], maxBuffer: 1 << 30, ...(timeoutS ? { timeout: timeoutS * 1000, killSignal: 'SIGKILL' } : {}) });
  if (timeoutS && r.error && /** @type {NodeJS.ErrnoException} */ (r.error).code === 'ETIMEDOUT') return false;
  if (r.status !== 0) throw new Error(`search.baselines.py ${cmd} failed (${r.status ?? r.signal})`);
  return true;
}

async function main() {
  const load0 = loadAvg();
  log(`load average ${load0.join(' ')} (${os.cpus().length} cores)`);
  const { m, file } = loadData();
  const k = Number(opt.k);
  const ids = m.ids ?? null;
  const idOf = (/** @type {number} */ r) => (ids ? ids[r] : String(r));
  let neg = 0;
  for (let i = 0; i < m.values.length; i++) if (m.values[i] < 0) neg++;
  const nnz = m.indices.length;
  log(`${m.rows} documents, width ${m.width}, ${(nnz / m.rows).toFixed(1)} non-zeros per document, ${((100 * neg) / nnz).toFixed(1)} % negative`);

  // 1. queries
  const nq = Math.min(Number(opt.queries), m.rows);
  const r = rng(Number(opt.seed) + 1);
  const perm = Uint32Array.from({ length: m.rows }, (_, i) => i);
  for (let i = 0; i < nq; i++) {
    const j = i + Math.floor(r() * (m.rows - i));
    const t = perm[i]; perm[i] = perm[j]; perm[j] = t;
  }
  const queries = perm.slice(0, nq);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-search-bench-'));
  const qfile = path.join(tmp, 'queries.u32');
  fs.writeFileSync(qfile, Buffer.from(queries.buffer));

  // 2. ground truth
  /** @type {any} */
  let scipy = null;
  /** @type {string[][] | null} */
  let truth = null;
  if (!opt['skip-scipy']) {
    log(`scipy exact brute force over ${nq} queries`);
    const out = path.join(tmp, 'scipy.json');
    python('scipy', ['--data', file, '--queries', qfile, '--k', String(k), '--out', out]);
    scipy = JSON.parse(fs.readFileSync(out, 'utf8'));
    truth = scipy.ids.map((/** @type {number[]} */ l) => l.map(idOf));
    log(`  p50 ${scipy.p50_ms.toFixed(2)} ms, p99 ${scipy.p99_ms.toFixed(2)} ms`);
  }

  // 3. build
  const storeDir = opt.store ?? path.join(tmp, 'store');
  const budget = opt.budget ? Number(opt.budget) : undefined;
  const candidates = opt.candidates ? Number(opt.candidates) : undefined;
  const store = openStore(storeDir, { autoFlush: false, autoMerge: false, maintenanceMs: 0,
    ...(budget ? { budget } : {}), ...(candidates ? { candidates } : {}) });
  const c = store.collection('bench', { width: m.width });
  const nseg = Math.max(1, Number(opt.segments));
  const perSeg = Math.ceil(m.rows / nseg);
  const BATCH = 10000;
  let upsertMs = 0, flushMs = 0;
  log(`ingest: upserts of ${BATCH} documents, a flush every ${perSeg} documents`);
  for (let s0 = 0; s0 < m.rows; s0 += perSeg) {
    const s1 = Math.min(m.rows, s0 + perSeg);
    for (let i = s0; i < s1; i += BATCH) {
      const batch = [];
      for (let j = i; j < Math.min(s1, i + BATCH); j++) batch.push({ id: idOf(j), vector: row(m, j) });
      const t = now();
      await c.upsert(batch);
      upsertMs += now() - t;
    }
    const t = now();
    await c.flush();
    flushMs += now() - t;
  }
  const many = c.stats();
  log(`  ${many.segments} segments: upserts ${(upsertMs / 1000).toFixed(1)} s (${Math.round(m.rows / (upsertMs / 1000))} docs/s), flushes ${(flushMs / 1000).toFixed(1)} s`);

  /**
   * Sequential sync searches over the queries: latency and recall, for one or more option sets, interleaved
   * query by query (contenders see the same machine load).
   * @param {import('../../pipeline/store/index.js').SearchOptions[]} opts
   * @param {number} [limit]
   */
  const measureAll = (opts, limit = nq) => {
    const res = opts.map(() => ({ lat: /** @type {number[]} */ ([]), got: /** @type {string[][]} */ ([]), postings: 0, postingsTotal: 0, threads: 0 }));
    // warm-up (page cache, JIT): a tenth of the queries, not timed
    for (let i = 0; i < Math.min(limit, Math.max(20, limit / 10)); i++) {
      for (const o of opts) c.search(row(m, queries[i]), { ...o, k, excludeIds: [idOf(queries[i])] });
    }
    // The contenders' order goes through every permutation, query by query: the first search of a query reads its
    // posting lists into the cache for the others (a fixed order made the default, always first, look 15-35 %
    // slower than the same code forced to one thread), and a split search leaves half of them in the other
    // core's cache for the next one (a mere rotation always put the default after the split): BENCHMARKS.md "Search threads".
    const orders = permutations(opts.length);
    for (let i = 0; i < limit; i++) {
      const q = queries[i];
      orders[i % orders.length].forEach((j) => {
        const o = opts[j];
        const t = now();
        const { hits, stats } = c.profile(row(m, q), { ...o, k, excludeIds: [idOf(q)] });
        res[j].lat.push(now() - t);
        res[j].postings += stats.postings;
        res[j].postingsTotal += stats.postingsTotal;
        res[j].threads = Math.max(res[j].threads, stats.threads);
        res[j].got.push(hits.map((h) => h.id));
      });
    }
    if (!truth || truth.length < limit) {
      // no scipy: the exact mode is the reference (for every query measured: the many-segment pass measures
      // fewer than the one-segment pass, which scored its extra queries against no truth, recall 0)
      truth = queries.slice(0, limit).reduce((/** @type {string[][]} */ acc, q) => {
        acc.push(c.search(row(m, q), { k, mode: 'exact', excludeIds: [idOf(q)] }).map((h) => h.id));
        return acc;
      }, []);
    }
    return res.map((r) => {
      let rec = 0;
      for (let i = 0; i < limit; i++) {
        const want = new Set(/** @type {string[][]} */ (truth)[i]);
        rec += r.got[i].filter((id) => want.has(id)).length / Math.max(1, want.size);
      }
      return { p50: pct(r.lat, 0.5), p99: pct(r.lat, 0.99), mean: mean(r.lat), recall: rec / limit, postings: r.postings / limit, postingsTotal: r.postingsTotal / limit, threads: r.threads };
    });
  };
  /**
   * @param {import('../../pipeline/store/index.js').SearchOptions} o
   * @param {number} [limit]
   */
  const measure = (o, limit = nq) => measureAll([o], limit)[0];

  /**
   * Queries per second with `conc` concurrent searchAsync loops over all queries.
   * @param {number} conc
   * @param {import('../../pipeline/store/index.js').SearchOptions} o
   * @param {number} [limit]
   */
  const throughput = async (conc, o, limit = nq) => {
    let next = 0;
    const t = now();
    await Promise.all(Array.from({ length: conc }, async () => {
      while (next < limit) {
        const q = queries[next++];
        await c.searchAsync(row(m, q), { ...o, k, excludeIds: [idOf(q)] });
      }
    }));
    return limit / ((now() - t) / 1000);
  };

  const manyLimit = Math.min(nq, 500);
  const manyFast = measure({}, manyLimit);
  const manyQps = { 1: await throughput(1, {}, manyLimit), 4: await throughput(4, {}, manyLimit) };
  log(`  search on ${many.segments} segments: p50 ${manyFast.p50.toFixed(2)} ms, p99 ${manyFast.p99.toFixed(2)} ms, recall@${k} ${manyFast.recall.toFixed(4)}, QPS 1: ${manyQps[1].toFixed(0)}, 4: ${manyQps[4].toFixed(0)}`);

  let t = now();
  await c.merge();
  const mergeMs = now() - t;
  const one = c.stats();
  const buildS = (upsertMs + flushMs + mergeMs) / 1000;
  log(`merge into ${one.segments} segment: ${(mergeMs / 1000).toFixed(1)} s; build total ${buildS.toFixed(1)} s`);
  log(`  size ${(one.bytes / 2 ** 20).toFixed(1)} MiB, ${one.bytes_per_nnz.total.toFixed(2)} bytes per non-zero (postings ${one.bytes_per_nnz.postings.toFixed(2)})`);

  // 4. one segment
  const load1 = loadAvg();
  const [fast, fast1, fast2] = measureAll([{}, { threads: 1 }, { threads: 2 }]);
  const qps = { 1: await throughput(1, {}), 2: await throughput(2, {}), 4: await throughput(4, {}) };
  const qps1t = { 1: await throughput(1, { threads: 1 }), 2: await throughput(2, { threads: 1 }) };
  const qps2t = { 1: await throughput(1, { threads: 2 }) };
  const load2 = loadAvg();
  log(`fast: p50 ${fast.p50.toFixed(2)} ms, p99 ${fast.p99.toFixed(2)} ms, recall@${k} ${fast.recall.toFixed(4)}, up to ${fast.threads} threads, ` +
    `postings read ${Math.round(fast.postings)} of ${Math.round(fast.postingsTotal)}; QPS 1: ${qps[1].toFixed(0)}, 2: ${qps[2].toFixed(0)}, 4: ${qps[4].toFixed(0)}`);
  log(`fast, one thread: p50 ${fast1.p50.toFixed(2)} ms, p99 ${fast1.p99.toFixed(2)} ms, recall@${k} ${fast1.recall.toFixed(4)}; QPS 1: ${qps1t[1].toFixed(0)}, 2: ${qps1t[2].toFixed(0)}`);
  log(`fast, two threads (forced): p50 ${fast2.p50.toFixed(2)} ms, p99 ${fast2.p99.toFixed(2)} ms, recall@${k} ${fast2.recall.toFixed(4)}, up to ${fast2.threads} threads; QPS 1: ${qps2t[1].toFixed(0)}`);
  log(`  load average ${load1.join(' ')} before, ${load2.join(' ')} after`);
  const exactLimit = Math.min(nq, 300);
  const exact = measure({ mode: 'exact' }, exactLimit);
  const exactQps = await throughput(2, { mode: 'exact' }, exactLimit);
  log(`exact: p50 ${exact.p50.toFixed(2)} ms, p99 ${exact.p99.toFixed(2)} ms, recall@${k} ${exact.recall.toFixed(4)} (first ${exactLimit} queries), QPS 2: ${exactQps.toFixed(0)}`);

  // 5. Seismic
  /** @type {any} */
  let seis = null;
  /** @type {import('./search.duel.js').SeismicServer | null} */
  let seismicServer = null;
  if (!opt['skip-seismic']) {
    log('seismic: build and search');
    const out = path.join(tmp, 'seismic.json');
    const limitS = Number(opt['seismic-timeout']);
    const t0 = now();
    seismicServer = await startSeismic(PYTHON, BASELINES, ['--data', file, '--queries', qfile, '--k', String(k), '--out', out, '--sweep', opt['seismic-sweep'] ?? ''], limitS);
    if (seismicServer) seis = JSON.parse(fs.readFileSync(out, 'utf8'));
    else log(`  seismic gave up after ${((now() - t0) / 1000).toFixed(0)} s (--seismic-timeout ${limitS}) or failed`);
  }
  /** @type {any} */
  let seisEq = null;
  if (seis) {
    /** @param {number[][]} lists */
    const recallOf = (lists) => {
      let rec = 0;
      lists.forEach((l, i) => {
        const want = new Set(/** @type {string[][]} */ (truth)[i]);
        rec += l.map(idOf).filter((id) => want.has(id)).length / Math.max(1, want.size);
      });
      return rec / lists.length;
    };
    if (truth) {
      seis.recall = recallOf(seis.ids);
      const settings = [{ query_cut: seis.settings.query_cut, heap_factor: seis.settings.heap_factor, p50_ms: seis.p50_ms, recall: seis.recall },
        ...(seis.sweep ?? []).map((/** @type {any} */ x) => ({ query_cut: x.query_cut, heap_factor: x.heap_factor, p50_ms: x.p50_ms, recall: recallOf(x.ids) }))];
      for (const x of settings) log(`  seismic query_cut ${x.query_cut}, heap_factor ${x.heap_factor}: p50 ${x.p50_ms.toFixed(2)} ms, recall@${k} ${x.recall.toFixed(4)}`);
      const reaching = settings.filter((x) => x.recall >= 0.99).sort((a, b) => a.p50_ms - b.p50_ms);
      seisEq = reaching[0] ?? [...settings].sort((a, b) => b.recall - a.recall || a.p50_ms - b.p50_ms)[0];
      log(`  seismic at recall@${k} >= 0.99: ${reaching.length ? '' : 'none reaches it; best '}query_cut ${seisEq.query_cut}, heap_factor ${seisEq.heap_factor}: p50 ${seisEq.p50_ms.toFixed(2)} ms, recall ${seisEq.recall.toFixed(4)} (store fast one thread: p50 ${fast1.p50.toFixed(2)} ms, recall ${fast1.recall.toFixed(4)})`);
    }
    log(`  build ${seis.build_s.toFixed(1)} s, ${seis.bytes ? (seis.bytes / 2 ** 20).toFixed(1) + ' MiB' : '?'}, p50 ${seis.p50_ms.toFixed(2)} ms, p99 ${seis.p99_ms.toFixed(2)} ms, recall@${k} ${seis.recall?.toFixed(4)}, QPS 1/2/4: ${Object.values(seis.qps).map((x) => Number(x).toFixed(0)).join('/')}`);
  }
  /** @type {Awaited<ReturnType<typeof duel>> | null} */
  let seisDuel = null;
  if (seismicServer && seisEq) {
    // the store (one thread, its defaults) and Seismic at its equal-recall setting, block by block
    seisDuel = await duel({
      seismic: seismicServer, setting: seisEq, queries: nq,
      timeStore: (i) => {
        const t = now();
        c.search(row(m, queries[i]), { threads: 1, k, excludeIds: [idOf(queries[i])] });
        return now() - t;
      },
    });
    log(`  interleaved (${seisDuel.passes} passes of ${nq} queries in blocks): store fast one thread p50 ${seisDuel.store_p50_ms.toFixed(2)} ms, ` +
      `seismic query_cut ${seisEq.query_cut}, heap_factor ${seisEq.heap_factor} p50 ${seisDuel.seismic_p50_ms.toFixed(2)} ms: store / seismic ${seisDuel.ratio_store_over_seismic.toFixed(2)} ` +
      `(per pass ${seisDuel.rounds.map((r) => r.ratio.toFixed(2)).join(', ')}; load ${loadAvg().join(' ')})`);
  }
  seismicServer?.close();
  store.close();

  // 6. writes by batch size
  /** @type {Record<string, number>} */
  const writes = {};
  const wdocs = Number(opt['write-docs']);
  if (wdocs > 0) {
    const wdir = path.join(tmp, 'writes');
    for (const size of [1, 10, 100, 1000]) {
      const ws = openStore(wdir, { autoMerge: true });
      const wc = ws.collection(`w${size}`, { width: m.width });
      // warm-up
      await wc.upsert([{ id: 'warm', vector: row(m, 0) }]);
      t = now();
      for (let i = 0; i < wdocs; i += size) {
        const batch = [];
        for (let j = i; j < Math.min(wdocs, i + size); j++) batch.push({ id: `w${j}`, vector: row(m, j % m.rows) });
        await wc.upsert(batch);
      }
      const ms = now() - t;
      writes[size] = ms;
      log(`writes: ${wdocs} documents in batches of ${size}: ${(ms / 1000).toFixed(2)} s (${Math.round(wdocs / (ms / 1000))} docs/s)`);
      await ws.close();
    }
  }
  // 7. OpenSearch
  /** @type {Record<string, any>[] | null} */
  let clusters = null;
  if (opt.backend === 'opensearch') {
    clusters = await benchOpenSearch({
      m, queries, truth: /** @type {string[][]} */ (truth), k, idOf, row, nodes: clusterSizes,
      url: opt['opensearch-url'] ? opt['opensearch-url'].split(',') : null,
      queryCount: Number(opt['os-queries']), writeDocs: wdocs, heapMb: Number(opt['os-heap-mb']), prefix: opt['os-prefix'],
      shards: intOpt('shards', 1), replicas: intOpt('replicas', 0), loadReplicas: intOpt('os-load-replicas', 0),
      bulk: /** @type {number} */ (intOpt('os-bulk', 1)), bulkConcurrency: /** @type {number} */ (intOpt('os-bulk-concurrency', 1)),
      exactQueries: /** @type {number} */ (intOpt('os-exact-queries', 0)), dir: opt['os-dir'] ? path.resolve(opt['os-dir']) : null,
      keep: opt['os-keep'], skipLoad: opt['os-skip-load'], kill: intOpt('os-kill', 0),
      killSignal: opt['os-kill-signal'] === 'TERM' ? 'SIGTERM' : 'SIGKILL', recover: opt['os-recover'],
    });
  }
  if (!opt.keep) fs.rmSync(tmp, { recursive: true, force: true });
  else log(`kept ${tmp}`);

  const result = {
    docs: m.rows,
    width: m.width,
    nnz_per_doc: round(nnz / m.rows, 1),
    queries: nq,
    p50_ms: round(fast.p50),
    p99_ms: round(fast.p99),
    threads: fast.threads,
    one_thread_p50_ms: round(fast1.p50),
    one_thread_p99_ms: round(fast1.p99),
    one_thread_recall_at_10: round(fast1.recall, 4),
    one_thread_qps_1: round(qps1t[1], 1),
    one_thread_qps_2: round(qps1t[2], 1),
    two_threads_p50_ms: round(fast2.p50),
    two_threads_p99_ms: round(fast2.p99),
    two_threads_qps_1: round(qps2t[1], 1),
    qps_1: round(qps[1], 1),
    qps_2: round(qps[2], 1),
    qps_4: round(qps[4], 1),
    recall_at_10: round(fast.recall, 4),
    bytes_per_nnz: round(one.bytes_per_nnz.total),
    postings_bytes_per_nnz: round(one.bytes_per_nnz.postings),
    index_bytes: one.bytes,
    build_s: round(buildS, 1),
    merge_s: round(mergeMs / 1000, 1),
    exact_p50_ms: round(exact.p50),
    exact_p99_ms: round(exact.p99),
    exact_recall_at_10: round(exact.recall, 4),
    many_segments: many.segments,
    many_p50_ms: round(manyFast.p50),
    many_p99_ms: round(manyFast.p99),
    many_qps_1: round(manyQps[1], 1),
    many_qps_4: round(manyQps[4], 1),
    many_recall_at_10: round(manyFast.recall, 4),
    scipy_p50_ms: scipy ? round(scipy.p50_ms) : null,
    scipy_p99_ms: scipy ? round(scipy.p99_ms) : null,
    seismic_p50_ms: seis ? round(seis.p50_ms) : null,
    seismic_p99_ms: seis ? round(seis.p99_ms) : null,
    seismic_qps_1: seis ? round(seis.qps['1'], 1) : null,
    seismic_qps_2: seis ? round(seis.qps['2'], 1) : null,
    seismic_recall_at_10: seis && seis.recall !== undefined ? round(seis.recall, 4) : null,
    seismic_eq_p50_ms: seisEq ? round(seisEq.p50_ms) : null,
    seismic_eq_recall_at_10: seisEq ? round(seisEq.recall, 4) : null,
    seismic_eq_settings: seisEq ? { query_cut: seisEq.query_cut, heap_factor: seisEq.heap_factor } : null,
    seismic_eq_interleaved: seisDuel ? { store_p50_ms: round(seisDuel.store_p50_ms), seismic_p50_ms: round(seisDuel.seismic_p50_ms), ratio_store_over_seismic: round(seisDuel.ratio_store_over_seismic), passes: seisDuel.passes } : null,
    seismic_build_s: seis ? round(seis.build_s, 1) : null,
    seismic_bytes: seis ? seis.bytes : null,
    write_ms_by_batch: writes,
    load_avg: { start: load0, search_before: load1, search_after: load2, end: loadAvg() },
  };
  if (clusters) {
    const native = { ...result, bytes_per_doc: Math.round(one.bytes / m.rows),
      write_docs_per_s_by_batch: Object.fromEntries(Object.entries(writes).map(([s, ms]) => [s, Math.round(wdocs / (ms / 1000))])) };
    log('backend | nodes | recall@10 | p50 ms | p99 ms | QPS 1/2/4 | writes docs/s by batch 1/10/100/1000 | bytes/doc');
    const line = (/** @type {Record<string, any>} */ r, /** @type {string} */ name, /** @type {string} */ nodes) => log(`${name} | ${nodes} | ${r.recall_at_10} | ` +
      `${r.p50_ms} | ${r.p99_ms} | ${r.qps_1}/${r.qps_2}/${r.qps_4} | ${[1, 10, 100, 1000].map((b) => r.write_docs_per_s_by_batch[b] ?? '-').join('/')} | ${r.bytes_per_doc}`);
    line(native, 'native', '-');
    for (const c of clusters) line(c, 'opensearch', String(c.nodes));
    process.stdout.write(`${JSON.stringify({ backend: 'opensearch', docs: m.rows, width: m.width, nnz_per_doc: result.nnz_per_doc, ...clusters[0], clusters, native })}\n`);
    return;
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});
