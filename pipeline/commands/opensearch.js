// scdv opensearch start|stop|status: a local single OpenSearch node for trying the opensearch store backend
// (`npm run opensearch`). A real cluster is the user's own: README "When one machine is not enough".
import { CLI_DEFAULTS } from '../config.js';
import { errors } from '../errors.js';
import { intFlag } from './common.js';
import { opt } from './define.js';

const USAGE = 'scdv opensearch start [--port N] [--heap-mb N] [--detach] | scdv opensearch stop | scdv opensearch status';

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: 'A local single OpenSearch node for trying the opensearch store backend (`npm run opensearch` = start; install it first: ' +
    '`npm run setup -- --opensearch`). Its data stays in .scdv/opensearch between starts.',
  subcommands: {
    start: {
      summary: 'start the node, print its URL and the config that uses it; Ctrl-C stops it',
      options: [
        opt('--port <n>', 'HTTP port', { default: String(CLI_DEFAULTS.opensearchPort) }),
        opt('--heap-mb <n>', 'JVM heap in MB (the node takes about that plus 300 MB)', { default: String(CLI_DEFAULTS.opensearchHeapMb) }),
        opt('--detach', 'leave it running in the background (`scdv opensearch stop` stops it)'),
      ],
      examples: ['scdv opensearch start', 'scdv opensearch start --port 9201 --detach'],
      run: (values, positionals) => run(values, ['start', ...positionals]),
    },
    stop: {
      summary: 'stop the node `start --detach` left running',
      examples: ['scdv opensearch stop'],
      run: (values, positionals) => run(values, ['stop', ...positionals]),
    },
    status: {
      summary: "whether the local node runs, and its cluster's health",
      options: [opt('--json', 'as JSON: {"running", "url", "pid", "health"}')],
      examples: ['scdv opensearch status'],
      run: (values, positionals) => run(values, ['status', ...positionals]),
    },
  },
  examples: ['scdv opensearch start --detach', 'scdv opensearch status', 'scdv opensearch stop'],
};

/**
 * The lines that point scdv at `url` (config file and environment forms).
 * @param {string} url
 */
function howToUse(url) {
  return `OpenSearch runs at ${url}\n` +
    'Use it with a config file holding\n' +
    `  { "store": { "backend": "opensearch", "opensearch": { "nodes": ["${url}"], "replicas": 0 } } }\n` +
    `or with the environment: SCDV_STORE_BACKEND=opensearch SCDV_OPENSEARCH_NODES=${url} SCDV_STORE_OPENSEARCH_REPLICAS=0\n` +
    '(one node holds no replica: replicas 0 keeps its health green)\n';
}

/**
 * @param {Record<string, any>} values
 * @param {string[]} positionals action first
 */
async function run(values, positionals) {
  const [action, ...extra] = positionals;
  if (!['start', 'stop', 'status'].includes(action)) throw errors.USAGE(`${USAGE}; got "${action ?? ''}"`);
  if (extra.length) throw errors.USAGE(`unexpected argument "${extra[0]}" (${USAGE})`);
  const node = await import('../store/opensearch/node.js');
  if (action === 'status') {
    const rec = node.readLocalNode();
    /** @type {{status?: string, error?: string} | null} */
    let health = null;
    if (rec) {
      try {
        health = /** @type {{status: string}} */ (await (await fetch(`${rec.url}/_cluster/health`, { signal: AbortSignal.timeout(5000) })).json());
      } catch (err) {
        health = { error: /** @type {Error} */ (err).message };
      }
    }
    if (values.json) process.stdout.write(`${JSON.stringify({ running: !!rec, url: rec?.url ?? null, pid: rec?.pid ?? null, health })}\n`);
    else if (!rec) process.stdout.write(`the local OpenSearch node is not running (\`scdv opensearch start\` starts it)\n`);
    else process.stdout.write(`the local OpenSearch node runs at ${rec.url} (pid ${rec.pid}, since ${rec.started_at}): ${health?.status ?? health?.error}\n`);
    return;
  }
  if (action === 'stop') {
    const stopped = await node.stopLocalNode();
    process.stderr.write(stopped ? `stopped the local OpenSearch node at ${stopped.url} (pid ${stopped.pid})\n` : 'the local OpenSearch node was not running\n');
    return;
  }
  const port = intFlag(values.port, '--port', { min: 1, max: 65535, integer: true }) ?? CLI_DEFAULTS.opensearchPort;
  const heapMb = intFlag(values['heap-mb'], '--heap-mb', { min: 256, integer: true }) ?? CLI_DEFAULTS.opensearchHeapMb;
  process.stderr.write(`starting OpenSearch on port ${port} with a ${heapMb} MB heap, data in ${node.localNodeDir()} (about 20-60 s)\n`);
  const t0 = Date.now();
  const cluster = await node.startLocalNode({ port, heapMb, detached: !!values.detach });
  process.stderr.write(`ready in ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
  process.stdout.write(howToUse(cluster.urls[0]));
  if (values.detach) {
    process.stderr.write('it keeps running in the background: `scdv opensearch stop` stops it\n');
    return;
  }
  process.stderr.write('Ctrl-C stops it\n');
  const [local] = cluster.nodes;
  let stopping = false;
  /** @param {NodeJS.Signals} signal */
  const stop = async (signal) => {
    stopping = true; // Ctrl-C reaches the node too (same process group): its exit code then says so, not a failure
    process.stderr.write(`\n${signal}: stopping OpenSearch\n`);
    await node.stopLocalNode();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const { code, signal } = await local.exited;
  process.removeListener('SIGINT', stop);
  process.removeListener('SIGTERM', stop);
  if (stopping) {
    process.stderr.write('OpenSearch stopped\n');
  } else {
    throw errors.OPENSEARCH_NODE_FAILED(local.name, `stopped on its own (${signal ?? code}; log ${local.dir}/out.log):\n${node.logTail(local.dir)}`);
  }
}
