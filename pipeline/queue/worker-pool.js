// Local worker processes for a queue stage (`scdv worker <stage>` children), restarted when one dies
// unexpectedly, so that a run started on one machine finishes on its own.
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { REPO_ROOT, dataDir, modelsDir, storeDir } from '../paths.js';
import { hasSetpriv } from './redis.js';

const CLI = path.join(REPO_ROOT, 'pipeline', 'scdv.cjs');

/**
 * How many local workers a run starts: never more than it has shards to do (an idle worker still holds its
 * dictionary or model, about 550 MB), and at most workerProcesses.maxPerCore per core unless
 * workerProcesses.allowMany (--allow-many-workers). A capped count is said, not silently changed.
 * @param {{stage: string, requested: number, shards: number, config: import('../config.js').Config, log: (m: string) => void, cores?: number}} options
 * @returns {number}
 */
export function localWorkerCount(options) {
  const n = Math.min(options.requested, options.shards);
  const cores = options.cores ?? os.availableParallelism();
  const limit = options.config.workerProcesses.maxPerCore * cores;
  if (n <= limit || options.config.workerProcesses.allowMany) return n;
  options.log(`${options.stage}: warning: ${options.requested} workers capped to ${limit} (${options.config.workerProcesses.maxPerCore} per core, ${cores} cores); ` +
    'pass --allow-many-workers (or set workerProcesses.allowMany) to start them all');
  return limit;
}

/**
 * Start the local workers of a sharded run (tokenise, index) once its pending shards are known: as many as
 * localWorkerCount allows.
 * @param {{stage: string, requested: number, shards: number, redisUrl: string, config: import('../config.js').Config, log: (m: string) => void, allowPaths?: string[]}} options
 *   allowPaths: the run's own files and folders outside the data folder (its corpus, its output), which its jobs may name
 * @returns {WorkerPool}
 */
export function startShardWorkers(options) {
  const count = localWorkerCount(options);
  const pool = new WorkerPool({ stage: options.stage, count, redisUrl: options.redisUrl, config: options.config, log: options.log, allowPaths: options.allowPaths });
  pool.start();
  return pool;
}

export class WorkerPool {
  /**
   * @param {{stage: string, count: number, redisUrl: string, config: import('../config.js').Config, log: (m: string) => void, maxRestarts?: number, allowPaths?: string[]}} opts
   */
  constructor(opts) {
    this.opts = opts;
    /** @type {Set<import('node:child_process').ChildProcess>} */
    this.children = new Set();
    this.restarts = 0;
    this.maxRestarts = opts.maxRestarts ?? 3 * Math.max(1, opts.count);
    this.stopping = false;
    /** Set when workers keep dying and no restart is left: the run cannot finish on its own. */
    this.failure = /** @type {string | null} */ (null);
    /** @type {string[]} */
    this.recentLog = [];
  }

  start() {
    for (let i = 0; i < this.opts.count; i++) this.spawnOne();
  }

  /** The running worker processes (a test may kill one). */
  get pids() {
    return [...this.children].map((c) => /** @type {number} */ (c.pid));
  }

  spawnOne() {
    // The configuration goes on stdin, not on the command line, where `ps` would show all of it to every user.
    const args = [CLI, 'worker', this.opts.stage, '--config-stdin'];
    if (this.opts.allowPaths?.length) args.push('--allow-paths', this.opts.allowPaths.map((p) => path.resolve(p)).join(path.delimiter));
    // Through setpriv when there is one: the kernel sends the worker SIGTERM when its owner dies, even by
    // SIGKILL (a killed `scdv serve` or `scdv index`), so no worker outlives the process that started it.
    const [cmd, argv] = hasSetpriv() ? ['setpriv', ['--pdeathsig', 'TERM', '--', process.execPath, ...args]] : [process.execPath, args];
    const child = spawn(cmd, argv, {
      // This process's folders (chosen with usePaths or the environment): its workers' jobs may name paths only there.
      env: { ...process.env, REDIS_URL: this.opts.redisUrl, SCDV_DATA_DIR: dataDir(), SCDV_MODELS_DIR: modelsDir(), SCDV_STORE_DIR: storeDir() },
      stdio: ['pipe', 'inherit', 'pipe'],
    });
    child.stdin?.on('error', () => {}); // a worker that died at once: its exit is handled below
    child.stdin?.end(JSON.stringify(this.opts.config));
    this.children.add(child);
    readline.createInterface({ input: /** @type {import('node:stream').Readable} */ (child.stderr) })
      .on('line', (l) => {
        this.recentLog.push(l);
        if (this.recentLog.length > 5) this.recentLog.shift();
        this.opts.log(l);
      });
    child.on('exit', (code, signal) => {
      this.children.delete(child);
      if (this.stopping) return;
      this.opts.log(`worker ${child.pid} exited (${signal ?? code}); its shard will be taken over`);
      if (this.restarts++ < this.maxRestarts) this.spawnOne();
      else if (this.children.size === 0) {
        this.failure = `all ${this.opts.stage} workers died (${this.restarts} restarts); last exit ${signal ?? code}` +
          (this.recentLog.length ? `; last output: ${this.recentLog.join(' | ')}` : '');
      }
    });
  }

  /** SIGTERM every worker (each finishes its shard in hand) and wait for them. */
  async stop() {
    this.stopping = true;
    await Promise.all([...this.children].map((c) => new Promise((resolve) => {
      if (c.exitCode !== null || c.signalCode !== null) return resolve(undefined);
      c.once('exit', resolve);
      c.kill('SIGTERM');
      setTimeout(() => c.kill('SIGKILL'), 30_000).unref();
    })));
  }
}
