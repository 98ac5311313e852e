#!/usr/bin/env node
// Instruction counts of searches (issue 15: timings on a shared machine are too noisy to rank small changes).
//   node tests/bench/search.cg.js build  --data X.csr --dir D [--pipeline <checkout>/pipeline] [--docs N]
//   valgrind --tool=callgrind --toggle-collect='*searchSegment*' \
//     node tests/bench/search.cg.js search --data X.csr --dir D [--pipeline ...] [--queries 50] [--mode fast]
// `build` makes one merged segment of the first N vectors with the store of --pipeline (default: this
// checkout's); `search` runs the queries (stored documents, themselves excluded, threads: 1) against it, so
// that callgrind counts only the native search of each build.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { readCsr, row } from './search.data.js';

const { positionals, values: opt } = parseArgs({ allowPositionals: true, options: {
  data: { type: 'string' }, dir: { type: 'string' }, pipeline: { type: 'string' }, docs: { type: 'string' },
  queries: { type: 'string', default: '50' }, mode: { type: 'string', default: 'fast' },
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
} else {
  const c = store.collection('bench');
  const nq = Number(opt.queries);
  let sum = 0;
  for (let i = 0; i < nq; i++) {
    const q = Math.floor((i * 2654435761) % n);
    const hits = c.search(row(m, q), { k: 10, threads: 1, excludeIds: [String(q)], ...(opt.mode === 'exact' ? { mode: 'exact' } : {}) });
    sum += hits.length ? hits[0].score : 0;
  }
  process.stdout.write(`${nq} queries, checksum ${sum}\n`);
}
await store.close();
