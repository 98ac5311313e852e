// The server as a separate process (`scdv serve`), so that a test can SIGKILL it, read its logs and its
// resident memory. Uses the folders of the environment (tests/server/helpers.js sets them).
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'pipeline', 'cli.js');

/**
 * @typedef {object} ServeProcess
 * @property {string} url
 * @property {number} pid
 * @property {string[]} logs every stdout and stderr line so far
 * @property {import('node:child_process').ChildProcess} child
 * @property {(signal?: NodeJS.Signals) => Promise<void>} stop
 * @property {() => number} rssBytes resident memory of the server process
 */

/**
 * @param {{config: object, model: string, redisUrl: string, dir: string, indexWorkers?: number, env?: NodeJS.ProcessEnv}} o
 * @returns {Promise<ServeProcess>}
 */
export async function serveProcess(o) {
  const configFile = path.join(o.dir, `serve-config-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
  fs.writeFileSync(configFile, JSON.stringify(o.config));
  const child = spawn(process.execPath, [
    CLI, 'serve', '--model', o.model, '--host', '127.0.0.1', '--port', '0', '--index-workers', String(o.indexWorkers ?? 0), '--config', configFile,
  ], { env: { ...process.env, REDIS_URL: o.redisUrl, ...(o.env ?? {}) }, stdio: ['ignore', 'pipe', 'pipe'] });
  /** @type {string[]} */
  const logs = [];
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`scdv serve did not start: ${logs.slice(-10).join('\n')}`)), 60_000);
    for (const stream of [child.stdout, child.stderr]) {
      readline.createInterface({ input: /** @type {import('node:stream').Readable} */ (stream) }).on('line', (l) => {
        logs.push(l);
        const m = /(http:\/\/127\.0\.0\.1:\d+) \(API docs/.exec(l);
        if (m) { clearTimeout(timer); resolve(m[1]); }
      });
    }
    child.once('exit', (code, sig) => { clearTimeout(timer); reject(new Error(`scdv serve exited (${sig ?? code}): ${logs.slice(-10).join('\n')}`)); });
  });
  return {
    url,
    pid: /** @type {number} */ (child.pid),
    logs,
    child,
    stop: (signal = 'SIGTERM') => new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
    }),
    rssBytes: () => {
      const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      return m ? Number(m[1]) * 1024 : 0;
    },
  };
}
