// The orders a 'fast' search makes only as far as it reads them: the candidates' rescoring order
// (PrefixOrder: the next best selected and sorted a step at a time) must be the order of sorting them all, ties
// between values included; and the candidate scan with AVX2 must push what the baseline scan pushes (the same hits
// and scores, bit for bit, for the search shapes the server uses).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { openStore } from '../../pipeline/store/index.js';
import { loadAddon } from '../../pipeline/store/native.js';
import { rng, tempDir } from './helpers.js';
import { HYBRID_WIDTH, hybridDocs, randomDocs } from './shapes.js';

const addon = loadAddon();

/** The reference: every candidate sorted by value desc, then document asc. @param {Float32Array} acc @param {Uint32Array} docs */
function fullOrder(acc, docs) {
  return Array.from(acc.keys()).sort((a, b) => (acc[b] - acc[a]) || (docs[a] - docs[b])).map((i) => docs[i]);
}

test('the candidates rescoring order, made as far as read, is the full sort\'s (ties included)', () => {
  const r = rng(7);
  for (let trial = 0; trial < 300; trial++) {
    const n = 1 + Math.floor(r() * 1500);
    // Few distinct values in some trials (many ties), continuous values in others.
    const levels = trial % 3 === 0 ? 1 + Math.floor(r() * 5) : trial % 3 === 1 ? 50 : 0;
    const acc = Float32Array.from({ length: n }, () => (levels ? Math.floor(r() * levels) / levels : r() * 2 - 1));
    // Distinct documents in a shuffled order (the search's buffer holds them in no particular order).
    const docs = Uint32Array.from({ length: n }, (_, i) => i * 3 + 1);
    for (let i = n - 1; i > 0; i--) { const j = Math.floor(r() * (i + 1)); [docs[i], docs[j]] = [docs[j], docs[i]]; }
    const step = 1 + Math.floor(r() * 200);
    // Reads as the search makes them: growing, sometimes by one, sometimes by a chunk, sometimes past the end.
    /** @type {number[]} */
    const reads = [];
    for (let m = 0; m < n + 40 && reads.length < 30;) { m += r() < 0.5 ? 1 : Math.floor(r() * 96); reads.push(m); }
    const got = Array.from(addon.candidateOrder(acc, docs, step, reads));
    const want = fullOrder(acc, docs).slice(0, Math.min(n, Math.max(0, ...reads)));
    assert.deepEqual(got, want, `trial ${trial}: n ${n}, step ${step}, levels ${levels}`);
  }
});

test('the candidates top-N keeps are the best k by value, then document, ties included (and the k-th is last)', () => {
  const r = rng(11);
  for (let trial = 0; trial < 400; trial++) {
    const n = 1 + Math.floor(r() * 2500);
    const k = 1 + Math.floor(r() * n);
    // One value, a few, many ties at a few levels with outliers, or continuous values (every path of the cut).
    const kind = trial % 4;
    const acc = Float32Array.from({ length: n }, () => kind === 0 ? 0.25 : kind === 1 ? Math.floor(r() * 3) / 3
      : kind === 2 ? (r() < 0.02 ? r() * 100 : Math.floor(r() * 40) / 40) : r() * 2 - 1);
    const docs = Uint32Array.from({ length: n }, (_, i) => i * 7 + 2);
    for (let i = n - 1; i > 0; i--) { const j = Math.floor(r() * (i + 1)); [docs[i], docs[j]] = [docs[j], docs[i]]; }
    const got = Array.from(addon.candidateSelect(acc, docs, k));
    const want = fullOrder(acc, docs).slice(0, k);
    assert.equal(got.length, k);
    assert.equal(got[k - 1], want[k - 1], `trial ${trial}: the k-th (n ${n}, k ${k}, kind ${kind})`);
    assert.deepEqual([...got].sort((a, b) => a - b), [...want].sort((a, b) => a - b), `trial ${trial}: n ${n}, k ${k}, kind ${kind}`);
  }
});

/**
 * A store with one segment of 6,000 documents of a shape (no background flushes or merges), for comparing searches.
 * @param {(n: number, seed: number) => Map<string, any>} make
 * @param {number} width
 * @param {number} seed
 */
async function oneSegment(make, width, seed) {
  const dir = tempDir('search-order');
  const store = openStore(dir, { autoFlush: false, autoMerge: false, maintenanceMs: 0 });
  const docs = [...make(6000, seed).values()];
  const c = store.collection('docs', { width });
  for (let i = 0; i < docs.length; i += 2000) await c.upsert(docs.slice(i, i + 2000));
  await c.flush();
  return { dir, store, docs, c };
}

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);
/** A hit as [id, the score's bits]: equal when the scores are equal bit for bit. @param {{id: string, score: number}} h */
const hitBits = (h) => { f64[0] = h.score; return [h.id, `${u32[1].toString(16)}:${u32[0].toString(16)}`]; };

/** Searches of the shapes bench:search and the server use, on one collection: each result as [id, score bits]. */
/** @type {import('../../pipeline/store/validate.js').SearchOptions[]} */
const SHAPES = [
  { k: 10 }, { k: 20, certified: 10 }, { k: 20 }, { k: 10, candidates: 40 }, { k: 30, candidates: 300, certified: 5 },
  { k: 10, budget: 0.3 }, { k: 10, budget: 1 }, { k: 10, mode: 'exact' }, { k: 20, certified: 10, threads: 2 },
  { k: 10, candidates: 25, threads: 3 },
];

for (const [name, make, width] of /** @type {const} */ ([['hybrid-shaped', hybridDocs, HYBRID_WIDTH], ['random', randomDocs, 3000]])) {
  test(`${name} vectors: the AVX2 candidate scan gives the baseline scan's hits and scores, bit for bit`, async (t) => {
    if (!addon.setSimd(true)) t.diagnostic('this CPU has no AVX2: both runs use the baseline path');
    const { dir, store, docs, c } = await oneSegment(make, width, 31);
    try {
      for (let qi = 0; qi < 60; qi++) {
        const q = docs[(qi * 97) % docs.length];
        for (const shape of SHAPES) {
          const o = { threads: 1, excludeIds: [q.id], ...shape };
          addon.setSimd(true);
          const a = c.search(q.vector, o).map(hitBits);
          addon.setSimd(false);
          const b = c.search(q.vector, o).map(hitBits);
          addon.setSimd(true);
          assert.equal(a.length, shape.k ?? 10);
          assert.deepEqual(a, b, `query ${q.id}, ${JSON.stringify(shape)}`);
        }
      }
    } finally {
      addon.setSimd(true);
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

// A one-thread 'fast' search first keeps only the best 256 of its candidates and runs again with all of them when
// its stop rule reads the 256 and might go on. Small budgets make the rule read far (the
// second run), the default ones stop early: both must give the hits and score bits of a search that keeps every
// candidate from the start.
for (const [name, make, width] of /** @type {const} */ ([['hybrid-shaped', hybridDocs, HYBRID_WIDTH], ['random', randomDocs, 3000]])) {
  test(`${name} vectors: keeping the best 256 candidates first gives the hits and scores of keeping them all`, async () => {
    const { dir, store, docs, c } = await oneSegment(make, width, 37);
    try {
      let far = 0, near = 0;
      for (let qi = 0; qi < 60; qi++) {
        const q = docs[(qi * 89) % docs.length];
        // Small budgets read few lists (wide gaps): the rule reads past 256 candidates, or stops near it.
        for (const shape of [{ k: 10 }, { k: 20, certified: 10 }, { k: 40, certified: 30 }, ...[0.1, 0.15, 0.2, 0.25].map((budget) => ({ k: 20, certified: 10, budget, minPostings: 0 }))]) {
          const o = { threads: 1, excludeIds: [q.id], mode: /** @type {'fast'} */ ('fast'), ...shape };
          assert.equal(addon.setSpeculativeCandidates(true), true);
          const a = c.search(q.vector, o).map(hitBits);
          const rescored = c.profile(q.vector, o).stats.rescored;
          if (rescored > 256) far++; else near++;
          addon.setSpeculativeCandidates(false);
          const b = c.search(q.vector, o).map(hitBits);
          addon.setSpeculativeCandidates(true);
          assert.deepEqual(a, b, `query ${q.id}, ${JSON.stringify(shape)}`);
        }
      }
      // Both paths ran: searches whose rule stopped within the 256, and (random vectors) searches run again.
      assert.ok(near > 0, 'some searches stop within the first 256 candidates');
      assert.ok(far > 0, 'some searches need more than 256 candidates');
    } finally {
      addon.setSpeculativeCandidates(true);
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}
