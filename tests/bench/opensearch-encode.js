#!/usr/bin/env node
// The client's CPU to build bulk requests, in this process alone (no node): a document's lines built as text
// (encoding.js indexOperation, what the store sends) against an object per document serialised by the client's
// ndjson serializer with the terms concatenated as template strings (the store's earlier way), on the same
// prepared documents (whose terms both ways must agree on), interleaved repeats.
//   node tests/bench/opensearch-encode.js --data X.csr [--docs 20000] [--repeats 5]
// Last stdout line: JSON with the microseconds a document of each way (medians).
import { parseArgs } from 'node:util';
import SerializerModule from '@opensearch-project/opensearch/lib/Serializer.js';
import { readCsr, row } from './search.data.js';
import { prepareDoc } from '../../pipeline/store/validate.js';
import { encodeVector, featureTerms, indexOperation, osId } from '../../pipeline/store/opensearch/encoding.js';

const { values: opt } = parseArgs({ options: { data: { type: 'string' }, docs: { type: 'string', default: '20000' }, repeats: { type: 'string', default: '5' } } });
if (!opt.data) { console.error('usage: --data X.csr [--docs N] [--repeats R]'); process.exit(2); }
const m = readCsr(opt.data);
const n = Math.min(m.rows, Number(opt.docs));
const docs = Array.from({ length: n }, (_, i) => prepareDoc({ id: `d${i}`, vector: row(m, i), meta: { title: `t${i}`, site: 's', published_at: 1700000000000 + i } }, m.width));
const alias = 'scdv-load--c.w';
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
/** The terms of `f` as the store built them before (a template string a term), the same text as featureTerms. */
const concatTerms = (/** @type {Uint32Array} */ indices, /** @type {Float32Array} */ values) => {
  let s = '';
  for (let j = 0; j < indices.length; j++) {
    const v = values[j];
    if (v === 0 || v !== v) continue;
    f32[0] = v < 0 ? -v : v;
    s += `${s ? ' ' : ''}${v > 0 ? 'p' : 'n'}${indices[j]}|${Math.max(0x00800000 >>> 15, u32[0] >>> 15)}`;
  }
  return s;
};
for (const d of docs) if (concatTerms(d.indices, d.values) !== featureTerms(d.indices, d.values)) throw new Error(`featureTerms differs on ${d.id}`);
const serializer = new (/** @type {any} */ (SerializerModule))();
const ways = {
  text: () => { let s = ''; for (const d of docs) s += indexOperation(alias, d); return s.length; },
  objects: () => {
    const body = [];
    for (const d of docs) {
      body.push({ index: { _index: alias, _id: osId(d.id), require_alias: true } }, {
        id: d.id, f: concatTerms(d.indices, d.values), v: encodeVector(d.indices, d.values), meta: JSON.parse(d.meta),
        ...(d.site ? { site: d.site } : {}), ...(d.cat ? { category: d.cat } : {}), ...(Number.isNaN(d.time) ? {} : { published_at: d.time }),
      });
    }
    return serializer.ndserialize(body).length;
  },
};
/** @type {Record<string, number[]>} */
const us = { text: [], objects: [] };
for (let r = 0; r < Number(opt.repeats); r++) {
  for (const [name, fn] of Object.entries(ways)) {
    const t = process.cpuUsage();
    fn();
    const c = process.cpuUsage(t);
    us[name].push((c.user + c.system) / n);
  }
}
const median = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(JSON.stringify({ docs: n, us_per_doc: { text: Math.round(median(us.text) * 10) / 10, objects: Math.round(median(us.objects) * 10) / 10 }, repeats: Number(opt.repeats) }));
