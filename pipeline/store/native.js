// Loader for the scdv_store native addon (pipeline/store/native/build/Release/scdv_store.node).
// The addon is loaded on first use, so that importing the store never fails on a machine without it.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { errors } from '../errors.js';
import { searchThreads } from './search-threads.js';

export const ADDON_PATH = fileURLToPath(new URL('./native/build/Release/scdv_store.node', import.meta.url));

/**
 * Documents in columns, as the addon takes them. Row i has the non-zeros
 * indices/values[offsets[i] .. offsets[i+1]); times are epoch ms (NaN: none); '' means no site / category.
 * @typedef {object} PackedDocs
 * @property {string[]} ids
 * @property {string[]} metas JSON text of each document's metadata
 * @property {string[]} sites
 * @property {string[]} cats
 * @property {Float64Array} times
 * @property {Float64Array} offsets
 * @property {Uint32Array} indices
 * @property {Float32Array} values
 */

/**
 * @typedef {object} BuildOptions
 * @property {number[]} [tiers] cumulative share of each posting list per tier, by |value|, ending with 1
 * @property {number} [minTierList] lists with fewer postings are not split into tiers
 */

/** @typedef {{docs: number, nnz: number, bytes: number, postingsBytes: number}} BuildResult */

/**
 * Search arguments after validation (times in epoch ms, inclusive).
 * @typedef {object} NativeSearchOptions
 * @property {number} k
 * @property {boolean} exact
 * @property {number} [budget]
 * @property {number} [candidates]
 * @property {number} [minPostings]
 * @property {number} [certified]
 * @property {number} [threads]
 * @property {number} [since]
 * @property {number} [until]
 * @property {string[]} [sites]
 * @property {string[]} [excludeSites]
 * @property {string[]} [categories]
 * @property {string[]} [excludeIds]
 * @property {boolean} [stats]
 */

/**
 * @typedef {object} NativeSearchStats
 * @property {number} postings postings decoded
 * @property {number} postingsTotal postings in every list the query touches
 * @property {number} candidates 'fast': documents selected by accumulator value for exact rescoring (at most `candidates`)
 * @property {number} rescored documents scored exactly
 * @property {number} segments
 * @property {number} bruteSegments segments answered by scoring their filtered documents directly
 * @property {number} earlyExits exact-mode segments finished early by the score-bound check
 * @property {number} threads most threads a segment's search was split over
 * @property {number} taatMs time reading postings (summed over threads)
 * @property {number} scanMs time selecting candidates (summed over threads)
 * @property {number} rescoreMs time rescoring candidates exactly
 */

/** @typedef {{ids: string[], metas: string[], scores: Float64Array, stats?: NativeSearchStats}} NativeHits */

/**
 * What searchRerankedAsync does besides searching (pipeline/match/rerank.js, searchReranked): opts.k is the first
 * pool, doubled up to maxK while results are missing; head: the pool's ranks certified; threshold null: no collapse;
 * fbDocs 0: no feedback; fields: the kept hits' result item fields as JSON text where provable (src/result_fields.h).
 * @typedef {{want: number, maxK: number, head: number, threshold: number | null, fbDocs: number, fbWeight: number, fields?: boolean}} NativeRerankSpec
 */

/**
 * The re-ranked list: kept hits (ids, scores, metadata JSON text), the dropped duplicates (droppedOf null: of the
 * query document), the pool size finally searched and the stored vectors decoded. With spec.fields, fields[i] is hit
 * i's result item fields, UTF-8 JSON text bytes[offsets[i], offsets[i + 1]), where metas[i] is undefined.
 * @typedef {{ids: string[], scores: Float64Array, metas: (string | undefined)[], fields?: {bytes: Buffer, offsets: Uint32Array}, droppedIds: string[],
 *   droppedOf: (string | null)[], droppedSimilarity: Float64Array, searched: number, fetched: number}} NativeReranked
 */

/**
 * @typedef {object} NativeSegmentStats
 * @property {string} path
 * @property {number} docs
 * @property {number} deleted
 * @property {number} hidden live documents superseded by the WAL tail
 * @property {number} live
 * @property {number} nnz
 * @property {number} bytes
 * @property {number} postingsBytes
 * @property {number} forwardBytes
 * @property {number} lists
 * @property {number} blocks
 */

/** @typedef {{readonly __nativeSnapshot: unique symbol}} NativeSnapshot an opaque handle from View.pin() */

/**
 * @typedef {object} NativeView
 * @property {(spec: {segments?: {path: string, delPath?: string | null}[], resetMem?: boolean, upserts?: PackedDocs, deletes?: string[]}) => void} update
 * @property {(indices: Uint32Array, values: Float32Array, opts: NativeSearchOptions) => NativeHits} search
 * @property {(indices: Uint32Array, values: Float32Array, opts: NativeSearchOptions) => Promise<NativeHits>} searchAsync
 * @property {(indices: Uint32Array, values: Float32Array, opts: NativeSearchOptions) => Promise<{ids: string[], scores: Float64Array}>} searchIdsAsync
 *   searchAsync without the metadata
 * @property {(indices: Uint32Array, values: Float32Array, opts: NativeSearchOptions, spec: NativeRerankSpec) => Promise<NativeReranked>} searchRerankedAsync
 *   the related list's whole re-ranking on the libuv pool, from one snapshot (src/rerank.cc)
 * @property {(id: string, opts: NativeSearchOptions, spec: NativeRerankSpec) => Promise<NativeReranked | null>} searchRerankedByIdAsync
 *   the same with the stored vector of the live document `id` as the query, looked up on the pool (null: none)
 * @property {(ids: string[]) => (string | null)[]} metas each live document's metadata (JSON text), null when no
 *   live document has the id
 * @property {(id: string) => {meta: string, indices: Uint32Array, values: Float32Array} | null} get
 * @property {(ids: string[]) => {found: Uint8Array, offsets: Uint32Array, indices: Uint32Array, values: Float32Array}} vectors
 * @property {(ids: string[]) => Uint8Array} live
 * @property {(ids: string[], indices: Uint32Array, values: Float32Array) => Float64Array} scores each id's stored
 *   vector dotted with the query, NaN when no live document has the id
 * @property {(ids: string[]) => Uint32Array[]} locate
 * @property {() => number} count
 * @property {() => NativeSnapshot} pin the current snapshot, held (segments stay mapped) while the handle lives
 * @property {(pinned: NativeSnapshot, pos: number, max: number) => {ids: string[], next: number}} ids up to max live
 *   ids of a pinned snapshot from position pos (0 first); next: where to continue, -1 when done
 * @property {() => {segments: NativeSegmentStats[], memDocs: number, memDeleted: number, memNnz: number}} stats
 * @property {() => void} close
 */

/**
 * @typedef {object} Addon
 * @property {new (width: number) => NativeView} View
 * @property {(path: string, width: number, docs: PackedDocs, opts?: BuildOptions) => BuildResult} buildSegment
 * @property {(path: string, width: number, docs: PackedDocs, opts?: BuildOptions) => Promise<BuildResult>} buildSegmentAsync
 * @property {(out: string, inputs: {path: string, delPath?: string | null}[], opts?: BuildOptions) => Promise<BuildResult | null>} mergeSegmentsAsync
 * @property {(path: string, locals: Uint32Array) => string[]} segmentIds
 * @property {(path: string, ids: string[]) => Float64Array} segmentLookup
 * @property {(path: string) => {width: number, docs: number, nnz: number, bytes: number, postingsBytes: number, forwardBytes: number, lists: number, blocks: number, tiers: number[], version: number,
 *   sections: {forwardGaps: number, forwardValues: number, forwardTables: number, blockData: number, blockTable: number, listTables: number},
 *   postingsByGapLayout: Record<string, number>}} segmentInfo segment facts; sections: bytes of each part; postingsByGapLayout: postings in blocks of each gap layout (posting_codec.h: '0', '8', '16', '32', '9' patched)
 * @property {(fd: number, mode: 'ex' | 'exnb' | 'sh' | 'shnb' | 'un') => boolean} flock
 * @property {(fd: number, mode: 'ex' | 'sh') => Promise<void>} flockAsync
 * @property {number} formatVersion
 * @property {(codes: Uint16Array, dispatched: boolean) => Float32Array} halvesToFloats tests: float16 codes to
 *   float32 by the run-time-chosen path (F16C when the CPU has it) or the scalar one
 * @property {(path: string) => ArrayBuffer} mapFile a file's bytes, memory-mapped copy-on-write (for files replaced
 *   by renaming, never rewritten in place: model files)
 * @property {(acc: Float32Array, docs: Uint32Array, k: number) => Uint32Array} candidateSelect tests: the k
 *   candidates a search's top-N keeps (value desc, then document), the k-th last
 * @property {(acc: Float32Array, docs: Uint32Array, step: number, reads: number[]) => Uint32Array} candidateOrder tests:
 *   the order 'fast' rescores candidates in (value desc, then document), made as far as read in steps
 * @property {(on: boolean) => boolean} setSimd tests: use the SIMD paths (when the CPU has them: F16C conversion,
 *   AVX2 posting decoding) or the baseline ones; returns the state
 * @property {(on: boolean) => boolean} setSpeculativeCandidates tests: a one-thread 'fast' search keeps the best 256
 *   candidates first, running again with all of them when its rescoring might need more (on), or all from the start
 * @property {(cores: number) => void} setIdleCores tests: fix the idle-core estimate behind the automatic thread
 *   choice (threads 0) at `cores`, for every search of the process; negative: measure again
 * @property {() => number} idleCores the idle-core estimate the automatic thread choice uses now (diagnostics)
 * @property {number} hardwareThreads the hardware threads the automatic thread choice counts with
 * @property {(n: number) => void} setSearchThreads at most n threads run the async searches (set at load:
 *   search-threads.js)
 * @property {() => {limit: number, threads: number, running: number, queued: number, mostRunning: number}} searchThreadUse
 *   the search threads: their limit, how many are started, searches running and queued now, the most running at once
 * @property {(path: string, indices: Uint32Array, values: Float32Array) => Float32Array} segmentPostingSums tests:
 *   every posting of the query's dims in the segment summed per local document, by search's block decoding
 */

/** @type {Addon | undefined} */
let addon;

/** @returns {Addon} */
export function loadAddon() {
  if (addon) return addon;
  if (!existsSync(ADDON_PATH)) throw errors.STORE_ADDON_NOT_BUILT(`${ADDON_PATH} is missing`);
  try {
    addon = /** @type {Addon} */ (createRequire(import.meta.url)(ADDON_PATH));
  } catch (err) {
    throw errors.STORE_ADDON_NOT_BUILT(`cannot load ${ADDON_PATH}: ${/** @type {Error} */ (err).message}`).because(err);
  }
  addon.setSearchThreads(searchThreads());
  return addon;
}
