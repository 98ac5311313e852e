#!/usr/bin/env node
// `scdv train` from scratch (no reused stage) on the livedoor dev split: wall time per stage.
// node tests/bench/train.bench.js [--corpus FILE] [--name bench-livedoor-dev]
// Last line: {"docs":…, "vocabulary":…, "tokenize_s":…, "word2vec_s":…, "idf_s":…, "gmm_s":…, "topics_s":…, "total_s":…}
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { corpus: { type: 'string' }, name: { type: 'string', default: 'bench-livedoor-dev' } } });
// A fresh work folder, so that no stage is reused; the model lands in models/ for bench:gmm.
process.env.SCDV_DATA_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-bench-train-'));
const { loadConfig } = await import('../../pipeline/config.js');
const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { runTrain } = await import('../../pipeline/stages/train.js');
const { SHARED_DIR } = await import('../../pipeline/paths.js');

const corpus = values.corpus ?? path.join(SHARED_DIR, 'corpora', 'livedoor', 'dev.jsonl');
if (!fs.existsSync(corpus)) {
  console.error(`no corpus at ${corpus}: pass --corpus FILE`);
  process.exit(2);
}
const redis = await startPrivateRedis();
try {
  const { manifest } = await runTrain({ corpus, name: /** @type {string} */ (values.name), config: loadConfig(), redisUrl: redis.url, force: true });
  const t = manifest.timings;
  console.log(`corpus ${corpus}: ${manifest.tokens.trainingDocuments} documents, ${manifest.tokens.tokens} tokens, vocabulary ${manifest.counts.vocabulary}, ${os.cpus().length} cores, default config`);
  console.log('stage      seconds');
  for (const k of ['tokenize_s', 'word2vec_s', 'idf_s', 'gmm_s', 'topics_s', 'total_s']) console.log(`${k.replace('_s', '').padEnd(10)} ${Number(t[k]).toFixed(2)}`);
  console.log(JSON.stringify({ docs: manifest.tokens.trainingDocuments, vocabulary: manifest.counts.vocabulary, ...t }));
} finally {
  await redis.stop();
  fs.rmSync(/** @type {string} */ (process.env.SCDV_DATA_DIR), { recursive: true, force: true });
}
