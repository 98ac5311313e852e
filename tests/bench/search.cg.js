#!/usr/bin/env node
// Instruction counts of searches (timings on a shared machine are too noisy to rank small changes).
//   node tests/bench/search.cg.js build  --data X.csr --dir D [--pipeline <checkout>/pipeline] [--docs N]
//   valgrind --tool=callgrind --toggle-collect='*searchSegment*' \
//     node tests/bench/search.cg.js search --data X.csr --dir D [--pipeline ...] [--queries 50] [--mode fast]
//     [--k 10] [--certified C]   (k 20 --certified 10: the live related route's pool search)
// `build` makes one merged segment of the first N vectors with the store of --pipeline (default: this
// checkout's) and prints its bytes per non-zero (and, from format 4 on, per section); `search` runs the queries (stored documents, themselves excluded, threads: 1) against it, so
// that callgrind counts only the native search of each build.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { readCsr, row } from './search.data.js';

const { positionals, values: opt } = parseArgs({ allowPositionals: true, options: {
  data: { type: 'string' }, dir: { type: 'string' }, pipeline: { type: 'string' }, docs: { type: 'string' },
  queries: { type: 'string', default: '50' }, mode: { type: 'string', default: 'fast' },
  k: { type: 'string', default: '10' }, certified: { type: 'string' },
} });
const pipeline = opt.pipeline ? path.resolve(opt.pipeline) : fileURLToPath(new URL('../../pipeline', import.meta.url));
const { openStore } = /** @type {typeof import('../../pipeline/store/index.js')} */ (await import(path.join(pipeline, 'store/index.js')));
if (!opt.data || !opt.dir) throw new Error('--data and --dir are required');
const m = readCsr(opt.data);
const n = Math.min(m.rows, Number(opt.docs ?? m.rows));
const store = openStore(opt.dir, { autoFlush: false, autoMerge: false, maintenanceMs: 0 });
if (positionals[0] === 'build') {
  const c = store.collection('bench', { width: m.width });
  for (let i = 0; i < n; i += 10000) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + 10000); j++) batch.push({ id: String(j), vector: row(m, j) });
    await c.upsert(batch);
  }
  await c.flush();
  await c.merge();
  process.stdout.write(`${JSON.stringify(c.stats().bytes_per_nnz)}\n`);
  // Per non-zero, where the bytes are (builds whose addon reports them: segment format 4 on).
  const { loadAddon } = /** @type {typeof import('../../pipeline/store/native.js')} */ (await import(path.join(pipeline, 'store/native.js')));
  const info = loadAddon().segmentInfo(c.stats().segmentDetails[0].path);
  if (info.sections) {
    const per = Object.fromEntries(Object.entries(info.sections).map(([k, v]) => [k, +(v / info.nnz).toFixed(4)]));
    process.stdout.write(`${JSON.stringify({ version: info.version, ...per, postingsByGapLayout: info.postingsByGapLayout })}\n`);
  }
} else {
  const c = store.collection('bench');
  const nq = Number(opt.queries);
  let sum = 0;
  for (let i = 0; i < nq; i++) {
    const q = Math.floor((i * 2654435761) % n);
    const hits = c.search(row(m, q), { k: Number(opt.k), threads: 1, excludeIds: [String(q)], ...(opt.certified ? { certified: Number(opt.certified) } : {}),
      ...(opt.mode === 'exact' ? { mode: 'exact' } : {}) });
    // Every hit's id and score count, in order: two builds that print the same checksum gave the same results.
    for (const [j, h] of hits.entries()) sum += h.score * (j + 1) + Number(h.id) * 1e-9;
  }
  process.stdout.write(`${nq} queries, checksum ${sum}\n`);
}
await store.close();
