// Seeded document sets shaped like the store's real inputs, for the search tests: hybrid-layout vectors (the default
// embedding) and random signed ones.
import { gauss, randomVector, rng } from './helpers.js';

const TOPICS = 30, TOPIC_DIMS = 20, VOCAB = 6000;
/** The width of hybridDocs' vectors. */
export const HYBRID_WIDTH = TOPICS * TOPIC_DIMS + VOCAB;

/**
 * Documents shaped like the hybrid layout (embed.hybrid.alpha 0.2): sqrt(0.2) x an L2-normalised topic block
 * (2-3 topics, each a noisy prototype) and sqrt(0.8) x an L2-normalised TF-IDF-like block (words of the
 * document's topics, Zipf-chosen, rarer words weighing more). Documents are recombined from 300 sources, so
 * that, as in the benchmark's corpus, many near-equal scores surround a query's top 10.
 * @param {number} n
 * @param {number} seed
 * @returns {Map<string, import('./helpers.js').TestDoc>}
 */
export function hybridDocs(n, seed) {
  const r = rng(seed);
  const protos = Array.from({ length: TOPICS * 4 }, () => Array.from({ length: TOPIC_DIMS }, () => gauss(r)));
  const zipf = () => Math.floor(Math.pow(r(), 2.5) * (VOCAB / TOPICS));
  const sources = Array.from({ length: 300 }, () => {
    const topics = [Math.floor(r() * TOPICS), Math.floor(r() * TOPICS), Math.floor(r() * TOPICS)];
    const words = Array.from({ length: 40 }, () => topics[Math.floor(r() * 3)] * (VOCAB / TOPICS) + zipf());
    return { topics, words };
  });
  /** @type {Map<string, import('./helpers.js').TestDoc>} */
  const docs = new Map();
  for (let i = 0; i < n; i++) {
    const a = sources[Math.floor(r() * sources.length)], b = sources[Math.floor(r() * sources.length)];
    /** @type {Map<number, number>} */
    const v = new Map();
    // topic block
    let norm = 0;
    const topics = [...new Set([a.topics[0], a.topics[1], b.topics[0]])];
    /** @type {[number, number][]} */
    const tb = [];
    for (const t of topics) {
      const p = protos[t * 4 + Math.floor(r() * 4)];
      for (let j = 0; j < TOPIC_DIMS; j++) tb.push([t * TOPIC_DIMS + j, p[j] + 0.7 * gauss(r)]);
    }
    for (const [, x] of tb) norm += x * x;
    for (const [d, x] of tb) v.set(d, Math.sqrt(0.2) * x / Math.sqrt(norm));
    // lexical block: most words from the first source, some from the second, a few of anything
    /** @type {Map<number, number>} */
    const tf = new Map();
    const add = (/** @type {number} */ w) => tf.set(w, (tf.get(w) ?? 0) + 1);
    for (const w of a.words) if (r() < 0.7) add(w);
    for (const w of b.words) if (r() < 0.3) add(w);
    for (let j = 0; j < 5; j++) add(Math.floor(r() * VOCAB));
    norm = 0;
    /** @type {[number, number][]} */
    const lb = [];
    for (const [w, c] of tf) {
      const rank = w % (VOCAB / TOPICS);
      lb.push([TOPICS * TOPIC_DIMS + w, (1 + Math.log(c)) * Math.log(2 + rank)]);
    }
    for (const [, x] of lb) norm += x * x;
    for (const [d, x] of lb) v.set(d, Math.sqrt(0.8) * x / Math.sqrt(norm));
    const indices = Uint32Array.from([...v.keys()].sort((x, y) => x - y));
    docs.set(`h${i}`, { id: `h${i}`, vector: { indices, values: Float32Array.from(indices, (d) => /** @type {number} */ (v.get(d))) }, meta: {} });
  }
  return docs;
}

/**
 * Random signed vectors (30-89 non-zeros in 3 blocks of a width of 3000), ids r0, r1, ...
 * @param {number} n
 * @param {number} seed
 */
export function randomDocs(n, seed) {
  const r = rng(seed);
  /** @type {Map<string, import('./helpers.js').TestDoc>} */
  const docs = new Map();
  for (let i = 0; i < n; i++) docs.set(`r${i}`, { id: `r${i}`, vector: randomVector(r, 3000, 30 + Math.floor(r() * 60), { blocks: 3 }), meta: {} });
  return docs;
}
