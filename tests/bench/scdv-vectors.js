#!/usr/bin/env node
// Real SCDV vectors at scale for the search benchmark: synthetic documents recombined from the livedoor dev
// split (tests/bench/synthetic-corpus.js), embedded with a model trained on that split, through the same
// Embedder as `scdv index` — then written as a .csr file (tests/bench/search.data.js) with an .ids sidecar.
// node tests/bench/scdv-vectors.js [--docs 100000] [--model bench-livedoor-dev] [--keep-fraction F] [--out FILE.csr]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../pipeline/config.js';
import { createEmbedder } from '../../pipeline/embed/index.js';
import { modelsDir, SHARED_DIR } from '../../pipeline/paths.js';
import { sentencePools, synthesize } from './synthetic-corpus.js';
import { writeCsr } from './search.data.js';

/**
 * @param {{docs: number, model: string, out: string, corpus?: string, keepFraction?: number, log?: (m: string) => void}} o
 * @returns {Promise<{file: string, docs: number, nnz: number, width: number, seconds: number}>}
 */
export async function makeScdvVectors(o) {
  const log = o.log ?? ((/** @type {string} */ m) => process.stderr.write(`${m}\n`));
  const corpus = o.corpus ?? path.join(SHARED_DIR, 'corpora', 'livedoor', 'dev.jsonl');
  if (!fs.existsSync(path.join(modelsDir(), o.model, 'manifest.json'))) {
    throw new Error(`model ${o.model} is missing: run \`npm run bench:train\` (it trains bench-livedoor-dev on the dev split)`);
  }
  const t0 = Date.now();
  const config = loadConfig(o.keepFraction ? { overrides: { embed: { keepFraction: o.keepFraction } } } : {});
  const embedder = await createEmbedder(o.model, config, { inMemory: true });
  const pools = sentencePools(corpus);
  /** @type {Uint32Array[]} */
  const idx = [];
  /** @type {Float32Array[]} */
  const val = [];
  /** @type {string[]} */
  const ids = [];
  /** @type {string[]} */
  const cats = [];
  /** @type {ReturnType<typeof synthesize> extends Generator<infer D> ? D[] : never} */
  let batch = [];
  const flush = async () => {
    const vecs = await embedder.embedDocuments(batch);
    vecs.forEach((v, i) => {
      if (v.indices.length === 0) return; // nothing to search for: left out, as `scdv index` does
      idx.push(v.indices);
      val.push(v.values);
      ids.push(batch[i].id);
      cats.push(batch[i].category);
    });
    batch = [];
  };
  for (const doc of synthesize(pools, o.docs)) {
    batch.push(doc);
    if (batch.length === 256) {
      await flush();
      if (ids.length % 10240 < 256) log(`embedded ${ids.length}/${o.docs} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
    }
  }
  await flush();
  const nnz = idx.reduce((a, r) => a + r.length, 0);
  const offsets = new Float64Array(ids.length + 1);
  const indices = new Uint32Array(nnz);
  const values = new Float32Array(nnz);
  let p = 0;
  for (let r = 0; r < ids.length; r++) {
    indices.set(idx[r], p);
    values.set(val[r], p);
    p += idx[r].length;
    offsets[r + 1] = p;
  }
  writeCsr(o.out, { rows: ids.length, width: embedder.width, offsets, indices, values, ids: null });
  fs.writeFileSync(`${o.out}.ids`, ids.join('\n') + '\n');
  fs.writeFileSync(`${o.out}.categories`, cats.join('\n') + '\n');
  return { file: o.out, docs: ids.length, nnz, width: embedder.width, seconds: (Date.now() - t0) / 1000 };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { docs: { type: 'string', default: '100000' }, model: { type: 'string', default: 'bench-livedoor-dev' }, out: { type: 'string' }, 'keep-fraction': { type: 'string' } } });
  const docs = Number(values.docs);
  const keepFraction = values['keep-fraction'] ? Number(values['keep-fraction']) : undefined;
  const out = values.out ?? path.join(os.tmpdir(), `scdv-${values.model}-${docs}${keepFraction ? `-k${keepFraction}` : ''}.csr`);
  const r = await makeScdvVectors({ docs, model: /** @type {string} */ (values.model), out, keepFraction });
  console.log(JSON.stringify(r));
}
