// The private Redis: it serves, stops with stop(), and does not outlive a CLI killed with SIGKILL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../lib/wait.js';

const REDIS_MODULE = fileURLToPath(new URL('../../pipeline/queue/redis.js', import.meta.url));

/** @param {string} socket */
const answers = (socket) => new Promise((resolve) => {
  const s = net.connect(socket, () => s.write('PING\r\n'));
  s.once('data', (d) => { s.destroy(); resolve(String(d).startsWith('+PONG')); });
  s.once('error', () => resolve(false));
});

test('a private Redis outlives neither stop() nor its owner killed with SIGKILL', async () => {
  const { startPrivateRedis } = await import(REDIS_MODULE);
  const r = await startPrivateRedis();
  const sock = r.url.replace('unix://', '');
  assert.equal(await answers(sock), true);
  await r.stop();
  assert.equal(fs.existsSync(sock), false);

  // A child process starts one, says where, and is killed without any chance to clean up.
  const code = `const { startPrivateRedis } = await import(${JSON.stringify(REDIS_MODULE)});
    const r = await startPrivateRedis(); process.stdout.write(r.url + '\\n'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(String(d).trim())));
  const orphan = String(url).replace('unix://', '');
  assert.equal(await answers(orphan), true);
  child.kill('SIGKILL');
  await waitFor(async () => !(await answers(orphan)), { timeoutMs: 30_000, everyMs: 100, what: 'the private redis-server to stop after its owner was killed' });
});
