// Filters: time range, sites include/exclude, categories, exclude ids — on documents in segments (both the
// inverted-index path and the scan path for selective filters) and in the WAL tail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { openStore } from '../../pipeline/store/index.js';
import { bruteForce, tempDir } from './helpers.js';

const SITES = ['a.example', 'b.example', 'c.example'];
const CATS = ['news', 'tech'];
const T0 = Date.parse('2024-01-01T00:00:00Z');
const DAY = 86400000;

/** Document i: one shared dim with a distinct value (so the order is known) plus a private one. */
function docs() {
  /** @type {import('./helpers.js').TestDoc[]} */
  const out = [];
  for (let i = 0; i < 3000; i++) {
    /** @type {Record<string, any>} */
    const meta = { title: `t${i}` };
    if (i % 7 !== 0) meta.site = SITES[i % 3];
    if (i % 11 !== 0) meta.category = CATS[i % 2];
    if (i % 13 !== 0) meta.published_at = i % 2 ? new Date(T0 + i * DAY / 10).toISOString() : T0 + i * DAY / 10;
    const v = 0.05 + (i % 1000) / 1000 + i / 1e7;
    out.push({ id: `n${i}`, vector: { indices: Uint32Array.from([0, 1 + (i % 50)]), values: Float32Array.from([v, 0.1]) }, meta });
  }
  return out;
}

const CASES = [
  { since: '2024-02-01T00:00:00Z' },
  { until: T0 + 100 * DAY },
  { since: T0 + 10 * DAY, until: '2024-01-20T00:00:00Z' },
  { since: T0 + 50 * DAY, until: T0 + 50 * DAY }, // inclusive on both ends: exactly one instant
  { sites: ['b.example'] },
  { sites: ['a.example', 'c.example', 'nope.example'] },
  { sites: ['nope.example'] },
  { excludeSites: ['a.example', 'b.example'] },
  { categories: ['tech'] },
  { categories: ['news'], sites: ['c.example'], since: T0 + 30 * DAY },
  { excludeIds: ['n999', 'n1999', 'n2999', 'n998', 'unknown'] },
  { sites: ['a.example'], categories: ['tech'], since: T0 + 299 * DAY / 10, until: T0 + 300 * DAY / 10 }, // selective: scan path
  {},
];

test('filters agree with the reference, in segments and in the WAL tail', async () => {
  const dir = tempDir('filters');
  const store = openStore(dir, { autoFlush: false, autoMerge: false, maintenanceMs: 0 });
  try {
    const c = store.collection('f', { width: 100 });
    const all = docs();
    /** @type {Map<string, import('./helpers.js').TestDoc>} */
    const live = new Map(all.map((d) => [d.id, d]));
    await c.upsert(all.slice(0, 2000));
    await c.flush();
    await c.upsert(all.slice(2000)); // the rest stays in the WAL
    const q = { indices: Uint32Array.from([0]), values: Float32Array.from([1]) };
    for (const f of CASES) {
      for (const k of [1, 10, 100]) {
        const want = bruteForce(live, q, { ...f, k });
        for (const mode of /** @type {const} */ (['exact', 'fast'])) {
          const got = c.search(q, { ...f, k, mode });
          assert.deepEqual(got.map((h) => h.id), want.map((w) => w.id), `${mode} k=${k} ${JSON.stringify(f)}`);
          for (const h of got) {
            const m = /** @type {import('./helpers.js').TestDoc} */ (live.get(h.id)).meta;
            if (f.sites) assert.ok(f.sites.includes(m.site));
            if (f.excludeSites) assert.ok(!f.excludeSites.includes(m.site));
            if (f.categories) assert.ok(f.categories.includes(m.category));
          }
        }
      }
    }
    // The selective case is answered by scanning the filtered documents, the others through the index.
    assert.equal(c.profile(q, CASES[11]).stats.bruteSegments, 1);
    assert.equal(c.profile(q, {}).stats.bruteSegments, 0);
    // Filters on a single instant and an empty result.
    assert.equal(c.search(q, { since: T0 + 400 * DAY }).length, 0);
    assert.equal(c.search(q, { since: T0 + 50 * DAY, until: T0 + 50 * DAY }).length, 1);
    assert.deepEqual(c.search(q, { categories: [] }), []);
    assert.deepEqual(c.search(q, { sites: [] }), []);
  } finally {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
