// The forward index's compact coding (segment format 4: 11-bit values with a per-document power-of-two scale,
// nibble index gaps; pipeline/store/native/src/fwd_codec.h; the codecs' own property tests: format4-codec.test.js): the stored values against an independent reference,
// bit for bit, in the WAL tail, after a flush and after a merge; format 2's F16C path against the scalar one; and the
// scores against exact dot products of the values given (the error bound the README states).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { openStore } from '../../pipeline/store/index.js';
import { loadAddon } from '../../pipeline/store/native.js';
import { docUnit, dot, randomVector, rng, storedValues, tempDir } from './helpers.js';

const NO_BG = { autoFlush: false, autoMerge: false, maintenanceMs: 0 };
const addon = /** @type {any} */ (loadAddon());

/** @param {Float32Array} a */
const bits = (a) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

/** float16 bits -> number, by the definition. @param {number} h */
function halfValue(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

test('float16 decoding: the run-time-chosen (F16C) path equals the scalar path and the definition on all 65,536 codes', () => {
  const all = Uint16Array.from({ length: 65536 }, (_, i) => i);
  const scalar = addon.halvesToFloats(all, false);
  const dispatched = addon.halvesToFloats(all, true);
  assert.deepEqual(bits(dispatched), bits(scalar));
  for (let h = 0; h < 65536; h++) {
    const want = halfValue(h);
    if (Number.isNaN(want)) assert.ok(Number.isNaN(scalar[h]), `code ${h}`);
    else assert.ok(Object.is(scalar[h], want), `code ${h}: ${scalar[h]} vs ${want}`);
  }
  // Lengths that are not a multiple of the SIMD width take the scalar tail.
  for (const n of [0, 1, 7, 9, 15, 17]) assert.deepEqual(bits(addon.halvesToFloats(all.subarray(1000, 1000 + n), true)), bits(scalar.subarray(1000, 1000 + n)));
});

/**
 * Vectors of awkward shapes: unit vectors, wide ranges of magnitude within one document, huge and tiny values,
 * zeros, exact powers of two, ties of float16 rounding.
 * @param {() => number} r
 * @param {number} width
 * @param {number} i
 */
function awkwardVector(r, width, i) {
  const v = randomVector(r, width, 1 + Math.floor(r() * 60), { blocks: 2 });
  const kind = i % 7;
  const values = Array.from(v.values);
  if (kind === 1) for (let j = 0; j < values.length; j++) values[j] *= 10 ** (Math.floor(r() * 12) - 8);
  if (kind === 2) for (let j = 0; j < values.length; j++) values[j] *= 1e30;
  if (kind === 3) for (let j = 0; j < values.length; j++) values[j] *= 1e-35;
  if (kind === 4) values[0] = 0;
  if (kind === 5) values[values.length - 1] = 2 ** -3;
  // The largest rounds to a power of two (0.5 + 2^-20 is stored as 0.5), and the next is near it: stored values
  // coded again (a merge) must keep their codes.
  if (kind === 5 && values.length > 1) { values[0] = 0.5 + 2 ** -20; values[1] = -(0.5 - 2 ** -20); }
  if (kind === 6) for (let j = 0; j < values.length; j++) values[j] = (1 + (2 * Math.floor(r() * 512) + 1) / 2048) * (r() < 0.5 ? -0.25 : 0.25); // float16 ties
  if (i === 0) values[0] = 3.4e38;
  if (i === 1) values[values.length - 1] = -3.4028234e38; // float32's largest: its code is capped below 2
  return { indices: v.indices, values: Float32Array.from(values) };
}

test('stored values equal the reference bit for bit in the WAL tail, after a flush and after a merge; within one unit (2^-9 of the largest |value|) of the values given', async () => {
  const dir = tempDir('fwd-codec');
  const store = openStore(dir, NO_BG);
  try {
    const width = 70000; // > 65,536: u32 indices given, gaps above 2^14 (three varint bytes)
    const c = store.collection('c', { width });
    const r = rng(7);
    /** @type {Map<string, {indices: Uint32Array, values: Float32Array}>} */
    const docs = new Map();
    for (let part = 0; part < 3; part++) {
      const batch = [];
      for (let i = 0; i < 70; i++) {
        const id = `p${part}-${i}`;
        const vector = awkwardVector(r, width, i);
        docs.set(id, vector);
        batch.push({ id, vector });
      }
      await c.upsert(batch);
      const check = (/** @type {string} */ when) => {
        for (const [id, vector] of docs) {
          if (!id.startsWith(`p${part}-`)) continue;
          const got = /** @type {any} */ (c.get(id)).vector;
          assert.deepEqual(Array.from(got.indices), Array.from(vector.indices), `${id} ${when}: indices`);
          assert.deepEqual(bits(got.values), bits(storedValues(vector.values)), `${id} ${when}: values`);
          const unit = docUnit(vector.values);
          let mx = 0;
          for (const x of vector.values) mx = Math.max(mx, Math.abs(x));
          assert.ok(unit <= 2 ** -9 * mx || mx < 2 ** -139, `${id}: unit ${unit} for the largest |value| ${mx}`);
          for (let j = 0; j < got.values.length; j++) {
            const v = vector.values[j];
            // 11-bit codes: half a unit, a whole unit for values clamped at the top code.
            assert.ok(Math.abs(got.values[j] - v) <= unit, `${id} ${when}: value ${j} ${got.values[j]} vs ${v}`);
          }
        }
      };
      check('in the WAL tail');
      await c.flush();
      check('after a flush');
    }
    await c.merge();
    assert.equal(c.stats().segments, 1);
    for (const [id, vector] of docs) {
      assert.deepEqual(bits(/** @type {any} */ (c.get(id)).vector.values), bits(storedValues(vector.values)), `${id} after the merge: values`);
    }
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('unit vectors: scores equal the dot product of the stored values, stay within the stated bound (< 1e-3) of the values given, and do not depend on the SIMD path', async () => {
  const dir = tempDir('fwd-scores');
  const store = openStore(dir, NO_BG);
  try {
    const width = 27000;
    const c = store.collection('c', { width });
    const r = rng(11);
    /** @type {Map<string, {indices: Uint32Array, values: Float32Array}>} */
    const docs = new Map();
    const batch = [];
    for (let i = 0; i < 3000; i++) {
      const vector = randomVector(r, width, 200 + Math.floor(r() * 150), { blocks: 4 });
      docs.set(`d${i}`, vector);
      batch.push({ id: `d${i}`, vector });
    }
    await c.upsert(batch);
    const tail = [];
    const queries = Array.from({ length: 20 }, (_, i) => /** @type {{indices: Uint32Array, values: Float32Array}} */ (docs.get(`d${i * 97}`)));
    for (const q of queries) tail.push(c.search(q, { k: 20, mode: 'exact' }));
    await c.flush();
    // The forward index's size: 11-bit values (1.375 bytes), nibble gaps (here ~110 dims apart on average: mostly
    // 3 nibbles), 16 bytes of offsets and 4 of scale per document; format 3 took 2.6 bytes per non-zero (12-bit
    // values, varint gaps), format 2 (float16 values) ~3, format 1 6 bytes plus 8 per document.
    const seg = c.stats().segmentDetails[0];
    let nnz = 0;
    for (const v of docs.values()) nnz += v.indices.length;
    assert.ok(seg.forwardBytes <= 2.6 * nnz + 20 * docs.size + 256, `forward index ${seg.forwardBytes} bytes for ${nnz} non-zeros`);
    for (const [qi, q] of queries.entries()) {
      let qNorm = 0;
      for (const x of q.values) qNorm += x * x;
      for (const mode of /** @type {const} */ (['exact', 'fast'])) {
        const simd = c.search(q, { k: 20, mode });
        const off = addon.setSimd(false);
        assert.equal(off, false);
        const scalar = c.search(q, { k: 20, mode });
        addon.setSimd(true);
        assert.deepEqual(scalar, simd, `query ${qi} ${mode}: scalar and SIMD decoding give the same hits and scores`);
        if (mode === 'exact') assert.deepEqual(simd.map((h) => [h.id, h.score]), tail[qi].map((h) => [h.id, h.score]), `query ${qi}: same scores in the WAL tail and in a segment`);
        for (const h of simd) {
          const v = /** @type {{indices: Uint32Array, values: Float32Array}} */ (docs.get(h.id));
          const stored = dot(q, { indices: v.indices, values: storedValues(v.values) });
          assert.ok(Math.abs(h.score - stored) < 1e-9, `query ${qi} ${mode} ${h.id}: ${h.score} vs stored ${stored}`);
          let qCommon = 0, vNorm = 0;
          for (let i = 0, j = 0; i < q.indices.length && j < v.indices.length;) {
            if (q.indices[i] === v.indices[j]) { qCommon += Math.abs(q.values[i]); i++; j++; }
            else if (q.indices[i] < v.indices[j]) i++;
            else j++;
          }
          for (const x of v.values) vNorm += x * x;
          const bound = docUnit(v.values) * qCommon + 1e-12;
          const err = Math.abs(h.score - dot(q, v));
          assert.ok(err <= bound, `query ${qi} ${mode} ${h.id}: error ${err} above the bound ${bound}`);
          assert.ok(err < 1e-3 * Math.sqrt(qNorm * vNorm), `query ${qi} ${mode} ${h.id}: error ${err}`);
        }
      }
    }
  } finally {
    addon.setSimd(true);
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a damaged forward index is reported as SCDV_STORE_CORRUPT by get and search, never read out of bounds', async () => {
  // Header: off[] (u64 per section) starts at byte 104; FWDIDX is section 15 (segment.h). Nibbles, low first.
  for (const [what, bytes] of /** @type {const} */ ([['index past the width', [0x0b, 0]], ['gap running off the end', [0xd0, 0]], ['gap longer than its document', [0x0f, 0]]])) {
    const dir = tempDir('fwd-damaged');
    let store = openStore(dir, NO_BG);
    try {
      const c = store.collection('c', { width: 5 });
      await c.upsert([{ id: 'a', vector: { indices: [1, 2, 3], values: [0.5, -0.25, 1] } }]);
      await c.flush();
      await store.close();
      const seg = /** @type {string} */ (fs.readdirSync(`${dir}/c`).find((f) => f.endsWith('.seg')));
      const b = fs.readFileSync(`${dir}/c/${seg}`);
      const at = Number(b.readBigUInt64LE(104 + 15 * 8));
      assert.deepEqual([...b.subarray(at, at + 2)], [1, 0], 'gaps of indices 1, 2, 3: nibbles 1, 0, 0 and a padding nibble');
      b.set(bytes, at);
      fs.writeFileSync(`${dir}/c/${seg}`, b);
      store = openStore(dir, NO_BG);
      const r = store.collection('c');
      const corrupt = (/** @type {any} */ err) => { assert.equal(err.code, 'SCDV_STORE_CORRUPT', `${what}: ${err.message}`); return true; };
      assert.throws(() => r.get('a'), corrupt);
      assert.throws(() => r.search({ indices: [1], values: [1] }, { k: 1 }), corrupt);
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
});
