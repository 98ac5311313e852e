// Real OpenSearch for tests, as tests/reliability start a private Redis: local nodes (one or two for the tests, three
// for the cluster benchmark) from the cached install (`npm run setup -- --opensearch`), on free ports, with private
// temporary data folders removed on stop() — or, for a benchmark that keeps a loaded cluster, in a given folder that
// stop() leaves in place.
// The start code is the library's (pipeline/store/opensearch/node.js), the same that `scdv opensearch start` uses.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startCluster } from '../../pipeline/store/opensearch/node.js';

/**
 * @typedef {object} TestOpenSearch
 * @property {string[]} urls one per node, e.g. http://127.0.0.1:41234
 * @property {string[]} dataDirs each node's path.data
 * @property {import('../../pipeline/store/opensearch/node.js').LocalNode[]} nodes
 * @property {() => Promise<void>} stop every node, then the temporary folders
 * @property {(i: number) => Promise<void>} kill SIGKILL node i (resolves once it is gone)
 * @property {(i: number) => Promise<void>} restart start node i again (same ports and data) and wait until every
 *   running node is back in the cluster
 * @property {(status?: 'green' | 'yellow', timeoutMs?: number) => Promise<{status: string, number_of_nodes: number}>} waitHealth
 */

/**
 * @param {{nodes?: number, heapMb?: number, name?: string, settings?: Record<string, string | number | boolean | string[]>, fastStart?: boolean, dir?: string, detached?: boolean}} [opts]
 *   fastStart (default true): the JIT stops at its first tier, which starts a node in about half the time and
 *   serves a test's few thousand requests faster too (measured: 12-16 s vs 30-34 s to start on this 2-core
 *   machine under load); benchmarks pass false, as a long-running node wants the optimising tier.
 *   dir: the cluster's folder (one subfolder per node), created if missing and kept by stop(); default a temporary
 *   one that stop() removes. detached: the nodes outlive this process (a loaded cluster queried again later).
 * @returns {Promise<TestOpenSearch>}
 */
export async function startOpenSearch(opts = {}) {
  const name = opts.name ?? 'scdv-test';
  const keep = Boolean(opts.dir);
  const dir = opts.dir ? path.resolve(opts.dir) : fs.mkdtempSync(path.join(os.tmpdir(), `${name}-`));
  fs.mkdirSync(dir, { recursive: true });
  fs.chmodSync(dir, 0o755); // a root caller's nodes run as nobody, who must reach their folders
  let cluster;
  try {
    cluster = await startCluster({
      dir, name, nodes: opts.nodes ?? 1, heapMb: opts.heapMb ?? 512, settings: opts.settings,
      jvmOptions: opts.fastStart === false ? [] : ['-XX:TieredStopAtLevel=1'], detached: opts.detached,
    });
  } catch (err) {
    if (!keep) fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const c = cluster;
  return {
    get urls() { return c.urls; },
    dataDirs: c.dataDirs,
    get nodes() { return c.nodes; },
    async stop() {
      await c.stop();
      if (!keep) fs.rmSync(dir, { recursive: true, force: true });
    },
    kill: (i) => c.kill(i),
    async restart(i) {
      await c.restart(i);
      await c.waitHealth('yellow');
    },
    waitHealth: (status, timeoutMs) => c.waitHealth(status, timeoutMs),
  };
}

/**
 * The node a test file runs against: the development cluster at SCDV_TEST_OPENSEARCH_URL, else one node started
 * here. The file's indices carry a prefix of their own, so that files sharing a cluster never touch each other's.
 * @param {string} tag a few letters naming the file, in its prefix `scdv-<tag>-<random>-`
 * @returns {Promise<{url: string, prefix: string, stop: () => Promise<void>}>} stop: deletes
 *   the prefix's indices, then stops the node started here (a cluster given by URL keeps running)
 */
export async function testOpenSearch(tag) {
  const external = process.env.SCDV_TEST_OPENSEARCH_URL;
  const cluster = external ? null : await startOpenSearch({ nodes: 1 });
  const url = external ?? /** @type {TestOpenSearch} */ (cluster).urls[0];
  const prefix = `scdv-${tag}-${randomBytes(3).toString('hex')}-`;
  return {
    url, prefix,
    async stop() {
      await fetch(`${url}/${prefix}*`, { method: 'DELETE' }).catch(() => {});
      await cluster?.stop();
    },
  };
}
