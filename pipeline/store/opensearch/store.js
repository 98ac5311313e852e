// One model's store on an OpenSearch cluster: the StoreBackend of the contract (pipeline/store/contract.js).
// Each collection is an index `<prefix><model>--<collection>` whose mapping `_meta.scdv` records the model, the
// collection, the width, the creation time, the layout format and the indexed layout (readLayouts/recordLayout),
// so every host sees the same facts. Settings: shards and replicas from the config, refresh every second.
import { errors } from '../../errors.js';
import { validateCollectionName } from '../names.js';
import { createClient, request } from './connection.js';
import { OS_FORMAT, analysisSettings, mappingOf, namesOf } from './encoding.js';
import { OpenSearchCollection } from './collection.js';
import { compactIndex } from './compact.js';

/** @typedef {import('../../config.js').Config['store']['opensearch']} OpenSearchConfig */

/**
 * How often a collection's index refreshes while `scdv index` loads it (beginLoad): a refresh a second cut a
 * load into segments of ~1,500 documents that the engine merged again and again (~40 % of its CPU a document,
 * docs/scale-out.md § Loading); writes that wait for searchability meanwhile wait up to this long.
 */
const LOAD_REFRESH_INTERVAL = '10s';

export class OpenSearchStore {
  #model;
  #cfg;
  #client;
  #names;
  #closed = false;
  /** @type {Map<string, OpenSearchCollection>} */ #handles = new Map();
  /** @type {import('./collection.js').StoreContext} */ #ctx;

  /**
   * @param {string} model
   * @param {OpenSearchConfig} cfg
   */
  constructor(model, cfg) {
    this.#model = model;
    this.#cfg = cfg;
    this.#client = createClient(cfg);
    this.#names = namesOf(cfg.indexPrefix, model);
    this.#ctx = {
      client: this.#client, model, nodes: cfg.nodes, cfg, names: this.#names,
      checkOpen: () => { if (this.#closed) throw errors.STORE_CLOSED(`opensearch ${cfg.nodes.join(', ')} (model ${model})`); },
      forget: (name) => { this.#handles.delete(name); },
      create: (name, width) => this.#create(name, width),
      describe: (name) => this.#describe(name),
    };
  }

  /** @returns {'opensearch'} */
  get backend() { return 'opensearch'; }
  get model() { return this.#model; }

  /** @param {string} what @param {string} [collection] */
  #rctx(what, collection) {
    return { nodes: this.#cfg.nodes, what: collection ? `${what} (collection ${collection} of model ${this.#model})` : `${what} (model ${this.#model})`, model: this.#model, collection };
  }

  /**
   * The recorded facts of a collection's index, or null when there is none.
   * @param {string} name
   * @returns {Promise<{width: number, createdAt: string, shards: number, meta: Record<string, any>} | null>}
   */
  async #describe(name) {
    const index = this.#names.index(name);
    const res = await request(() => this.#client.indices.get({ index }, { ignore: [404] }), this.#rctx('describe', name));
    const body = /** @type {any} */ (res.body);
    const entry = body?.[index];
    if (!entry) return null;
    const meta = entry.mappings?._meta?.scdv;
    if (!meta || meta.model !== this.#model || meta.collection !== name) {
      throw errors.BACKEND_REJECTED('opensearch', `opening collection ${name} of model ${this.#model}`, `index ${index} exists but was not made by this store for it (its _meta: ${JSON.stringify(meta ?? null)})`, 'foreign_index');
    }
    if (meta.format !== OS_FORMAT) throw errors.OPENSEARCH_LAYOUT_OLD(index, String(meta.format), String(OS_FORMAT), name, this.#model);
    return { width: Number(meta.width), createdAt: String(meta.created_at), shards: Number(entry.settings?.index?.number_of_shards ?? this.#cfg.shards), meta };
  }

  /**
   * Creates a collection's index (or finds the one another process created first: then its width must agree).
   * @param {string} name
   * @param {number} width
   * @returns {Promise<{createdAt: string, shards: number}>}
   */
  async #create(name, width) {
    await this.#ensureVersionsIndex();
    const index = this.#names.index(name);
    const createdAt = new Date().toISOString();
    const meta = { scdv: { model: this.#model, collection: name, width, created_at: createdAt, format: OS_FORMAT } };
    const body = {
      settings: { index: { number_of_shards: this.#cfg.shards, number_of_replicas: this.#cfg.replicas, refresh_interval: '1s', ...analysisSettings() } },
      mappings: mappingOf(meta),
      aliases: { [this.#names.writeAlias(name)]: {} },
    };
    const res = await request(() => this.#client.indices.create({ index, body: /** @type {any} */ (body) }, { ignore: [400] }), this.#rctx('create', name));
    const err = /** @type {any} */ (res.body)?.error;
    if (!err) return { createdAt, shards: this.#cfg.shards };
    if (err.type !== 'resource_already_exists_exception') throw errors.BACKEND_REJECTED('opensearch', `creating collection ${name} of model ${this.#model}`, String(err.reason), String(err.type));
    const found = await this.#describe(name);
    if (!found) return this.#create(name, width); // dropped again meanwhile
    if (found.width !== width) throw errors.STORE_WIDTH_MISMATCH(name, String(found.width), String(width));
    return { createdAt: found.createdAt, shards: found.shards };
  }

  #checkOpen() {
    this.#ctx.checkOpen();
  }

  /**
   * The versions index (one tiny document per collection), made explicitly rather than left to auto-creation,
   * which production clusters often disable. Its documents are not searched: nothing of them is indexed.
   */
  async #ensureVersionsIndex() {
    const body = {
      settings: { index: { number_of_shards: 1, number_of_replicas: this.#cfg.replicas } },
      mappings: { dynamic: false, properties: {} },
    };
    const res = await request(() => this.#client.indices.create({ index: this.#names.versions, body: /** @type {any} */ (body) }, { ignore: [400] }), this.#rctx('create the versions index'));
    const err = /** @type {any} */ (res.body)?.error;
    if (err && err.type !== 'resource_already_exists_exception') throw errors.BACKEND_REJECTED('opensearch', `creating index ${this.#names.versions}`, String(err.reason), String(err.type));
  }

  /**
   * A collection's handle: an existing one (SCDV_COLLECTION_NOT_FOUND when absent), or, with `width`, a
   * writer's handle whose first stored document creates the index. The same object for the same name.
   * @param {string} name
   * @param {import('../store.js').CollectionOptions} [options] width; the native engine options are accepted and ignored
   * @returns {Promise<OpenSearchCollection>}
   */
  async collection(name, options = {}) {
    this.#checkOpen();
    validateCollectionName(name);
    if (options === null || typeof options !== 'object') throw errors.STORE_OPTION_INVALID(`collection("${name}")`, 'options must be an object');
    const width = options.width;
    if (width !== undefined && !(Number.isInteger(width) && width > 0 && width <= 2 ** 32)) {
      throw errors.STORE_OPTION_INVALID(`collection("${name}").width`, `must be a positive integer, got ${JSON.stringify(width)}`);
    }
    const cached = this.#handles.get(name);
    if (cached && (width === undefined || cached.createdAt !== null)) {
      if (width !== undefined && cached.width !== width) throw errors.STORE_WIDTH_MISMATCH(name, String(cached.width), String(width));
      return cached;
    }
    const found = await this.#describe(name);
    if (!found && width === undefined) throw errors.COLLECTION_NOT_FOUND(name, this.#model);
    if (found && width !== undefined && found.width !== width) throw errors.STORE_WIDTH_MISMATCH(name, String(found.width), String(width));
    if (cached && !found) return cached; // a writer's handle, still to be created
    const handle = new OpenSearchCollection(this.#ctx, name, found?.width ?? /** @type {number} */ (width), found, width !== undefined);
    this.#handles.set(name, handle);
    return handle;
  }

  /**
   * @param {string} name
   * @returns {Promise<{name: string, width: number, createdAt: string, count: number} | null>}
   */
  async collectionInfo(name) {
    this.#checkOpen();
    validateCollectionName(name);
    const found = await this.#describe(name);
    if (!found) return null;
    const count = await this.#count(name);
    return count === null ? null : { name, width: found.width, createdAt: found.createdAt, count };
  }

  /** @param {string} name @returns {Promise<number | null>} null: no such index (dropped meanwhile) */
  async #count(name) {
    const res = await request(() => this.#client.count({ index: this.#names.index(name) }, { ignore: [404] }), this.#rctx('count', name));
    const body = /** @type {any} */ (res.body);
    return body?.error ? null : Number(body.count);
  }

  /** @returns {Promise<Map<string, Record<string, any>>>} this model's collections and their `_meta.scdv`, by name */
  async #indices() {
    const res = await request(() => this.#client.indices.get({ index: this.#names.pattern, ignore_unavailable: true, allow_no_indices: true }), this.#rctx('list collections'));
    /** @type {Map<string, Record<string, any>>} */
    const out = new Map();
    for (const entry of Object.values(/** @type {Record<string, any>} */ (res.body))) {
      const meta = entry?.mappings?._meta?.scdv;
      if (meta?.model === this.#model && typeof meta.collection === 'string') out.set(meta.collection, meta);
    }
    return out;
  }

  /** @returns {Promise<{name: string, width: number, count: number}[]>} every collection of the model, by name */
  async listCollections() {
    this.#checkOpen();
    const out = [];
    for (const [name, meta] of [...(await this.#indices())].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const count = await this.#count(name);
      if (count !== null) out.push({ name, width: Number(meta.width), count });
    }
    return out;
  }

  /**
   * Deletes a collection's index: gone for every process at once (their next call throws
   * SCDV_COLLECTION_NOT_FOUND). This process's writes in flight complete first.
   * @param {string} name
   */
  async dropCollection(name) {
    this.#checkOpen();
    validateCollectionName(name);
    const handle = this.#handles.get(name);
    if (handle) {
      await handle.idle();
      handle.markDropped();
      this.#handles.delete(name);
    }
    const res = await request(() => this.#client.indices.delete({ index: this.#names.index(name) }, { ignore: [404] }), this.#rctx('drop', name));
    if (/** @type {any} */ (res.body)?.error) throw errors.COLLECTION_NOT_FOUND(name, this.#model);
    await request(() => this.#client.delete({ index: this.#names.versions, id: this.#names.versionId(name) }, { ignore: [404] }), this.#rctx('drop', name));
    await request(() => this.#client.delete({ index: this.#names.versions, id: this.#names.countsId(name) }, { ignore: [404] }), this.#rctx('drop', name));
  }

  /**
   * The layouts recorded for the model's collections (models/<name>/indexed.json's entries on the native store).
   * @returns {Promise<Record<string, import('../contract.js').LayoutEntry>>}
   */
  async readLayouts() {
    this.#checkOpen();
    /** @type {Record<string, import('../contract.js').LayoutEntry>} */
    const out = {};
    for (const [name, meta] of await this.#indices()) if (meta.layout) out[name] = meta.layout;
    return out;
  }

  /**
   * Records (or, with null, forgets) the layout a collection was indexed with, in its index's `_meta`.
   * @param {string} name
   * @param {import('../contract.js').LayoutEntry | null} entry
   */
  async recordLayout(name, entry) {
    this.#checkOpen();
    validateCollectionName(name);
    const found = await this.#describe(name);
    if (!found) {
      if (entry === null) return;
      throw errors.COLLECTION_NOT_FOUND(name, this.#model);
    }
    const { layout: _old, ...rest } = found.meta;
    await this.#putMeta(name, entry === null ? rest : { ...rest, layout: entry });
  }

  /**
   * The start of `scdv index` into a collection: its index (created now when there is none) refreshes every
   * LOAD_REFRESH_INTERVAL instead of every second, and a new one holds no replica until endLoad: its shard copies
   * are then made from the loaded segment files instead of indexing every document again. The settings to
   * restore are recorded first, in `_meta.scdv.load`, so a load whose process died is undone by the next
   * `scdv index` of the collection (whose endLoad restores them; a beginLoad that finds them keeps them).
   * Meanwhile writes that wait for searchability (`upsert` with refresh) wait up to that interval.
   * @param {string} name
   * @param {number} width
   * @returns {Promise<{created: boolean}>}
   */
  async beginLoad(name, width) {
    this.#checkOpen();
    validateCollectionName(name);
    const index = this.#names.index(name);
    let found = await this.#describe(name);
    let created = false;
    if (!found) {
      const made = await this.#create(name, width);
      found = await this.#describe(name);
      if (!found) throw errors.COLLECTION_NOT_FOUND(name, this.#model);
      created = made.createdAt === found.createdAt;
    }
    if (found.width !== width) throw errors.STORE_WIDTH_MISMATCH(name, String(found.width), String(width));
    if (found.meta.load) return { created };
    const res = await request(() => this.#client.indices.getSettings({ index, name: ['index.refresh_interval', 'index.number_of_replicas'], include_defaults: true }), this.#rctx('begin a load', name));
    const entry = /** @type {any} */ (res.body)[index];
    const setting = (/** @type {string} */ k) => entry?.settings?.index?.[k] ?? entry?.defaults?.index?.[k];
    const restore = { refresh_interval: String(setting('refresh_interval') ?? '1s'), number_of_replicas: Number(setting('number_of_replicas') ?? this.#cfg.replicas) };
    await this.#putMeta(name, { ...found.meta, load: { since: new Date().toISOString(), restore } });
    const during = { refresh_interval: LOAD_REFRESH_INTERVAL, ...(created ? { number_of_replicas: 0 } : {}) };
    await request(() => this.#client.indices.putSettings({ index, body: { index: during } }), this.#rctx('begin a load', name));
    return { created };
  }

  /**
   * The end of a load (also of a failed one, and of one whose process died: the settings recorded by beginLoad are
   * put back, then the record is removed). Nothing when the collection is in no load.
   * @param {string} name
   * @returns {Promise<boolean>} whether settings were restored
   */
  async endLoad(name) {
    this.#checkOpen();
    validateCollectionName(name);
    const found = await this.#describe(name);
    const load = found?.meta.load;
    if (!found || !load) return false;
    await request(() => this.#client.indices.putSettings({ index: this.#names.index(name), body: { index: load.restore } }), this.#rctx('end a load', name));
    const { load: _done, ...rest } = found.meta;
    await this.#putMeta(name, rest);
    return true;
  }

  /** @param {string} name @param {Record<string, any>} scdv the whole `_meta.scdv` */
  async #putMeta(name, scdv) {
    await request(() => this.#client.indices.putMapping({ index: this.#names.index(name), body: { _meta: { scdv } } }), this.#rctx('record in _meta', name));
  }

  /**
   * The end of `scdv index` on a collection: when the run wrote at least store.opensearch.compactAfterDocs
   * documents and at least half of the collection's, its index is merged to one segment a shard without the
   * load's recovery source (compact.js): ~3.2 KB a document instead of ~5. Smaller runs leave the merging to the
   * engine: a merge rewrites the whole index.
   * @param {string} name
   * @param {number} documents written by the run
   * @returns {Promise<{bytesPerDoc: number, segments: number, leasesPassed: boolean, waitedMs: number, mergeMs: number} | null>} null: not merged
   */
  async compactAfterLoad(name, documents) {
    this.#checkOpen();
    validateCollectionName(name);
    const every = this.#cfg.compactAfterDocs;
    if (every === 0 || documents < every) return null;
    const count = await this.#count(name);
    if (count === null || documents * 2 < count) return null;
    const index = this.#names.index(name);
    const shards = (await this.#describe(name))?.shards ?? this.#cfg.shards;
    const done = await compactIndex({ client: this.#client, index, shards, ctx: this.#rctx('merge after a load', name) });
    const res = await request(() => this.#client.indices.stats({ index, metric: ['store', 'segments', 'docs'] }), this.#rctx('merge after a load', name));
    const all = /** @type {any} */ (res.body)._all?.primaries;
    const docs = Number(all?.docs?.count ?? 0);
    return { ...done, bytesPerDoc: docs ? Math.round(Number(all?.store?.size_in_bytes ?? 0) / docs) : 0, segments: Number(all?.segments?.count ?? 0) };
  }

  /**
   * The cluster's health for /readyz: ok unless it cannot be reached or is red (some primary shard unassigned).
   * @returns {Promise<import('../contract.js').BackendHealth>}
   */
  async health() {
    try {
      const res = await request(() => this.#client.cluster.health({ timeout: '2s' }), this.#rctx('health'));
      const status = String(/** @type {any} */ (res.body).status);
      return status === 'red' ? { ok: false, backend: 'opensearch', detail: 'cluster status red: some primary shards are unassigned' } : { ok: true, backend: 'opensearch', detail: `cluster status ${status}` };
    } catch (err) {
      return { ok: false, backend: 'opensearch', detail: /** @type {Error} */ (err).message };
    }
  }

  /** Writes in flight complete, then the client's connections close. Idempotent. */
  async close() {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([...this.#handles.values()].map((h) => h.idle()));
    this.#handles.clear();
    await this.#client.close();
  }
}

/**
 * @param {string} model
 * @param {OpenSearchConfig} cfg
 */
export function openOpenSearchStore(model, cfg) {
  return new OpenSearchStore(model, cfg);
}
