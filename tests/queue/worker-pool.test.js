import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorkerPool } from '../../pipeline/queue/worker-pool.js';
import { loadConfig } from '../../pipeline/config.js';

test('workers that keep dying make the pool report why, instead of a run that waits forever', async () => {
  const pool = new WorkerPool({
    // A stage no worker knows: each worker exits at once with a usage error.
    stage: /** @type {any} */ ('bogus'), count: 1, maxRestarts: 2, redisUrl: 'unix:///nonexistent.sock', config: loadConfig(), log: () => {},
  });
  pool.start();
  const deadline = Date.now() + 20_000;
  while (!pool.failure && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await pool.stop();
  assert.ok(pool.failure, 'failure reported');
  assert.match(pool.failure, /all bogus workers died \(3 restarts\)/);
  assert.match(pool.failure, /needs a stage/);
});
