// Load: a bounded soak. autocannon at 50 connections on related-by-id for SCDV_SOAK_SECONDS (60) against
// `scdv serve` in its own process, while documents are written into the same collection at a steady rate
// (each write invalidates the collection's related cache, so searches keep running for real).
// Must hold: zero errors and non-2xx answers, every write acknowledged, p99 within the benchmark's bound,
// resident memory flat after warm-up. Opt-in for `npm test` (SCDV_SOAK=1); `npm run test:reliability` runs it.
//
// The bound: `npm run bench:api` measured related-by-id with a live search at 50 connections on this kind of
// machine (2 shared vCPU) at p99 82 ms — the goal of 15 ms is not met there either (see RELIABILITY.md);
// at 50 connections a closed loop saturates the server and p99 is queueing, here with writes embedding on the
// same event loop. The soak asserts p99 <= 150 ms (measured 58–96 ms on a shared machine at load 6);
// SCDV_SOAK_P99_MS sets another bound.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { report, sleep } from './lib.js';
import { serveProcess } from './serve.js';

const h = await import('../server/helpers.js');
const { default: autocannon } = await import('autocannon');

const SECONDS = Number(process.env.SCDV_SOAK_SECONDS ?? 60);
const P99_BOUND_MS = Number(process.env.SCDV_SOAK_P99_MS ?? 150);
const WRITES_PER_SECOND = Number(process.env.SCDV_SOAK_WRITES ?? 10);
const WARMUP_SECONDS = Math.min(20, Math.floor(SECONDS / 3));

before(async () => { if (process.env.SCDV_SOAK === '1') await h.setup(); });
after(async () => { await h.teardown(); });

test(`soak: ${SECONDS} s at 50 connections on related-by-id with ${WRITES_PER_SECOND} writes/s`, {
  skip: process.env.SCDV_SOAK !== '1' && 'opt-in: SCDV_SOAK=1 (npm run test:reliability sets it)',
  timeout: (SECONDS + 120) * 1000,
}, async (t) => {
  const { redis } = await h.setup();
  const config = h.testConfig({ logLevel: 'warn' });
  const srv = await serveProcess({ config, model: h.MODEL_A, redisUrl: redis.url, dir: h.tmp, indexWorkers: 0 });
  const docs = h.sampleDocs();
  const ids = docs.map((d) => d.id);
  const KEY = { authorization: `Bearer ${h.API_KEY}`, 'content-type': 'application/json' };
  /** @type {{t: number, rss: number}[]} */
  const rss = [];
  let writes = 0;
  let writeErrors = 0;
  /** @type {number[]} */
  const writeMs = [];
  let stop = false;
  try {
    // Memory, once a second.
    const sampler = setInterval(() => { try { rss.push({ t: Date.now(), rss: srv.rssBytes() }); } catch { /* exited */ } }, 1000);
    // Steady ingestion: WRITES_PER_SECOND new documents a second into the searched collection.
    const ingest = (async () => {
      const start = Date.now();
      for (let i = 0; !stop; i++) {
        const due = start + (i * 1000) / WRITES_PER_SECOND;
        if (WRITES_PER_SECOND === 0) break;
        if (due > Date.now()) await sleep(due - Date.now());
        const a = docs[i % docs.length];
        const b = docs[(i * 13 + 5) % docs.length];
        const t0 = Date.now();
        try {
          const r = await fetch(`${srv.url}/v1/collections/articles/documents/soak-${i}`, {
            method: 'PUT', headers: KEY, body: JSON.stringify({ title: `${b.title} ${i}`, body: `${a.body.slice(0, 400)}\n${b.body.slice(0, 400)}`, category: a.category }),
          });
          await r.arrayBuffer();
          if (r.status === 200) writes++; else writeErrors++;
        } catch {
          writeErrors++;
        }
        writeMs.push(Date.now() - t0);
      }
    })();
    let n = 0;
    const res = await autocannon({
      url: srv.url, connections: 50, duration: SECONDS,
      requests: [{ setupRequest: (/** @type {any} */ req) => ({ ...req, path: `/v1/collections/articles/documents/${ids[(n++ * 7919) % ids.length]}/related?k=10` }) }],
    });
    stop = true;
    await ingest;
    clearInterval(sampler);

    const t0 = rss[0]?.t ?? 0;
    const window = (/** @type {number} */ from, /** @type {number} */ to) => {
      const xs = rss.filter((s) => s.t - t0 >= from * 1000 && s.t - t0 < to * 1000).map((s) => s.rss);
      return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
    };
    const afterWarmup = window(WARMUP_SECONDS, WARMUP_SECONDS + 10);
    const atEnd = window(SECONDS - 10, SECONDS + 5);
    const growth = (atEnd - afterWarmup) / afterWarmup;
    writeMs.sort((a, b) => a - b);
    const mb = (/** @type {number} */ x) => Math.round(x / 2 ** 20);
    const figures = {
      seconds: SECONDS, connections: 50, requests: res.requests.total, rps: Math.round(res.requests.average),
      errors: res.errors, timeouts: res.timeouts, non2xx: res.non2xx,
      p50Ms: res.latency.p50, p99Ms: res.latency.p99, maxMs: res.latency.max, p99BoundMs: P99_BOUND_MS,
      writes, writeErrors, writeP99Ms: writeMs[Math.floor(writeMs.length * 0.99)] ?? null,
      rssStartMb: mb(rss[0]?.rss ?? 0), rssAfterWarmupMb: mb(afterWarmup), rssEndMb: mb(atEnd), rssGrowthPct: Math.round(growth * 1000) / 10,
      rssEvery5sMb: rss.filter((_, i) => i % 5 === 0).map((s) => mb(s.rss)),
    };
    report(t, 'soak', figures);
    assert.equal(res.errors, 0, 'no connection error');
    assert.equal(res.timeouts, 0, 'no timeout');
    assert.equal(res.non2xx, 0, 'no failed request');
    assert.equal(writeErrors, 0, 'every write acknowledged');
    assert.ok(writes >= SECONDS * WRITES_PER_SECOND * 0.9, `writes kept their rate: ${writes}`);
    assert.ok(res.latency.p99 <= P99_BOUND_MS, `p99 ${res.latency.p99} ms within ${P99_BOUND_MS} ms`);
    // Flat: the store grows by the documents written (a few MB at most here); allow 10 % or 24 MB of noise.
    assert.ok(atEnd - afterWarmup < Math.max(0.1 * afterWarmup, 24 * 2 ** 20), `resident memory flat after warm-up: ${mb(afterWarmup)} -> ${mb(atEnd)} MB`);
  } finally {
    stop = true;
    await srv.stop('SIGTERM');
  }
});
