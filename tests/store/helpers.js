// Shared pieces of the store tests: seeded random sparse vectors, a brute-force reference, temp folders.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { rng } from '../lib/random.js';

export { rng };

/** @param {() => number} r */
export function gauss(r) {
  let u = 0;
  while (u === 0) u = r();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
}

/**
 * A random L2-normalised sparse vector with signed values. With `blocks`, the non-zeros fall into a few
 * blocks of the width (topic-like), so that documents share dims the way SCDV vectors do.
 * @param {() => number} r
 * @param {number} width
 * @param {number} nnz
 * @param {{blocks?: number, blockSize?: number}} [o]
 */
export function randomVector(r, width, nnz, o = {}) {
  /** @type {Set<number>} */
  const set = new Set();
  const blockSize = o.blockSize ?? 50;
  const nb = Math.floor(width / blockSize);
  /** @type {number[] | null} */
  let chosen = null;
  if (o.blocks) {
    /** @type {Set<number>} */
    const bs = new Set();
    while (bs.size < Math.min(o.blocks, nb)) bs.add(Math.floor(Math.pow(r(), 2) * nb)); // popular blocks first
    chosen = [...bs];
    nnz = Math.min(nnz, chosen.length * blockSize);
  }
  nnz = Math.min(nnz, width);
  while (set.size < nnz) {
    if (chosen) {
      const b = chosen[Math.floor(r() * chosen.length)];
      set.add(b * blockSize + Math.floor(r() * blockSize));
    } else {
      set.add(Math.floor(r() * width));
    }
  }
  const indices = Uint32Array.from([...set].sort((a, b) => a - b));
  const values = new Float32Array(indices.length);
  let norm = 0;
  for (let i = 0; i < values.length; i++) {
    values[i] = gauss(r);
    norm += values[i] * values[i];
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < values.length; i++) values[i] /= norm;
  return { indices, values };
}

/**
 * Exact dot product, summed in index order in double precision (as the store's rescoring does).
 * @param {{indices: ArrayLike<number>, values: ArrayLike<number>}} a
 * @param {{indices: ArrayLike<number>, values: ArrayLike<number>}} b
 */
export function dot(a, b) {
  let i = 0, j = 0, s = 0;
  while (i < a.indices.length && j < b.indices.length) {
    const x = a.indices[i], y = b.indices[j];
    if (x === y) { s += a.values[i] * b.values[j]; i++; j++; }
    else if (x < y) i++;
    else j++;
  }
  return s;
}

/**
 * float16 rounding (to nearest, ties to even) of a number of magnitude below 65504, computed in doubles.
 * @param {number} x
 */
function roundHalf(x) {
  const a = Math.abs(x);
  if (a === 0) return x;
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  if (2 ** (e + 1) <= a) e++;
  const ulp = e < -14 ? 2 ** -24 : 2 ** (e - 10);
  const q = a / ulp, f = Math.floor(q), r = q - f;
  const n = r > 0.5 || (r === 0.5 && f % 2 === 1) ? f + 1 : f;
  return Math.sign(x) * n * ulp;
}

/**
 * The smallest power of two >= the largest |v| (of the float32 values), as an exponent; null when all are 0.
 * above: the smallest power strictly above it instead.
 * @param {Float32Array} f
 * @param {boolean} [above]
 */
function maxExponent(f, above = false) {
  let mx = 0;
  for (const v of f) mx = Math.max(mx, Math.abs(v));
  if (!(mx > 0)) return null;
  let e = Math.ceil(Math.log2(mx));
  while (2 ** e < mx) e++;
  while (2 ** (e - 1) >= mx) e--;
  return above && 2 ** e === mx ? e + 1 : e;
}

/**
 * A document's unit as the store computes it (segment format 4, fwd_codec.h): 2^-10 times the smallest power of
 * two above the largest |v|, at least 2^-149; 2^-10 when all are 0. `bits` 12: format 3's unit (2^-11 ...).
 * @param {ArrayLike<number>} values
 * @param {number} [bits] of a code
 */
export function docUnit(values, bits = 11) {
  const e = maxExponent(Float32Array.from(values), true);
  return e === null ? 2 ** -(bits - 1) : 2 ** Math.max(e - (bits - 1), -149);
}

/**
 * Round half to even (what the store's float rounding does).
 * @param {number} x
 */
function roundEven(x) {
  const f = Math.floor(x), r = x - f;
  return r > 0.5 || (r === 0.5 && f % 2 !== 0) ? f + 1 : f;
}

/**
 * The values as the store keeps them (segment format 4, pipeline/store/native/src/fwd_codec.h), computed
 * independently: code * unit, code = nearest-even(v / unit) clamped to [-1023, 1023].
 * @param {ArrayLike<number>} values
 */
export function storedValues(values) {
  return storedCodes(values, 11);
}

/**
 * The values as segment format 3 kept them: 12-bit codes, clamped to [-2047, 2047], of a unit twice as fine.
 * @param {ArrayLike<number>} values
 */
export function storedValuesFormat3(values) {
  return storedCodes(values, 12);
}

/**
 * @param {ArrayLike<number>} values
 * @param {number} bits of a code
 */
function storedCodes(values, bits) {
  const f = Float32Array.from(values);
  const unit = docUnit(f, bits), max = 2 ** (bits - 1) - 1;
  return Float32Array.from(f, (v) => Math.max(-max, Math.min(max, roundEven(v / unit))) * unit);
}

/**
 * The values as segment format 2 kept them: float16(v / scale) * scale, scale the smallest power of two >= the
 * largest |v|, at most 2^127 (codes kept below 2 when it is capped); 1 when all are 0.
 * @param {ArrayLike<number>} values
 */
export function storedValuesFormat2(values) {
  const f = Float32Array.from(values);
  const e = maxExponent(f);
  const scale = e === null ? 1 : 2 ** Math.min(e, 127);
  return Float32Array.from(f, (v) => Math.sign(v) * Math.min(Math.abs(roundHalf(v / scale)), 2 - 2 ** -10) * scale);
}

/**
 * @typedef {{id: string, vector: {indices: Uint32Array, values: Float32Array}, meta: Record<string, any>}} TestDoc
 */

/**
 * Reference top-k with the store's filter semantics, scored with the values as stored (storedValues).
 * @param {Map<string, TestDoc>} docs live documents
 * @param {{indices: Uint32Array, values: Float32Array}} q
 * @param {{k?: number, since?: string|number, until?: string|number, sites?: string[], excludeSites?: string[], categories?: string[], excludeIds?: string[]}} o
 * @param {(values: Float32Array) => ArrayLike<number>} [asStored] the values a backend keeps (default: the native store's)
 * @returns {{id: string, score: number}[]}
 */
export function bruteForce(docs, q, o, asStored = storedValues) {
  const since = o.since === undefined ? null : typeof o.since === 'number' ? o.since : Date.parse(o.since);
  const until = o.until === undefined ? null : typeof o.until === 'number' ? o.until : Date.parse(o.until);
  const out = [];
  for (const d of docs.values()) {
    const m = d.meta;
    if (since !== null || until !== null) {
      if (m.published_at === undefined) continue;
      const t = typeof m.published_at === 'number' ? m.published_at : Date.parse(m.published_at);
      if (since !== null && t < since) continue;
      if (until !== null && t > until) continue;
    }
    if (o.sites && !o.sites.includes(m.site)) continue;
    if (o.excludeSites && m.site !== undefined && o.excludeSites.includes(m.site)) continue;
    if (o.categories && !o.categories.includes(m.category)) continue;
    if (o.excludeIds && o.excludeIds.includes(d.id)) continue;
    out.push({ id: d.id, score: dot(q, { indices: d.vector.indices, values: asStored(d.vector.values) }) });
  }
  out.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return out.slice(0, o.k ?? 10);
}

/**
 * Same ids as the reference, allowing swaps between scores equal within eps (and at the k-th place, any
 * document whose score ties the k-th).
 * @param {{id: string, score: number}[]} got
 * @param {{id: string, score: number}[]} want
 * @param {number} [eps]
 */
export function sameTopK(got, want, eps = 1e-6) {
  if (got.length !== want.length) return `got ${got.length} results, want ${want.length}`;
  for (let i = 0; i < want.length; i++) {
    if (Math.abs(got[i].score - want[i].score) > eps) return `rank ${i}: score ${got[i].score} (${got[i].id}) vs ${want[i].score} (${want[i].id})`;
  }
  const kth = want.length ? want[want.length - 1].score : 0;
  const wantIds = new Set(want.map((w) => w.id));
  for (const g of got) {
    if (!wantIds.has(g.id) && Math.abs(g.score - kth) > eps) return `unexpected id ${g.id} (score ${g.score})`;
  }
  return null;
}

/**
 * @param {{id: string}[]} got
 * @param {{id: string}[]} want
 */
export function recall(got, want) {
  if (want.length === 0) return 1;
  const g = new Set(got.map((x) => x.id));
  return want.filter((w) => g.has(w.id)).length / want.length;
}

/** @param {string} prefix */
export function tempDir(prefix) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `scdv-store-${prefix}-`));
}
