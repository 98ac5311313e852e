// The writes-under-reads scenario of `bench:api` and `tests/bench/writes.bench.js`, one implementation: live
// related-by-id reads for `duration` s alone, then the same reads with PUTs of article-sized texts beside them, then
// both again for 2 × `duration` s with the writes switched on and off every 2 s (interleavedPhase).
import { performance } from 'node:perf_hooks';
import { withFineP99 } from './fine-p99.js';

/** The writes' API key (its digest is the only key the bench servers accept). */
export const BENCH_KEY = 'bench-api-key-0123456789';

/**
 * @param {object} o
 * @param {string} o.url the server
 * @param {string[]} o.ids articles to read, from `offset` on (each asked for once)
 * @param {number} o.offset
 * @param {string[]} o.rewrites PUT bodies of w-0 … (collection `writes`)
 * @param {number} o.readConns
 * @param {number} o.writeRate PUTs per second in all
 * @param {number} [o.writeConns] connections the PUTs share (default 2: slow writes then also lower the rate reached)
 * @param {number} o.duration seconds of each phase
 * @param {typeof import('autocannon')} o.autocannon
 * @param {() => Promise<number>} [o.loopCpu] the server's event-loop CPU time so far, ms: adds the writes' `loopMs`
 */
export async function writesUnderLoad(o) {
  let r = o.offset;
  let w = 0;
  // The reads' p99 also from their latencies as measured (p99Fine): "within 20 %" of a ~10 ms p99 needs more than whole ms.
  const reads = (/** @type {number} */ secs) => withFineP99(o.autocannon({
    url: o.url, connections: o.readConns, duration: secs,
    requests: [{ setupRequest: (/** @type {any} */ req) => ({ ...req, path: `/v1/collections/articles/documents/${o.ids[r++ % o.ids.length]}/related?k=10` }) }],
  }));
  const writes = (/** @type {number} */ secs) => o.autocannon({
    url: o.url, connections: o.writeConns ?? 2, duration: secs, overallRate: o.writeRate,
    requests: [{
      setupRequest: (/** @type {any} */ req) => {
        const i = w++ % o.rewrites.length;
        return { ...req, method: 'PUT', path: `/v1/collections/writes/documents/w-${i}`, headers: { 'content-type': 'application/json', authorization: `Bearer ${BENCH_KEY}` }, body: o.rewrites[i] };
      },
    }],
  });
  const summary = (/** @type {any} */ x) => ({ rps: x.requests.average, p50: x.latency.p50, p90: x.latency.p90, p99: x.latency.p99, max: x.latency.max, total: x.requests.total, errors: x.errors + x.non2xx, p99Fine: /** @type {number} */ (x.p99Fine ?? NaN) });
  const cpu = o.loopCpu ?? (async () => 0);
  await Promise.all([reads(1), writes(1)]); // warm-up: the embedding threads' first texts, the page cache
  const c0 = await cpu();
  const ra = await reads(o.duration);
  const c1 = await cpu();
  const [rw, ww] = await Promise.all([reads(o.duration), writes(o.duration)]);
  const c2 = await cpu();
  // The event loop's CPU per write: what the mixed phase took beyond its reads at the reads-alone rate.
  const perRead = (c1 - c0) / Math.max(1, ra.requests.total);
  const loopMs = ((c2 - c1) - perRead * rw.requests.total) / Math.max(1, ww.requests.total);
  // How much the writes raised the reads' p99, from the fine latencies.
  const readP99IncreasePct = Math.round(1000 * (rw.p99Fine / ra.p99Fine - 1)) / 10;
  const interleaved = await interleavedPhase(o, () => r++, () => w++);
  return { readAlone: summary(ra), readWithWrites: summary(rw), readP99IncreasePct, writes: { ...summary(ww), loopMs }, interleaved, readsDone: r - o.offset };
}

/**
 * The same comparison with slow drift of the machine falling on both sides alike: reads for 2 × `duration` s while the writes are switched
 * on and off in blocks of `block` s (off first). A read counts as "alone" when it ran wholly inside an off block,
 * after its first `guard` s (the last writes' answers); "with writes" when wholly inside an on block. On this shared
 * machine the reads-alone p99 of back-to-back 8 s phases moved 7–14 ms by itself, more than the effect measured
 * (this phase's rounds were steadier in one run of three; see BENCHMARKS.md "Writes under read load").
 * @param {Parameters<typeof writesUnderLoad>[0]} o
 * @param {() => number} nextRead
 * @param {() => number} nextWrite
 * @param {{block?: number, guard?: number}} [t]
 */
async function interleavedPhase(o, nextRead, nextWrite, { block = 2, guard = 0.5 } = {}) {
  const now = () => performance.timeOrigin + performance.now();
  /** @type {[number, number][]} */
  const readTimes = [];
  const reads = /** @type {any} */ (o.autocannon({
    url: o.url, connections: o.readConns, duration: 2 * o.duration,
    requests: [{ setupRequest: (/** @type {any} */ req) => ({ ...req, path: `/v1/collections/articles/documents/${o.ids[nextRead() % o.ids.length]}/related?k=10` }) }],
  }));
  reads.on('response', (/** @type {unknown} */ _client, /** @type {number} */ status, /** @type {number} */ _bytes, /** @type {number} */ ms) => {
    if (status >= 200 && status < 300) { const end = now(); readTimes.push([end - ms, end]); }
  });
  /** @type {{on: boolean, from: number, to: number}[]} */
  const blocks = [];
  const sleep = (/** @type {number} */ s) => new Promise((res) => setTimeout(res, s * 1000));
  let errors = 0;
  const switching = (async () => {
    for (let i = 0; i < Math.floor(2 * o.duration / block); i++) {
      const from = now();
      if (i % 2) {
        const x = await o.autocannon({
          url: o.url, connections: o.writeConns ?? 2, duration: block, overallRate: o.writeRate,
          requests: [{
            setupRequest: (/** @type {any} */ req) => {
              const k = nextWrite() % o.rewrites.length;
              return { ...req, method: 'PUT', path: `/v1/collections/writes/documents/w-${k}`, headers: { 'content-type': 'application/json', authorization: `Bearer ${BENCH_KEY}` }, body: o.rewrites[k] };
            },
          }],
        });
        errors += x.errors + x.non2xx;
      } else {
        await sleep(block);
      }
      blocks.push({ on: Boolean(i % 2), from, to: now() });
    }
  })();
  const [readResult] = await Promise.all([reads, switching]);
  /** @type {number[]} */
  const alone = [];
  /** @type {number[]} */
  const withWrites = [];
  for (const [start, end] of readTimes) {
    const b = blocks.find((x) => start >= x.from && end <= x.to);
    if (!b) continue;
    if (b.on) withWrites.push(end - start);
    else if (start >= b.from + guard * 1000) alone.push(end - start);
  }
  const p99 = (/** @type {number[]} */ xs) => {
    const v = [...xs].sort((a, b) => a - b);
    return v.length ? Math.round(100 * v[Math.ceil(0.99 * v.length) - 1]) / 100 : NaN;
  };
  const p99Alone = p99(alone);
  const p99With = p99(withWrites);
  return {
    p99Alone, p99With, readsAlone: alone.length, readsWith: withWrites.length,
    increasePct: Math.round(1000 * (p99With / p99Alone - 1)) / 10, errors: errors + readResult.errors + readResult.non2xx,
  };
}
