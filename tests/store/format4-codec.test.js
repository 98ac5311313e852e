// Segment format 4's codecs (pipeline/store/native/src/fwd_codec.h, posting_codec.h) against independent
// references: the 11-bit value codes (SSE4.1 and scalar decoding, every start offset), the nibble-coded forward
// index gaps (round trip and exact size, gaps at every class boundary, one-entry documents, the largest dims) and
// the patched u8 posting gaps (the documents of each list decoded exactly, the SIMD and baseline paths equal; gaps
// at the u8 / patch boundary, a high byte of 255, one-posting lists, lists over two windows).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { openStore } from '../../pipeline/store/index.js';
import { loadAddon } from '../../pipeline/store/native.js';
import { dot, randomVector, rng, storedValues, tempDir } from './helpers.js';

const NO_BG = { autoFlush: false, autoMerge: false, maintenanceMs: 0 };
const addon = /** @type {any} */ (loadAddon());
const PAD = 16; // kFwdPad: zero bytes after FWDIDX and FWDVAL

/** @param {Float32Array} a */
const bits = (a) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

/** Packs signed 11-bit codes, entry j at bit 11 j (the reference of putCode), with PAD zero bytes after. @param {number[]} codes */
function pack11(codes) {
  const out = new Uint8Array(Math.ceil((11 * codes.length) / 8) + PAD);
  codes.forEach((c, j) => {
    const u = c & 0x7ff;
    for (let b = 0; b < 11; b++) if ((u >> b) & 1) out[(11 * j + b) >> 3] |= 1 << ((11 * j + b) & 7);
  });
  return out;
}

/** Nibbles of one gap (fwd_codec.h: 0..11 direct; 12, 13, 14, 15 + 1, 2, 3, 8 nibbles). @param {number} g */
const nibbles = (g) => (g < 12 ? 1 : g < 28 ? 2 : g < 284 ? 3 : g < 4380 ? 4 : 9);

/** Bytes of a document's nibble stream. @param {ArrayLike<number>} indices */
function gapBytes(indices) {
  let n = 0;
  for (let j = 0; j < indices.length; j++) n += nibbles(j === 0 ? indices[0] : indices[j] - indices[j - 1] - 1);
  return Math.ceil(n / 2);
}

/**
 * The forward index's bytes in format 4 (Segment::forwardBytes): entry and byte offsets (u64, n + 1 each), the
 * nibble streams and 11-bit codes (each followed by PAD bytes), a f32 unit per document.
 * @param {{indices: ArrayLike<number>}[]} vectors
 */
function forwardBytes(vectors) {
  let gaps = 0, nnz = 0;
  for (const v of vectors) { gaps += gapBytes(v.indices); nnz += v.indices.length; }
  return 16 * (vectors.length + 1) + gaps + PAD + Math.ceil((11 * nnz) / 8) + PAD + 4 * vectors.length;
}

test('11-bit codes: the SSE4.1 and scalar decoders equal the reference at every start offset and length, extremes included', () => {
  const r = rng(41);
  const codes = Array.from({ length: 300 }, (_, j) => [1023, -1023, 0, -1, 1, 512, -512][j % 11] ?? Math.floor(r() * 2047) - 1023);
  const packed = pack11(codes);
  for (let first = 0; first < 24; first++) {
    for (const n of [0, 1, 2, 7, 8, 9, 15, 16, 17, 33, 100, 300 - first]) {
      if (first + n > codes.length) continue;
      const want = codes.slice(first, first + n);
      const simd = addon.codesToFloats(packed, first, n, true);
      const scalar = addon.codesToFloats(packed, first, n, false);
      assert.deepEqual(Array.from(scalar), want, `scalar, first ${first}, n ${n}`);
      assert.deepEqual(bits(simd), bits(scalar), `SSE4.1 and scalar, first ${first}, n ${n}`);
    }
  }
  assert.throws(() => addon.codesToFloats(new Uint8Array(4), 0, 2, true), /too short/);
});

test('nibble index gaps: documents round-trip with gaps at every class boundary, one entry, the largest dims; the forward index has the reference size', async () => {
  const dir = tempDir('fmt4-gaps');
  const store = openStore(dir, NO_BG);
  try {
    const width = 200000;
    const c = store.collection('c', { width });
    /** @type {{id: string, vector: {indices: Uint32Array, values: Float32Array}}[]} */
    const docs = [];
    const add = (/** @type {number[]} */ indices) => {
      const values = Float32Array.from(indices, (_, j) => ((j % 5) - 2.2) / 3);
      docs.push({ id: `g${String(docs.length).padStart(4, '0')}`, vector: { indices: Uint32Array.from(indices), values } });
    };
    // Every boundary of the classes (11|12, 27|28, 283|284, 4379|4380) as a first index and as a gap, at odd
    // and even nibble positions.
    for (const g of [0, 1, 11, 12, 13, 27, 28, 29, 283, 284, 285, 4379, 4380, 4381, 65535, 65536, width - 2]) {
      add([g]);
      if (g + 1 < width) add([g, g + 1]);
      if (g + 6 < width) add([0, 2, g + 3].filter((x, j, a) => j === 0 || x > a[j - 1]));
      if (3 + 2 * (g + 1) < width) add([3, 3 + g + 1, 3 + 2 * (g + 1)]);
    }
    add([width - 1]); // the largest dim alone: a 9-nibble first gap
    add([0, width - 1]);
    add(Array.from({ length: 300 }, (_, j) => j)); // gaps of 0 only
    const r = rng(5);
    for (let i = 0; i < 200; i++) docs.push({ id: `r${i}`, vector: randomVector(r, width, 1 + Math.floor(r() * 400), { blocks: 1 + (i % 4) }) });
    await c.upsert(docs);
    await c.flush();
    const seg = c.stats().segmentDetails[0];
    assert.equal(addon.segmentInfo(seg.path).version, 4);
    assert.equal(addon.segmentInfo(seg.path).forwardBytes, forwardBytes(docs.map((d) => d.vector)), 'nibble streams of the reference size');
    for (const d of docs) {
      const got = /** @type {any} */ (c.get(d.id)).vector;
      assert.deepEqual(Array.from(got.indices), Array.from(d.vector.indices), `${d.id}: indices`);
      assert.deepEqual(bits(got.values), bits(storedValues(d.vector.values)), `${d.id}: values`);
    }
    // Rescoring decodes the same indices (dotNibbles' four-at-a-time path and its long-gap path).
    for (const d of docs.filter((_, i) => i % 7 === 0)) {
      for (const hit of c.search(d.vector, { k: 5, mode: 'exact' })) {
        const v = /** @type {{id: string, vector: {indices: Uint32Array, values: Float32Array}}} */ (docs.find((x) => x.id === hit.id)).vector;
        const want = dot(d.vector, { indices: v.indices, values: storedValues(v.values) });
        assert.ok(Math.abs(hit.score - want) < 1e-9, `${d.id} -> ${hit.id}: ${hit.score} vs ${want}`);
      }
    }
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('patched posting gaps: every list decodes to exactly its documents on the SIMD and baseline paths, at the u8 / patch boundaries', async () => {
  const dir = tempDir('fmt4-postings');
  const store = openStore(dir, NO_BG);
  try {
    const DOCS = 65536 + 1000; // two windows
    const width = 64;
    /** @type {Map<number, number[]>} local documents of each test dim (ids are zero-padded: local order) */
    const lists = new Map();
    const r = rng(9);
    // dim 1: small gaps, then wide ones of 256, 257, 1000 and 4000 among them (a patched block); 255 stays u8.
    const d1 = [0];
    for (let j = 1; j < 260; j++) d1.push(d1[j - 1] + 1 + ([255, 256, 257, 1000, 4000][j % 37] ?? Math.floor(r() * 40)));
    lists.set(1, d1);
    // dim 2: eleven documents, then the last of the window: a gap with high byte 255 in a patched block.
    lists.set(2, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 65535]);
    // dim 3: one posting. dim 4: one wide gap in a block of two (u16 is smaller than a patch). dim 5: both windows.
    lists.set(3, [777]);
    lists.set(4, [5, 5 + 301]);
    lists.set(5, Array.from({ length: 300 }, (_, j) => 65300 + j * 3));
    // dim 6: gaps of exactly 255 only (u8), dim 7: ~30 % of the gaps wide (the benchmark's share).
    lists.set(6, Array.from({ length: 200 }, (_, j) => j * 256));
    const d7 = [3];
    for (let j = 1; j < 300; j++) d7.push(d7[j - 1] + 1 + (r() < 0.3 ? 256 + Math.floor(r() * 100) : Math.floor(r() * 100)));
    lists.set(7, d7);
    /** @type {Map<number, number[]>} dims of each document */
    const dimsOf = new Map();
    for (const [dim, ds] of lists) for (const d of ds) dimsOf.set(d, [...(dimsOf.get(d) ?? []), dim]);
    const c = store.collection('c', { width });
    for (let a = 0; a < DOCS; a += 20000) {
      const batch = [];
      for (let d = a; d < Math.min(DOCS, a + 20000); d++) {
        const dims = [0, ...(dimsOf.get(d) ?? [])].sort((x, y) => x - y);
        // Equal values: one tier per list (no split by magnitude), so a list's documents are exactly these.
        batch.push({ id: String(d).padStart(6, '0'), vector: { indices: dims, values: dims.map(() => 0.5) } });
      }
      await c.upsert(batch);
    }
    await c.flush();
    const path = c.stats().segmentDetails[0].path;
    const info = addon.segmentInfo(path);
    assert.equal(info.version, 4);
    assert.ok(info.postingsByGapLayout['9'] > 0 && info.postingsByGapLayout['8'] > 0 && info.postingsByGapLayout['16'] > 0 && info.postingsByGapLayout['0'] > 0,
      `blocks of every layout: ${JSON.stringify(info.postingsByGapLayout)}`);
    for (const [dim, want] of lists) {
      addon.setSimd(true);
      const simd = addon.segmentPostingSums(path, Uint32Array.of(dim), Float32Array.of(1));
      assert.equal(addon.setSimd(false), false);
      const base = addon.segmentPostingSums(path, Uint32Array.of(dim), Float32Array.of(1));
      addon.setSimd(true);
      assert.deepEqual(bits(simd), bits(base), `dim ${dim}: SIMD and baseline sums`);
      const got = [];
      for (let d = 0; d < DOCS; d++) if (base[d] !== 0) got.push(d);
      assert.deepEqual(got, want, `dim ${dim}: its documents`);
      for (const d of want) assert.ok(Math.abs(base[d] - 0.5) < 0.5 / 127, `dim ${dim}, document ${d}: ${base[d]}`);
    }
  } finally {
    addon.setSimd(true);
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a damaged patched block (a wide gap placed past the block) is reported as SCDV_STORE_CORRUPT, never decoded out of bounds', async () => {
  const dir = tempDir('fmt4-damaged');
  let store = openStore(dir, NO_BG);
  try {
    const c = store.collection('c', { width: 4 });
    const docs = [];
    // dim 1 in documents 0..10 and 590: ten gaps of 0 and one of 579, a patched block of 12 postings.
    for (let d = 0; d < 600; d++) docs.push({ id: String(d).padStart(4, '0'), vector: { indices: d <= 10 || d === 590 ? [0, 1] : [0], values: d <= 10 || d === 590 ? [0.5, 0.5] : [0.5] } });
    await c.upsert(docs);
    await c.flush();
    const file = c.stats().segmentDetails[0].path;
    await store.close();
    // Header: off[] (u64 per section) at byte 104: LISTS 18, BLOCKS 19, PDATA 20 (segment.h). ListInfo: 48 bytes,
    // block0 at 32, dataOff at 40; BlockInfo: 16 bytes, dataRel at 8, bits at 14, cntm1 at 15.
    const b = fs.readFileSync(file);
    const off = (/** @type {number} */ s) => Number(b.readBigUInt64LE(104 + 8 * s));
    const lists = off(18), blocks = off(19), pdata = off(20);
    const list = lists + 48 * 1; // the lists in dim order: dim 0's one list, then dim 1's
    assert.equal(b.readUInt32LE(list), 1, 'dim 1');
    const block = blocks + 16 * Number(b.readBigUInt64LE(list + 32));
    assert.equal(b[block + 14], 9, 'a patched block');
    const cnt = b[block + 15] + 1;
    const at = pdata + Number(b.readBigUInt64LE(list + 40)) + b.readUInt32LE(block + 8);
    assert.deepEqual([b[at + 2 * cnt - 1], b[at + 2 * cnt], b[at + 2 * cnt + 1]], [1, 10, 579 >> 8], 'one wide gap: at position 10, high byte 2');
    b[at + 2 * cnt] = cnt - 1; // a position past the block's cnt - 1 gaps
    fs.writeFileSync(file, b);
    // The posting traversal (a segment this small is searched by scoring its documents directly).
    for (const simd of [true, false]) {
      addon.setSimd(simd);
      assert.throws(() => addon.segmentPostingSums(file, Uint32Array.of(1), Float32Array.of(1)), (/** @type {any} */ err) => {
        assert.equal(err.code, 'SCDV_STORE_CORRUPT', err.message);
        return true;
      });
    }
    store = openStore(dir, NO_BG);
  } finally {
    addon.setSimd(true);
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
