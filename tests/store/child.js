#!/usr/bin/env node
// Child process for the multi-process store tests (not a test file itself).
//   node child.js writer <dir> <docs> <maxBatch> <prefix>   write a stream; print "ack <id>" after each acknowledged batch
//   node child.js reader <dir> <ms>                         search in a loop, checking every score; print a JSON summary
//   node child.js watch <dir> <id>                          print "ready", then "seen <ms>" once <id> is searchable,
//                                                           then "gone <ms>" once it is deleted
import { openStore } from '../../pipeline/store/index.js';
import { dot, randomVector, rng, storedValues } from './helpers.js';

export const WIDTH = 2000;
/** Small thresholds so that flushes and merges happen during a short stream. */
export const STREAM_OPTIONS = { flushDocs: 300, flushAgeMs: 200, maxSegments: 3, mergeFactor: 3, maintenanceMs: 50, refreshMs: 20 };

/**
 * The vector a test document has: derived from its id, so any process can check a score.
 * @param {string} id
 */
export function vectorFor(id) {
  let h = 2166136261;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619);
  const r = rng(h >>> 0);
  return randomVector(r, WIDTH, 10 + Math.floor(r() * 40), { blocks: 2, blockSize: 40 });
}

/** @param {number} ms */
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

async function main() {
  const [mode, dir, a, b, c] = process.argv.slice(2);
  const store = openStore(dir, STREAM_OPTIONS);
  const col = store.collection('stream', { width: WIDTH });
  if (mode === 'writer') {
    const total = Number(a), maxBatch = Number(b), prefix = c;
    const r = rng(Number(process.pid));
    let n = 0;
    while (n < total) {
      const size = Math.min(total - n, 1 + Math.floor(r() * maxBatch));
      const batch = [];
      for (let i = 0; i < size; i++, n++) {
        const id = `${prefix}${n}`;
        batch.push({ id, vector: vectorFor(id), meta: { n } });
      }
      await col.upsert(batch);
      process.stdout.write(batch.map((d) => `ack ${d.id}\n`).join(''));
    }
    process.stdout.write('done\n');
  } else if (mode === 'reader') {
    const until = Date.now() + Number(a);
    const r = rng(Number(process.pid));
    let searches = 0, errors = 0, maxCount = 0, asyncSearches = 0;
    /** @type {string[]} */
    const problems = [];
    while (Date.now() < until) {
      const q = randomVector(r, WIDTH, 40, { blocks: 2, blockSize: 40 });
      try {
        const hits = searches % 2 ? await col.searchAsync(q, { k: 10 }) : col.search(q, { k: 10, mode: searches % 3 ? 'fast' : 'exact' });
        if (searches % 2) asyncSearches++;
        for (const h of hits) {
          const v = vectorFor(h.id);
          const want = dot(q, { indices: v.indices, values: storedValues(v.values) });
          if (Math.abs(want - h.score) > 1e-6) problems.push(`${h.id}: score ${h.score} != ${want}`);
        }
        for (let i = 1; i < hits.length; i++) if (hits[i].score > hits[i - 1].score) problems.push('not sorted');
        maxCount = Math.max(maxCount, col.count());
      } catch (err) {
        errors++;
        problems.push(String(err));
      }
      searches++;
      if (searches % 20 === 0) await sleep(1);
    }
    process.stdout.write(`${JSON.stringify({ searches, asyncSearches, errors, maxCount, problems: problems.slice(0, 5) })}\n`);
  } else if (mode === 'watch') {
    const id = a;
    const q = vectorFor(id);
    process.stdout.write('ready\n');
    let t0 = 0;
    for (;;) {
      const hits = col.search(q, { k: 1, mode: 'exact' });
      if (hits[0]?.id === id) {
        if (!t0) { t0 = Date.now(); process.stdout.write(`seen ${t0}\n`); }
      } else if (t0) {
        process.stdout.write(`gone ${Date.now()}\n`);
        break;
      }
      await sleep(5);
    }
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  store.close();
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop() ?? '')) {
  main().catch((err) => {
    process.stderr.write(`${err.stack}\n`);
    process.exit(1);
  });
}
