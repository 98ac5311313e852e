// The automatic thread choice of a 'fast' search (threads 0, the default; native search_pool.cc autoThreads):
// which path ran, as the search's stats report it, for a small and a large collection and for an idle and a
// busy machine (the idle-core estimate fixed by the addon's test hook). No timings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { openStore } from '../../pipeline/store/index.js';
import { loadAddon } from '../../pipeline/store/native.js';
import { randomVector, rng, tempDir } from './helpers.js';

const addon = loadAddon();
const cores = addon.hardwareThreads; // what the native choice counts with

/**
 * A collection of n documents of nnz non-zeros among W dims, one merged segment.
 * @param {import('../../pipeline/store/index.js').Store} store @param {string} name @param {number} n
 */
async function fill(store, name, n, W = 120, nnz = 12) {
  const c = store.collection(name, { width: W });
  const r = rng(n);
  for (let i = 0; i < n; i += 20000) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + 20000); j++) batch.push({ id: `d${j}`, vector: randomVector(r, W, nnz) });
    await c.upsert(batch);
  }
  await c.flush();
  await c.merge();
  return c;
}

test('the default thread count: one for a search that reads few postings, the idle cores for a large one', async () => {
  const dir = tempDir('threads-choice');
  const store = openStore(dir, { autoFlush: false, autoMerge: false, maintenanceMs: 0 });
  try {
    const small = await fill(store, 'small', 3000);
    // 140,000 documents (three windows of 65,536) of 12 non-zeros among 120 dims: 14,000 postings a dim, so a
    // query of 40 dims read whole holds 560,000, above the 300,000 a split needs.
    const large = await fill(store, 'large', 140000);
    const r = rng(3);
    const query = randomVector(r, 120, 40);
    const opts = { k: 10, budget: 1, minPostings: 0 };
    const one = large.profile(query, { ...opts, threads: 1 });
    assert.ok(one.stats.postings >= 300000, `the large search reads ${one.stats.postings} postings`);
    try {
      // An idle machine: every core free of other work.
      addon.setIdleCores(cores);
      const s = small.profile(query, opts);
      assert.ok(s.stats.postings < 300000);
      assert.equal(s.stats.threads, 1, 'a small search stays on its thread');
      const l = large.profile(query, opts);
      assert.equal(l.stats.threads, Math.min(cores, 3), 'a large search on an idle machine takes the free cores (at most one per window)');
      assert.deepEqual(l.hits.map((h) => [h.id, h.score]), one.hits.map((h) => [h.id, h.score]));
      // One core free of other work: the search itself takes it.
      addon.setIdleCores(1);
      assert.equal(large.profile(query, opts).stats.threads, 1);
      addon.setIdleCores(1.6);
      assert.equal(large.profile(query, opts).stats.threads, Math.min(cores, 2), 'the estimate is rounded');
      // A busy machine: nothing free.
      addon.setIdleCores(0);
      assert.equal(large.profile(query, opts).stats.threads, 1, 'a busy machine keeps one thread');
    } finally {
      addon.setIdleCores(-1);
    }
    // The measurement: a number of cores, within the machine's.
    const measured = addon.idleCores();
    assert.ok(measured >= 0 && measured <= cores, `idle cores ${measured}`);
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
