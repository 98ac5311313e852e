#!/usr/bin/env node
// `npm run bench:search`: the store benchmark on real SCDV vectors — synthetic documents recombined from the
// livedoor dev split, embedded with the model trained on it (bench:train makes it when missing).
//   npm run bench:search [-- --docs 1000000] [-- any option of tests/bench/search.bench.js]
//   npm run bench:search -- --data X.csr [...]: vectors made before (tests/bench/scdv-vectors.js); nothing is embedded
//   npm run bench:search -- --keep-fraction 0.01,0.02,0.04,0.1 [--docs 100000] [...]
//     the speed side of the sparsity choice (embed.keepFraction): the same documents at each sparsity, one
//     search.bench.js run per sparsity, one after the other, then a table and a JSON line of all of them.
//     Pure SCDV vectors (embed.hybrid.alpha 1) are embedded once, at the largest fraction, and the others keep
//     each vector's largest entries (what the embedder does with the smaller fraction: search.data.js
//     truncateRows); hybrid vectors are embedded at every fraction (their lexical block is never cut).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { modelsDir, REPO_ROOT } from '../../pipeline/paths.js';
import { hashOf, loadConfig } from '../../pipeline/config.js';
import { makeScdvVectors } from './scdv-vectors.js';
import { readCsr, truncateRows, writeCsr } from './search.data.js';

const args = process.argv.slice(2);
/** @param {string} name */
const take = (name) => {
  const at = args.indexOf(name);
  return at >= 0 ? args.splice(at, 2)[1] : undefined;
};
const docs = Number(take('--docs') ?? 100_000);
const fractionsArg = take('--keep-fraction');
const dataArg = take('--data');
const model = 'bench-livedoor-dev';
const log = (/** @type {string} */ m) => process.stderr.write(`${m}\n`);
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

if (dataArg !== undefined) {
  // The vectors are given: no model and no embedding needed (the file's own width and documents are used).
  if (fractionsArg) {
    log('--data and --keep-fraction do not go together: --keep-fraction embeds the documents at each fraction');
    process.exit(2);
  }
  if (!fs.existsSync(dataArg)) {
    log(`--data ${dataArg}: no such file`);
    process.exit(2);
  }
  bench(dataArg, args);
  process.exit(0);
}

if (!fs.existsSync(path.join(modelsDir(), model, 'manifest.json'))) {
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'tests', 'bench', 'train.bench.js'), '--name', model], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const embedConfig = loadConfig().embed;
// Cached vector files are keyed by what shapes them: the model (its creation time) and the embed settings.
const vectorsKey = hashOf({
  created: JSON.parse(fs.readFileSync(path.join(modelsDir(), model, 'manifest.json'), 'utf8')).created_at, embed: embedConfig,
}).slice(0, 10);
/** Hybrid vectors carry a lexical block: keeping a vector's largest entries is not what a smaller keepFraction does. */
const truncatable = embedConfig.hybrid.alpha === 1;

/**
 * The vectors at a keep fraction (undefined: the configured default, the file every plain run uses).
 * @param {number} [keepFraction]
 */
const fileFor = (keepFraction) => path.join(os.tmpdir(), `scdv-${model}-${docs}-${vectorsKey}${keepFraction === undefined ? '' : `-k${keepFraction}`}.csr`);

/** @param {string} file @param {number} [keepFraction] */
async function embed(file, keepFraction) {
  log(`embedding ${docs} synthetic documents with ${model}${keepFraction ? ` (keepFraction ${keepFraction})` : ''} into ${file}`);
  const v = await makeScdvVectors({ docs, model, out: file, keepFraction });
  log(`${v.docs} vectors, ${(v.nnz / v.docs).toFixed(0)} non-zeros each, in ${v.seconds.toFixed(0)} s`);
}

/**
 * One search.bench.js run; returns its JSON line.
 * @param {string} file
 * @param {string[]} extra
 */
function bench(file, extra) {
  const r = spawnSync(process.execPath, ['--max-old-space-size=12000', path.join(REPO_ROOT, 'tests', 'bench', 'search.bench.js'), '--data', file, ...extra],
    { stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 26 });
  const out = r.stdout.toString();
  process.stdout.write(out);
  if (r.status !== 0) process.exit(r.status ?? 1);
  return JSON.parse(out.trim().split('\n').pop() ?? '{}');
}

if (!fractionsArg) {
  const file = fileFor();
  if (!fs.existsSync(file)) await embed(file);
  bench(file, args);
  process.exit(0);
}

const fractions = fractionsArg.split(',').map(Number).sort((a, b) => a - b);
if (!fractions.length || fractions.some((f) => !(f > 0 && f <= 1))) {
  log(`--keep-fraction takes fractions in (0, 1], comma-separated, got ${fractionsArg}`);
  process.exit(2);
}
const top = fractions[fractions.length - 1];
const topFile = fileFor(top);
if (!fs.existsSync(topFile)) await embed(topFile, top);
const width = readWidth(topFile);
/** @type {ReturnType<typeof readCsr> | null} */
let base = null;
const rows = [];
for (const f of fractions) {
  const file = fileFor(f);
  if (!fs.existsSync(file) && !truncatable) await embed(file, f);
  if (!fs.existsSync(file)) {
    base ??= readCsr(topFile);
    const keep = Math.max(1, Math.ceil(f * width));
    log(`keepFraction ${f}: the ${keep} largest entries of each ${top} vector -> ${file}`);
    writeCsr(file, truncateRows(base, keep));
    if (fs.existsSync(`${topFile}.categories`)) fs.copyFileSync(`${topFile}.categories`, `${file}.categories`);
  }
  const before = load();
  log(`\n=== keepFraction ${f} (load average ${before}) ===`);
  const r = bench(file, args);
  rows.push({ keep_fraction: f, load_before: before, load_after: load(), ...r });
}
base = null;
const fmt = (/** @type {any} */ x, d = 2) => (x === null || x === undefined ? '-' : Number(x).toFixed(d));
log('\nkeepFraction | nnz/doc | p50 ms | p99 ms | one thread: p50, p99 ms | QPS 1/2/4 (one thread: 1/2) | recall@10 | bytes/nnz (postings) | index MiB | build s | load avg');
for (const r of rows) {
  log(`${r.keep_fraction} | ${fmt(r.nnz_per_doc, 0)} | ${fmt(r.p50_ms)} | ${fmt(r.p99_ms)} | ${fmt(r.one_thread_p50_ms)}, ${fmt(r.one_thread_p99_ms)} | ` +
    `${fmt(r.qps_1, 0)}/${fmt(r.qps_2, 0)}/${fmt(r.qps_4, 0)} (${fmt(r.one_thread_qps_1, 0)}/${fmt(r.one_thread_qps_2, 0)}) | ${fmt(r.recall_at_10, 4)} | ` +
    `${fmt(r.bytes_per_nnz)} (${fmt(r.postings_bytes_per_nnz)}) | ${fmt(r.index_bytes / 2 ** 20, 0)} | ${fmt(r.build_s, 1)} | ${r.load_before} -> ${r.load_after}`);
}
process.stdout.write(`${JSON.stringify({ docs, keep_fractions: rows.map((r) => ({
  keep_fraction: r.keep_fraction, nnz_per_doc: r.nnz_per_doc, p50_ms: r.p50_ms, p99_ms: r.p99_ms, qps_1: r.qps_1, qps_2: r.qps_2, qps_4: r.qps_4,
  one_thread_p50_ms: r.one_thread_p50_ms, one_thread_p99_ms: r.one_thread_p99_ms, one_thread_qps_1: r.one_thread_qps_1, one_thread_qps_2: r.one_thread_qps_2,
  recall_at_10: r.recall_at_10, bytes_per_nnz: r.bytes_per_nnz, postings_bytes_per_nnz: r.postings_bytes_per_nnz, index_bytes: r.index_bytes,
  build_s: r.build_s, exact_p50_ms: r.exact_p50_ms, scipy_p50_ms: r.scipy_p50_ms, load: [r.load_before, r.load_after],
})) })}\n`);

/**
 * The width of a vector file (its header), for keepFraction -> entries kept.
 * @param {string} file
 */
function readWidth(file) {
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(16);
    fs.readSync(fd, head, 0, 16, 0);
    return head.readUInt32LE(12);
  } finally {
    fs.closeSync(fd);
  }
}
