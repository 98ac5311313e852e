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
 * @typedef {{id: string, vector: {indices: Uint32Array, values: Float32Array}, meta: Record<string, any>}} TestDoc
 */

/**
 * Reference top-k with the store's filter semantics.
 * @param {Map<string, TestDoc>} docs live documents
 * @param {{indices: Uint32Array, values: Float32Array}} q
 * @param {{k?: number, since?: string|number, until?: string|number, sites?: string[], excludeSites?: string[], categories?: string[], excludeIds?: string[]}} o
 * @returns {{id: string, score: number}[]}
 */
export function bruteForce(docs, q, o) {
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
    out.push({ id: d.id, score: dot(q, d.vector) });
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
