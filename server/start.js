// Listening, the process cluster, and graceful shutdown.
//
// startServer() runs the server in this process. runServe() is `scdv serve`: one process, or with
// --workers N a node:cluster primary that owns what must exist once (Redis when private, the local embed
// workers, metrics aggregation) and N workers that each open the model and the store and accept on the one
// port. SIGTERM/SIGINT: stop accepting, let in-flight requests finish, then close Bull, Redis and the store.
import cluster from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { connectOrStartRedis } from '../pipeline/queue/redis.js';
import { WorkerPool } from '../pipeline/queue/worker-pool.js';
import { buildApp } from './app.js';
import { Metrics, serveClusterMetrics } from './prometheus.js';
import { ModelState } from './model-state.js';
import { activeRecords, resolveModelName } from '../pipeline/serving/index.js';
import { QueueHub } from './redis-queues.js';
import { ResultCache } from './cache.js';
import { keepBulkJobs } from './bulk-uploads.js';

/**
 * @typedef {object} StartOptions
 * @property {import('../pipeline/config.js').Config} config
 * @property {string} [model] serve this model (default: the active one, see pipeline/serving/)
 * @property {string} [host] default server.host
 * @property {number} [port] default server.port (0: any free port)
 * @property {string} [redisUrl] default REDIS_URL, else a private redis-server for this server's lifetime
 * @property {number} [indexWorkers] local `embed` worker processes for bulk jobs (default server.indexWorkers)
 * @property {any} [logger] a Fastify logger option (default: pino at server.logLevel)
 * @property {(app: import('fastify').FastifyInstance) => void | Promise<void>} [configure] add routes or hooks
 *   before listening (the benchmark's constant route, say)
 */

/**
 * @typedef {object} RunningServer
 * @property {string} url e.g. http://127.0.0.1:8080
 * @property {import('fastify').FastifyInstance} app
 * @property {import('./app.js').AppContext} ctx
 * @property {() => Promise<void>} close graceful: in-flight requests finish first
 */

/**
 * Run the server in this process.
 * @param {StartOptions} opts
 * @returns {Promise<RunningServer>}
 */
export async function startServer(opts) {
  const { config } = opts;
  const s = config.server;
  const redis = opts.redisUrl ? { url: opts.redisUrl, stop: async () => {}, private: false } : await connectOrStartRedis();
  /** @type {(() => Promise<void>)[]} */
  const cleanups = [() => redis.stop()];
  const cleanup = async () => { for (const fn of cleanups.reverse()) await fn().catch(() => {}); };
  try {
    const metrics = new Metrics();
    metrics.attachWorker();
    // Logs before the app exists (model loading) go to stderr; the app's logger takes over once built.
    const early = { info: () => {}, error: (/** @type {any} */ o, /** @type {string=} */ m) => { process.stderr.write(`scdv serve: ${m} ${JSON.stringify(o)}\n`); } };
    const models = new ModelState({ config, records: activeRecords(config, { redisUrl: redis.url, privateRedis: redis.private }), log: early });
    cleanups.push(() => models.close());
    await models.start(opts.model);
    /** @type {import('./app.js').AppContext} */
    const ctx = { config, models, hub: null, metrics, status: { shuttingDown: false }, relatedCache: new ResultCache(s.relatedCacheEntries, s.relatedCacheBytes) };
    const hubLog = { warn: (/** @type {any} */ o, /** @type {string=} */ m) => { ctx.log?.warn(o, m); }, info: (/** @type {any} */ o) => { ctx.log?.info(o); } };
    const hub = new QueueHub({ redisUrl: redis.url, config, log: hubLog });
    ctx.hub = hub;
    cleanups.push(() => hub.close());
    await hub.ready(2000);
    // Bulk jobs whose shards Redis lost (a private Redis, or one without persistence, restarted) go on.
    const stopBulkJobs = keepBulkJobs(hub, config, hubLog);
    cleanups.push(async () => stopBulkJobs());
    const app = await buildApp(ctx, { logger: opts.logger });
    ctx.log = app.log;
    models.log = app.log;
    models.watch();
    await opts.configure?.(app);
    const indexWorkers = opts.indexWorkers ?? s.indexWorkers;
    if (indexWorkers > 0) {
      const pool = new WorkerPool({ stage: 'index', count: indexWorkers, redisUrl: redis.url, config: withoutKeys(config), log: (m) => app.log.info(m) });
      pool.start();
      cleanups.push(() => pool.stop());
    }
    await app.listen({ host: opts.host ?? s.host, port: opts.port ?? s.port });
    const addr = /** @type {import('node:net').AddressInfo} */ (app.server.address());
    const shownHost = ['0.0.0.0', '::'].includes(addr.address) ? '127.0.0.1' : addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    let closing = null;
    return {
      url: `http://${shownHost}:${addr.port}`,
      app,
      ctx,
      close() {
        closing ??= (async () => {
          ctx.status.shuttingDown = true;
          // Stops accepting, closes idle keep-alive connections, waits for requests in flight.
          const timer = setTimeout(() => app.server.closeAllConnections(), s.shutdownTimeoutMs);
          await app.close();
          clearTimeout(timer);
          await cleanup();
        })();
        return closing;
      },
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/**
 * The config for worker processes (passed on their command line): without the key digests.
 * @param {import('../pipeline/config.js').Config} config
 */
const withoutKeys = (config) => ({ ...config, server: { ...config.server, apiKeyHashes: [] } });

/**
 * Close on SIGTERM/SIGINT, then exit.
 * @param {() => Promise<void>} close
 * @param {(m: string) => void} log
 */
function exitOnSignals(close, log) {
  const onSignal = (/** @type {string} */ sig) => {
    log(`${sig}: finishing in-flight requests, then stopping`);
    close().then(() => process.exit(0), (err) => { log(`shutdown failed: ${err?.message ?? err}`); process.exit(1); });
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}

/**
 * `scdv serve`: one process, or a cluster of `workers` processes on one port.
 * @param {StartOptions & {workers?: number, onListening?: (url: string) => void}} opts
 */
export async function runServe(opts) {
  const workers = opts.workers ?? opts.config.server.workers;
  const say = (/** @type {string} */ m) => process.stderr.write(`scdv serve: ${m}\n`);
  if (workers <= 1) {
    const server = await startServer(opts);
    say(`model ${server.ctx.models.current?.name}, ${server.url} (API docs: ${server.url}/docs)`);
    opts.onListening?.(server.url);
    exitOnSignals(server.close, say);
    return;
  }
  const { config } = opts;
  const redis = opts.redisUrl ? { url: opts.redisUrl, stop: async () => {}, private: false } : await connectOrStartRedis();
  // Resolved once, recorded in the active-model record that every worker reads.
  const records = activeRecords(config, { redisUrl: redis.url, privateRedis: redis.private });
  const model = await resolveModelName(opts.model, config, { records }).finally(() => records.close());
  const indexWorkers = opts.indexWorkers ?? config.server.indexWorkers;
  const pool = indexWorkers > 0 ? new WorkerPool({ stage: 'index', count: indexWorkers, redisUrl: redis.url, config: withoutKeys(config), log: say }) : null;
  pool?.start();
  serveClusterMetrics();
  // Workers run this file; flags that carry code of their own (-e, --input-type, -p) stay with the primary.
  cluster.setupPrimary({ exec: fileURLToPath(import.meta.url), args: [], execArgv: workerExecArgv(process.execArgv) });
  const spec = JSON.stringify({ config, host: opts.host ?? config.server.host, port: opts.port ?? config.server.port, redisUrl: redis.url });
  let stopping = false;
  let listening = 0;
  const fork = () => cluster.fork({ SCDV_SERVE_WORKER: spec });
  cluster.on('listening', (_w, addr) => {
    if (++listening !== workers) return;
    const host = ['0.0.0.0', '::', null, undefined].includes(/** @type {any} */ (addr.address)) ? '127.0.0.1' : addr.address;
    const url = `http://${host}:${addr.port}`;
    say(`model ${model}, ${workers} processes, ${url} (API docs: ${url}/docs)`);
    opts.onListening?.(url);
  });
  /** @type {number[]} times of recent restarts: a worker that cannot start must not be restarted for ever */
  const restarts = [];
  cluster.on('exit', (w, code, signal) => {
    if (stopping) return;
    const now = Date.now();
    restarts.push(now);
    while (restarts.length && now - restarts[0] > 60_000) restarts.shift();
    if (restarts.length > 3 * workers) {
      say(`workers keep exiting (${restarts.length} in a minute, last ${signal ?? code}); stopping`);
      process.kill(process.pid, 'SIGTERM');
      return;
    }
    say(`worker ${w.process.pid} exited (${signal ?? code}); starting another`);
    fork();
  });
  for (let i = 0; i < workers; i++) fork();
  exitOnSignals(async () => {
    stopping = true;
    // Each worker closes gracefully on SIGTERM; the primary waits, then stops what it owns.
    await Promise.all(Object.values(cluster.workers ?? {}).map((w) => new Promise((resolve) => {
      if (!w || w.isDead()) return resolve(undefined);
      w.once('exit', resolve);
      w.process.kill('SIGTERM');
      setTimeout(() => w.process.kill('SIGKILL'), config.server.shutdownTimeoutMs + 5000).unref();
    })));
    await pool?.stop();
    await redis.stop();
  }, say);
}

/**
 * The primary's Node flags without those that make node run other code than the exec file.
 * @param {string[]} argv
 */
function workerExecArgv(argv) {
  const out = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-e' || a === '--eval' || a === '-p' || a === '--print') { i++; continue; }
    if (a.startsWith('--eval=') || a.startsWith('--print=') || a.startsWith('--input-type') || a === '-i' || a === '--interactive') continue;
    out.push(a);
  }
  return out;
}

// A cluster worker forked by runServe: start the server from the spec in the environment.
if (cluster.isWorker && process.env.SCDV_SERVE_WORKER) {
  const spec = JSON.parse(process.env.SCDV_SERVE_WORKER);
  delete process.env.SCDV_SERVE_WORKER;
  startServer({ config: spec.config, host: spec.host, port: spec.port, redisUrl: spec.redisUrl, indexWorkers: 0 }).then(
    (server) => {
      // The primary's Ctrl-C reaches every process of the group: only the primary decides when to stop.
      process.on('SIGINT', () => {});
      process.once('SIGTERM', () => { server.close().then(() => process.exit(0), () => process.exit(1)); });
    },
    (err) => { process.stderr.write(`scdv serve worker ${process.pid}: ${err?.message ?? err}\n`); process.exit(1); },
  );
}
