#!/usr/bin/env node
// REST API throughput and latency with autocannon: related-by-id (live search over a 100k collection),
// precomputed match (Redis), related-for-text (request-time embedding + search), and a route returning a
// constant in the same server (same hooks) as the ceiling; at 1, 10 and 50 connections.
//
// Then writes under read load: live related-by-id reads at --read-connections, alone and with document PUTs at
// --write-rate per second beside them (article-sized texts, ~2,300 characters, into the collection `writes`, so
// that `articles` keeps its contents), in a server embedding on its threads (server.embedThreads, the default) and in one embedding on
// the event loop (embedThreads 0): both up, taking turns for --write-repeats interleaved rounds (medians).
//
// node tests/bench/api.bench.js [--docs 100000] [--ads 2000] [--duration 8] [--connections 1,10,50] [--rebuild]
//   [--read-connections 10] [--write-rate 20] [--write-repeats 5] [--share-repeats 5] [--pin-server]
//
// The live-related goal's ratio (live related by id / the constant route, req/s) is measured at --read-connections
// in --share-repeats interleaved rounds: `related_live_share_pct`, the median of the rounds.
//
// The collection: documents synthesised from the livedoor dev split (tests/bench/synthetic-corpus.js),
// embedded with the model bench-livedoor-dev (made by tests/bench/train.bench.js when missing) through the
// same embedder as the server, stored under .scdv/bench/api/ and reused by later runs with the same inputs.
// The server runs in a child process; autocannon runs here.
// Last line: {"related_rps":…, "related_p99_ms":…, "match_rps":…, "match_p99_ms":…, "match_p99_fine_ms":… (from the latencies as
// measured, not autocannon's whole ms), "ceiling_rps":…, "related_live_rps":…,
// "related_live_p99_ms":…, "related_live_share_pct":… (median, --read-connections), "related_live_nofb_rps":…, "related_live_nofb_p99_ms":… (feedback=false), "text_rps":…, "text_p99_ms":… (at the most connections), "write_p99_ms":…, "read_p99_ms":…,
// "read_p99_with_writes_ms":…, "read_p99_fine_ms":…, "read_p99_with_writes_fine_ms":…, "read_p99_increase_pct":… (the
// same p99s from latencies finer than autocannon's whole ms; the increase is the median of the rounds' own),
// "read_p99_increase_interleaved_pct":… (the same from one read run with the writes switched on and off every 2 s),
// "write_loop_cpu_ms":… (embedding threads: the event loop's CPU time per write),
// "inline_write_p99_ms":…, "inline_read_p99_ms":…, "inline_read_p99_with_writes_ms":…, "inline_write_loop_cpu_ms":… (event loop)}
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { BENCH_KEY, writesUnderLoad } from './writes-under-load.js';
import { benchServerLoopCpu, forkBenchServer, isBenchServerChild, serveBenchChild, stopBenchServer } from './bench-server.js';
import { withFineP99 } from './fine-p99.js';

const HERE = fileURLToPath(import.meta.url);
const REPO = path.resolve(path.dirname(HERE), '..', '..');
const BENCH_DIR = path.join(REPO, '.scdv', 'bench', 'api');
// Own data and store folders: the bench's active-model file and collections stay apart from the demo's.
process.env.SCDV_DATA_DIR = path.join(BENCH_DIR, 'data');
process.env.SCDV_STORE_DIR = path.join(BENCH_DIR, 'store');

const MODEL = 'bench-livedoor-dev';
if (isBenchServerChild()) {
  // The server under test: one process, as `scdv serve`, plus the constant route.
  const { keyDigest } = await import('../../pipeline/api-keys.js');
  await serveBenchChild({
    repo: REPO, model: MODEL,
    configOf: (spec, loadConfig) => loadConfig({ overrides: { server: { logLevel: 'warn', indexWorkers: 0, apiKeyHashes: [keyDigest(BENCH_KEY)], ...spec.server } } }),
    configure: (app) => {
      app.get('/bench/ceiling', {
        schema: { hide: true, response: { 200: { type: 'object', properties: { ok: { type: 'boolean' } } } } },
      }, async () => ({ ok: true }));
    },
  });
} else {
  await main();
}

async function main() {
  const { values } = parseArgs({
    options: {
      docs: { type: 'string', default: '100000' }, ads: { type: 'string', default: '2000' }, duration: { type: 'string', default: '8' },
      connections: { type: 'string', default: '1,10,50' }, rebuild: { type: 'boolean', default: false },
      'read-connections': { type: 'string', default: '10' }, 'write-rate': { type: 'string', default: '20' },
      'write-repeats': { type: 'string', default: '5' }, 'share-repeats': { type: 'string', default: '5' },
      'pin-server': { type: 'boolean', default: false },
    },
  });
  const nDocs = Number(values.docs);
  const nAds = Number(values.ads);
  const duration = Number(values.duration);
  const levels = String(values.connections).split(',').map(Number);
  const { default: autocannon } = await import('autocannon');
  const { loadConfig, hashOf } = await import('../../pipeline/config.js');
  const { modelsDir } = await import('../../pipeline/paths.js');
  const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
  const { scatteredIds, sentencePools, synthesize } = await import('./synthetic-corpus.js');

  const { ensureBenchModel } = await import('./bench-model.js');
  const corpus = ensureBenchModel(MODEL);
  const config = loadConfig();
  const manifest = JSON.parse(fs.readFileSync(path.join(modelsDir(), MODEL, 'manifest.json'), 'utf8'));
  const pools = sentencePools(corpus);

  // ---- the collections (reused when the inputs are unchanged)
  // The store's addon is in the key too: a new build may write segments another way.
  const { ADDON_PATH } = await import('../../pipeline/store/native.js');
  const addon = fs.statSync(ADDON_PATH);
  const key = hashOf({ model: manifest.created_at, nDocs, nAds, embed: config.embed, corpus: fs.statSync(corpus).size, addon: [addon.size, addon.mtimeMs], v: 1 });
  const stamp = path.join(BENCH_DIR, 'collections.json');
  let built = null;
  try { built = JSON.parse(fs.readFileSync(stamp, 'utf8')); } catch { /* first run */ }
  if (values.rebuild || built?.key !== key) {
    fs.rmSync(BENCH_DIR, { recursive: true, force: true });
    fs.mkdirSync(BENCH_DIR, { recursive: true });
    built = { key, ...(await buildCollections(pools, nDocs, nAds, config)) };
    fs.writeFileSync(stamp, JSON.stringify(built, null, 2));
  } else {
    process.stderr.write(`collections: reusing ${nDocs} articles + ${nAds} ads in ${BENCH_DIR}\n`);
  }

  // --pin-server: the server on CPU 0 alone, autocannon (this process) and Redis on the others, as when the load
  // comes from other machines; the latencies are then the server's own, not autocannon's share of the same cores.
  const cpus = values['pin-server'] ? pinAwayFromServer() : undefined;
  const redis = await startPrivateRedis();
  /** A server child (its `server` config overrides), and its URL once it listens. */
  const serve = (/** @type {Record<string, unknown>} */ server = {}) => forkBenchServer(HERE, { redisUrl: redis.url, server }, { cpus });
  const stop = stopBenchServer;
  const { proc: child, listening } = serve();
  try {
    // ---- precomputed matches: the top 10 ads of every article
    const { runPrecompute } = await import('../../pipeline/stages/precompute.js');
    const { localPrecompute } = await import('../../workers/precompute.js');
    const pc = await runPrecompute({ model: MODEL, source: 'articles', target: 'ads', k: 10, redisUrl: redis.url, config, processor: localPrecompute });
    process.stderr.write(`precompute: ${pc.written} articles x top 10 of ${nAds} ads in ${pc.seconds.toFixed(1)} s (${pc.jobs} jobs)\n`);

    const url = await listening;
    // Popular articles (a page view asks for their related list again and again) vs every article once.
    const popular = Array.from({ length: 1000 }, (_, i) => `syn-${(i * 7919) % nDocs}`);
    const everyId = scatteredIds(nDocs);
    const texts = [...synthesize(pools, 500, 99)].map((d) => JSON.stringify({ title: d.title, text: d.body.slice(0, 1500), k: 10 }));

    let liveOffset = 0;
    /** @type {Record<string, (n: number) => any>} */
    const scenarios = {
      ceiling: () => ({ path: '/bench/ceiling' }),
      related: (n) => ({ path: `/v1/collections/articles/documents/${popular[n % popular.length]}/related?k=10` }),
      related_live: (n) => ({ path: `/v1/collections/articles/documents/${everyId[(liveOffset + n) % everyId.length]}/related?k=10` }),
      // The same without pseudo-relevance feedback (one search instead of two): what the default's feedback costs.
      related_live_nofb: (n) => ({ path: `/v1/collections/articles/documents/${everyId[(liveOffset + n) % everyId.length]}/related?k=10&feedback=false` }),
      match: (n) => ({ path: `/v1/match?collection=ads&for=${everyId[n % everyId.length]}&k=10` }),
      text: (n) => ({ method: 'POST', path: '/v1/collections/articles/related', headers: { 'content-type': 'application/json' }, body: texts[n % texts.length] }),
    };
    // Sanity: every scenario answers 200, and the match is served from Redis.
    for (const [name, make] of Object.entries(scenarios)) {
      const r = make(0);
      const res = await fetch(url + r.path, { method: r.method ?? 'GET', headers: r.headers, body: r.body });
      const body = /** @type {any} */ (await res.json());
      if (res.status !== 200) throw new Error(`${name}: ${res.status} ${JSON.stringify(body)}`);
      if (name === 'match' && body.served_from !== 'precomputed') throw new Error('match not served from the precomputed entry');
    }

    // The popular lists are asked for twice (the result cache keeps an answer asked for more than once: a live search
    // each time), then served from the result cache.
    const prime = async () => {
      for (let pass = 0; pass < 2; pass++) {
        for (let i = 0; i < popular.length; i += 20) {
          await Promise.all(popular.slice(i, i + 20).map((id) => fetch(`${url}/v1/collections/articles/documents/${id}/related?k=10`).then((r) => r.arrayBuffer())));
        }
      }
    };
    /** @type {Record<string, Record<number, {rps: number, p50: number, p99: number, p99Fine: number, errors: number}>>} */
    const results = {};
    const median = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1];
    for (const c of levels) {
      // Interleaved per connection level; a short warm-up run first.
      for (const name of Object.keys(scenarios)) {
        let n = 0;
        const make = scenarios[name];
        if (name === 'related') await prime();
        const run = (/** @type {number} */ secs) => autocannon({
          url, connections: c, duration: secs,
          requests: [{ setupRequest: (/** @type {any} */ req) => ({ ...req, ...make(n++) }) }],
        });
        await run(1);
        const r = await withFineP99(run(duration));
        if (name.startsWith('related_live')) liveOffset += n; // the next level asks for articles not asked for yet
        (results[name] ??= {})[c] = { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, p99Fine: r.p99Fine, errors: r.errors + r.non2xx };
        process.stderr.write(`${name.padEnd(17)} c=${String(c).padEnd(3)} ${r.requests.average.toFixed(0).padStart(6)} req/s  p50 ${r.latency.p50} ms  p99 ${r.latency.p99} ms (${r.p99Fine})  errors ${r.errors + r.non2xx}\n`);
      }
    }
    const readConns = Number(values['read-connections']);
    // ---- the live-related goal (>= 8 % of the ceiling's req/s in the same run) at --read-connections:
    // the two routes in --share-repeats interleaved rounds, order alternating, the median of the rounds' shares
    // (one pair of runs drifts with the machine's load by more than the goal's margin).
    const shareRepeats = Number(values['share-repeats']);
    /** @type {{ceiling: number, live: number, share: number}[]} */
    const shares = [];
    for (let round = 0; round < shareRepeats; round++) {
      /** @type {Record<string, number>} */
      const rps = {};
      for (const name of round % 2 ? ['related_live', 'ceiling'] : ['ceiling', 'related_live']) {
        let n = 0;
        const make = scenarios[name];
        const run = (/** @type {number} */ secs) => autocannon({
          url, connections: readConns, duration: secs, requests: [{ setupRequest: (/** @type {any} */ req) => ({ ...req, ...make(n++) }) }],
        });
        await run(1);
        const r = await run(duration);
        if (r.errors + r.non2xx) throw new Error(`${name}: ${r.errors + r.non2xx} errors in the share round ${round + 1}`);
        if (name === 'related_live') liveOffset += n;
        rps[name] = r.requests.average;
      }
      shares.push({ ceiling: rps.ceiling, live: rps.related_live, share: rps.related_live / rps.ceiling });
      process.stderr.write(`share round ${round + 1}: live related ${rps.related_live.toFixed(0)} req/s, ceiling ${rps.ceiling.toFixed(0)} req/s at ${readConns} connections: ${(100 * rps.related_live / rps.ceiling).toFixed(2)} %\n`);
    }
    const shareMedian = median(shares.map((x) => x.share));

    // ---- writes under read load: this server (embedding threads), then one embedding on the event loop
    const writeRate = Number(values['write-rate']);
    const writeRepeats = Number(values['write-repeats']);
    // Article-sized bodies (8 synthetic documents each, ~2,300 characters; the collection's are ~300).
    const parts = [...synthesize(pools, 8 * 500, 3)];
    const rewrites = Array.from({ length: 500 }, (_, i) => {
      const d = parts[8 * i];
      return JSON.stringify({
        title: d.title, body: parts.slice(8 * i, 8 * i + 8).map((p) => p.body).join(''), category: d.category, site: d.site,
        published_at: d.published_at, url: `https://example.com/w-${i}`,
      });
    });
    // Both servers stay up (the other one idle) and take turns, `--write-repeats` rounds, order alternating:
    // medians of the rounds, so that the machine's load drifts into both alike.
    const inlineServer = serve({ embedThreads: 0 });
    const urls = { threads: url, inline: await inlineServer.listening };
    const procs = { threads: child, inline: inlineServer.proc };
    /** @type {Record<'threads' | 'inline', Awaited<ReturnType<typeof writesUnderLoad>>[]>} */
    const rounds = { threads: [], inline: [] };
    try {
      for (let round = 0; round < writeRepeats; round++) {
        /** @type {('threads' | 'inline')[]} */
        const order = round % 2 ? ['inline', 'threads'] : ['threads', 'inline'];
        for (const mode of order) {
          const m = await writesUnderLoad({ url: urls[mode], ids: everyId, offset: liveOffset, rewrites, readConns, writeRate, duration, autocannon, loopCpu: () => benchServerLoopCpu(procs[mode]) });
          liveOffset += m.readsDone;
          rounds[mode].push(m);
          process.stderr.write(`writes (${mode.padEnd(7)} round ${round + 1}): reads alone p99 ${m.readAlone.p99Fine} ms (${m.readAlone.rps.toFixed(0)} req/s); with ${writeRate} writes/s: reads p99 ${m.readWithWrites.p99Fine} ms (${m.readWithWrites.rps.toFixed(0)} req/s, +${m.readP99IncreasePct} %), writes p50 ${m.writes.p50} ms p99 ${m.writes.p99} ms, event-loop CPU ${m.writes.loopMs.toFixed(2)} ms a write, errors ${m.writes.errors + m.readWithWrites.errors}; interleaved: reads p99 ${m.interleaved.p99Alone} -> ${m.interleaved.p99With} ms (+${m.interleaved.increasePct} %)\n`);
        }
      }
    } finally {
      await stop(inlineServer.proc);
    }
    const mixed = Object.fromEntries(Object.entries(rounds).map(([mode, ms]) => [mode, {
      readAlone: { p99: median(ms.map((m) => m.readAlone.p99)), rps: median(ms.map((m) => m.readAlone.rps)), p99Fine: median(ms.map((m) => m.readAlone.p99Fine)) },
      readWithWrites: { p99: median(ms.map((m) => m.readWithWrites.p99)), rps: median(ms.map((m) => m.readWithWrites.rps)), p99Fine: median(ms.map((m) => m.readWithWrites.p99Fine)) },
      readP99IncreasePct: median(ms.map((m) => m.readP99IncreasePct)),
      interleavedIncreasePct: median(ms.map((m) => m.interleaved.increasePct)),
      interleaved: { p99Alone: median(ms.map((m) => m.interleaved.p99Alone)), p99With: median(ms.map((m) => m.interleaved.p99With)) },
      writes: { p50: median(ms.map((m) => m.writes.p50)), p99: median(ms.map((m) => m.writes.p99)), loopMs: median(ms.map((m) => m.writes.loopMs)), errors: ms.reduce((a, m) => a + m.writes.errors + m.readWithWrites.errors + m.interleaved.errors, 0) },
    }]));

    const top = Math.max(...levels);
    console.log(`\nwrites under read load (live related by id at ${readConns} connections; PUTs at ${writeRate}/s on 2 connections), medians of ${writeRepeats} interleaved rounds of ${duration} s:`);
    console.log('embedding         read p99 alone   read p99 with writes (req/s, increase)   write p50   write p99   event-loop CPU a write   errors');
    for (const [mode, m] of Object.entries(mixed)) {
      console.log(`${(mode === 'threads' ? 'threads (default)' : 'event loop').padEnd(17)} ${m.readAlone.p99Fine.toFixed(2).padStart(14)} ${m.readWithWrites.p99Fine.toFixed(2).padStart(14)} (${m.readWithWrites.rps.toFixed(0)}, +${m.readP99IncreasePct} %)${' '.repeat(9)}${String(m.writes.p50).padStart(9)} ${String(m.writes.p99).padStart(11)} ${m.writes.loopMs.toFixed(2).padStart(16)} ms ${String(m.writes.errors).padStart(8)}`);
    }
    console.log(`\n${nDocs} articles, ${nAds} ads, model ${MODEL} (width ${built.width}), ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}, server: 1 process${cpus ? ` on CPU ${cpus}, autocannon and Redis on the others` : ''}, ${duration} s per run`);
    console.log('scenario     conns   req/s   p50 ms   p99 ms   p99 ms (finer)   errors');
    for (const [name, byC] of Object.entries(results)) {
      for (const [c, r] of Object.entries(byC)) {
        console.log(`${name.padEnd(17)} ${c.padStart(5)} ${r.rps.toFixed(0).padStart(7)} ${String(r.p50).padStart(8)} ${String(r.p99).padStart(8)} ${r.p99Fine.toFixed(2).padStart(16)} ${String(r.errors).padStart(8)}`);
      }
    }
    const related = results.related[top];
    const live = results.related_live[top];
    const ceiling = results.ceiling[top];
    console.log(`related-by-id (popular articles, result cache) at ${top} connections: ${(100 * related.rps / ceiling.rps).toFixed(0)} % of the ceiling's requests/s (goal >= 50 %)`);
    console.log(`related-by-id live (each article once, a search each): p99 ${live.p99} ms at ${top} connections (goal <= 15), ${live.rps.toFixed(0)} req/s`);
    console.log(`related-by-id live at ${readConns} connections: ${(100 * shareMedian).toFixed(2)} % of the ceiling's requests/s (goal >= 8 %), median of ${shareRepeats} interleaved rounds (${shares.map((x) => `${x.live.toFixed(0)} / ${x.ceiling.toFixed(0)}`).join(', ')})`);
    console.log(`precomputed match: p99 ${results.match[top].p99} ms (${results.match[top].p99Fine} from the latencies as measured) at ${top} connections (goal <= 5)`);
    const t = mixed.threads;
    console.log(`reads beside ${writeRate} writes/s: p99 ${t.readAlone.p99Fine} -> ${t.readWithWrites.p99Fine} ms, +${t.readP99IncreasePct} % (median of the rounds' increases; goal within 20 %); write p99 ${t.writes.p99} ms (goal <= 50)`);
    console.log(`reads beside ${writeRate} writes/s switched on and off every 2 s (one read run: slow drift falls on both sides alike): p99 ${t.interleaved.p99Alone} -> ${t.interleaved.p99With} ms, +${t.interleavedIncreasePct} % (median of the rounds)`);
    console.log(JSON.stringify({
      related_rps: Math.round(related.rps), related_p99_ms: related.p99, match_rps: Math.round(results.match[top].rps),
      match_p99_ms: results.match[top].p99, match_p99_fine_ms: results.match[top].p99Fine, ceiling_rps: Math.round(ceiling.rps),
      related_live_rps: Math.round(live.rps), related_live_p99_ms: live.p99, related_live_share_pct: Number((100 * shareMedian).toFixed(2)),
      related_live_nofb_rps: Math.round(results.related_live_nofb[top].rps), related_live_nofb_p99_ms: results.related_live_nofb[top].p99,
      text_rps: Math.round(results.text[top].rps), text_p99_ms: results.text[top].p99,
      write_p99_ms: mixed.threads.writes.p99, read_p99_ms: mixed.threads.readAlone.p99, read_p99_with_writes_ms: mixed.threads.readWithWrites.p99,
      read_p99_fine_ms: mixed.threads.readAlone.p99Fine, read_p99_with_writes_fine_ms: mixed.threads.readWithWrites.p99Fine,
      read_p99_increase_pct: mixed.threads.readP99IncreasePct,
      read_p99_increase_interleaved_pct: mixed.threads.interleavedIncreasePct,
      inline_write_p99_ms: mixed.inline.writes.p99, inline_read_p99_ms: mixed.inline.readAlone.p99,
      inline_read_p99_with_writes_ms: mixed.inline.readWithWrites.p99,
      write_loop_cpu_ms: Number(mixed.threads.writes.loopMs.toFixed(2)), inline_write_loop_cpu_ms: Number(mixed.inline.writes.loopMs.toFixed(2)),
    }));
  } finally {
    await stop(child);
    await redis.stop();
  }
}

/**
 * Pin this process (every thread, and the Redis it starts next) to every CPU but 0.
 * @returns {string} the CPU list of the server children ("0")
 */
function pinAwayFromServer() {
  const n = os.availableParallelism();
  if (n < 2) throw new Error('--pin-server needs at least 2 CPUs');
  execFileSync('taskset', ['-a', '-p', '-c', n === 2 ? '1' : `1-${n - 1}`, String(process.pid)], { stdio: 'ignore' });
  return '0';
}

/**
 * Embed the synthetic articles and ads with the bench model, in this process, into the bench store.
 * @param {Map<string, string[]>} pools
 * @param {number} nDocs
 * @param {number} nAds
 * @param {import('../../pipeline/config.js').Config} config
 */
async function buildCollections(pools, nDocs, nAds, config) {
  const { createEmbedder } = await import('../../pipeline/embed/index.js');
  const { documentMeta } = await import('../../pipeline/embed/meta.js');
  const { openStore } = await import('../../pipeline/store/index.js');
  const { storeDirFor } = await import('../../pipeline/paths.js');
  const { synthesize } = await import('./synthetic-corpus.js');
  const t0 = Date.now();
  const embedder = await createEmbedder(MODEL, config, { inMemory: true });
  const store = openStore(storeDirFor(MODEL));
  let nnz = 0;
  for (const [name, n, seed, prefix] of /** @type {const} */ ([['articles', nDocs, 1, ''], ['ads', nAds, 2, 'ad-']])) {
    const coll = store.collection(name, { width: embedder.width });
    /** @type {any[]} */
    let batch = [];
    let done = 0;
    const flush = async () => {
      const vecs = await embedder.embedDocuments(batch);
      const rows = batch.map((d, i) => ({ id: d.id, vector: { indices: vecs[i].indices, values: vecs[i].values }, meta: documentMeta(d) }))
        .filter((r) => r.vector.indices.length > 0);
      for (const r of rows) nnz += r.vector.indices.length;
      await coll.upsert(rows);
      done += batch.length;
      batch = [];
      if (done % 10000 === 0 || done === n) process.stderr.write(`collections: ${name} ${done}/${n} (${((Date.now() - t0) / 1000).toFixed(0)} s)\n`);
    };
    for (const d of synthesize(pools, n, seed)) {
      batch.push({ ...d, id: `${prefix}${d.id}`, url: `https://example.com/${prefix}${d.id}` });
      if (batch.length === 500) await flush();
    }
    if (batch.length) await flush();
    await coll.flush();
    await coll.merge();
  }
  const width = embedder.width;
  store.close();
  embedder.model.wordTopics.close();
  return { seconds: (Date.now() - t0) / 1000, width, nnzPerDoc: nnz / (nDocs + nAds) };
}
