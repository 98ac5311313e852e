// yieldThisThread: the calling thread, and only it, becomes SCHED_BATCH at the niceness asked for above the main
// thread's (Linux).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';

const INDEX = new URL('../../pipeline/threads/index.js', import.meta.url).href;

/** Niceness and policy of thread `tid` of this process (/proc/self/task/<tid>/stat, fields 19 and 41). */
const READ = `(tid) => { const s = require('node:fs').readFileSync('/proc/self/task/' + tid + '/stat', 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' '); return { nice: Number(f[16]), policy: Number(f[38]) }; }`;

test('yieldThisThread makes the calling thread SCHED_BATCH at the niceness asked for above the main thread\'s, and no other thread', { skip: process.platform !== 'linux' && 'Linux only' }, async () => {
  const source = `
    const { parentPort } = require('node:worker_threads');
    const read = ${READ};
    const tid = require('node:fs').readlinkSync('/proc/thread-self').split('/').pop();
    import(${JSON.stringify(INDEX)}).then(async ({ yieldThisThread }) => {
      const before = read(tid);
      const got = await yieldThisThread(7);
      let refused = null;
      try { await yieldThisThread(20); } catch (err) { refused = err.message; }
      parentPort.postMessage({ before, got, after: read(tid), main: read(process.pid), refused });
    });`;
  const m = await new Promise((resolve, reject) => {
    const w = new Worker(source, { eval: true });
    w.once('message', (x) => { resolve(x); void w.terminate(); });
    w.once('error', reject);
  });
  // Counted from the main thread's niceness (the suite may run niced: the thread still gives way to the loop).
  const nice = Math.min(19, m.main.nice + 7);
  assert.deepEqual(m.before, { nice: m.main.nice, policy: 0 });
  assert.deepEqual(m.got, { batch: true, nice });
  assert.deepEqual(m.after, { nice, policy: 3 }, `SCHED_BATCH (3) at niceness ${nice}`);
  assert.equal(m.main.policy, 0, 'the main thread stays SCHED_OTHER');
  assert.match(m.refused, /nice must be a number 0-19/);
});

test('thread scheduling is the threads module\'s alone: neither the tokenizer nor the MeCab binding exports it', async () => {
  const tokenizer = await import('../../pipeline/tokenizer/index.js');
  const { createRequire } = await import('node:module');
  const { NATIVE_ADDON } = await import('../../pipeline/paths.js');
  const mecab = createRequire(import.meta.url)(NATIVE_ADDON);
  const scheduling = ['yieldThisThread', 'paceThisThread', 'yieldToOtherThreads', 'beginPaced', 'endPaced'];
  assert.deepEqual(scheduling.filter((name) => name in tokenizer || name in mecab), []);
  assert.deepEqual(Object.keys(await import(INDEX)).sort(), ['paceThisThread', 'yieldThisThread']);
});
