#!/usr/bin/env node
// Tokenise-stage throughput with 1 vs 2 local workers, same corpus, same run, interleaved repeats.
// node tests/bench/pipeline.bench.js [--corpus FILE] [--repeats 3] [--shard-size 200] [--copies N]
// --copies N: the corpus N times over (ids suffixed), to see the steady state past start-up costs.
// Last line: {"docs":…, "docs_s_1":…, "docs_s_2":…, "speedup":…}
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../pipeline/config.js';
import { startPrivateRedis } from '../../pipeline/queue/redis.js';
import { runTokenize } from '../../pipeline/stages/tokenize.js';
import { SAMPLE_CORPUS, SHARED_DIR } from '../../pipeline/paths.js';

const { values } = parseArgs({ options: { corpus: { type: 'string' }, repeats: { type: 'string' }, 'shard-size': { type: 'string' }, copies: { type: 'string' } } });
const devSplit = path.join(SHARED_DIR, 'corpora', 'livedoor', 'dev.jsonl');
const source = values.corpus ?? (fs.existsSync(devSplit) ? devSplit : SAMPLE_CORPUS);
const repeats = Number(values.repeats ?? 3);
const config = loadConfig({ overrides: { tokenize: { shardSize: Number(values['shard-size'] ?? 200) } } });
const median = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-bench-pipe-'));
const copies = Number(values.copies ?? 1);
let corpus = source;
if (copies > 1) {
  corpus = path.join(tmp, 'corpus.jsonl');
  const lines = fs.readFileSync(source, 'utf8').trim().split('\n');
  const out = [];
  for (let c = 0; c < copies; c++) for (const l of lines) { const d = JSON.parse(l); d.id = `${d.id}-${c}`; out.push(JSON.stringify(d)); }
  fs.writeFileSync(corpus, out.join('\n') + '\n');
}
const redis = await startPrivateRedis();
/** @type {Record<number, number[]>} */
const rates = { 1: [], 2: [] };
let docs = 0;
try {
  for (let r = 0; r < repeats; r++) {
    for (const workers of r % 2 === 0 ? [1, 2] : [2, 1]) {
      const outDir = path.join(tmp, `r${r}-w${workers}`);
      const t0 = performance.now();
      const s = await runTokenize({ corpus, outDir, config, redisUrl: redis.url, workers, quiet: true, log: () => {} });
      const seconds = (performance.now() - t0) / 1000; // the whole call, worker start-up and shut-down included
      docs = s.documents;
      rates[workers].push(s.documents / seconds);
      process.stderr.write(`repeat ${r + 1} workers ${workers}: ${s.documents} docs in ${seconds.toFixed(2)} s = ${(s.documents / seconds).toFixed(0)} docs/s\n`);
      fs.rmSync(outDir, { recursive: true, force: true });
    }
  }
} finally {
  await redis.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}
const one = median(rates[1]);
const two = median(rates[2]);
console.log(`corpus ${source}${copies > 1 ? ` x${copies}` : ''}: ${docs} documents, ${os.cpus().length} cores, median of ${repeats} (whole run: plan, queue, workers, merge)`);
console.log(`workers  docs/s`);
console.log(`1        ${one.toFixed(0)}`);
console.log(`2        ${two.toFixed(0)}`);
console.log(JSON.stringify({ docs, docs_s_1: +one.toFixed(1), docs_s_2: +two.toFixed(1), speedup: +(two / one).toFixed(2) }));
