// The end of a bulk load on OpenSearch: a collection's index merged to one segment per shard, without the load's
// `_recovery_source`. Since `_source` leaves out `f` and `v` (encoding.js), the engine keeps each document's
// whole original source beside it for operations-based recovery of shard copies, and prunes it only in merges,
// only below the last commit and every shard copy's retention lease. A merge straight after a load keeps it
// (~5 KB a document against ~3.2 KB). The sequence: `_flush` (a commit), wait until every retention lease of
// every copy retains past the copy's max_seq_no (the leases advance on a background sync every 30 s), then
// `_forcemerge?max_num_segments=1` and `_refresh` (a merged segment is searched only after a refresh).
// Pruning keeps recovery working: operations below the leases are recovered from segment files, not replayed.
// A shard already in one segment is not rewritten by a force merge (so nothing is pruned; seen after a 20k load
// whose own merges had ended in one segment: 10.5 KB a document): a document written and deleted at once, never
// visible, first gives each shard a second segment. Its id `h:compact-…` is neither a real id nor a digest
// (encoding.js osId: ids that start with `h:` are hashed to `h:` and 64 hex digits).
import crypto from 'node:crypto';
import { request } from './connection.js';

/** How long the retention leases are waited for, ms (their sync runs every 30 s); then the merge runs anyway. */
const LEASES_WAIT_MS = 95_000;
/** How long a force merge may take, ms: it rewrites every segment of the index (minutes at millions of documents). */
const MERGE_TIMEOUT_MS = 3_600_000;

/**
 * @typedef {object} CompactContext
 * @property {import('@opensearch-project/opensearch').Client} client
 * @property {string} index
 * @property {number} shards primary shards of the index
 * @property {{nodes: string[], what: string, model: string, collection?: string}} ctx
 */

/**
 * Whether every retention lease of every shard copy of the index retains past the copy's max_seq_no.
 * @param {CompactContext} c
 */
async function leasesPassed(c) {
  const res = await request(() => c.client.indices.stats({ index: c.index, metric: ['docs'], level: 'shards' }), c.ctx);
  const shards = /** @type {any} */ (res.body).indices?.[c.index]?.shards ?? {};
  for (const copies of Object.values(shards)) {
    for (const sh of /** @type {any[]} */ (copies)) {
      const leases = /** @type {any[]} */ (sh.retention_leases?.leases ?? []);
      const max = Number(sh.seq_no?.max_seq_no ?? -1);
      if (leases.length === 0 || leases.some((l) => Number(l.retaining_seq_no) <= max)) return false;
    }
  }
  return true;
}

/**
 * Flush, wait for the retention leases, merge to one segment a shard, refresh.
 * @param {CompactContext} c
 * @param {{leasesWaitMs?: number, sleep?: (ms: number) => Promise<void>}} [o]
 * @returns {Promise<{leasesPassed: boolean, waitedMs: number, mergeMs: number}>}
 */
export async function compactIndex(c, o = {}) {
  const sleep = o.sleep ?? ((/** @type {number} */ ms) => new Promise((res) => setTimeout(res, ms)));
  const limit = o.leasesWaitMs ?? LEASES_WAIT_MS;
  // One written-and-deleted document a shard (routed by id): every shard then has a segment to merge with.
  let ops = '';
  for (let i = 0; i < 8 * c.shards; i++) {
    const id = `h:compact-${crypto.randomBytes(8).toString('hex')}`;
    ops += `${JSON.stringify({ index: { _index: c.index, _id: id } })}\n${JSON.stringify({ id, meta: {} })}\n${JSON.stringify({ delete: { _index: c.index, _id: id } })}\n`;
  }
  await request(() => c.client.bulk({ body: /** @type {any} */ (ops), refresh: false, filter_path: 'errors' }), c.ctx);
  await request(() => c.client.indices.flush({ index: c.index }), c.ctx);
  const t0 = performance.now();
  let passed = await leasesPassed(c);
  while (!passed && performance.now() - t0 < limit) {
    await sleep(1000);
    passed = await leasesPassed(c);
  }
  const t1 = performance.now();
  await request(() => c.client.indices.forcemerge({ index: c.index, max_num_segments: 1 }, { requestTimeout: MERGE_TIMEOUT_MS, maxRetries: 0 }), c.ctx);
  await request(() => c.client.indices.refresh({ index: c.index }), c.ctx);
  return { leasesPassed: passed, waitedMs: Math.round(t1 - t0), mergeMs: Math.round(performance.now() - t1) };
}
