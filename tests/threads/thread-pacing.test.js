// paceThisThread (pipeline/threads/, native/src/thread_pacing.cc): a paced section takes at most `share` of its wall time in CPU while the
// shared counter is above 0, only until its budget is spent, never while the counter is 0, and its tokens are the
// unpaced ones. Slowness only ever makes the share smaller: nothing here depends on the machine being fast.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';

const THREADS = new URL('../../pipeline/threads/index.js', import.meta.url).href;
const TOKENIZER = new URL('../../pipeline/tokenizer/index.js', import.meta.url).href;
const CONFIG = new URL('../../pipeline/config.js', import.meta.url).href;
const linuxOnly = { skip: process.platform !== 'linux' && 'Linux only' };

/**
 * Runs `body` (the source of an async function of {tok, pace, busy, text, ref}) in a worker thread with a tokenizer
 * and a long text, and resolves to what it returns.
 * @param {string} body
 */
function inWorker(body) {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    (async () => {
      // MeCab parses a text in one call: the pauses must land inside it (a signal), which a long text shows.
      const { createTokenizer } = await import(${JSON.stringify(TOKENIZER)});
      const { paceThisThread } = await import(${JSON.stringify(THREADS)});
      const { loadConfig } = await import(${JSON.stringify(CONFIG)});
      const tok = await createTokenizer((await loadConfig({})).tokenizer);
      const text = '東京都の新しい美術館で現代美術の展覧会が開かれ、多くの来場者が訪れた。'.repeat(800);
      const ref = tok.tokenizeToString(text);
      const busy = workerData.busy;
      const pace = (settings) => paceThisThread(busy, settings);
      return await (${body})({ tok, pace, busy, text, ref });
    })().then((r) => parentPort.postMessage({ r }), (e) => parentPort.postMessage({ e: String(e?.stack ?? e) }));`;
  return new Promise((resolve, reject) => {
    const w = new Worker(source, { eval: true, workerData: { busy: new Int32Array(new SharedArrayBuffer(4)) } });
    w.once('message', (m) => { void w.terminate(); if (m.e) reject(new Error(m.e)); else resolve(m.r); });
    w.once('error', reject);
  });
}

test('a paced section takes at most its share of the wall time while busy, none of it paused when not, same tokens', linuxOnly, async () => {
  const r = await inWorker(`async ({ tok, pace, busy, text, ref }) => {
    const pacer = await pace({ sliceUs: 250, share: 0.25, budgetMs: 100000 });
    const run = (b) => { Atomics.store(busy, 0, b); pacer.begin(); const got = tok.tokenizeToString(text); return { same: got === ref, ...pacer.end() }; };
    return { idle: run(0), busy: run(1) };
  }`);
  assert.equal(r.idle.same, true);
  assert.equal(r.busy.same, true, 'pauses never change the tokens');
  assert.equal(r.idle.pauses, 0, 'no search in flight: no pause');
  assert.equal(r.idle.pausedMs, 0);
  assert.ok(r.busy.pauses > 0 && r.busy.pausedMs > 0, JSON.stringify(r.busy));
  // At most the share, give or take the last slice before the section ended (0.25 ms) and the clock's steps.
  assert.ok(r.busy.cpuMs <= 0.25 * r.busy.wallMs + 0.5, `CPU ${r.busy.cpuMs} ms in ${r.busy.wallMs} ms of wall time`);
  assert.ok(r.busy.cpuMs > 0 && r.busy.wallMs >= r.busy.pausedMs);
});

test('a paced section stops pausing when its budget is spent', linuxOnly, async () => {
  const r = await inWorker(`async ({ tok, pace, busy, text, ref }) => {
    const pacer = await pace({ sliceUs: 250, share: 0.1, budgetMs: 4 });
    Atomics.store(busy, 0, 1);
    pacer.begin();
    const same = tok.tokenizeToString(text) === ref;
    return { same, ...pacer.end() };
  }`);
  assert.equal(r.same, true);
  assert.ok(r.pauses > 0, JSON.stringify(r));
  // Sleeps end at the budget (a late wake-up on a loaded machine may add to the last one); unbudgeted at a share of
  // 0.1, the text's ~20 ms of CPU would have paused ~180 ms.
  assert.ok(r.pausedMs < 4 + 40, JSON.stringify(r));
  assert.ok(r.cpuMs > 0.1 * r.wallMs, 'past the budget the section ran freely');
});

test('paceThisThread refuses bad settings, a counter that is not an Int32Array, and a second call on one thread', linuxOnly, async () => {
  const r = await inWorker(`async ({ pace, busy }) => {
    const { paceThisThread } = await import(${JSON.stringify(THREADS)});
    const refused = async (f) => { try { await f(); return null; } catch (err) { return err.message; } };
    return {
      share: await refused(() => pace({ sliceUs: 250, share: 0, budgetMs: 10 })),
      slice: await refused(() => pace({ sliceUs: 10, share: 0.5, budgetMs: 10 })),
      counter: await refused(() => paceThisThread(new Float64Array(1), { sliceUs: 250, share: 0.5, budgetMs: 10 })),
      first: (await pace({ sliceUs: 250, share: 0.5, budgetMs: 10 })) !== null,
      second: await refused(() => pace({ sliceUs: 250, share: 0.5, budgetMs: 10 })),
    };
  }`);
  assert.match(r.share, /share above 0 and at most 1/);
  assert.match(r.slice, /sliceUs must be 50-1e6/);
  assert.match(r.counter, /Int32Array on a SharedArrayBuffer/);
  assert.equal(r.first, true);
  assert.match(r.second, /paced already/);
});
