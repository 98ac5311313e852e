// A worker thread terminated while it is inside a native call (EmbedPool replaces dead threads, and terminates
// them on close) must end that thread only. Once terminate() is under way, the call's next JavaScript operation
// fails; node-addon-api, built with C++ exceptions, turns that failure into a C++ exception it then cannot throw
// into JavaScript, and unless the addon is built with NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS it rethrows it out of
// the callback: std::terminate, the whole process aborts ("terminate called after throwing an instance of
// 'Napi::Error'").
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REPO_ROOT } from '../../pipeline/paths.js';

const THREADS = new URL('../../pipeline/threads/index.js', import.meta.url).href;
const ROUNDS = 20;

test('terminating a worker in the middle of native calls ends the worker, never the process', { skip: process.platform !== 'linux' && 'Linux only' }, () => {
  // The worker calls the pacer's end() (which builds its answer object in C++) in a tight loop, so a terminate()
  // nearly always lands inside one: without the define, 20 rounds abort the process every time they were tried.
  const script = `
    const { Worker } = require('node:worker_threads');
    const source = \`
      const { parentPort, workerData } = require('node:worker_threads');
      (async () => {
        const { paceThisThread } = await import(${JSON.stringify(JSON.stringify(THREADS)).slice(1, -1)});
        const pacer = paceThisThread(workerData.busy, { sliceUs: 1000, share: 1, budgetMs: 0 });
        parentPort.postMessage('looping');
        for (;;) { pacer.begin(); pacer.end(); }
      })();\`;
    (async () => {
      for (let i = 0; i < ${ROUNDS}; i++) {
        const w = new Worker(source, { eval: true, workerData: { busy: new Int32Array(new SharedArrayBuffer(4)) } });
        await new Promise((r) => w.once('message', r));
        await new Promise((r) => setTimeout(r, Math.random() * 5));
        await w.terminate();
      }
      console.log('terminated ${ROUNDS}');
    })();`;
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(run.signal, null, `the process was killed by ${run.signal}: ${run.stderr}`);
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), `terminated ${ROUNDS}`);
});

test('every native addon is built so that an error it cannot throw into a terminating thread is dropped', () => {
  // The root's addon (MeCab) and every one under pipeline/.
  const gyps = ['binding.gyp', ...fs.readdirSync(path.join(REPO_ROOT, 'pipeline'), { recursive: true, encoding: 'utf8' })
    .filter((f) => path.basename(f) === 'binding.gyp' && !f.split(path.sep).includes('build')).map((f) => path.join('pipeline', f))];
  assert.ok(gyps.length >= 3, gyps.join(' '));
  for (const rel of gyps) {
    const text = fs.readFileSync(path.join(REPO_ROOT, rel), 'utf8');
    assert.match(text, /"NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"/, `${rel} defines NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS`);
  }
});
