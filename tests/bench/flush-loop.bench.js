#!/usr/bin/env node
// Event-loop blocking while a serving process writes: single-document upserts at a steady rate (like PUTs)
// with frequent flushes, beside searches on the libuv pool (read load), measured with
// perf_hooks.monitorEventLoopDelay (how late the event loop ran its timers: less sensitive to the machine's
// load than request latency percentiles). One store per run, on the real disk (fsyncs cost what they cost).
//
//   node tests/bench/flush-loop.bench.js [--docs 20000] [--seconds 10] [--rate 100] [--flush-docs 200]
//        [--pipeline DIR]   another checkout's pipeline/ (e.g. the code before a change), for A/B runs
// Last line: {"loop_delay_p50_ms", "loop_delay_p99_ms", "loop_delay_max_ms", "write_p50_ms", "write_p99_ms",
//             "sync_fsyncs", "sync_fsync_ms", "sync_fsync_ms_per_flush", "writes", "flushes", "searches", "load_avg"}
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { generate, row } from './search.data.js';

const { values: opt } = parseArgs({
  options: {
    docs: { type: 'string', default: '20000' },
    seconds: { type: 'string', default: '10' },
    rate: { type: 'string', default: '100' },
    'flush-docs': { type: 'string', default: '200' },
    pipeline: { type: 'string' },
  },
});
const pipeline = opt.pipeline ? path.resolve(opt.pipeline) : new URL('../../pipeline', import.meta.url).pathname;
/** @type {typeof import('../../pipeline/store/index.js')} */
const { openStore } = await import(pathToFileURL(path.join(pipeline, 'store', 'index.js')).href);

const n = Number(opt.docs);
const m = generate({ docs: n + 5000, seed: 7 });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-flush-loop-'));
const pct = (/** @type {number[]} */ xs, /** @type {number} */ p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;
try {
  const store = openStore(dir, { autoMerge: false, maintenanceMs: 0, flushDocs: Number(opt['flush-docs']), flushAgeMs: 1e9 });
  const c = store.collection('w', { width: m.width });
  for (let i = 0; i < n; i += 5000) {
    await c.upsert(Array.from({ length: Math.min(5000, n - i) }, (_, j) => ({ id: `d${i + j}`, vector: row(m, i + j) })));
  }
  await c.flush();
  await c.merge();
  const flushesBefore = c.stats().segments;

  // Time the event loop spends inside synchronous fsyncs (the code before this change fsynced a flush's files
  // on the event loop): measured by wrapping them, so the figure is the disk's, not the machine load's.
  let syncFsyncMs = 0;
  let syncFsyncs = 0;
  for (const name of /** @type {const} */ (['fsyncSync', 'fdatasyncSync'])) {
    const original = fs[name];
    fs[name] = (fd) => {
      const t = performance.now();
      try {
        original(fd);
      } finally {
        syncFsyncMs += performance.now() - t;
        syncFsyncs++;
      }
    };
  }
  let stop = false;
  let searches = 0;
  const reader = async () => {
    for (let q = 0; !stop; q++) {
      await c.searchAsync(row(m, (q * 7919) % n), { k: 10 });
      searches++;
    }
  };
  /** @type {number[]} */
  const writes = [];
  let next = n;
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const t0 = performance.now();
  const readers = [reader(), reader()];
  const interval = 1000 / Number(opt.rate);
  /** @type {Promise<void>[]} */
  const inflight = [];
  while (performance.now() - t0 < Number(opt.seconds) * 1000) {
    const i = next++;
    const ts = performance.now();
    inflight.push(c.upsert([{ id: `w${i}`, vector: row(m, i) }]).then(() => { writes.push(performance.now() - ts); }));
    const wait = t0 + (i - n + 1) * interval - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await Promise.all(inflight);
  stop = true;
  await Promise.all(readers);
  h.disable();
  const flushes = c.stats().segments - flushesBefore;
  await store.close();
  const ms = (/** @type {number} */ ns) => Math.round(ns / 1e4) / 100;
  const out = {
    pipeline,
    loop_delay_p50_ms: ms(h.percentile(50)), loop_delay_p99_ms: ms(h.percentile(99)), loop_delay_max_ms: ms(h.max),
    write_p50_ms: Math.round(pct(writes, 50) * 100) / 100, write_p99_ms: Math.round(pct(writes, 99) * 100) / 100,
    sync_fsyncs: syncFsyncs, sync_fsync_ms: Math.round(syncFsyncMs * 10) / 10,
    sync_fsync_ms_per_flush: flushes ? Math.round((syncFsyncMs / flushes) * 10) / 10 : null,
    writes: writes.length, flushes, searches, load_avg: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
  console.log(JSON.stringify(out));
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
