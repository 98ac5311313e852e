#!/usr/bin/env node
// How cost grows with the corpus: train, index and search on synthetic corpora of growing size.
//
//   npm run bench:scale -- [--docs 10000,100000] [--million] [--queries 200] [--out FILE.jsonl] [--svg FILE.svg]
//   npm run bench:scale -- --from FILE.jsonl [--svg FILE.svg]       summarise saved sizes again (no run)
//
// Corpus: documents recombined from the sentences of the livedoor dev split within one category
// (tests/bench/synthetic-corpus.js), as long as real articles (sentence counts drawn from the split's own).
// Per size, in a fresh work folder: `scdv train` from scratch with the default config (tokenise on 2 workers,
// word2vec, idf, gmm, topics, then the model analysis), then every document embedded with the new model and
// upserted into a native store collection (flushed, merged into one segment), then --queries stored documents
// searched with their own vectors (top 10, themselves excluded; p50 after a warm-up).
// Per stage: wall seconds, CPU seconds and peak resident memory of the processes doing it (this process for
// embed, index and search; the tokenise workers; each Python stage's process), sampled from /proc every 100 ms.
// Then, per stage, growth exponents fitted by least squares on log-log (wall, CPU, memory), a projection of the
// CPU time to the production report's scale with the wall time on 2 and on 96 cores, and a log-log chart of
// the CPU seconds (--svg). CPU time is the figure to read on a shared machine: wall time follows the load.
// Each size's result is appended to --out as soon as it is measured, so a long run that is cut short keeps
// what it finished (--from summarises it). Progress and the report go to stderr; the last stdout line is JSON.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SHARED_DIR, usePaths } from '../../pipeline/paths.js';
import { sentenceCounts, sentencePools, synthesize } from './synthetic-corpus.js';
import { extrapolate, fitGrowth, StageSampler, scaleChartSvg } from './scale.lib.js';

/** @param {string} m */
const log = (m) => process.stderr.write(`[scale.bench] ${m}\n`);

const { values: opt } = parseArgs({
  options: {
    docs: { type: 'string', default: '10000,100000' },
    million: { type: 'boolean', default: false },
    queries: { type: 'string', default: '200' },
    corpus: { type: 'string' },
    out: { type: 'string' },
    from: { type: 'string' },
    svg: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});

/** Stages in pipeline order; the wall-time field and the memory key of each. */
const STAGES = ['tokenize', 'word2vec', 'idf', 'gmm', 'topics', 'lexicon', 'analysis', 'embed', 'index', 'search_p50'];

const round = (/** @type {number} */ x, d = 3) => Math.round(x * 10 ** d) / 10 ** d;
const loadAvg = () => os.loadavg().map((x) => round(x, 2));

/**
 * One corpus size, end to end.
 * @param {number} n
 * @param {string} corpus the source split
 * @param {number} queries
 */
async function runSize(n, corpus, queries) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `scdv-bench-scale-${n}-`));
  usePaths({ dataDir: path.join(tmp, 'data'), modelsDir: path.join(tmp, 'models'), storeDir: path.join(tmp, 'store') });
  const { loadConfig } = await import('../../pipeline/config.js');
  const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
  const { runTrain } = await import('../../pipeline/stages/train.js');
  const { createEmbedder } = await import('../../pipeline/embed/index.js');
  const { openStore } = await import('../../pipeline/store/index.js');
  const config = loadConfig();
  /** @type {Record<string, number[]>} */
  const load = { start: loadAvg() };
  const pools = sentencePools(corpus);
  const lengths = sentenceCounts(corpus);
  const file = path.join(tmp, 'corpus.jsonl');
  const ws = fs.createWriteStream(file);
  let chars = 0;
  for (const d of synthesize(pools, n, 1, lengths)) {
    chars += d.title.length + d.body.length;
    if (!ws.write(`${JSON.stringify(d)}\n`)) await new Promise((r) => ws.once('drain', () => r(undefined)));
  }
  await new Promise((r) => ws.end(() => r(undefined)));
  log(`${n} documents, ${(chars / n).toFixed(0)} characters each on average`);

  const sampler = new StageSampler(100);
  /** @type {Record<string, number>} */
  const seconds = {};
  const redis = await startPrivateRedis();
  let manifest;
  try {
    sampler.mark('tokenize'); // the train run's own process and tokenise workers until the Python stages start
    const t0 = performance.now();
    // The lexicon's tokenise run announces itself ("lexicon: N lines in M shards"): its workers' CPU is the lexicon's.
    const trainLog = (/** @type {string} */ m) => { if (/^lexicon: /.test(m)) sampler.mark('lexicon'); };
    ({ manifest } = await runTrain({ corpus: file, name: 'scale', config, redisUrl: redis.url, force: true, quiet: true, log: trainLog }));
    const total = (performance.now() - t0) / 1000;
    const timed = ['tokenize', 'word2vec', 'idf', 'gmm', 'topics', 'lexicon'];
    for (const s of timed) seconds[s] = manifest.timings[`${s}_s`] ?? 0;
    // The rest of the run: writing the training corpus, queueing, the model analysis and the report.
    seconds.analysis = total - timed.reduce((a, s) => a + seconds[s], 0);
    log(`trained: ${Object.entries(seconds).map(([k, v]) => `${k} ${v.toFixed(1)} s`).join(', ')}; vocabulary ${manifest.counts.vocabulary}`);
  } finally {
    await redis.stop();
  }
  load.trained = loadAvg();

  sampler.mark('embed');
  const embedder = await createEmbedder('scale', config, { inMemory: true });
  const store = openStore(path.join(tmp, 'store'), { autoFlush: false, autoMerge: false, maintenanceMs: 0 });
  const c = store.collection('scale', { width: embedder.width });
  let embedMs = 0;
  let upsertMs = 0;
  let nnz = 0;
  /** @type {{id: string, category: string, site: string, title: string, body: string, published_at: string}[]} */
  let batch = [];
  const flush = async () => {
    let t = performance.now();
    const vecs = await embedder.embedDocuments(batch);
    embedMs += performance.now() - t;
    const docs = [];
    for (let i = 0; i < batch.length; i++) {
      if (vecs[i].indices.length === 0) continue; // nothing to search for: left out, as `scdv index` does
      nnz += vecs[i].indices.length;
      docs.push({ id: batch[i].id, vector: vecs[i], meta: { category: batch[i].category, site: batch[i].site, published_at: batch[i].published_at } });
    }
    sampler.mark('index');
    t = performance.now();
    await c.upsert(docs);
    upsertMs += performance.now() - t;
    sampler.mark('embed');
    batch = [];
  };
  for (const d of synthesize(pools, n, 1, lengths)) {
    batch.push(d);
    if (batch.length === 1000) await flush();
  }
  if (batch.length) await flush();
  sampler.mark('index');
  let t = performance.now();
  await c.flush();
  await c.merge();
  const indexMs = upsertMs + (performance.now() - t);
  seconds.embed = embedMs / 1000;
  seconds.index = indexMs / 1000;
  const stats = c.stats();
  log(`embedded ${c.count()} documents in ${seconds.embed.toFixed(1)} s (${(nnz / c.count()).toFixed(0)} non-zeros each), indexed in ${seconds.index.toFixed(1)} s`);
  load.indexed = loadAvg();

  sampler.mark('search_p50');
  const step = Math.max(1, Math.floor(n / queries));
  const ids = Array.from({ length: Math.min(queries, n) }, (_, i) => `syn-${i * step}`).filter((id) => c.exists(id));
  const vectors = ids.map((id) => /** @type {NonNullable<ReturnType<typeof c.get>>} */ (c.get(id)).vector);
  for (let i = 0; i < Math.min(ids.length, 20); i++) c.search(vectors[i], { k: 10, excludeIds: [ids[i]] }); // warm-up
  const lat = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < ids.length; i++) {
    t = performance.now();
    c.search(vectors[i], { k: 10, excludeIds: [ids[i]] });
    lat.push(performance.now() - t);
  }
  lat.sort((a, b) => a - b);
  seconds.search_p50 = lat[Math.floor(lat.length / 2)] / 1000;
  const searchCpu = process.cpuUsage(cpu0);
  const searchCpuPerQuery = (searchCpu.user + searchCpu.system) / 1e6 / Math.max(1, ids.length);
  const { peaks, cpu } = sampler.stop();
  const indexed = c.count();
  await store.close();
  load.end = loadAvg();
  if (!opt.keep) fs.rmSync(tmp, { recursive: true, force: true });
  return {
    docs: n,
    indexed,
    segments: stats.segments,
    chars_per_doc: round(chars / n, 0),
    tokens: manifest.tokens.tokens,
    vocabulary: manifest.counts.vocabulary,
    nnz_per_doc: round(nnz / Math.max(1, indexed), 1),
    seconds: Object.fromEntries(STAGES.map((s) => [s, round(seconds[s], s === 'search_p50' ? 6 : 3)])),
    // search_p50: the mean CPU seconds of one query (of the timed ones)
    cpu_seconds: Object.fromEntries(STAGES.map((st) => [st, st === 'search_p50' ? round(searchCpuPerQuery, 6) : round(cpu[st] ?? 0, 2)])),
    peak_mib: Object.fromEntries(STAGES.map((s) => [s, peaks[s] ? round(peaks[s] / 2 ** 20, 0) : null])),
    load_avg: load,
  };
}

/** The production report's corpus (../shared/background/README.md): 1 B tokens to train on, 2.6 M service
 * articles to embed and serve, ~640 k words left after the frequency cut. */
const PRODUCTION = { tokens: 1e9, articles: 2.6e6, vocabulary: 640e3 };

/** Which stages spread over cores: tokenise (worker processes), word2vec (gensim threads), the GMM (BLAS
 * threads), embedding (`scdv index` workers); idf, the word-topic vectors, the analysis, the segment build and
 * merge and one query run on one core (a query at 1M splits over two idle cores at most). */
/** @type {Record<string, boolean>} */
const PARALLEL = { tokenize: true, word2vec: true, idf: false, gmm: true, topics: false, lexicon: true, analysis: false, embed: true, index: false, search_p50: false };

/**
 * Each stage's CPU time at production scale, extrapolated along what drives it: the training corpus's tokens
 * for tokenise, word2vec, idf and the analysis (synthetic documents have a constant length, so tokens and
 * documents grow alike), the vocabulary for the GMM and the word-topic vectors (their cost is per word; the
 * synthetic corpus's vocabulary saturates, as sentences recombined from one split bring no new words), and
 * the indexed articles for embedding, indexing and search.
 * @param {Awaited<ReturnType<typeof runSize>>[]} sizes
 */
function project(sizes) {
  /** @type {Record<string, 'tokens'|'vocabulary'|'articles'>} */
  const driver = { tokenize: 'tokens', word2vec: 'tokens', idf: 'tokens', lexicon: 'tokens', analysis: 'tokens', gmm: 'vocabulary', topics: 'vocabulary', embed: 'articles', index: 'articles', search_p50: 'articles' };
  /** @type {Record<string, number | null>} */
  const cpu = {};
  /** @type {Record<string, string>} */
  const basis = {};
  /** @type {Record<string, number | null>} */
  const on2 = {};
  /** @type {Record<string, number | null>} */
  const on96 = {};
  for (const s of STAGES) {
    const x = (/** @type {typeof sizes[number]} */ r) => (driver[s] === 'tokens' ? r.tokens : driver[s] === 'vocabulary' ? r.vocabulary : r.docs);
    const f = fitGrowth(sizes.map((r) => ({ n: x(r), y: r.cpu_seconds?.[s] ?? 0 })));
    const c = f ? extrapolate(f, PRODUCTION[driver[s]]) : null;
    const d = s === 'search_p50' ? 5 : 0;
    cpu[s] = c == null ? null : round(c, d);
    basis[s] = f ? `${driver[s]}^${f.exponent.toFixed(2)}` : 'no fit';
    // Wall time if the stage's parallel part scaled perfectly over the cores (a lower bound): the rest is serial.
    on2[s] = c == null ? null : round(PARALLEL[s] ? c / 2 : c, d);
    on96[s] = c == null ? null : round(PARALLEL[s] ? c / 96 : c, d);
  }
  return { ...PRODUCTION, cpu_seconds: cpu, basis, wall_s_on_2_cores: on2, wall_s_on_96_cores: on96 };
}

/**
 * Growth exponents per stage (time and memory), the chart, the report.
 * @param {Awaited<ReturnType<typeof runSize>>[]} sizes
 */
function summarise(sizes) {
  const fit = (/** @type {'seconds'|'cpu_seconds'|'peak_mib'} */ what) => Object.fromEntries(STAGES.map((s) => {
    const f = fitGrowth(sizes.map((r) => ({ n: r.docs, y: /** @type {number} */ (r[what]?.[s] ?? 0) })));
    return [s, f ? round(f.exponent, 2) : null];
  }));
  const timeExp = fit('seconds');
  const cpuExp = fit('cpu_seconds');
  const memExp = fit('peak_mib');
  process.stderr.write(`\nstage        ${sizes.map((r) => `${String(r.docs).padStart(9)} docs: wall s / CPU s / MiB`).join('  ')}   exponent: wall / CPU / memory\n`);
  for (const s of STAGES) {
    const cells = sizes.map((r) => `${String(r.seconds[s]).padStart(10)} / ${String(r.cpu_seconds?.[s] ?? '-').padStart(8)} / ${String(r.peak_mib[s] ?? '-').padStart(5)}`).join('  ');
    process.stderr.write(`${s.padEnd(12)} ${cells}   ${timeExp[s] ?? '-'} / ${cpuExp[s] ?? '-'} / ${memExp[s] ?? '-'}\n`);
  }
  const production = project(sizes);
  process.stderr.write(`\nat the production report's scale (${PRODUCTION.tokens.toExponential(0)} tokens, ${PRODUCTION.articles.toLocaleString('en-US')} articles indexed, vocabulary ${PRODUCTION.vocabulary.toLocaleString('en-US')}), from the CPU-time fits:\n`);
  process.stderr.write(`stage        CPU s         wall s on 2 cores  on 96 cores  (fit)\n`);
  for (const s of STAGES) {
    const cell = (/** @type {number | null} */ v) => (v == null ? '-' : String(v)).padStart(12);
    process.stderr.write(`${s.padEnd(12)} ${cell(production.cpu_seconds[s])} ${cell(production.wall_s_on_2_cores[s])} ${cell(production.wall_s_on_96_cores[s])}  (${production.basis[s]})\n`);
  }
  if (opt.svg) {
    const series = STAGES.map((s) => ({ name: s === 'search_p50' ? 'one search' : s, points: sizes.map((r) => ({ n: r.docs, y: r.cpu_seconds?.[s] ?? 0 })) }));
    fs.writeFileSync(opt.svg, scaleChartSvg(series, { title: 'CPU seconds per stage against corpus size (log-log)', yLabel: 'CPU seconds' }) + '\n');
    log(`chart: ${opt.svg}`);
  }
  return { sizes: sizes.map((r) => r.docs), time_exponent: timeExp, cpu_exponent: cpuExp, memory_exponent: memExp, production, results: sizes };
}

const command = `npm run bench:scale -- ${process.argv.slice(2).join(' ')}`.trim();
/** @type {Awaited<ReturnType<typeof runSize>>[]} */
let sizes = [];
if (opt.from) {
  sizes = fs.readFileSync(opt.from, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
} else {
  const corpus = opt.corpus ?? path.join(SHARED_DIR, 'corpora', 'livedoor', 'dev.jsonl');
  if (!fs.existsSync(corpus)) {
    console.error(`no corpus at ${corpus}: pass --corpus FILE (JSON Lines with category, title, body)`);
    process.exit(2);
  }
  const list = opt.docs.split(',').map(Number);
  if (opt.million) list.push(1_000_000);
  if (list.some((n) => !Number.isInteger(n) || n < 100)) throw new Error(`--docs takes sizes of at least 100 documents, got ${opt.docs}`);
  const out = opt.out ?? path.join(os.tmpdir(), `scdv-bench-scale-${Date.now()}.jsonl`);
  log(`${os.cpus().length} cores, load ${loadAvg().join(' ')}; sizes ${list.join(', ')}; results appended to ${out}`);
  for (const n of list) {
    const r = await runSize(n, corpus, Number(opt.queries));
    fs.appendFileSync(out, JSON.stringify(r) + '\n');
    sizes.push(r);
  }
}
const summary = summarise(sizes);
console.log(JSON.stringify({ command, cores: os.cpus().length, ...summary }));
