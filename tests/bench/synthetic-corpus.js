// A realistic collection at scale for the search benchmark: documents made by recombining sentences of the
// livedoor dev split within one category (so related documents really share topics), then embedded with a
// model trained on that split — the same code path as `scdv index`.
import fs from 'node:fs';
import { rng } from '../lib/random.js';

/**
 * Sentence pools per category from a JSON Lines corpus with `category`, `title`, `body`.
 * @param {string} file
 * @returns {Map<string, string[]>}
 */
export function sentencePools(file) {
  /** @type {Map<string, string[]>} */
  const pools = new Map();
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const d = JSON.parse(line);
    const pool = pools.get(d.category) ?? [];
    for (const s of `${d.title}。${d.body}`.split(/(?<=[。！？!?])|\n/)) {
      const t = s.trim();
      if (t.length >= 10) pool.push(t);
    }
    pools.set(d.category, pool);
  }
  return pools;
}

/**
 * How many sentences (as sentencePools splits them) each article of a JSON Lines corpus has: drawn from by
 * synthesize() so that synthetic documents are as long as real ones (livedoor dev: median 26, ~1,200 characters).
 * @param {string} file
 * @returns {number[]}
 */
export function sentenceCounts(file) {
  /** @type {number[]} */
  const counts = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const d = JSON.parse(line);
    const n = `${d.title}。${d.body}`.split(/(?<=[。！？!?])|\n/).filter((s) => s.trim().length >= 10).length;
    if (n > 0) counts.push(n);
  }
  return counts;
}

/**
 * Yield n synthetic documents: a category, then 4-12 of its sentences (or, with `lengths`, a sentence count
 * drawn from those real articles' counts); published_at spread over a year.
 * @param {Map<string, string[]>} pools
 * @param {number} n
 * @param {number} [seed]
 * @param {number[]} [lengths] sentence counts to draw from (sentenceCounts()); the default keeps bench:search's documents
 */
export function* synthesize(pools, n, seed = 1, lengths) {
  const r = rng(seed);
  const cats = [...pools.keys()].sort();
  const t0 = Date.parse('2012-01-01T00:00:00Z');
  for (let i = 0; i < n; i++) {
    const category = cats[Math.floor(r() * cats.length)];
    const pool = /** @type {string[]} */ (pools.get(category));
    const k = lengths?.length ? lengths[Math.floor(r() * lengths.length)] : 4 + Math.floor(r() * 9);
    const sentences = Array.from({ length: k }, () => pool[Math.floor(r() * pool.length)]);
    yield {
      id: `syn-${i}`, category, site: `site-${i % 7}`, title: sentences[0].slice(0, 40), body: sentences.slice(1).join(''),
      published_at: new Date(t0 + Math.floor(r() * 365 * 86400e3)).toISOString(),
    };
  }
}

/**
 * The ids of n synthesized documents (syn-0 … syn-(n-1)) in a fixed scattered order, each once: the live reads of
 * the REST benchmarks ask for every article once, in this order, so that no answer comes from a cache.
 * @param {number} n
 */
export const scatteredIds = (n) => Array.from({ length: n }, (_, i) => `syn-${(i * 104729 + 13) % n}`);
