// Format 4's one-pass rescoring (pipeline/store/native/src/fwd_dot.cc: nibble gaps and 11-bit codes decoded in
// registers and dotted with the query, AVX2) against the reference path (setSimd(false): the gaps decoded entry
// by entry, then the codes, then the sum) and against dotDense's sum of the stored values computed here: the same
// bits, on hybrid-shaped documents (a dense block of small gaps, then a sparse one of 2- and 3-nibble gaps),
// every length mod 16, gaps at every class boundary, groups whose long gaps need one, three or more loads of
// nibbles, 8-nibble gaps; and damaged nibble streams give CORRUPT or the same scores on both paths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { openStore } from '../../pipeline/store/index.js';
import { loadAddon } from '../../pipeline/store/native.js';
import { gauss, rng, tempDir } from './helpers.js';

const NO_BG = { autoFlush: false, autoMerge: false, maintenanceMs: 0 };
const addon = /** @type {any} */ (loadAddon());
const WIDTH = 300000;

/**
 * dotDense (search_internal.h) of a stored vector with a dense query: products in double, lanes j mod 4 up to a
 * multiple of 4, the rest into lane 0, then (a0 + a1) + (a2 + a3).
 * @param {{indices: ArrayLike<number>, values: ArrayLike<number>}} v
 * @param {Float32Array} q
 */
function dotDense(v, q) {
  const a = [0, 0, 0, 0];
  const n = v.indices.length, n4 = n - (n % 4);
  for (let j = 0; j < n; j++) a[j < n4 ? j % 4 : 0] += q[v.indices[j]] * v.values[j];
  return (a[0] + a[1]) + (a[2] + a[3]);
}

/**
 * Sorted distinct indices from gaps (index - previous - 1; the first is the first index), within WIDTH.
 * @param {number[]} gaps
 */
function fromGaps(gaps) {
  const out = [];
  let prev = -1;
  for (const g of gaps) {
    prev += g + 1;
    if (prev >= WIDTH) break;
    out.push(prev);
  }
  return out;
}

/**
 * Documents of every shape the decoder branches on.
 * @param {() => number} r
 */
function shapes(r) {
  /** @type {number[][]} */
  const docs = [];
  const pick = (/** @type {number[]} */ xs) => xs[Math.floor(r() * xs.length)];
  // Hybrid-shaped (the benchmark's: ~200 non-zeros in a dense block of small gaps, ~80 in a sparse block of gaps
  // of 12..4379): lengths over every residue mod 16.
  for (let i = 0; i < 64; i++) {
    const dense = 150 + Math.floor(r() * 100), sparse = 40 + Math.floor(r() * 80) + i;
    const gaps = [Math.floor(r() * 20)];
    for (let j = 1; j < dense; j++) gaps.push(r() < 0.8 ? Math.floor(r() * 12) : 12 + Math.floor(r() * 40));
    for (let j = 0; j < sparse; j++) gaps.push(r() < 0.15 ? Math.floor(r() * 12) : r() < 0.5 ? 12 + Math.floor(r() * 272) : 284 + Math.floor(r() * 1500));
    docs.push(fromGaps(gaps));
  }
  // Short and mid lengths 1..70, gaps drawn from every class (the 8-nibble one rare).
  const classes = [() => Math.floor(r() * 12), () => 12 + Math.floor(r() * 16), () => 28 + Math.floor(r() * 256), () => 284 + Math.floor(r() * 4096), () => 4380 + Math.floor(r() * 20000)];
  for (let n = 1; n <= 70; n++) {
    for (const mix of [[0.9, 0.04, 0.03, 0.03, 0], [0.1, 0.3, 0.3, 0.3, 0], [0.5, 0.1, 0.1, 0.28, 0.02]]) {
      const gaps = [];
      for (let j = 0; j < n; j++) {
        let u = r(), c = 0;
        while (c < 4 && u >= mix[c]) u -= mix[c++];
        gaps.push(classes[c]());
      }
      docs.push(fromGaps(gaps));
    }
  }
  // Every gap of one class: 16 extra nibbles a group (1 each), 32 (2 each), 48 (3 each: the widest fast group).
  for (const c of [1, 2, 3]) for (const n of [15, 16, 17, 31, 32, 33, 48, 64]) docs.push(fromGaps(Array.from({ length: n }, () => classes[c]())));
  // The class boundaries as gaps, in every lane position; an 8-nibble gap in each lane of a group.
  const edges = [0, 11, 12, 27, 28, 283, 284, 4379, 4380, 65535];
  for (let s = 0; s < 16; s++) docs.push(fromGaps(Array.from({ length: 40 }, (_, j) => edges[(j + s) % edges.length])));
  for (let lane = 0; lane < 16; lane++) docs.push(fromGaps(Array.from({ length: 35 }, (_, j) => (j % 16 === lane ? 5000 + j : pick([1, 20, 300])))));
  // The first index large (a first gap of 9 nibbles), the last dim, a single entry, runs of gaps of 0.
  docs.push(fromGaps([WIDTH - 1]), fromGaps([WIDTH - 40, ...Array(39).fill(0)]), fromGaps([7]), fromGaps(Array(100).fill(0)));
  return docs.filter((d) => d.length > 0);
}

/** @param {() => number} r @param {number[]} indices */
const valuesFor = (r, indices) => Float32Array.from(indices, () => gauss(r) * (r() < 0.05 ? 30 : 1));

/**
 * A dense query: every dim a value (so that scores() sees every entry of every document), of magnitudes from 2^-30
 * to 2^30, so that the sums round and their order shows (products of 24 by 11 bits add up exactly otherwise).
 * @param {() => number} r
 */
function denseQuery(r) {
  const values = new Float32Array(WIDTH);
  for (let i = 0; i < WIDTH; i++) values[i] = gauss(r) * 2 ** (Math.floor(r() * 61) - 30);
  return { indices: Uint32Array.from({ length: WIDTH }, (_, i) => i), values };
}

test('one-pass rescoring: the SIMD path, the reference path and dotDense of the stored values agree bit for bit on every document shape', async (t) => {
  const dir = tempDir('fwd-dot');
  const store = openStore(dir, NO_BG);
  try {
    const r = rng(2026);
    const c = store.collection('c', { width: WIDTH });
    const docs = shapes(r).map((indices, i) => ({ id: `d${String(i).padStart(4, '0')}`, vector: { indices: Uint32Array.from(indices), values: valuesFor(r, indices) } }));
    assert.ok(docs.length > 300, `${docs.length} documents`);
    await c.upsert(docs);
    await c.flush();
    assert.equal(addon.segmentInfo(c.stats().segmentDetails[0].path).version, 4);
    const ids = docs.map((d) => d.id);
    const stored = ids.map((id) => /** @type {any} */ (c.get(id)).vector);
    for (let qi = 0; qi < 3; qi++) {
      const q = denseQuery(r);
      if (!addon.setSimd(true)) t.diagnostic('no AVX2 on this CPU: both runs take the reference path');
      const simd = c.scores(ids, q);
      assert.equal(addon.setSimd(false), false);
      const reference = c.scores(ids, q);
      addon.setSimd(true);
      for (let i = 0; i < ids.length; i++) {
        const want = dotDense(stored[i], q.values);
        assert.ok(Object.is(reference[i], want), `query ${qi} ${ids[i]} (${stored[i].indices.length} entries): reference ${reference[i]} vs dotDense ${want}`);
        assert.ok(Object.is(simd[i], want), `query ${qi} ${ids[i]} (${stored[i].indices.length} entries): SIMD ${simd[i]} vs dotDense ${want}`);
      }
    }
  } finally {
    addon.setSimd(true);
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('one-pass rescoring of damaged nibble streams: CORRUPT or the same score as the reference path, never a read out of bounds', async () => {
  const dir = tempDir('fwd-dot-damaged');
  let store = openStore(dir, NO_BG);
  try {
    const r = rng(77);
    const width = 6000; // small: damaged gaps run past it
    let c = store.collection('c', { width });
    const docs = [];
    for (let i = 0; i < 40; i++) {
      const gaps = Array.from({ length: 20 + i * 3 }, () => (r() < 0.6 ? Math.floor(r() * 12) : r() < 0.7 ? 12 + Math.floor(r() * 200) : 284 + Math.floor(r() * 60)));
      const indices = [];
      let prev = -1;
      for (const g of gaps) { prev += g + 1; if (prev < width) indices.push(prev); }
      docs.push({ id: `d${String(i).padStart(3, '0')}`, vector: { indices, values: indices.map(() => gauss(r)) } });
    }
    await c.upsert(docs);
    await c.flush();
    await store.close();
    const seg = /** @type {string} */ (fs.readdirSync(`${dir}/c`).find((f) => f.endsWith('.seg')));
    const original = fs.readFileSync(`${dir}/c/${seg}`);
    // Header: off[] (u64 per section) at byte 104: FWDIDX 15, FWDIDXOFF 21 (segment.h).
    const idxOff = Number(original.readBigUInt64LE(104 + 21 * 8)), at = Number(original.readBigUInt64LE(104 + 15 * 8));
    const qv = Float32Array.from({ length: width }, () => gauss(r));
    const q = { indices: Uint32Array.from({ length: width }, (_, i) => i), values: qv };
    const ids = docs.map((d) => d.id);
    let corrupt = 0, same = 0;
    for (let trial = 0; trial < 60; trial++) {
      const b = Buffer.from(original);
      const d = Math.floor(r() * docs.length);
      const from = Number(b.readBigUInt64LE(idxOff + 8 * d)), to = Number(b.readBigUInt64LE(idxOff + 8 * (d + 1)));
      for (let k = 0; k < 1 + (trial % 3); k++) b[at + from + Math.floor(r() * (to - from))] = [0xff, 0xee, 0xdd, 0xf0, 0x0f, 0xcc][Math.floor(r() * 6)];
      fs.writeFileSync(`${dir}/c/${seg}`, b);
      store = openStore(dir, NO_BG);
      c = store.collection('c');
      const outcome = (/** @type {string} */ id) => {
        try {
          return c.scores([id], q)[0];
        } catch (err) {
          assert.equal(/** @type {any} */ (err).code, 'SCDV_STORE_CORRUPT', /** @type {any} */ (err).message);
          return 'CORRUPT';
        }
      };
      for (const id of ids) {
        addon.setSimd(true);
        const simd = outcome(id);
        addon.setSimd(false);
        const reference = outcome(id);
        addon.setSimd(true);
        assert.ok(Object.is(simd, reference), `trial ${trial}, document ${d} damaged, ${id}: SIMD ${simd} vs reference ${reference}`);
        if (id === ids[d]) { if (simd === 'CORRUPT') corrupt++; else same++; }
      }
      await store.close();
    }
    assert.ok(corrupt > 20, `damage found: ${corrupt} (decodable anyway: ${same})`);
  } finally {
    addon.setSimd(true);
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
