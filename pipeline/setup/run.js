// Small process helpers for the setup steps (built-ins only: setup runs before node_modules exists).
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';

/**
 * Run a command, inheriting stdio unless `quiet`; throw with the command line and its output on failure.
 * @param {string} cmd
 * @param {string[]} args
 * @param {{cwd?: string, quiet?: boolean, env?: NodeJS.ProcessEnv, timeoutMs?: number}} [opts]
 * @returns {string} stdout when quiet, '' otherwise
 */
export function run(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: opts.quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    encoding: 'utf8',
    timeout: opts.timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.error) throw new Error(`${cmd} ${args.join(' ')}: ${res.error.message}`);
  if (res.status !== 0) {
    const out = opts.quiet ? `\n${(res.stderr || '').trim()}\n${(res.stdout || '').trim()}`.trimEnd() : '';
    throw new Error(`\`${cmd} ${args.join(' ')}\` exited with ${res.status ?? res.signal}${out}`);
  }
  return opts.quiet ? res.stdout : '';
}

/**
 * True when `cmd` runs (exit 0) with the given args.
 * @param {string} cmd
 * @param {string[]} args
 */
export function succeeds(cmd, args) {
  const res = spawnSync(cmd, args, { stdio: 'ignore', timeout: 30_000 });
  return !res.error && res.status === 0;
}

/**
 * @param {string} cmd
 * @returns {boolean} whether `cmd` is on PATH
 */
export function onPath(cmd) {
  return succeeds('sh', ['-c', `command -v ${cmd}`]);
}

/**
 * SHA-256 of a file's content, streamed in 1 MiB reads.
 * @param {string} file
 */
export function hashFile(file) {
  const h = crypto.createHash('sha256');
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    let n;
    while ((n = fs.readSync(fd, buf, 0, buf.length, null)) > 0) h.update(buf.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  return h.digest('hex');
}

/** @param {string[]} parts */
export function hashStrings(parts) {
  return crypto.createHash('sha256').update(parts.join('\0')).digest('hex');
}

/**
 * Read a small stamp file; '' when absent.
 * @param {string} file
 */
export function readStamp(file) {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}
