// The OpenSearch client of one store and the mapping of its failures onto the error catalogue: a cluster that
// cannot be reached (or answers "overloaded"/"unavailable") is SCDV_BACKEND_UNAVAILABLE (503, retried by the
// caller later), a missing index is SCDV_COLLECTION_NOT_FOUND, anything else it refuses is SCDV_BACKEND_REJECTED
// with the engine's own type and reason.
import fs from 'node:fs';
import { Client, errors as osErrors } from '@opensearch-project/opensearch';
import { errors } from '../../errors.js';

/** @typedef {import('../../config.js').Config['store']['opensearch']} OpenSearchConfig */

/**
 * A client with the config's nodes, authentication, TLS and retry policy. Credentials never appear in errors.
 * @param {OpenSearchConfig} o
 * @returns {Client}
 */
export function createClient(o) {
  /** @type {import('@opensearch-project/opensearch').ClientOptions} */
  const options = {
    nodes: o.nodes,
    maxRetries: o.maxRetries,
    requestTimeout: o.requestTimeoutMs,
    // A node that fails is taken out of rotation and tried again later: the other nodes answer meanwhile.
    resurrectStrategy: 'ping',
    ...(o.compression ? { compression: /** @type {'gzip'} */ ('gzip') } : {}),
  };
  if (o.username !== null && o.password !== null) options.auth = { username: o.username, password: o.password };
  if (o.tls.ca !== null || !o.tls.rejectUnauthorized) {
    options.ssl = { rejectUnauthorized: o.tls.rejectUnauthorized, ...(o.tls.ca !== null ? { ca: fs.readFileSync(o.tls.ca) } : {}) };
  }
  return new Client(options);
}

/** Error types of OpenSearch that mean "not now" rather than "not this": the client is not to blame. */
const UNAVAILABLE_TYPES = new Set([
  'cluster_block_exception', 'no_shard_available_action_exception', 'unavailable_shards_exception',
  'es_rejected_execution_exception', 'rejected_execution_exception', 'circuit_breaking_exception',
  'search_phase_execution_exception', 'node_disconnected_exception', 'master_not_discovered_exception',
  'cluster_manager_not_discovered_exception', 'process_cluster_event_timeout_exception',
  // Between nodes, while one is gone (seen in tests/opensearch/faults.test.js): temporary, so 503, not 502.
  'node_not_connected_exception', 'connect_transport_exception',
]);

/**
 * The catalogue error for a failure of the client.
 * @param {unknown} err
 * @param {{nodes: string[], what: string, model: string, collection?: string}} ctx what was being done
 * @returns {Error}
 */
export function toStoreError(err, ctx) {
  const e = /** @type {any} */ (err);
  if (e?.code?.startsWith?.('SCDV_')) return e;
  const nodes = ctx.nodes.join(', ');
  if (e instanceof osErrors.ConnectionError || e instanceof osErrors.TimeoutError || e instanceof osErrors.NoLivingConnectionsError) {
    return errors.BACKEND_UNAVAILABLE('opensearch', nodes, `${ctx.what}: ${e.name}: ${e.message}`).because(err);
  }
  if (e instanceof osErrors.ResponseError) {
    const cause = e.meta?.body?.error;
    const type = String(cause?.type ?? `HTTP ${e.statusCode}`);
    const reason = String(cause?.reason ?? cause?.root_cause?.[0]?.reason ?? e.message);
    const status = e.statusCode ?? 0;
    if (type === 'index_not_found_exception' && ctx.collection !== undefined) return errors.COLLECTION_NOT_FOUND(ctx.collection, ctx.model).because(err);
    // A search whose every shard failed for a reason of its own (a bad query) is the query's fault, not the cluster's.
    const shardReason = cause?.root_cause?.[0]?.type;
    if (type === 'search_phase_execution_exception' && shardReason && !UNAVAILABLE_TYPES.has(shardReason)) {
      return errors.BACKEND_REJECTED('opensearch', ctx.what, String(cause.root_cause[0].reason), String(shardReason)).because(err);
    }
    if (status === 429 || status === 502 || status === 503 || status === 504 || UNAVAILABLE_TYPES.has(type)) {
      return errors.BACKEND_UNAVAILABLE('opensearch', nodes, `${ctx.what}: ${type}: ${reason}`).because(err);
    }
    return errors.BACKEND_REJECTED('opensearch', ctx.what, reason, type).because(err);
  }
  return /** @type {Error} */ (err);
}

/**
 * Runs one client call, with its failure mapped onto the catalogue.
 * @template T
 * @param {() => Promise<T>} call
 * @param {{nodes: string[], what: string, model: string, collection?: string}} ctx
 * @returns {Promise<T>}
 */
export async function request(call, ctx) {
  try {
    return await call();
  } catch (err) {
    throw toStoreError(err, ctx);
  }
}
