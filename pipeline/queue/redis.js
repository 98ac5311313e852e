// Redis connection settings from REDIS_URL, and a private redis-server for runs without one.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { errors } from '../errors.js';

/**
 * ioredis options for a URL: redis://[user:pass@]host:port[/db], rediss://…, or unix:///path/to/socket.
 * @param {string} url
 * @returns {import('ioredis').RedisOptions}
 */
export function redisOptions(url) {
  if (url.startsWith('unix://') || url.startsWith('/')) {
    return { path: url.replace(/^unix:\/\//, '') };
  }
  const u = new URL(url);
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') {
    throw errors.CONFIG_INVALID(`REDIS_URL must start with redis://, rediss:// or unix://, got ${redactUrl(url)}`);
  }
  /** @type {import('ioredis').RedisOptions} */
  const opts = { host: u.hostname || '127.0.0.1', port: Number(u.port || 6379) };
  if (u.username) opts.username = decodeURIComponent(u.username);
  if (u.password) opts.password = decodeURIComponent(u.password);
  if (u.pathname.length > 1) opts.db = Number(u.pathname.slice(1));
  if (u.protocol === 'rediss:') opts.tls = {};
  return opts;
}

/**
 * The URL with any password replaced, safe for logs and error messages.
 * @param {string} url
 */
export function redactUrl(url) {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}

/**
 * @typedef {object} PrivateRedis
 * @property {string} url unix:// URL of the server's socket
 * @property {() => Promise<void>} stop
 */

/**
 * Start a throw-away redis-server on a unix socket in a temporary folder (no persistence).
 * @returns {Promise<PrivateRedis>}
 */
export async function startPrivateRedis() {
  const which = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  if (which.status !== 0) throw errors.REDIS_SERVER_MISSING('no redis-server on PATH');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-redis-'));
  const socket = path.join(dir, 'redis.sock');
  const args = [
    '--port', '0', '--unixsocket', socket, '--unixsocketperm', '700', '--save', '', '--appendonly', 'no',
    '--dir', dir, '--loglevel', 'warning', '--daemonize', 'no',
  ];
  // Through setpriv (util-linux) when there is one: the kernel sends redis-server SIGTERM when this process
  // dies, even by SIGKILL, so a killed CLI never leaves its private Redis running.
  const child = hasSetpriv()
    ? spawn('setpriv', ['--pdeathsig', 'TERM', '--', 'redis-server', ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
    : spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  await waitForSocket(socket, child, () => stderr);
  let stopped = false;
  return {
    url: `unix://${socket}`,
    async stop() {
      if (stopped) return;
      stopped = true;
      process.off('exit', killOnExit);
      await new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 2000).unref();
      });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** @type {boolean | undefined} */
let setprivFound;
/** util-linux's setpriv is on PATH (it can give a child a parent-death signal). */
export const hasSetpriv = () => (setprivFound ??= spawnSync('setpriv', ['--help'], { stdio: 'ignore' }).status === 0);

/**
 * @param {string} socket
 * @param {import('node:child_process').ChildProcess} child
 * @param {() => string} stderr
 */
async function waitForSocket(socket, child, stderr) {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw errors.REDIS_UNAVAILABLE('private redis-server', `exited: ${stderr().trim()}`);
    if (fs.existsSync(socket) && (await canConnect(socket))) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  child.kill('SIGKILL');
  throw errors.REDIS_UNAVAILABLE('private redis-server', `did not start within 10 s: ${stderr().trim()}`);
}

/** @param {string} socket */
function canConnect(socket) {
  return new Promise((resolve) => {
    const s = net.connect(socket, () => { s.end(); resolve(true); });
    s.on('error', () => resolve(false));
  });
}

/**
 * REDIS_URL when set, else a private server that the caller must stop.
 * @returns {Promise<{url: string, stop: () => Promise<void>, private: boolean}>}
 */
export async function connectOrStartRedis() {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: async () => {}, private: false };
  const r = await startPrivateRedis();
  return { ...r, private: true };
}
