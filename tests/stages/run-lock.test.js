// The per-model-name run lock: a live holder blocks, a dead one (or a reused pid) does not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { acquireRunLock, processStartTime } from '../../pipeline/stages/run-lock.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-lock-'));
const holder = (/** @type {number} */ pid, /** @type {string | null} */ start) => JSON.stringify({ pid, start, host: os.hostname(), since: '2026-01-01T00:00:00.000Z' });

test('a lock held by a live process is refused with its pid; released, it is free again', async () => {
  const sleeper = spawn('sleep', ['30']);
  await new Promise((r) => sleeper.once('spawn', r));
  const pid = /** @type {number} */ (sleeper.pid);
  try {
    fs.writeFileSync(path.join(dir, 'm.lock'), holder(pid, processStartTime(pid)));
    assert.throws(() => acquireRunLock(dir, 'm'), (err) => /** @type {any} */ (err).code === 'SCDV_MODEL_BUSY' &&
      new RegExp(`model "m" is being trained by another run \\(pid ${pid}, since 2026-01-01`).test(/** @type {Error} */ (err).message));
  } finally {
    sleeper.kill('SIGKILL');
    await new Promise((r) => sleeper.once('close', r));
  }
  // The same file, its process gone: stale.
  const lock = acquireRunLock(dir, 'm');
  assert.equal(JSON.parse(fs.readFileSync(lock.file, 'utf8')).pid, process.pid);
  assert.throws(() => acquireRunLock(dir, 'm'), new RegExp(`pid ${process.pid}`), 'held: a second taker in this process is refused too');
  lock.release();
  assert.ok(!fs.existsSync(lock.file));
  acquireRunLock(dir, 'm').release();
});

test('a pid now used by another process (another start time) and a damaged lock file are stale', () => {
  fs.writeFileSync(path.join(dir, 'reused.lock'), holder(process.pid, '1'));
  acquireRunLock(dir, 'reused').release();
  fs.writeFileSync(path.join(dir, 'damaged.lock'), '{"pid": ');
  acquireRunLock(dir, 'damaged').release();
  assert.deepEqual(fs.readdirSync(dir), [], 'no lock or temporary file is left');
});
