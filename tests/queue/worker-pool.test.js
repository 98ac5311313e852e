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

test('local workers get the configuration on stdin, not on their command line (where ps shows it)', async () => {
  const base = loadConfig();
  // A value only the configuration carries, and one the worker refuses: its message proves it read the config.
  const config = { ...base, tokenize: { ...base.tokenize, shardSize: -7 } };
  const pool = new WorkerPool({ stage: 'tokenize', count: 1, maxRestarts: 0, redisUrl: 'unix:///nonexistent.sock', config: /** @type {any} */ (config), log: () => {} });
  pool.start();
  const args = [...pool.children].map((c) => c.spawnargs.join(' '));
  const deadline = Date.now() + 20_000;
  while (!pool.failure && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await pool.stop();
  assert.equal(args.length, 1);
  assert.ok(args[0].length < 300, `the command line is short: ${args[0]}`);
  assert.doesNotMatch(args[0], /shardSize|\{/);
  assert.match(args[0], /worker tokenize --config-stdin$/);
  assert.match(pool.failure ?? '', /tokenize\.shardSize/, 'the worker read the configuration it was given');
});
