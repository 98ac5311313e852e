// What the sensitive-topic rule of /v1/match would block (server.brandSafety, docs/matching.md "Brand-safety
// controls"): each page's similarity to its closest seed (the seeds of the config, embedded by the model, compared by
// pipeline/match/safety.js's sensitivity(), as the server and precompute jobs do), the distribution, how many pages
// each threshold blocks and which, and a few short texts on sensitive and harmless subjects.
//
//   node tests/bench/brand-safety.js --model livedoor-sample [--corpus FILE] [--pages N] [--threshold 0.15] [--show 20]
//
// Last line: {"model", "pages", "p50", "p90", "p95", "p99", "max", "blocked_at": {threshold: pages}, "texts": [{text, topic, similarity}]}
import fs from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../pipeline/config.js';
import { createEmbedder } from '../../pipeline/embed/index.js';
import { parseDocument } from '../../pipeline/corpus/document.js';
import { SAMPLE_CORPUS } from '../../pipeline/paths.js';
import { safetySettings, seedVectors, sensitivity } from '../../pipeline/match/safety.js';

const { values: o } = parseArgs({
  options: {
    model: { type: 'string' }, corpus: { type: 'string', default: SAMPLE_CORPUS }, pages: { type: 'string', default: '2000' },
    threshold: { type: 'string', default: '0.15' }, show: { type: 'string', default: '20' },
  },
});
if (!o.model) throw new Error('--model NAME is required (a model under models/)');

/** Short texts: three on sensitive subjects, three harmless (our own). */
const TEXTS = [
  '東日本大震災から一年、被災地では今も多くの人が避難生活を続けている。津波で家族を亡くした遺族が追悼式に参列した。',
  '殺人の疑いで男を逮捕。警察によると容疑者は被害者と面識があり、容疑を認めているという。',
  '人気俳優が死去、享年58。葬儀は近親者のみで行われ、後日お別れの会を開く予定。ファンからは冥福を祈る声が相次いだ。',
  'サッカー日本代表はワールドカップ予選で勝利し、監督は選手たちの粘り強さを称えた。',
  '新型スマートフォンが発売。カメラ性能が向上し、バッテリーも長持ちする。',
  '水素と酸素が反応すると水ができる。化学反応式では原子の数が両辺で等しくなるように係数を合わせる。',
];

const threshold = Number(o.threshold);
const config = loadConfig({ overrides: { server: { brandSafety: { threshold } } } });
const st = /** @type {import('../../pipeline/match/safety.js').SafetySettings} */ (safetySettings(config.server.brandSafety, 'articles'));
const embedder = await createEmbedder(o.model, config, { inMemory: true });
const seeds = await seedVectors(embedder, st, (docs) => embedder.embedDocuments(docs));
const docs = fs.readFileSync(o.corpus, 'utf8').split('\n').filter(Boolean).slice(0, Number(o.pages))
  .map((l, i) => parseDocument(Buffer.from(l), i + 1)).flatMap((r) => ('doc' in r ? [r.doc] : []));
const vectors = await embedder.embedDocuments(docs);
const rows = docs.map((d, i) => ({ id: d.id, category: d.category, title: d.title, ...(/** @type {{topic: string, similarity: number}} */ (sensitivity(vectors[i], seeds))) }))
  .sort((a, b) => b.similarity - a.similarity);
const scores = Float64Array.from(rows.map((r) => r.similarity)).sort();
const pct = (/** @type {number} */ p) => Math.round(scores[Math.min(scores.length - 1, Math.max(0, Math.ceil(p * scores.length) - 1))] * 1000) / 1000;
const round = (/** @type {number} */ x) => Math.round(x * 1000) / 1000;

console.log(`model ${o.model}, ${rows.length} pages of ${o.corpus}, ${st.seeds.length} seeds, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
seeds.forEach((s) => console.log(`  seed ${s.topic}: ${s.indices.length} non-zeros`));
console.log(`similarity to the closest seed: p50 ${pct(0.5)}, p90 ${pct(0.9)}, p95 ${pct(0.95)}, p99 ${pct(0.99)}, max ${round(scores[scores.length - 1])}`);
/** @type {Record<string, number>} */
const blockedAt = {};
for (const t of [0.05, 0.08, 0.1, 0.12, 0.15, 0.2, 0.3]) blockedAt[t] = rows.filter((r) => r.similarity >= t).length;
console.log(`pages blocked at: ${Object.entries(blockedAt).map(([t, n]) => `${t} → ${n}`).join(', ')}`);
console.log(`the closest pages (${o.threshold} blocks those at or above it):`);
for (const r of rows.slice(0, Number(o.show))) console.log(`  ${r.similarity.toFixed(3)} ${r.topic.padEnd(14)} ${r.category ?? ''} ${r.title}`);
const texts = [];
for (const [i, v] of (await embedder.embedDocuments(TEXTS.map((t) => ({ body: t })))).entries()) {
  const s = /** @type {{topic: string, similarity: number}} */ (sensitivity(v, seeds));
  texts.push({ text: TEXTS[i].slice(0, 20), topic: s.topic, similarity: round(s.similarity) });
  console.log(`  text ${s.similarity.toFixed(3)} ${s.topic.padEnd(14)} ${TEXTS[i].slice(0, 30)}`);
}
console.log(JSON.stringify({ model: o.model, pages: rows.length, p50: pct(0.5), p90: pct(0.9), p95: pct(0.95), p99: pct(0.99), max: round(scores[scores.length - 1]), blocked_at: blockedAt, texts }));
embedder.model.wordTopics.close();
process.exit(0);
