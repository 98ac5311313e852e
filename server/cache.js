// Related-by-id results, cached per collection state. A related list depends only on the collection's
// contents, and the same popular articles are asked for on every page view, so a result is kept with the
// collection's version (the store's manifest generation and write-ahead-log position: any write by any
// process changes it, and this process sees the change within the store's refresh interval, 100 ms) and
// reused while that version holds. A hit is therefore exactly what a live search would answer now. Only answers
// asked for more than once are kept (ResultCache.get): the popular ones the cache is for. It holds at most maxEntries
// answers and maxBytes bytes (each answer's serialised length and its key's), least recently used evicted first.

/**
 * The state fingerprint of a collection: changes whenever a document is written or deleted, by any process.
 * @param {import('../pipeline/store/index.js').CollectionHandle} coll
 * @returns {Promise<string>}
 */
export async function collectionVersion(coll) {
  // The store's counter (every backend has one: pipeline/store/contract.js), with the creation time: a collection
  // deleted and created again starts its counter over.
  return `${coll.createdAt ?? ''}:${await coll.version()}`;
}

/** How long a version read is reused: the store itself looks for other processes' writes every 100 ms. */
const VERSION_TTL_MS = 50;
/** What an entry costs besides its key and value (the map's slot, the entry object, the version string). */
const ENTRY_OVERHEAD = 160;

/**
 * The bytes a cached value holds: a buffer's length, else its JSON text's.
 * @param {any} value
 */
export function sizeOf(value) {
  if (value instanceof Uint8Array) return value.byteLength;
  if (typeof value === 'string') return 2 * value.length;
  return Buffer.byteLength(JSON.stringify(value) ?? '');
}

export class ResultCache {
  /**
   * @param {number} maxEntries 0 disables the cache
   * @param {number} [maxBytes] 0 disables the cache
   */
  constructor(maxEntries, maxBytes = Infinity) {
    this.max = maxBytes === 0 ? 0 : maxEntries;
    this.maxBytes = maxBytes;
    /** Bytes of the kept entries (sizeOf their values, their keys, ENTRY_OVERHEAD). */
    this.bytes = 0;
    /** Bytes of the remembered keys (seen). */
    this.seenBytes = 0;
    this.evictions = 0;
    /** @type {Map<string, {version: string, at: number}>} collection versions, by model and collection */
    this.versions = new Map();
    /** @type {Map<string, {version: string, value: any, size: number}>} insertion order = recency (re-inserted on hit) */
    this.map = new Map();
    /**
     * Keys computed once and not kept (the admission rule in get): at most maxEntries, forgotten all at once when
     * full. A key costs a few dozen bytes here, where a kept answer costs kilobytes that live until evicted.
     * @type {Set<string>}
     */
    this.seen = new Set();
    this.hits = 0;
    this.misses = 0;
  }

  /**
   * The collection's version, read at most every VERSION_TTL_MS (forget() after a write in this process).
   * @param {string} id model and collection
   * @param {import('../pipeline/store/index.js').CollectionHandle} coll
   * @returns {Promise<string>}
   */
  async version(id, coll) {
    const now = performance.now();
    const v = this.versions.get(id);
    if (v && now - v.at < VERSION_TTL_MS) return v.version;
    const version = await collectionVersion(coll);
    this.versions.set(id, { version, at: now });
    return version;
  }

  /**
   * After a write through this process: the next lookup reads the version again.
   * @param {string} id model and collection
   */
  forget(id) {
    this.versions.delete(id);
  }

  /**
   * After a collection was deleted: its entries go (keys start with the collection's id and "\0").
   * @param {string} id model and collection
   */
  forgetCollection(id) {
    this.versions.delete(id);
    for (const key of this.map.keys()) if (key.startsWith(`${id}\0`)) this.drop(key);
    for (const key of this.seen) if (key.startsWith(`${id}\0`)) { this.seen.delete(key); this.seenBytes -= 2 * key.length; }
  }

  /** @param {string} key */
  drop(key) {
    const e = this.map.get(key);
    if (!e) return;
    this.map.delete(key);
    this.bytes -= e.size;
  }

  /**
   * The cached value for `key` at `version`, else the computed one; with whether it was a hit. A computed value is
   * kept when its key was asked for before (computed once recently, or kept at an older version): an answer asked
   * for once is not cached, so a load that asks for every article once does not churn the cache (an insert and an
   * eviction of a kilobytes-long answer per request, garbage for the collector), while an article asked for twice
   * is served from the cache from its third request on.
   * @template T
   * @param {string} key
   * @param {string} version
   * @param {() => Promise<T>} compute
   * @returns {Promise<{value: T, hit: boolean}>}
   */
  async get(key, version, compute) {
    if (this.max === 0) return { value: await compute(), hit: false };
    const e = this.map.get(key);
    if (e && e.version === version) {
      this.hits++;
      this.map.delete(key);
      this.map.set(key, e);
      return { value: e.value, hit: true };
    }
    this.misses++;
    const value = await compute();
    if (!e && !this.seen.delete(key)) {
      // The keys remembered are bounded too (a key holds the request's parameters): by count, and by 1/16 of the bytes.
      if (this.seen.size >= this.max || this.seenBytes + 2 * key.length > this.maxBytes / 16) { this.seen.clear(); this.seenBytes = 0; }
      this.seen.add(key);
      this.seenBytes += 2 * key.length;
      return { value, hit: false };
    }
    if (e) this.drop(key); else this.seenBytes -= 2 * key.length;
    const size = sizeOf(value) + 2 * key.length + ENTRY_OVERHEAD;
    // An answer over an eighth of the cache would push out many others: it is served, not kept.
    if (size > this.maxBytes / 8) return { value, hit: false };
    this.map.set(key, { version, value, size });
    this.bytes += size;
    while (this.map.size > this.max || this.bytes > this.maxBytes) {
      this.drop(/** @type {string} */ (this.map.keys().next().value));
      this.evictions++;
    }
    return { value, hit: false };
  }
}
