#!/usr/bin/env node
// Reader events: POST /v1/events throughput in NDJSON batches (events.fsync 'always' and 'never'), the related
// route's p99 alone and while events stream in, and a SIGKILL of the server mid-stream: every acknowledged event
// must be in the log afterwards.
//
// node tests/bench/events.bench.js [--duration 5] [--batch 500] [--senders 4] [--connections 10]
//
// The server runs in a child process (as `scdv serve`, one process) with a small model trained on the bundled
// sample (tests/lib/tiny-model.js, cached) and the sample indexed as `articles`; the related-by-id cache is off,
// so every related request searches. Data under .scdv/bench/events/.
// Last line: {"events_per_s":…, "events_per_s_no_fsync":…, "related_p99_ms":… (alone), "related_p99_ms_with_events":…
//             (while --rate events/s stream in), "related_p99_ms_with_events_at_full_speed":…, "acked":…, "stored":…, "lost":…}
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { forkBenchServer, isBenchServerChild, serveBenchChild } from './bench-server.js';

const HERE = fileURLToPath(import.meta.url);
const REPO = path.resolve(path.dirname(HERE), '..', '..');
const BENCH_DIR = path.join(REPO, '.scdv', 'bench', 'events');
process.env.SCDV_DATA_DIR = path.join(BENCH_DIR, 'data');
process.env.SCDV_STORE_DIR = path.join(BENCH_DIR, 'store');
process.env.SCDV_MODELS_DIR = path.join(BENCH_DIR, 'models');
const MODEL = 'bench-events';

if (isBenchServerChild()) {
  await serveBenchChild({
    repo: REPO, model: MODEL,
    configOf: (spec, loadConfig) => loadConfig({
      overrides: {
        embed: { keepCount: 36 },
        server: { logLevel: 'warn', indexWorkers: 0, relatedCacheEntries: 0 },
        events: { dir: spec.eventsDir, fsync: spec.fsync },
      },
    }),
  });
} else {
  await main();
}

async function main() {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' }, batch: { type: 'string', default: '500' },
      senders: { type: 'string', default: '4' }, connections: { type: 'string', default: '10' }, rate: { type: 'string', default: '5000' },
    },
  });
  const duration = Number(values.duration);
  const batchSize = Number(values.batch);
  const senders = Number(values.senders);
  const connections = Number(values.connections);
  const paced = Number(values.rate);
  const { default: autocannon } = await import('autocannon');
  const { loadConfig } = await import('../../pipeline/config.js');
  const { SAMPLE_CORPUS, storeDirFor } = await import('../../pipeline/paths.js');
  const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
  const { ensureSampleModels } = await import('../lib/tiny-model.js');
  const { readEvents } = await import('../../pipeline/events/log.js');
  const { createEmbedder } = await import('../../pipeline/embed/index.js');
  const { documentMeta } = await import('../../pipeline/embed/meta.js');
  const { parseDocument } = await import('../../pipeline/corpus/document.js');
  const { openStore } = await import('../../pipeline/store/index.js');

  const redis = await startPrivateRedis();
  const log = (/** @type {string} */ m) => process.stderr.write(`${m}\n`);
  try {
    await ensureSampleModels({ names: [MODEL], redisUrl: redis.url });
    const docs = fs.readFileSync(SAMPLE_CORPUS, 'utf8').split('\n').filter(Boolean).flatMap((l, i) => {
      const r = parseDocument(Buffer.from(l), i + 1);
      return 'doc' in r ? [r.doc] : [];
    });
    const config = loadConfig({ overrides: { embed: { keepCount: 36 } } });
    fs.rmSync(storeDirFor(MODEL), { recursive: true, force: true });
    const embedder = await createEmbedder(MODEL, config, { inMemory: true });
    const store = openStore(storeDirFor(MODEL));
    const coll = store.collection('articles', { width: embedder.width });
    const vectors = await embedder.embedDocuments(docs);
    await coll.upsert(docs.map((d, i) => ({ id: d.id, vector: vectors[i], meta: documentMeta(d) })).filter((r) => r.vector.indices.length > 0));
    await coll.flush();
    await store.close();
    embedder.model.wordTopics.close();

    /** @param {'always'|'never'} fsync */
    const start = async (fsync) => {
      const eventsDir = path.join(BENCH_DIR, `events-${fsync}-${Date.now()}`);
      const { proc: child, listening } = forkBenchServer(HERE, { redisUrl: redis.url, eventsDir, fsync });
      const url = await listening;
      return { child, url, eventsDir };
    };
    let seq = 0;
    const batchBody = () => {
      const lines = [];
      for (let i = 0; i < batchSize; i++) {
        const n = ++seq;
        lines.push(n % 5 === 0
          ? JSON.stringify({ type: 'click', id: `e${n}`, request_id: `r${n - 1}`, clicked_id: docs[n % docs.length].id, position: 2 })
          : JSON.stringify({
            type: 'impression', id: `e${n}`, request_id: `r${n}`, page_id: docs[n % docs.length].id, collection: 'articles', arm: 'hybrid', category: 'news',
            items: [1, 2, 3, 4, 5].map((p) => ({ id: docs[(n + p) % docs.length].id, position: p, score: 0.5 - p * 0.05 })),
          }));
      }
      return { ids: lines.map((l) => /** @type {string} */ (JSON.parse(l).id)), body: `${lines.join('\n')}\n` };
    };
    /**
     * Senders POSTing batches until `until()` is false; every acknowledged id goes into `acked`.
     * @param {string} url @param {() => boolean} going @param {Set<string>} acked
     * @param {number} [rate] events/s in all (default: as fast as the server answers)
     */
    const stream = async (url, going, acked, rate) => {
      let failed = 0;
      const gapMs = rate ? (1000 * senders * batchSize) / rate : 0;
      await Promise.all(Array.from({ length: senders }, async (_, k) => {
        let next = performance.now() + (gapMs * k) / senders;
        while (going()) {
          if (gapMs) {
            const wait = next - performance.now();
            next += gapMs;
            if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          }
          const { ids, body } = batchBody();
          try {
            const res = await fetch(`${url}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body });
            if (res.status === 200) { await res.arrayBuffer(); for (const id of ids) acked.add(id); } else { failed++; await res.arrayBuffer(); }
          } catch { failed++; if (!going()) return; await new Promise((r) => setTimeout(r, 5)); }
        }
      }));
      return failed;
    };
    const related = (/** @type {string} */ url, /** @type {number} */ secs) => autocannon({
      url, connections, duration: secs,
      requests: [{ setupRequest: (/** @type {any} */ req) => ({ ...req, path: `/v1/collections/articles/documents/${encodeURIComponent(docs[Math.floor(Math.random() * docs.length)].id)}/related?k=10` }) }],
    });

    /** @type {Record<string, number>} */
    const rates = {};
    let p99Alone = 0;
    let p99With = 0;
    let p99Saturated = 0;
    for (const fsync of /** @type {const} */ (['always', 'never'])) {
      const srv = await start(fsync);
      if (fsync === 'always') {
        const alone = await related(srv.url, duration);
        p99Alone = alone.latency.p99;
        log(`related alone: ${alone.requests.average.toFixed(0)} req/s, p99 ${p99Alone} ms`);
        // The related route while events arrive at a steady rate (a production-like load, not the maximum).
        const steady = new Set();
        const stop = performance.now() + duration * 1000;
        const [, during] = await Promise.all([stream(srv.url, () => performance.now() < stop, steady, paced), related(srv.url, duration)]);
        p99With = during.latency.p99;
        log(`related while ${paced} events/s stream in: ${during.requests.average.toFixed(0)} req/s, p99 ${p99With} ms (${(steady.size / duration).toFixed(0)} events/s acknowledged)`);
      }
      const acked = new Set();
      const t0 = performance.now();
      const end = t0 + duration * 1000;
      const [failed, during] = await Promise.all([
        stream(srv.url, () => performance.now() < end, acked),
        fsync === 'always' ? related(srv.url, duration) : Promise.resolve(null),
      ]);
      const secs = (performance.now() - t0) / 1000;
      rates[fsync] = acked.size / secs;
      log(`events, fsync ${fsync}: ${acked.size} acknowledged in ${secs.toFixed(1)} s = ${rates[fsync].toFixed(0)} events/s (batches of ${batchSize}, ${senders} senders), ${failed} failed batches`);
      if (during) {
        p99Saturated = during.latency.p99;
        log(`related while events stream at full speed: ${during.requests.average.toFixed(0)} req/s, p99 ${p99Saturated} ms`);
      }
      srv.child.kill('SIGTERM');
      await new Promise((r) => srv.child.once('exit', r));
    }

    // SIGKILL mid-stream: acknowledged vs stored.
    const srv = await start('always');
    const acked = new Set();
    let going = true;
    const streaming = stream(srv.url, () => going, acked);
    await new Promise((r) => setTimeout(r, Math.min(3000, duration * 500)));
    srv.child.kill('SIGKILL');
    await new Promise((r) => srv.child.once('exit', r));
    going = false;
    await streaming;
    /** @type {Set<string>} */
    const stored = new Set();
    const summary = await readEvents(srv.eventsDir, (ev) => { stored.add(ev.id); });
    const lost = [...acked].filter((id) => !stored.has(id)).length;
    log(`SIGKILL mid-stream: ${acked.size} acknowledged, ${stored.size} stored (${summary.torn} torn lines), lost ${lost}`);
    for (const d of fs.readdirSync(BENCH_DIR).filter((n) => n.startsWith('events-'))) fs.rmSync(path.join(BENCH_DIR, d), { recursive: true, force: true });
    console.log(JSON.stringify({
      events_per_s: Math.round(rates.always), events_per_s_no_fsync: Math.round(rates.never), batch: batchSize, senders,
      related_p99_ms: p99Alone, related_p99_ms_with_events: p99With, events_rate_during_related: paced,
      related_p99_ms_with_events_at_full_speed: p99Saturated, acked: acked.size, stored: stored.size, lost,
    }));
    if (lost > 0) process.exitCode = 1;
  } finally {
    await redis.stop();
  }
}
