// Local OpenSearch nodes from the install `npm run setup -- --opensearch` made: one node for trying the OpenSearch
// backend (`scdv opensearch start`), one or two for the tests (tests/lib/opensearch.js). One start path for both.
// Each node gets its own folder (config, data, logs) so the install stays read-only and can be shared. OpenSearch
// refuses to run as root, so a root caller runs it as uid 65534 (nobody) through setpriv.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { errors } from '../../errors.js';
import { OPENSEARCH_VERSION, dataDir, opensearchHome } from '../../paths.js';

/** The unprivileged user a root caller runs the nodes as. */
const NOBODY = 65534;
/** Settings every local node gets: our queries need many clauses (one per non-zero of a query vector). */
const BASE_SETTINGS = {
  'network.host': '127.0.0.1',
  'indices.query.bool.max_clause_count': 65536,
  'bootstrap.memory_lock': false,
  // Local and test nodes share a developer's disk: the default watermarks would leave replicas unassigned.
  'cluster.routing.allocation.disk.threshold_enabled': false,
};

/**
 * @typedef {object} LocalNode
 * @property {string} name
 * @property {string} url e.g. http://127.0.0.1:9200
 * @property {number} httpPort
 * @property {number} transportPort
 * @property {string} dir its folder: config/, data/, logs/, out.log
 * @property {number | undefined} pid
 * @property {Promise<{code: number | null, signal: NodeJS.Signals | null}>} exited
 * @property {() => boolean} running
 * @property {(timeoutMs?: number) => Promise<void>} stop SIGTERM, then SIGKILL after timeoutMs
 * @property {() => Promise<void>} kill SIGKILL, resolves once the process is gone
 */

/**
 * The user the nodes run as: nobody when we are root (OpenSearch refuses root), else ourselves (null).
 * @returns {{uid: number, gid: number} | null}
 */
export function nodeUser() {
  return typeof process.getuid === 'function' && process.getuid() === 0 ? { uid: NOBODY, gid: NOBODY } : null;
}

/**
 * The Java 17 runtime OpenSearch uses: $OPENSEARCH_JAVA_HOME, Debian's openjdk-17, else the `java` on PATH.
 * @returns {string}
 */
export function javaHome() {
  if (process.env.OPENSEARCH_JAVA_HOME) return process.env.OPENSEARCH_JAVA_HOME;
  const jvm = '/usr/lib/jvm';
  const debian = fs.existsSync(jvm) ? fs.readdirSync(jvm).filter((n) => /^java-17-openjdk-[a-z0-9]+$/.test(n)).sort() : [];
  if (debian.length) return path.join(jvm, debian[0]);
  const which = spawnSync('sh', ['-c', 'command -v java'], { encoding: 'utf8' });
  const java = (which.stdout || '').trim();
  if (!java) throw errors.OPENSEARCH_NOT_INSTALLED(opensearchHome(), 'no Java runtime: openjdk-17-jre-headless is missing');
  return path.dirname(path.dirname(fs.realpathSync(java)));
}

/**
 * The install, checked: its start script and the modules set-up adds (lang-painless: the re-ranking script;
 * analysis-common: the feature field's analyzer) are there. An older install is told to run set-up again.
 * @param {string} [home]
 * @returns {string}
 */
export function checkInstall(home = opensearchHome()) {
  for (const part of ['bin/opensearch', 'lib', 'modules/lang-painless/plugin-descriptor.properties', 'modules/analysis-common/plugin-descriptor.properties']) {
    if (!fs.existsSync(path.join(home, part))) throw errors.OPENSEARCH_NOT_INSTALLED(home, `${part} is missing`);
  }
  return home;
}

/**
 * Whether `user` can read `file` (every folder above it searchable): asked as that user.
 * @param {{uid: number, gid: number}} user
 * @param {string} file
 */
function readableBy(user, file) {
  const res = spawnSync('setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', 'test', '-r', file], { stdio: 'ignore' });
  return res.status === 0;
}

/**
 * The install as `user` can run it. A root caller's cache (~/.cache under /root, mode 700) is out of nobody's
 * reach: then a copy in the temporary folder, made once per install (atomically) and owned by us, not writable by
 * others, is used instead.
 * @param {string} home
 * @param {{uid: number, gid: number} | null} user
 * @returns {string}
 */
export function runnableHome(home, user) {
  if (!user || readableBy(user, path.join(home, 'lib'))) return home;
  const stamp = fs.statSync(path.join(home, 'modules', 'analysis-common', 'plugin-descriptor.properties')).mtimeMs;
  const copy = path.join(os.tmpdir(), `scdv-opensearch-${OPENSEARCH_VERSION}-${Math.round(stamp).toString(36)}`);
  if (!fs.existsSync(copy)) {
    const work = `${copy}.tmp-${process.pid}`;
    fs.rmSync(work, { recursive: true, force: true });
    fs.cpSync(home, work, { recursive: true, preserveTimestamps: true });
    fs.chmodSync(work, 0o755);
    try {
      fs.renameSync(work, copy);
    } catch (err) {
      fs.rmSync(work, { recursive: true, force: true });
      if (!fs.existsSync(copy)) throw err; // another process made it meanwhile: use theirs (checked below)
    }
  }
  const st = fs.lstatSync(copy);
  const me = typeof process.getuid === 'function' ? process.getuid() : -1;
  if (!st.isDirectory() || st.uid !== me || (st.mode & 0o022) !== 0) {
    throw errors.OPENSEARCH_NOT_INSTALLED(copy, 'this copy of the install is not ours alone (owner or mode): remove it');
  }
  return copy;
}

/**
 * A free TCP port on 127.0.0.1 (the kernel's pick; closed again before returning).
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (srv.address());
      srv.close(() => resolve(port));
    });
  });
}

/**
 * @param {Record<string, string | number | boolean | string[]>} settings
 * @returns {string} opensearch.yml (values as JSON, which YAML reads)
 */
function toYaml(settings) {
  return Object.entries(settings).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join('\n') + '\n';
}

/**
 * chown -R, for the folders a node run as another user writes to.
 * @param {string} dir
 * @param {{uid: number, gid: number}} user
 */
function chownTree(dir, user) {
  fs.chownSync(dir, user.uid, user.gid);
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) chownTree(p, user);
    else fs.chownSync(p, user.uid, user.gid);
  }
}

/**
 * Start one node (does not wait for it to answer: see waitForHealth).
 * @param {object} opts
 * @param {string} opts.dir the node's own folder (created; data persists there across restarts)
 * @param {string} opts.cluster cluster name
 * @param {string} opts.name node name
 * @param {number} opts.httpPort
 * @param {number} opts.transportPort
 * @param {{name: string, transportPort: number}[]} [opts.peers] every node of a multi-node cluster (itself included);
 *   absent: a single-node cluster
 * @param {number} [opts.heapMb] JVM heap (default 512)
 * @param {Record<string, string | number | boolean | string[]>} [opts.settings] more opensearch.yml settings
 * @param {string} [opts.home] the install (default: opensearchHome())
 * @param {boolean} [opts.detached] outlives this process (`scdv opensearch start --detach`)
 * @param {string[]} [opts.jvmOptions] more JVM options (tests: ['-XX:TieredStopAtLevel=1'])
 * @returns {LocalNode}
 */
export function startNode(opts) {
  const home = checkInstall(opts.home);
  const user = nodeUser();
  const runHome = runnableHome(home, user);
  const dir = path.resolve(opts.dir);
  const conf = path.join(dir, 'config');
  for (const d of ['data', 'logs']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  fs.rmSync(conf, { recursive: true, force: true });
  fs.mkdirSync(conf, { recursive: true });
  for (const f of ['log4j2.properties', 'jvm.options.d']) fs.cpSync(path.join(runHome, 'config', f), path.join(conf, f), { recursive: true });
  // The JVM's own files (GC log, heap dumps, crash logs) are relative to the install, which is read-only: the node's.
  const jvmOptions = fs.readFileSync(path.join(runHome, 'config', 'jvm.options'), 'utf8')
    .replace(/=(logs|data)\b/g, (_, d) => `=${path.join(dir, d)}`).replace(/file=logs\//g, `file=${path.join(dir, 'logs')}/`);
  fs.writeFileSync(path.join(conf, 'jvm.options'), jvmOptions);
  /** @type {Record<string, string | string[]>} */
  const discovery = opts.peers
    ? {
      'discovery.seed_hosts': opts.peers.map((p) => `127.0.0.1:${p.transportPort}`),
      'cluster.initial_cluster_manager_nodes': opts.peers.map((p) => p.name),
    }
    : { 'discovery.type': 'single-node' };
  fs.writeFileSync(path.join(conf, 'opensearch.yml'), toYaml({
    'cluster.name': opts.cluster,
    'node.name': opts.name,
    'http.port': opts.httpPort,
    'transport.port': opts.transportPort,
    'path.data': path.join(dir, 'data'),
    'path.logs': path.join(dir, 'logs'),
    ...BASE_SETTINGS,
    ...discovery,
    ...opts.settings,
  }));
  if (user) {
    chownTree(dir, user);
    if (!readableBy(user, conf)) throw errors.OPENSEARCH_NODE_FAILED(opts.name, `cannot start: uid ${user.uid} cannot reach ${dir} (a folder above it is private)`);
  }
  const heap = opts.heapMb ?? 512;
  /** @type {NodeJS.ProcessEnv} */
  const env = {
    ...process.env,
    OPENSEARCH_JAVA_HOME: javaHome(),
    OPENSEARCH_PATH_CONF: conf,
    // No pre-touching of the heap: faster start, and memory is only taken as it is used.
    OPENSEARCH_JAVA_OPTS: [`-Xms${heap}m`, `-Xmx${heap}m`, '-XX:-AlwaysPreTouch', ...(opts.jvmOptions ?? [])].join(' '),
  };
  delete env.JAVA_HOME;
  const script = path.join(runHome, 'bin', 'opensearch');
  const [cmd, args] = user
    ? ['setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', script]]
    : [script, []];
  const logFile = path.join(dir, 'out.log');
  const out = fs.openSync(logFile, 'a');
  // setpriv and the start script exec: the child's pid is the JVM's, so a SIGKILL reaches OpenSearch itself.
  const child = spawn(cmd, args, { cwd: dir, env, stdio: ['ignore', out, out], detached: opts.detached });
  fs.closeSync(out);
  if (opts.detached) child.unref();
  /** @type {{code: number | null, signal: NodeJS.Signals | null} | null} */
  let exit = null;
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => resolve(exit = { code, signal }));
    child.on('error', (err) => {
      fs.appendFileSync(logFile, `\n[scdv] could not start ${cmd}: ${err.message}\n`);
      resolve(exit = { code: -1, signal: null });
    });
  });
  const running = () => exit === null;
  return {
    name: opts.name,
    url: `http://127.0.0.1:${opts.httpPort}`,
    httpPort: opts.httpPort,
    transportPort: opts.transportPort,
    dir,
    pid: child.pid,
    exited,
    running,
    async stop(timeoutMs = 30_000) {
      if (!running()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (running()) child.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * The last lines of a node's output, for error messages.
 * @param {string} dir
 * @param {number} [lines]
 */
export function logTail(dir, lines = 15) {
  try {
    return fs.readFileSync(path.join(dir, 'out.log'), 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

const STATUS_RANK = { red: 0, yellow: 1, green: 2 };
/** How long a cluster may sit below the wanted status, with every node in, before failed allocations are retried. */
const RETRY_FAILED_AFTER_MS = 15_000;

/**
 * @param {string} url
 * @param {string} route
 * @param {RequestInit} [init]
 */
async function clusterCall(url, route, init) {
  const res = await fetch(`${url}${route}`, { ...init, signal: AbortSignal.timeout(5000) });
  return /** @type {any} */ (await res.json());
}

/**
 * Why the first unassigned shard is unassigned, in one line (for the error when a wait fails).
 * @param {string} url
 */
async function allocationExplanation(url) {
  try {
    const e = await clusterCall(url, '/_cluster/allocation/explain', { method: 'POST' });
    if (e.error) return `allocation explain: ${JSON.stringify(e.error.reason ?? e.error).slice(0, 300)}`;
    const decisions = (e.node_allocation_decisions ?? [])
      .map((/** @type {any} */ d) => `${d.node_name}: ${(d.deciders ?? []).map((/** @type {any} */ x) => x.explanation).join('; ')}`);
    return `unassigned ${e.index}[${e.shard}] ${e.primary ? 'primary' : 'replica'}: ${e.unassigned_info?.reason ?? ''} `
      + `${e.unassigned_info?.details ?? ''} ${e.allocate_explanation ?? ''} ${decisions.join(' | ')}`.replace(/\s+/g, ' ').slice(0, 900);
  } catch (err) {
    return `allocation explain failed: ${/** @type {Error} */ (err).message}`;
  }
}

/**
 * Wait until the cluster behind `url` reports `status` or better (and, when given, `nodes` nodes).
 * A shard copy whose allocation failed five times (e.g. a node restarted under load while its shard lock was still
 * held) is never retried by OpenSearch on its own, so a cluster that stays below `status` with every node in for
 * RETRY_FAILED_AFTER_MS gets `_cluster/reroute?retry_failed=true`, what an operator would run (RELIABILITY.md).
 * @param {string} url
 * @param {object} [opts]
 * @param {'green' | 'yellow'} [opts.status] default yellow
 * @param {number} [opts.nodes]
 * @param {number} [opts.timeoutMs] default 120 s
 * @param {LocalNode[]} [opts.watch] nodes whose early exit ends the wait with their log
 * @returns {Promise<{status: string, number_of_nodes: number}>} the last health answer
 */
export async function waitForHealth(url, opts = {}) {
  const want = opts.status ?? 'yellow';
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  let last = 'no answer yet';
  let belowSince = 0;
  let retries = 0;
  for (;;) {
    for (const n of opts.watch ?? []) {
      if (!n.running()) {
        const { code, signal } = await n.exited;
        throw errors.OPENSEARCH_NODE_FAILED(n.name, `did not start: it exited (${signal ?? code}; log ${path.join(n.dir, 'out.log')}):\n${logTail(n.dir)}`);
      }
    }
    try {
      const res = await fetch(`${url}/_cluster/health`, { signal: AbortSignal.timeout(5000) });
      const health = /** @type {{status: 'red' | 'yellow' | 'green', number_of_nodes: number}} */ (await res.json());
      last = `status ${health.status}, ${health.number_of_nodes} node(s)`;
      const allIn = !opts.nodes || health.number_of_nodes >= opts.nodes;
      if (res.ok && STATUS_RANK[health.status] >= STATUS_RANK[want] && allIn) return health;
      if (res.ok && allIn) {
        belowSince ||= Date.now();
        if (Date.now() - belowSince >= RETRY_FAILED_AFTER_MS) {
          await clusterCall(url, '/_cluster/reroute?retry_failed=true', { method: 'POST' });
          retries++;
          belowSince = Date.now();
        }
      } else {
        belowSince = 0;
      }
    } catch (err) {
      last = /** @type {Error} */ (err).message;
    }
    if (Date.now() > deadline) {
      const log = opts.watch?.[0] ? `; log ${path.join(opts.watch[0].dir, 'out.log')}` : '';
      const why = last.startsWith('status') ? `; ${await allocationExplanation(url)}` : '';
      const retried = retries ? `; failed allocations retried ${retries} time(s)` : '';
      throw errors.OPENSEARCH_NODE_FAILED(url, `did not start: not ${want} within ${opts.timeoutMs ?? 120_000} ms (${last}${log}${retried}${why})`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * @typedef {object} LocalCluster
 * @property {string} name
 * @property {LocalNode[]} nodes
 * @property {string[]} urls
 * @property {string[]} dataDirs
 * @property {(i: number) => Promise<void>} kill SIGKILL node i
 * @property {(i: number) => Promise<LocalNode>} restart start node i again (same ports, same data), once stopped
 * @property {(status?: 'green' | 'yellow', timeoutMs?: number) => Promise<{status: string, number_of_nodes: number}>} waitHealth
 *   every running node in the cluster and at least `status`
 * @property {() => Promise<void>} stop every node (SIGTERM, then SIGKILL)
 */

/**
 * Start a cluster of `nodes` local nodes under `dir` (one subfolder each) and wait until it is yellow (1 node) or
 * has every node (more).
 * @param {object} opts
 * @param {string} opts.dir
 * @param {string} opts.name cluster name (node names are <name>-<i>)
 * @param {number} [opts.nodes] default 1
 * @param {number[]} [opts.httpPorts] default free ports
 * @param {number} [opts.heapMb]
 * @param {number} [opts.timeoutMs] for the start, default 180 s
 * @param {Record<string, string | number | boolean | string[]>} [opts.settings]
 * @param {boolean} [opts.detached] the nodes outlive this process
 * @param {string[]} [opts.jvmOptions]
 * @returns {Promise<LocalCluster>}
 */
export async function startCluster(opts) {
  const count = opts.nodes ?? 1;
  /** @type {{name: string, httpPort: number, transportPort: number, dir: string}[]} */
  const specs = [];
  for (let i = 0; i < count; i++) {
    specs.push({
      name: `${opts.name}-${i}`,
      httpPort: opts.httpPorts?.[i] ?? await freePort(),
      transportPort: await freePort(),
      dir: path.join(opts.dir, `node-${i}`),
    });
  }
  const peers = count > 1 ? specs.map((s) => ({ name: s.name, transportPort: s.transportPort })) : undefined;
  /** @param {number} i */
  const launch = (i) => startNode({ ...specs[i], cluster: opts.name, peers, heapMb: opts.heapMb, settings: opts.settings, detached: opts.detached, jvmOptions: opts.jvmOptions });
  const nodes = specs.map((_, i) => launch(i));
  const timeoutMs = opts.timeoutMs ?? 180_000;
  /** @type {LocalCluster['waitHealth']} */
  const waitHealth = async (status = 'yellow', ms = timeoutMs) => {
    const up = nodes.filter((n) => n.running());
    return waitForHealth(up[0]?.url ?? nodes[0].url, { status, nodes: up.length, timeoutMs: ms, watch: up });
  };
  const cluster = {
    name: opts.name,
    nodes,
    get urls() { return nodes.map((n) => n.url); },
    dataDirs: specs.map((s) => path.join(s.dir, 'data')),
    waitHealth,
    /** @param {number} i */
    async kill(i) { await nodes[i].kill(); },
    /** @param {number} i */
    async restart(i) {
      await nodes[i].stop();
      nodes[i] = launch(i);
      return nodes[i];
    },
    async stop() { await Promise.all(nodes.map((n) => n.stop())); },
  };
  try {
    await waitHealth('yellow');
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

// The node `scdv opensearch start` runs, for trying the backend: its folder is dataDir()/opensearch, and node.json
// there says which process serves which URL, so that `status` and `stop` (another terminal) find it.

/** The local node's folder (data persists across starts). */
export const localNodeDir = () => path.join(dataDir(), 'opensearch');
const localNodeFile = () => path.join(localNodeDir(), 'node.json');

/** Whether a process of this id exists (one of another user's counts: EPERM). @param {number} pid */
export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return /** @type {NodeJS.ErrnoException} */ (err).code === 'EPERM';
  }
}

/**
 * Whether something listens on 127.0.0.1:port.
 * @param {number} port
 * @returns {Promise<boolean>}
 */
function portTaken(port) {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    sock.once('connect', () => { sock.destroy(); resolve(true); });
    sock.once('error', () => resolve(false));
  });
}

/**
 * The local node as node.json records it, if its process still runs.
 * @returns {{pid: number, url: string, started_at: string} | null}
 */
export function readLocalNode() {
  let rec;
  try {
    rec = JSON.parse(fs.readFileSync(localNodeFile(), 'utf8'));
  } catch {
    return null;
  }
  return Number.isInteger(rec?.pid) && alive(rec.pid) ? rec : null;
}

/**
 * Start the local node and wait until it answers (yellow or green).
 * @param {{port: number, heapMb: number, detached?: boolean}} opts
 * @returns {Promise<LocalCluster>}
 */
export async function startLocalNode(opts) {
  const running = readLocalNode();
  if (running) throw errors.OPENSEARCH_NODE_FAILED('scdv-local', `is running already at ${running.url} (pid ${running.pid}); \`scdv opensearch stop\` stops it`);
  if (await portTaken(opts.port)) throw errors.OPENSEARCH_NODE_FAILED('scdv-local', `cannot start: port ${opts.port} is taken by another program: choose another with --port`);
  const dir = localNodeDir();
  fs.mkdirSync(dir, { recursive: true });
  const cluster = await startCluster({ dir, name: 'scdv-local', httpPorts: [opts.port], heapMb: opts.heapMb, detached: opts.detached });
  const node = cluster.nodes[0];
  fs.writeFileSync(localNodeFile(), JSON.stringify({ pid: node.pid, url: node.url, started_at: new Date().toISOString() }, null, 2) + '\n');
  node.exited.then(() => { if (readLocalNode() === null) fs.rmSync(localNodeFile(), { force: true }); });
  return cluster;
}

/**
 * Stop the local node (SIGTERM, SIGKILL after timeoutMs).
 * @param {number} [timeoutMs]
 * @returns {Promise<{pid: number, url: string} | null>} what was stopped; null when none ran
 */
export async function stopLocalNode(timeoutMs = 30_000) {
  const rec = readLocalNode();
  if (!rec) {
    fs.rmSync(localNodeFile(), { force: true });
    return null;
  }
  process.kill(rec.pid, 'SIGTERM');
  const deadline = Date.now() + timeoutMs;
  while (alive(rec.pid)) {
    if (Date.now() > deadline) process.kill(rec.pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
  }
  fs.rmSync(localNodeFile(), { force: true });
  return rec;
}
