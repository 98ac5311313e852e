// Utilities of the reliability tests that do not touch the pipeline's folders (safe to import beside
// tests/server/helpers.js, which sets those folders itself).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import net from 'node:net';
import { spawn, spawnSync } from 'node:child_process';
import { sleep, waitFor } from '../lib/wait.js';

/**
 * A redis-server on a fixed unix socket that a test can stop (SIGKILL, like a crash) and start again.
 * @param {{persist?: boolean, password?: string}} [opts] persist: append-only file fsynced on every write,
 *   so a restart keeps the queues; otherwise a restart comes back empty. password: TCP on a free local port
 *   with `requirepass` (the URL carries it), else a unix socket without one.
 */
export async function restartableRedis(opts = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-rel-redis-'));
  const socket = path.join(dir, 'redis.sock');
  const port = opts.password ? await freePort() : 0;
  /** @type {import('node:child_process').ChildProcess | null} */
  let child = null;
  const killOnExit = () => child?.kill('SIGKILL');
  process.on('exit', killOnExit);
  const args = [
    '--port', String(port), '--bind', '127.0.0.1', '--unixsocket', socket, '--unixsocketperm', '700', '--save', '', '--dir', dir,
    '--loglevel', 'warning', '--daemonize', 'no',
    ...(opts.persist ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
    ...(opts.password ? ['--requirepass', opts.password] : []),
  ];
  const r = {
    url: opts.password ? `redis://:${encodeURIComponent(opts.password)}@127.0.0.1:${port}` : `unix://${socket}`,
    socket,
    async start() {
      const c = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'ignore'] });
      child = c;
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        if (c.exitCode !== null) throw new Error('redis-server exited at start');
        if (fs.existsSync(socket) && await canConnect(socket)) return;
        await sleep(25);
      }
      throw new Error('redis-server did not start');
    },
    /** Stop like a crash (SIGKILL) or an orderly shutdown (SIGTERM). */
    async stop(signal = /** @type {NodeJS.Signals} */ ('SIGKILL')) {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      await new Promise((resolve) => { c.once('exit', resolve); c.kill(signal); });
      fs.rmSync(socket, { force: true });
    },
    async close() {
      await r.stop('SIGKILL');
      process.off('exit', killOnExit);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  await r.start();
  return r;
}

/** A TCP port free right now on 127.0.0.1. @returns {Promise<number>} */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (srv.address());
      srv.close(() => resolve(port));
    });
  });
}

/** @param {string} socket */
function canConnect(socket) {
  return new Promise((resolve) => {
    const s = net.connect(socket, () => { s.end(); resolve(true); });
    s.on('error', () => resolve(false));
  });
}

export { sleep, waitFor };

/**
 * Direct children of a process (Linux /proc).
 * @param {number} pid
 * @returns {number[]}
 */
export function childPids(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * A small tmpfs of `bytes` mounted on a new folder, for disk-full and read-only faults. Needs root (or
 * CAP_SYS_ADMIN); returns null when mounting is not possible here.
 * @param {number} bytes
 * @param {string} [parent] where the mount point is made
 */
export function smallDisk(bytes, parent = os.tmpdir()) {
  if (process.platform !== 'linux') return null;
  const dir = fs.mkdtempSync(path.join(parent, 'scdv-disk-'));
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0755`, 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status !== 0) {
    fs.rmSync(dir, { recursive: true, force: true });
    return null;
  }
  const run = (/** @type {string[]} */ args) => {
    const x = spawnSync('mount', args, { encoding: 'utf8' });
    if (x.status !== 0) throw new Error(`mount ${args.join(' ')}: ${x.stderr}`);
  };
  return {
    dir,
    readOnly: () => run(['-o', 'remount,ro', dir]),
    readWrite: () => run(['-o', 'remount,rw', dir]),
    /** Fill the free space with one file (removed to make room again). */
    fill() {
      const filler = path.join(dir, 'filler');
      const fd = fs.openSync(filler, 'a');
      const chunk = Buffer.alloc(64 * 1024, 1);
      try {
        for (;;) fs.writeSync(fd, chunk);
      } catch (err) {
        if (/** @type {any} */ (err).code !== 'ENOSPC') throw err;
      }
      // the last partial block
      try { for (;;) fs.writeSync(fd, chunk, 0, 512); } catch { /* full */ }
      fs.closeSync(fd);
      return filler;
    },
    unmount() {
      spawnSync('umount', ['-l', dir]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * sha256 of every file under `dir` (relative path -> digest), to prove that a failure changed nothing.
 * @param {string} dir
 * @param {(rel: string) => boolean} [keep]
 * @returns {Record<string, string>}
 */
export function snapshot(dir, keep = () => true) {
  /** @type {Record<string, string>} */
  const out = {};
  const walk = (/** @type {string} */ d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (keep(path.relative(dir, p))) out[path.relative(dir, p)] = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

/**
 * Figures a test reports for RELIABILITY.md: a test diagnostic, and a JSON line appended to
 * $SCDV_RELIABILITY_FIGURES when set (tests/reliability/run.js collects them).
 * @param {import('node:test').TestContext} t
 * @param {string} name
 * @param {Record<string, unknown>} figures
 */
export function report(t, name, figures) {
  t.diagnostic(`${name}: ${JSON.stringify(figures)}`);
  if (process.env.SCDV_RELIABILITY_FIGURES) {
    fs.appendFileSync(process.env.SCDV_RELIABILITY_FIGURES, JSON.stringify({ name, ...figures }) + '\n');
  }
}

