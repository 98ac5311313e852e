// What the known-word rule of /v1/match would keep from ads (docs/matching.md, "The known-word rule"): the minimum
// derived from the pages of a source corpus (stored as every write path stores them, pipeline/embed/meta.js, and
// derived by pipeline/match/threshold.js's deriveKnownShare, as `scdv index` and `scdv precompute` derive it), and the
// pages of another corpus (new pages: a held-out half, articles the model was not trained on) below it, judged by
// pipeline/match/safety.js's pageBlock, as the server judges them; and a few short texts.
//
//   node tests/bench/known-words.js --model livedoor-sample [--source FILE] [--pages FILE] [--skip FILE] [--ratio 0.5] [--show 10]
//
// --source: the pages the minimum is derived from (default: the sample, the articles of `npm start`); --pages: the
// pages judged (default: --source); --skip: leave out of --pages the ids of this file (e.g. the sample, to judge only
// articles the sample model never saw). Last line: JSON {"model", "minimum", "pages", "blocked", "share_blocked", "texts"}.
import fs from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../pipeline/config.js';
import { createEmbedder } from '../../pipeline/embed/index.js';
import { parseDocument } from '../../pipeline/corpus/document.js';
import { storeRows } from '../../pipeline/embed/meta.js';
import { SAMPLE_CORPUS } from '../../pipeline/paths.js';
import { seededRandom } from '../../pipeline/random.js';
import { deriveKnownShare } from '../../pipeline/match/threshold.js';
import { knownShare, pageBlock, storedPage } from '../../pipeline/match/safety.js';

const { values: o } = parseArgs({
  options: {
    model: { type: 'string' }, source: { type: 'string', default: SAMPLE_CORPUS }, pages: { type: 'string' }, skip: { type: 'string' },
    ratio: { type: 'string' }, show: { type: 'string', default: '10' },
  },
});
if (!o.model) throw new Error('--model NAME is required (a model under models/)');

/** Short texts: the examples of docs/matching.md (our own). */
const TEXTS = {
  'chemistry lesson': '水素と酸素が反応すると水ができる。化学反応式では原子の数が両辺で等しくなるように係数を合わせる。触媒は反応の速さを変える。',
  'miso-soup recipe': '味噌汁の作り方。鍋に水と昆布を入れて火にかけ、沸騰する前に昆布を取り出す。豆腐とわかめを入れ、火を止めてから味噌を溶き入れる。',
  'football report': 'サッカー日本代表はワールドカップ予選で勝利し、監督は選手たちの粘り強さを称えた。次の試合ではスタジアムに多くのサポーターが集まる予定だ。',
};

const config = loadConfig();
const ratio = o.ratio === undefined ? config.server.matchThreshold.knownShareRatio : Number(o.ratio);
const embedder = await createEmbedder(o.model, config, { inMemory: true });

/** @param {string} file @param {Set<string>} [skip] */
function read(file, skip) {
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l, i) => parseDocument(Buffer.from(l), i + 1))
    .flatMap((r) => ('doc' in r && !skip?.has(r.doc.id) ? [r.doc] : []));
}
/** Each page's metadata as a write stores it (storeRows). @param {import('../../pipeline/corpus/document.js').Document[]} docs */
const stored = async (docs) => storeRows(docs, await embedder.embedDocuments(docs)).rows;

const sourceRows = await stored(read(o.source));
const metas = new Map(sourceRows.map((r) => [r.id, r.meta]));
const derived = await deriveKnownShare({ ids: async () => [...metas.keys()], get: async () => null, capabilities: { vectors: false, getMany: false, scores: false, leanSearch: true, fusedRerank: false, fusedRerankById: false }, metas: async (ids) => ids.map((id) => JSON.stringify(metas.get(id))) },
  ratio, seededRandom(2));
if (!derived) throw new Error(`fewer than 100 pages of ${o.source}`);
const skip = o.skip ? new Set(read(o.skip).map((d) => d.id)) : undefined;
const judged = o.pages ? await stored(read(o.pages, skip)) : sourceRows;
const rows = judged.map((r) => {
  const page = storedPage(r.meta);
  return { id: r.id, title: r.meta.title, share: /** @type {number} */ (knownShare(page.words)), words: page.words, blocked: pageBlock(page, {}, null, null, derived.value) };
}).sort((a, b) => a.share - b.share);
const blocked = rows.filter((r) => r.blocked);
const round = (/** @type {number} */ x) => Math.round(x * 1e4) / 1e4;

console.log(`model ${o.model}; minimum from ${o.source}: ${JSON.stringify(derived)}; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
const sorted = Float64Array.from(rows.map((r) => r.share));
const pct = (/** @type {number} */ p) => round(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]);
console.log(`${rows.length} pages of ${o.pages ?? o.source}${skip ? ` (without the ${skip.size} of ${o.skip})` : ''}: known share p1 ${pct(0.01)}, p5 ${pct(0.05)}, p50 ${pct(0.5)}; `
  + `kept from ads: ${blocked.length} (${(100 * blocked.length / rows.length).toFixed(2)} %)`);
for (const r of rows.slice(0, Number(o.show))) console.log(`  ${r.share.toFixed(3)} ${r.words?.known}/${(r.words?.known ?? 0) + (r.words?.unknown ?? 0)} ${r.blocked ? 'no ads' : 'ads   '} ${r.id} ${String(r.title).slice(0, 40)}`);
const texts = [];
const tv = await embedder.embedDocuments(Object.values(TEXTS).map((t) => ({ body: t })));
for (const [i, name] of Object.keys(TEXTS).entries()) {
  const words = { known: tv[i].knownWords, unknown: tv[i].unknownWords };
  const b = pageBlock({ words }, {}, null, null, derived.value);
  texts.push({ text: name, known_words: words.known, distinct_words: words.known + words.unknown, known_share: round(/** @type {number} */ (knownShare(words))), ads: b ? 'none' : 'by score' });
  console.log(`  ${name}: ${words.known} of ${words.known + words.unknown} distinct words known (${round(/** @type {number} */ (knownShare(words)))}): ${b ? 'no ads' : 'ads as the score threshold decides'}`);
}
console.log(JSON.stringify({ model: o.model, minimum: derived, pages: rows.length, blocked: blocked.length, share_blocked: round(blocked.length / rows.length), texts }));
embedder.model.wordTopics.close();
