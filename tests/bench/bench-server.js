// The server under test of the REST benchmarks (bench:api, writes.bench.js, bench:events), in a child process of
// the bench script so that autocannon's load and the server do not share an event loop. Both sides live here:
// the parent forks the bench script with `--serve-child` and a spec (SCDV_BENCH_SPEC), the child starts the server
// from the spec and sends its URL. The child also answers 'loop-cpu' with its event-loop thread's CPU time.
import fs from 'node:fs';
import path from 'node:path';
import { fork } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import os from 'node:os';
import { createRequire } from 'node:module';

/** True in the child process of a bench script (started by forkBenchServer). */
export const isBenchServerChild = () => process.argv[2] === '--serve-child';

/**
 * Fork `script` as the server child.
 * @param {string} script the bench script's own path
 * @param {Record<string, unknown>} spec what the child needs (JSON): redisUrl, config overrides, …
 * @param {{root?: string, env?: Record<string, string>, name?: string, execArgv?: string[], cpus?: string}} [o] root: a checkout whose
 *   pipeline/ and server/ the child runs (A/B against another build); env: extra environment of the child; execArgv:
 *   node's options for it (e.g. --cpu-prof, which NODE_OPTIONS does not take); cpus: the CPUs the child and every
 *   thread it starts may run on (taskset's list, e.g. "0"), so that the load generator does not take its CPU
 * @returns {{proc: import('node:child_process').ChildProcess, listening: Promise<string>}} listening: its URL
 */
export function forkBenchServer(script, spec, o = {}) {
  const env = { ...process.env, ...o.env, SCDV_BENCH_SPEC: JSON.stringify(spec) };
  // An older checkout that searched on libuv's pool had its `scdv serve` size that pool (thread-pool.cjs, when
  // present): its child gets the same, so that A/B runs against it compare servers as deployed.
  const oldPool = o.root && path.join(o.root, 'pipeline', 'store', 'thread-pool.cjs');
  if (oldPool && fs.existsSync(oldPool)) createRequire(import.meta.url)(oldPool).sizeThreadPool(os.availableParallelism(), env);
  const execArgv = o.execArgv ?? process.execArgv;
  // Pinned through taskset before node starts, so that every thread of the child inherits the mask.
  const pinned = o.cpus ? { execPath: 'taskset', execArgv: ['-c', o.cpus, process.execPath, ...execArgv] } : { execArgv };
  const proc = fork(script, ['--serve-child', ...(o.root ? [o.root] : [])], { env, stdio: 'inherit', ...pinned });
  const listening = new Promise((/** @type {(u: string) => void} */ resolve, reject) => {
    proc.once('message', (m) => resolve(/** @type {any} */ (m).url));
    proc.once('exit', (code) => reject(new Error(`server${o.name ? ` ${o.name}` : ''} exited (${code})`)));
  });
  return { proc, listening };
}

/** @param {import('node:child_process').ChildProcess} proc stop a server child and wait for it */
export async function stopBenchServer(proc) {
  if (proc.exitCode !== null) return;
  proc.kill('SIGTERM');
  await new Promise((r) => proc.once('exit', r));
}

/**
 * The server child: starts the server of `root` (default: this checkout) with the config `configOf(spec,
 * loadConfig, imp)` returns (imp: import a module of that checkout), reports its URL, answers 'loop-cpu', stops on
 * SIGTERM.
 * @param {object} o
 * @param {string} o.repo this checkout
 * @param {string} o.model
 * @param {(spec: any, loadConfig: (o: any) => any, imp: (p: string) => Promise<any>) => any} o.configOf
 * @param {(app: import('fastify').FastifyInstance) => void} [o.configure] extra routes
 */
export async function serveBenchChild(o) {
  const root = process.argv[3] ?? o.repo;
  const spec = JSON.parse(/** @type {string} */ (process.env.SCDV_BENCH_SPEC));
  const imp = (/** @type {string} */ p) => import(pathToFileURL(path.join(root, p)).href);
  const { loadConfig } = await imp('pipeline/config.js');
  const { startServer } = await imp('server/start.js');
  const server = await startServer({
    config: await o.configOf(spec, loadConfig, imp), model: o.model, redisUrl: spec.redisUrl, host: '127.0.0.1', port: 0,
    ...(o.configure ? { configure: o.configure } : {}),
  });
  /** @type {NonNullable<typeof process.send>} */ (process.send)({ url: server.url });
  // CPU time of the event-loop thread alone (Linux: its tid is the pid), for the writes' share of it.
  process.on('message', (m) => {
    if (m !== 'loop-cpu') return;
    const f = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    /** @type {NonNullable<typeof process.send>} */ (process.send)({ loopCpuMs: (Number(f[11]) + Number(f[12])) * 10 }); // utime + stime, 100 ticks/s
  });
  process.once('SIGTERM', () => { server.close().then(() => process.exit(0)); });
}

/**
 * A server child's event-loop CPU time so far, ms.
 * @param {import('node:child_process').ChildProcess} proc
 * @returns {Promise<number>}
 */
export function benchServerLoopCpu(proc) {
  return new Promise((resolve) => {
    const on = (/** @type {any} */ m) => { if (m?.loopCpuMs !== undefined) { proc.off('message', on); resolve(m.loopCpuMs); } };
    proc.on('message', on);
    proc.send('loop-cpu');
  });
}
