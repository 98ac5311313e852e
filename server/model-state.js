// Which model the server answers with, and switching it without dropping a request.
//
// A ServingModel bundles a model's embedders (the one text -> vector implementation; one per vector layout its
// collections use: the model's default, an ad collection's, built on first use and kept) with its store
// (storeDir()/<model>/). Texts are embedded with the layout of the collection they are written to or compared with. A request takes the current ServingModel once, at its start, and uses it to the end,
// so an activation never changes the model under a request; the replaced model stays loaded as `previous`
// (instant rollback) and is closed only once no request holds it.
//
// Which model to serve at start, the active-model record every server process follows (so an activation received
// by one process of `scdv serve --workers N`, or by any server of the deployment on the OpenSearch backend, is
// followed by all of them) and the embed settings requests use are decided in pipeline/serving/; this file holds
// the server's runtime state only.
import { errors } from '../pipeline/errors.js';
import { createEmbedder } from '../pipeline/embed/index.js';
import { EmbedPool } from '../pipeline/embed/pool.js';
import { validateModelName } from '../pipeline/paths.js';
import {
  activationRefused, activationShortfall, checkModelFiles, listingOf, dropModelCollection, layoutRecords, listModels, readLayoutsOf,
  recordLayoutIfNone, resolveModelName, servedCollectionEmbed, servingEmbedConfig,
} from '../pipeline/serving/index.js';
import { hashOf } from '../pipeline/config.js';
import { incomparableLayouts } from '../pipeline/embed/layout.js';
import { openModelStore, searchesInFlight } from '../pipeline/store/index.js';
import { validateCollectionName } from '../pipeline/store/names.js';

/** @typedef {import('../pipeline/config.js').Config} Config */
/** @typedef {import('../pipeline/store/index.js').StoreBackend} Store */
/** @typedef {import('../pipeline/store/index.js').CollectionHandle} Collection */

/**
 * @typedef {object} SwitchResult
 * @property {string} active
 * @property {string | null} previous
 * @property {boolean} changed
 * @property {string[]} [unserved] collections the previous model served that the new one lacks (only with `collections`)
 */

export class ServingModel {
  /**
   * @param {string} name
   * @param {import('../pipeline/embed/index.js').Embedder} embedder
   * @param {Store} store
   * @param {import('../pipeline/embed/pool.js').EmbedPool | null} [pool]
   * @param {import('../pipeline/embed/pool.js').EmbedPool | null} [writePool]
   * @param {import('../pipeline/config.js').Config['embed']} [embed] the settings `embedder` was built with (default: its layout's)
   * @param {import('../pipeline/config.js').Config['adEmbed']} [adEmbed] the settings a new ad collection gets
   */
  constructor(name, embedder, store, pool = null, writePool = null, embed = embedder.layout.embed, adEmbed = { collections: [], alpha: 1, keepFraction: 1, expand: { from: 'articles', neighbours: 1, weight: null } }) {
    this.name = name;
    this.embedder = embedder;
    /** The model's default embed settings (servingEmbedConfig): a collection without a recorded layout that holds documents has them. */
    this.embed = embed;
    this.adEmbed = adEmbed;
    /** Embedders by settings (hashOf), the default one included: built on first use from the same model and tokenizer. */
    this.embedKey = hashOf(embed);
    this.embedders = new Map([[this.embedKey, embedder]]);
    /** The same, by settings object: a request's layouts are the same few objects, so most lookups hash nothing. */
    this.embedderBySettings = /** @type {WeakMap<object, import('../pipeline/embed/index.js').Embedder>} */ (new WeakMap([[embed, embedder]]));
    /** Recorded layouts by collection, as last read with the thresholds. */
    this.layouts = /** @type {Record<string, import('../pipeline/embed/layout.js').VectorLayout>} */ ({});
    /** Settings decided for collections with no recorded layout, until the records are read again. */
    this.unrecorded = /** @type {Map<string, import('../pipeline/config.js').Config['embed']>} */ (new Map());
    this.store = store;
    /** Threads embedding request texts with the same embedder (server.embedThreads; null: on the event loop). */
    this.pool = pool;
    /** Threads embedding written documents (server.writeEmbedThreads, at server.writeEmbedNice; null: those of `pool`). */
    this.writePool = writePool;
    this.width = embedder.width; // K·d, plus the vocabulary in the hybrid layout (embed.hybrid.alpha < 1)
    this.createdAt = String(embedder.model.manifest.created_at ?? '');
    /** Requests using this model right now. */
    this.refs = 0;
    this.retired = false;
    this.closed = false;
    /** Derived match thresholds by target collection (pipeline/match/threshold.js), as last read from the records. */
    this.thresholds = /** @type {Record<string, import('../pipeline/match/threshold.js').MatchThreshold>} */ ({});
    /** Every collection's layout record, as last read (readThresholds). */
    this.records = /** @type {Record<string, any>} */ ({});
    this.thresholdsReadAt = 0;
    /** @type {Promise<void> | null} */
    this.thresholdsReading = null;
  }

  /**
   * The derived threshold of a target collection (undefined: none recorded). The records are read again in the
   * background once the last read is older than `maxAgeMs` (a `scdv index` or `scdv precompute` elsewhere records
   * new ones); a request never waits for that read.
   * @param {string} collection
   * @param {number} maxAgeMs
   */
  matchThreshold(collection, maxAgeMs) {
    if (!this.thresholdsReading && !this.closed && Date.now() - this.thresholdsReadAt > maxAgeMs) {
      this.thresholdsReadAt = Date.now();
      this.thresholdsReading = this.readThresholds().finally(() => { this.thresholdsReading = null; });
    }
    return Object.hasOwn(this.thresholds, collection) ? this.thresholds[collection] : undefined;
  }

  async readThresholds() {
    try {
      const all = await layoutRecords(this.store).read();
      /** @type {Record<string, import('../pipeline/match/threshold.js').MatchThreshold>} */
      const thresholds = {};
      /** @type {Record<string, import('../pipeline/embed/layout.js').VectorLayout>} */
      const layouts = {};
      this.records = all;
      for (const [c, e] of Object.entries(all)) {
        if (e?.match_min_score) thresholds[c] = e.match_min_score;
        if (e?.layout) layouts[c] = e.layout;
      }
      this.thresholds = thresholds;
      this.layouts = layouts;
      this.unrecorded.clear();
      this.thresholdsReadAt = Date.now();
    } catch { /* the backend is down: the last records stay until the next read */ }
  }

  /**
   * The embed settings of texts written to or compared with `collection` (servedCollectionEmbed: its recorded layout's;
   * else the model's default when it holds documents; else a new collection's, the ads' for an ad collection). The
   * records are re-read as for the thresholds (every `maxAgeMs`, in the background).
   * @param {string} collection
   * @param {number} maxAgeMs
   * @returns {Promise<{embed: import('../pipeline/config.js').Config['embed'], recorded: boolean}>}
   */
  async collectionEmbed(collection, maxAgeMs) {
    this.matchThreshold(collection, maxAgeMs);
    const recorded = Object.hasOwn(this.layouts, collection) ? this.layouts[collection] : undefined;
    if (recorded) return { embed: recorded.embed, recorded: true };
    let embed = this.unrecorded.get(collection);
    if (!embed) {
      const info = await this.store.collectionInfo(validateCollectionName(collection));
      embed = servedCollectionEmbed({ collection, recorded, hasDocuments: (info?.count ?? 0) > 0, modelDefault: this.embed, adEmbed: this.adEmbed }).embed;
      this.unrecorded.set(collection, embed);
    }
    return { embed, recorded: false };
  }

  /**
   * The embedder of these settings (the default one, or one built now and kept).
   * @param {import('../pipeline/config.js').Config['embed']} embed
   */
  embedderOf(embed) {
    let e = this.embedderBySettings.get(embed);
    if (e) return e;
    const key = hashOf(embed);
    e = this.embedders.get(key);
    if (!e) this.embedders.set(key, e = this.embedder.withSettings(embed));
    this.embedderBySettings.set(embed, e);
    return e;
  }

  /**
   * The layout the texts of `collection` are embedded with (collectionEmbed).
   * @param {string} collection
   * @param {number} maxAgeMs
   */
  async layoutOf(collection, maxAgeMs) {
    return this.embedderOf((await this.collectionEmbed(collection, maxAgeMs)).embed).layout;
  }

  /**
   * Refuse to search `target` with vectors of `source` when their layouts cannot be compared (a pure SCDV and a
   * hybrid collection): every score would be meaningless, or the search would fail on the width.
   * @param {string} source
   * @param {string} target
   * @param {number} maxAgeMs
   */
  async checkComparable(source, target, maxAgeMs) {
    if (source === target) return;
    const [a, b] = await Promise.all([this.layoutOf(source, maxAgeMs), this.layoutOf(target, maxAgeMs)]);
    const diff = incomparableLayouts(a, b);
    if (diff) throw errors.LAYOUTS_INCOMPARABLE(source, a.kind, target, b.kind, diff);
  }

  /**
   * @param {string} name
   * @param {Config} config
   * @param {{warn?: (o: any, m?: string) => void, info: (o: any, m?: string) => void}} [log]
   */
  static async open(name, config, log) {
    // Refused before anything is loaded: this host's model files must be those the collections were indexed with
    // (their layouts are recorded where the backend keeps them: every host sees the same digests).
    await checkModelFiles(name, await readLayoutsOf(name, config));
    const embed = await servingEmbedConfig(name, config, log);
    const embedConfig = embed === config.embed ? config : { ...config, embed };
    const embedder = await createEmbedder(validateModelName(name), embedConfig);
    let store;
    let pool = null;
    let writePool = null;
    try {
      const { embedThreads: threads, writeEmbedThreads: writeThreads, writeEmbedNice: nice } = config.server;
      // The threads get the settings this process embeds with: the vectors cannot differ.
      const poolOptions = {
        model: name, config: { ...embedConfig, server: { ...config.server, apiKeyHashes: [] } }, size: threads,
        largeChars: config.server.embedLargeTextChars, largeQueue: config.server.embedLargeQueue,
      };
      if (threads > 0) pool = await EmbedPool.start(poolOptions);
      const writeSize = writeThreads ?? threads;
      // Paced while this process's searches are in flight (server.writePace; budgetMs 0: never).
      const pace = config.server.writePace.budgetMs > 0 ? { busy: searchesInFlight, ...config.server.writePace } : null;
      if (threads > 0 && writeSize > 0) writePool = await EmbedPool.start({ ...poolOptions, size: writeSize, nice, pace });
      store = await openModelStore(name, config);
    } catch (err) {
      await Promise.all([pool?.close(), writePool?.close()]);
      embedder.model.wordTopics.close();
      throw err;
    }
    const sm = new ServingModel(name, embedder, store, pool, writePool, embed, config.adEmbed);
    await sm.readThresholds();
    return sm;
  }

  /**
   * Embed request texts: on the pool's threads when there is one, else here (the same embedder either way).
   * @param {{title?: string, body: string}[]} docs
   * @param {import('../pipeline/config.js').Config['embed']} [embed] a collection's settings (collectionEmbed; default: the model's)
   */
  embedDocuments(docs, embed = this.embed) {
    const own = embed === this.embed || hashOf(embed) === this.embedKey ? null : embed;
    return this.pool ? this.pool.embedDocuments(docs, own) : this.embedderOf(embed).embedDocuments(docs);
  }

  /**
   * Embed documents being written (PUT, synchronous bulk): on their own threads when there are some (fewer, at a
   * lower priority), else as request texts are. Under a read load the searches then keep the cores (BENCHMARKS.md
   * "Writes beside reads").
   * @param {{title?: string, body: string}[]} docs
   * @param {import('../pipeline/config.js').Config['embed']} [embed] the target collection's settings (collectionEmbed)
   */
  embedWritten(docs, embed = this.embed) {
    const own = embed === this.embed || hashOf(embed) === this.embedKey ? null : embed;
    return this.writePool ? this.writePool.embedDocuments(docs, own) : this.embedDocuments(docs, embed);
  }

  /**
   * Records the layout a collection without one was first written with (so that a later change of the config
   * never mixes layouts in it: `scdv index` then refuses, and requests keep embedding with it).
   * @param {string} collection
   * @param {import('../pipeline/config.js').Config['embed']} embed
   */
  async recordWrittenLayout(collection, embed) {
    const layout = this.embedderOf(embed).layout;
    await recordLayoutIfNone(this.store, collection, layout);
    this.layouts = { ...this.layouts, [collection]: layout };
    this.unrecorded.delete(collection);
  }

  /**
   * An existing collection, or 404 (SCDV_COLLECTION_NOT_FOUND). Creates nothing.
   * @param {string} name
   * @returns {Promise<Collection>}
   */
  async collection(name) {
    return this.store.collection(validateCollectionName(name));
  }

  /**
   * A collection to write to, with the model's width: created on disk by its first written document (a
   * refused write leaves nothing behind).
   * @param {string} name
   * @returns {Promise<Collection>}
   */
  async writableCollection(name, width = this.width) {
    return this.store.collection(validateCollectionName(name), { width });
  }

  /**
   * Deletes a collection of this model: its store folder, and its entry in models/<name>/indexed.json
   * (404 when the store has no such collection).
   * @param {string} name
   */
  async dropCollection(name) {
    await dropModelCollection(this.store, this.name, name);
  }

  /**
   * The collections, each with its derived match threshold when one is recorded.
   * @returns {Promise<{name: string, width: number, count: number, match_min_score?: import('../pipeline/match/threshold.js').MatchThreshold}[]>}
   */
  async collections() {
    await this.readThresholds();
    return (await this.store.listCollections()).map((c) => listingOf(c, this.records?.[c.name]));
  }

  async close() {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([this.store.close(), this.pool?.close(), this.writePool?.close()]);
    this.embedder.model.wordTopics.close();
  }
}

export class ModelState {
  /**
   * @param {{config: Config, records: import('../pipeline/serving/index.js').ActiveRecords,
   *   log: {info: (o: any, m?: string) => void, error: (o: any, m?: string) => void}}} opts records: the active-model
   *   record (activeRecords(config)); closed with this state
   */
  constructor(opts) {
    this.config = opts.config;
    this.records = opts.records;
    this.log = opts.log;
    /** @type {ServingModel | null} */
    this.current = null;
    /** @type {ServingModel | null} */
    this.previous = null;
    /** @type {string | null} name of a model being activated by this process */
    this.activating = null;
    /** The last record this process could not follow (as text): logged once, not retried until another is written. */
    this.unfollowable = '';
    /** Serialises switches (API activations and file-driven ones). */
    this.chain = Promise.resolve();
  }

  /**
   * Load the model to serve (see resolveModelName) and record it as active.
   * @param {string} [explicit]
   */
  async start(explicit) {
    const name = await resolveModelName(explicit, this.config, { records: this.records });
    this.current = await ServingModel.open(name, this.config, this.log);
    return this.current;
  }

  /** A request's model: held until release(). */
  acquire() {
    const sm = /** @type {ServingModel} */ (this.current);
    sm.refs++;
    return sm;
  }

  /** @param {ServingModel} servingModel */
  release(servingModel) {
    servingModel.refs--;
    if (servingModel.retired && servingModel.refs === 0) void servingModel.close();
  }

  /**
   * Switch to `name` (loaded, or loaded now). With `check`, refuse when its store lacks a collection that
   * the activation must keep serving (see activationShortfall: by default every one the current model serves;
   * `collections` names them instead): answering 404s after a switch would be worse than refusing it.
   * @param {string} name
   * @param {{check?: boolean, record?: boolean, collections?: string[]}} [opts]
   * @returns {Promise<SwitchResult>}
   */
  async activate(name, opts = {}) {
    validateModelName(name);
    if (this.activating) throw errors.MODEL_CHANGING(this.activating);
    this.activating = name;
    try {
      const run = this.chain.then(() => this.switchTo(name, opts.check ?? true, opts.record ?? true, opts.collections));
      this.chain = run.then(() => {}, () => {});
      return await run;
    } finally {
      this.activating = null;
    }
  }

  /**
   * @param {string} name
   * @param {boolean} check
   * @param {boolean} record
   * @param {string[]} [chosen] the collections the activation must keep serving (default: all the current model serves)
   * @returns {Promise<SwitchResult>}
   */
  async switchTo(name, check, record, chosen) {
    const cur = /** @type {ServingModel} */ (this.current);
    if (cur.name === name) {
      // Named collections must be there even when nothing changes.
      const missing = check && chosen ? activationShortfall({ name, collections: [] }, { name, collections: await cur.collections() }, chosen).missing : [];
      if (missing.length) throw await activationRefused(name, name, missing, { chosen, has: [], config: this.config });
      if (record) await this.record(cur.name, this.previous?.name ?? (await this.records.read())?.previous ?? null);
      return { active: name, previous: this.previous?.name ?? null, changed: false };
    }
    if (!listModels().some((m) => m.name === name)) throw errors.MODEL_NOT_FOUND(name, 'the models folder');
    const reuse = this.previous?.name === name && !this.previous.closed;
    // The files of a model kept loaded may have been replaced since, or the collections re-indexed from another copy.
    if (reuse) await checkModelFiles(name, await readLayoutsOf(name, this.config));
    const next = reuse ? /** @type {ServingModel} */ (this.previous) : await ServingModel.open(name, this.config, this.log);
    let unserved = /** @type {string[]} */ ([]);
    try {
      if (check) {
        // An empty collection serves nothing: the new model need not have it (older versions left empty
        // collections behind after refused writes).
        const nextCollections = await next.collections();
        const shortfall = activationShortfall({ name: cur.name, collections: await cur.collections() }, { name, collections: nextCollections }, chosen);
        if (shortfall.missing.length) {
          const has = nextCollections.filter((c) => c.count > 0).map((c) => c.name);
          throw await activationRefused(cur.name, name, shortfall.missing, { chosen, has, config: this.config });
        }
        unserved = shortfall.unserved;
      }
    } catch (err) {
      if (!reuse) await next.close();
      throw err;
    }
    // The swap itself: one assignment. Requests already running keep the model they took.
    const old = this.previous;
    this.previous = cur;
    this.current = next;
    next.retired = false;
    if (old && old !== next) {
      old.retired = true;
      if (old.refs === 0) await old.close();
    }
    if (record) await this.record(name, cur.name, chosen ? { collections: chosen, unserved } : undefined);
    this.log.info({ model: name, previous: cur.name, ...(unserved.length ? { unserved } : {}) }, 'model activated');
    return { active: name, previous: cur.name, changed: true, ...(unserved.length ? { unserved } : {}) };
  }

  /**
   * @param {string} model
   * @param {string | null} previous
   * @param {{collections: string[], unserved: string[]}} [chosen] what an activation with `collections` kept and let go
   */
  async record(model, previous, chosen) {
    await this.records.write({ model, previous, activated_at: new Date().toISOString(), ...chosen });
  }

  /**
   * Follow activations made by other processes, other hosts and `scdv` commands through the active-model record.
   * A record this process cannot follow (the model is missing here, its files differ from the index's) is logged
   * once and left until another is written: this process keeps serving its model meanwhile.
   */
  watch() {
    this.records.follow((r) => {
      if (this.activating || r.model === this.current?.name) return;
      const text = JSON.stringify(r);
      if (text === this.unfollowable) return;
      this.activating = r.model;
      const run = this.chain.then(() => this.switchTo(r.model, false, false));
      this.chain = run.then(() => {}, () => {});
      run.catch((err) => {
        this.unfollowable = text;
        this.log.error({ model: r.model, code: err.code, err: err.message }, `cannot follow the model activated in ${this.records.where}`);
      }).finally(() => { this.activating = null; });
    }, this.config.server.modelPollMs);
  }

  async close() {
    await this.records.close();
    await this.chain;
    await Promise.all([this.current?.close(), this.previous?.close()]);
  }
}
