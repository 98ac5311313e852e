// Prometheus metrics. Each process keeps its own registry; with --workers N the process that receives the
// scrape asks the cluster primary, which merges every worker's registry (prom-client's AggregatorRegistry),
// so one scrape of the one port sees the whole server. Gauges that every worker reads from the same shared
// source (store size, queue depth, active model) are merged with "max", not summed.
import cluster from 'node:cluster';
import client from 'prom-client';

const METRICS_REQ = 'scdv:metrics-req';
const METRICS_RES = 'scdv:metrics-res';

export class Metrics {
  constructor() {
    this.registry = new client.Registry();
    client.collectDefaultMetrics({ register: this.registry, prefix: 'scdv_' });
    this.httpDuration = new client.Histogram({
      name: 'scdv_http_request_duration_seconds',
      help: 'Request latency by route (the route pattern, not the URL) and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [this.registry],
    });
    this.embedDuration = new client.Histogram({
      name: 'scdv_embed_seconds',
      help: 'Request-time embedding (tokenise + vectorise) of one text.',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [this.registry],
    });
    this.searchDuration = new client.Histogram({
      name: 'scdv_search_seconds',
      help: 'Vector-store search time of one query, by kind of route.',
      labelNames: ['kind'],
      buckets: [0.0002, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1],
      registers: [this.registry],
    });
    this.precomputed = new client.Counter({
      name: 'scdv_match_lookups_total',
      help: 'Match lookups by where the answer came from: precomputed (Redis), live (no fresh entry), or live because Redis was down.',
      labelNames: ['served_from'],
      registers: [this.registry],
    });
    this.relatedCache = new client.Counter({
      name: 'scdv_related_cache_total',
      help: 'Related-by-id lookups answered from the per-process result cache (hit) or by a live search (miss).',
      labelNames: ['result'],
      registers: [this.registry],
    });
    this.events = new client.Counter({
      name: 'scdv_events_total',
      help: 'Reader events stored (POST /v1/events), by type: impression or click.',
      labelNames: ['type'],
      registers: [this.registry],
    });
    this.keyRefusals = new client.Counter({
      name: 'scdv_key_refusals_total',
      help: 'Wrong API keys answered 429 past server.keyFailures, by the limit passed: address, key or all (addresses).',
      labelNames: ['scope'],
      registers: [this.registry],
    });
    this.armAnswers = new client.Counter({
      name: 'scdv_arm_answers_total',
      help: 'Related and match answers by the arm that answered (config experiments.arms).',
      labelNames: ['arm'],
      registers: [this.registry],
    });
    // The server's bounds (server/sockets.js, server/cache.js, the embedding lanes).
    this.connectionsRefused = new client.Counter({
      name: 'scdv_connections_refused_total',
      help: 'Connections answered 503 and closed when accepted: the client at server.maxConnectionsPerClient (client_share) or the process at server.maxConnections (server_full), none of its connections idle.',
      labelNames: ['reason'],
      registers: [this.registry],
    });
    this.connectionsClosed = new client.Counter({
      name: 'scdv_connections_idle_closed_total',
      help: 'Idle keep-alive connections closed to make room for a new one: of the same client at its share (client_share), of the client with the most when the process is full (server_full).',
      labelNames: ['reason'],
      registers: [this.registry],
    });
    this.socketBackpressure = new client.Counter({
      name: 'scdv_socket_backpressure_total',
      help: 'Connections whose client does not read: paused (their next request waits, over server.socketBufferBytes unwritten) or closed (no progress for server.socketStallMs, or over server.maxPipelined waiting).',
      labelNames: ['action'],
      registers: [this.registry],
    });
    this.busyRefused = new client.Counter({
      name: 'scdv_busy_refused_total',
      help: 'Requests answered 503 with Retry-After because a bounded queue was full: large request texts (embed_large, server.embedLargeQueue), event batches (event_bodies, events.waitingBatches).',
      labelNames: ['queue'],
      registers: [this.registry],
    });
    /** @type {() => {bytes: number, entries: number}} */
    this.readRelatedCache = () => ({ bytes: 0, entries: 0 });
    const cacheSelf = this;
    new client.Gauge({
      name: 'scdv_related_cache_bytes',
      help: 'Bytes held by the related result cache (serialised answers and keys; bounded by server.relatedCacheBytes).',
      registers: [this.registry],
      collect() { this.set(cacheSelf.readRelatedCache().bytes); },
    });
    new client.Gauge({
      name: 'scdv_related_cache_entries',
      help: 'Answers held by the related result cache (bounded by server.relatedCacheEntries).',
      registers: [this.registry],
      collect() { this.set(cacheSelf.readRelatedCache().entries); },
    });
    /** @type {() => {bytes: number, waiting: number}} */
    this.readEventBodies = () => ({ bytes: 0, waiting: 0 });
    new client.Gauge({
      name: 'scdv_event_body_bytes',
      help: 'Bytes of event batches being read, parsed and stored now (bounded by events.inFlightBytes; one batch always runs).',
      registers: [this.registry],
      collect() { this.set(cacheSelf.readEventBodies().bytes); },
    });
    new client.Gauge({
      name: 'scdv_event_batches_waiting',
      help: 'Event batches waiting for events.inFlightBytes, their bodies unread (at most events.waitingBatches, then 503).',
      registers: [this.registry],
      collect() { this.set(cacheSelf.readEventBodies().waiting); },
    });
    // Sources of the gauges that mirror shared state, set by the app; read at every scrape (also when the
    // cluster primary collects this worker's registry).
    /** @type {() => Promise<{model: string, collection: string, count: number}[]>} */
    this.readStore = async () => [];
    /** @type {() => Promise<{queue: string, state: string, count: number}[]>} */
    this.readQueues = async () => [];
    /** @type {() => string | null} */
    this.readModel = () => null;
    /** @type {() => boolean} */
    this.readRedis = () => false;
    const self = this;
    new client.Gauge({
      name: 'scdv_store_documents',
      help: 'Documents per collection of the active model.',
      labelNames: ['model', 'collection'],
      aggregator: 'max',
      registers: [this.registry],
      async collect() {
        const rows = await self.readStore().catch(() => []);
        this.reset();
        for (const r of rows) this.set({ model: r.model, collection: r.collection }, r.count);
      },
    });
    new client.Gauge({
      name: 'scdv_queue_jobs',
      help: 'Jobs per queue and state (absent while Redis is down).',
      labelNames: ['queue', 'state'],
      aggregator: 'max',
      registers: [this.registry],
      async collect() {
        const rows = await self.readQueues().catch(() => []);
        this.reset();
        for (const r of rows) this.set({ queue: r.queue, state: r.state }, r.count);
      },
    });
    new client.Gauge({
      name: 'scdv_model_active',
      help: '1 for the model this server answers with.',
      labelNames: ['model'],
      aggregator: 'max',
      registers: [this.registry],
      collect() {
        this.reset();
        const m = self.readModel();
        if (m) this.set({ model: m }, 1);
      },
    });
    new client.Gauge({
      name: 'scdv_redis_up',
      help: '1 when Redis answers, else 0.',
      aggregator: 'min',
      registers: [this.registry],
      collect() { this.set(self.readRedis() ? 1 : 0); },
    });
    /** @type {Map<number, (text: string) => void>} */
    this.pending = new Map();
    this.seq = 0;
  }

  /** Prometheus text of this process alone. */
  async local() {
    return this.registry.metrics();
  }

  /** Prometheus text of the whole server: from the primary when this is a cluster worker. */
  async text() {
    if (!cluster.isWorker || !process.send) return this.local();
    const id = ++this.seq;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { this.pending.delete(id); reject(new Error('metrics: no answer from the primary')); }, 5000);
      this.pending.set(id, (text) => { clearTimeout(timer); resolve(text); });
      /** @type {NonNullable<typeof process.send>} */ (process.send)({ type: METRICS_REQ, id });
    });
  }

  /** In a cluster worker: answer the primary's requests for this registry, and receive merged texts. */
  attachWorker() {
    if (!cluster.isWorker) return;
    // Constructing an AggregatorRegistry in a worker installs prom-client's reply-to-primary listener.
    const aggregator = new client.AggregatorRegistry();
    client.AggregatorRegistry.setRegistries([this.registry]);
    void aggregator;
    process.on('message', (/** @type {any} */ m) => {
      if (m?.type === METRICS_RES) this.pending.get(m.id)?.(m.text);
      if (m?.type === METRICS_RES) this.pending.delete(m.id);
    });
  }
}

/** In the cluster primary: merge every worker's registry when a worker asks for a scrape. */
export function serveClusterMetrics() {
  const aggregator = new client.AggregatorRegistry();
  cluster.on('message', (worker, /** @type {any} */ m) => {
    if (m?.type !== METRICS_REQ) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: METRICS_RES, id: m.id, text }),
      (err) => worker.send({ type: METRICS_RES, id: m.id, text: `# metrics aggregation failed: ${err.message}\n` }),
    );
  });
}
