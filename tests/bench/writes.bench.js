#!/usr/bin/env node
// Writes under read load, A/B: the scenario of `bench:api`'s last part (live related-by-id reads at
// --read-connections, alone and with PUTs of article-sized texts at --write-rate per second beside them), narrowed
// to it, so that two servers — this checkout and another (--old <checkout>), or this checkout with two sets of
// `server` config overrides (--a-server / --b-server JSON) — take turns for --repeats interleaved rounds (medians).
//
// node tests/bench/writes.bench.js [--data X.csr] [--docs 100000] [--old DIR] [--a-server JSON] [--b-server JSON]
//   [--a-env JSON] [--b-env JSON] [--read-connections 10] [--write-rate 20] [--write-connections 2] [--duration 8]
//   [--repeats 3] [--api-collection] [--warm 1600]
// --api-collection: read bench:api's collection (.scdv/bench/api, made by `npm run bench:api`) instead of a .csr's.
// PUTs are sent on --write-connections connections at --write-rate in all: with 2 (bench:api's), slow writes also
// lower the rate actually reached (each connection waits for its answer); more connections keep the rate.
// (--a-env / --b-env: environment variables of that server, e.g. '{"UV_THREADPOOL_SIZE":"8"}')
// --warm: articles each server embeds first (related for their texts), so that its tokenizer is as after a while of
// serving, as in bench:api's writes phase (which follows its text phase).
//
// The read collection `articles` is built once from a .csr file of real SCDV vectors of the bench model
// (tests/bench/scdv-vectors.js; default: the newest /tmp/scdv-bench-livedoor-dev-<docs>-*.csr) into
// .scdv/bench/writes/ and reused. The PUTs rewrite w-0 … w-499 of the collection `writes`. Variant a is --old (or
// this checkout), b this checkout. <DIR> must hold `pipeline/`, `server/` and built addons (node_modules is looked up
// from there: symlink this checkout's).
// Last line: {"a": {read_p99_ms, read_p99_with_writes_ms, read_p99_fine_ms, read_p99_with_writes_fine_ms,
// read_p99_increase_pct (median of the rounds' increases, from latencies finer than autocannon's whole ms),
// read_p99_increase_interleaved_pct (the same from the phase with writes switched on and off every 2 s), write_p50_ms,
// write_p99_ms, …}, "b": {…}, "load": […]}
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { BENCH_KEY, writesUnderLoad } from './writes-under-load.js';
import { forkBenchServer, isBenchServerChild, serveBenchChild, stopBenchServer } from './bench-server.js';

const HERE = fileURLToPath(import.meta.url);
const REPO = path.resolve(path.dirname(HERE), '..', '..');
const BENCH_DIR = path.join(REPO, '.scdv', 'bench', 'writes');
// The server children inherit the folders from this process (which --api-collection may change).
if (!isBenchServerChild()) {
  process.env.SCDV_DATA_DIR = path.join(BENCH_DIR, 'data');
  process.env.SCDV_STORE_DIR = path.join(BENCH_DIR, 'store');
}
process.env.SCDV_MODELS_DIR ??= path.join(REPO, 'models'); // --old's server reads this checkout's models too

const MODEL = 'bench-livedoor-dev';

if (isBenchServerChild()) {
  // The server of this checkout or of --old's (its pipeline/ and server/, this checkout's models).
  await serveBenchChild({
    repo: REPO, model: MODEL,
    configOf: async (spec, loadConfig, imp) => {
      const { keyDigest } = await imp('pipeline/api-keys.js');
      return loadConfig({ overrides: { server: { logLevel: 'warn', indexWorkers: 0, apiKeyHashes: [keyDigest(BENCH_KEY)], ...spec.server } } });
    },
  });
} else {
  await main();
}

async function main() {
  const { values } = parseArgs({
    options: {
      data: { type: 'string' }, docs: { type: 'string', default: '100000' }, old: { type: 'string' },
      'a-server': { type: 'string', default: '{}' }, 'b-server': { type: 'string', default: '{}' },
      'a-env': { type: 'string', default: '{}' }, 'b-env': { type: 'string', default: '{}' },
      'read-connections': { type: 'string', default: '10' }, 'write-rate': { type: 'string', default: '20' },
      'write-connections': { type: 'string', default: '2' },
      duration: { type: 'string', default: '8' }, repeats: { type: 'string', default: '3' },
      'api-collection': { type: 'boolean', default: false }, warm: { type: 'string', default: '1600' },
    },
  });
  const nDocs = Number(values.docs);
  const duration = Number(values.duration);
  const readConns = Number(values['read-connections']);
  const writeRate = Number(values['write-rate']);
  const writeConns = Number(values['write-connections']);
  const { default: autocannon } = await import('autocannon');
  const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
  const { scatteredIds, sentencePools, synthesize } = await import('./synthetic-corpus.js');
  const { ensureBenchModel } = await import('./bench-model.js');
  const corpus = ensureBenchModel(MODEL);

  /** @type {string[]} */
  let ids;
  if (values['api-collection']) {
    // bench:api's collections (made by `npm run bench:api`), read where the servers will read them: no .csr needed.
    process.env.SCDV_DATA_DIR = path.join(REPO, '.scdv', 'bench', 'api', 'data');
    process.env.SCDV_STORE_DIR = path.join(REPO, '.scdv', 'bench', 'api', 'store');
    if (!fs.existsSync(process.env.SCDV_STORE_DIR)) throw new Error('--api-collection: no .scdv/bench/api/store: run `npm run bench:api` once first');
    ids = scatteredIds(nDocs);
  } else {
    ids = await ensureArticles(values.data ?? newestCsr(nDocs), nDocs);
  }

  const pools = sentencePools(corpus);
  const parts = [...synthesize(pools, 8 * 500, 3)];
  const rewrites = Array.from({ length: 500 }, (_, i) => {
    const d = parts[8 * i];
    return JSON.stringify({
      title: d.title, body: parts.slice(8 * i, 8 * i + 8).map((p) => p.body).join(''), category: d.category, site: d.site,
      published_at: d.published_at, url: `https://example.com/w-${i}`,
    });
  });

  const redis = await startPrivateRedis();
  /** @type {{name: string, root: string, server: Record<string, unknown>, env: Record<string, string>}[]} */
  const variants = [
    { name: 'a', root: values.old ? path.resolve(values.old) : REPO, server: JSON.parse(String(values['a-server'])), env: JSON.parse(String(values['a-env'])) },
    { name: 'b', root: REPO, server: JSON.parse(String(values['b-server'])), env: JSON.parse(String(values['b-env'])) },
  ];
  const procs = variants.map((v) => forkBenchServer(HERE, { redisUrl: redis.url, server: v.server }, { root: v.root, env: v.env, name: v.name }));
  /** @type {Record<string, any[]>} */
  const rounds = { a: [], b: [] };
  const loads = [];
  try {
    const urls = await Promise.all(procs.map((p) => p.listening));
    // Each server first embeds --warm of the articles as related-for-text queries, as bench:api's text phase does
    // before its writes: the tokenizer then works as in a server that has run a while (MeCab's index in huge pages
    // once ~10 MB of text were parsed).
    for (const url of urls) {
      let i = 0;
      await autocannon({
        url, connections: 2, amount: Number(values.warm),
        requests: [{ setupRequest: (/** @type {any} */ req) => { const d = JSON.parse(rewrites[i++ % rewrites.length]); return { ...req, method: 'POST', path: '/v1/collections/articles/related', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: d.title, text: d.body, k: 10 }) }; } }],
      });
    }
    let offset = 0;
    for (let round = 0; round < Number(values.repeats); round++) {
      const order = round % 2 ? [1, 0] : [0, 1];
      for (const i of order) {
        loads.push(os.loadavg()[0]);
        const m = await writesUnderLoad({ url: urls[i], ids, offset, rewrites, readConns, writeRate, writeConns, duration, autocannon });
        offset += m.readsDone;
        rounds[variants[i].name].push(m);
        process.stderr.write(`${variants[i].name} round ${round + 1} (load ${os.loadavg()[0].toFixed(1)}): reads alone p99 ${m.readAlone.p99Fine} ms (${m.readAlone.rps.toFixed(0)}/s); with writes p99 ${m.readWithWrites.p99Fine} ms (${m.readWithWrites.rps.toFixed(0)}/s, +${m.readP99IncreasePct} %); writes p50 ${m.writes.p50} p90 ${m.writes.p90} p99 ${m.writes.p99} max ${m.writes.max} ms (${m.writes.total}), errors ${m.writes.errors + m.readWithWrites.errors}; interleaved: reads p99 ${m.interleaved.p99Alone} -> ${m.interleaved.p99With} ms (+${m.interleaved.increasePct} %, ${m.interleaved.readsAlone} / ${m.interleaved.readsWith} reads)\n`);
      }
    }
  } finally {
    for (const { proc } of procs) {
      await stopBenchServer(proc);
    }
    await redis.stop();
  }
  const median = (/** @type {number[]} */ xs) => [...xs].sort((x, y) => x - y)[(xs.length - 1) >> 1];
  /** @type {Record<string, any>} */
  const out = {};
  for (const v of variants) {
    const ms = rounds[v.name];
    out[v.name] = {
      root: v.root, server: v.server, env: v.env,
      read_p99_ms: median(ms.map((m) => m.readAlone.p99)), read_p99_with_writes_ms: median(ms.map((m) => m.readWithWrites.p99)),
      read_p99_fine_ms: median(ms.map((m) => m.readAlone.p99Fine)), read_p99_with_writes_fine_ms: median(ms.map((m) => m.readWithWrites.p99Fine)),
      read_p99_increase_pct: median(ms.map((m) => m.readP99IncreasePct)), read_p99_increase_rounds: ms.map((m) => m.readP99IncreasePct),
      read_p99_increase_interleaved_pct: median(ms.map((m) => m.interleaved.increasePct)), read_p99_increase_interleaved_rounds: ms.map((m) => m.interleaved.increasePct),
      read_rps: Math.round(median(ms.map((m) => m.readAlone.rps))), read_rps_with_writes: Math.round(median(ms.map((m) => m.readWithWrites.rps))),
      write_p50_ms: median(ms.map((m) => m.writes.p50)), write_p99_ms: median(ms.map((m) => m.writes.p99)),
      writes_per_s: Number(median(ms.map((m) => m.writes.rps)).toFixed(1)),
      write_p99_rounds: ms.map((m) => m.writes.p99), errors: ms.reduce((s, m) => s + m.writes.errors + m.readWithWrites.errors + m.interleaved.errors, 0),
    };
  }
  out.load = loads.map((l) => Number(l.toFixed(1)));
  console.log(JSON.stringify(out));
}

/** @param {number} nDocs */
function newestCsr(nDocs) {
  const re = new RegExp(`^scdv-${MODEL}-${nDocs}-[0-9a-f]+\\.csr$`);
  const files = fs.readdirSync(os.tmpdir()).filter((f) => re.test(f)).map((f) => path.join(os.tmpdir(), f));
  if (!files.length) throw new Error(`no ${os.tmpdir()}/scdv-${MODEL}-${nDocs}-*.csr: make one with tests/bench/scdv-vectors.js --docs ${nDocs}, or pass --data`);
  return files.sort((x, y) => fs.statSync(y).mtimeMs - fs.statSync(x).mtimeMs)[0];
}

/**
 * The collection `articles` from the first `nDocs` rows of `file` (built once; a stamp names its source).
 * @param {string} file
 * @param {number} nDocs
 * @returns {Promise<string[]>} the ids, in a shuffled order (each read once per pass)
 */
async function ensureArticles(file, nDocs) {
  const { readCsr, row } = await import('./search.data.js');
  const { openStore } = await import('../../pipeline/store/index.js');
  const { storeDirFor } = await import('../../pipeline/paths.js');
  const m = readCsr(file);
  const n = Math.min(nDocs, m.rows);
  const ids = Array.from({ length: n }, (_, i) => m.ids?.[i] ?? String(i));
  const stamp = path.join(BENCH_DIR, 'articles.json');
  const key = JSON.stringify({ file, size: fs.statSync(file).size, n });
  let built = null;
  try { built = fs.readFileSync(stamp, 'utf8'); } catch { /* first run */ }
  if (built !== key) {
    fs.rmSync(BENCH_DIR, { recursive: true, force: true });
    fs.mkdirSync(BENCH_DIR, { recursive: true });
    const cats = fs.existsSync(`${file}.categories`) ? fs.readFileSync(`${file}.categories`, 'utf8').split('\n') : [];
    const store = openStore(storeDirFor(MODEL));
    const coll = store.collection('articles', { width: m.width });
    for (let i = 0; i < n; i += 5000) {
      const rows = [];
      for (let j = i; j < Math.min(n, i + 5000); j++) {
        const v = row(m, j);
        rows.push({ id: ids[j], vector: { indices: v.indices, values: v.values }, meta: { title: `article ${ids[j]}`, category: cats[j] || undefined, url: `https://example.com/${ids[j]}` } });
      }
      await coll.upsert(rows);
    }
    await coll.flush();
    await coll.merge();
    await store.close();
    fs.writeFileSync(stamp, key);
    process.stderr.write(`articles: ${n} documents from ${file}\n`);
  }
  const order = ids.map((_, i) => ids[(i * 104729 + 13) % n]);
  return order;
}
