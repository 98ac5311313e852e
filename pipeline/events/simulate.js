// A synthetic reader population for tests and demos, driving the real API: each page view asks for the page's
// related articles (with a hashed user id, so the server picks the arm), reports the impression, and clicks each
// shown item with probability
//   p = base · position bias · arm effect · noise,   base = relevantCtr when the item shares the page's category
//   (true relevance), else otherCtr;   position bias = 1 / (1 + positionDecay · (position − 1));
//   noise = a per-view factor exp(σ·N(0, 1)) (readers differ), p capped at 1.
// It returns the expected CTR per arm (the mean p of the items it was shown: what a report should recover).
import crypto from 'node:crypto';
import { seededRandom } from '../random.js';

/**
 * @typedef {object} ReaderModel
 * @property {number} relevantCtr
 * @property {number} otherCtr
 * @property {number} positionDecay
 * @property {number} noise σ of the per-view log-normal factor
 */

/** @type {ReaderModel} */
export const DEFAULT_READER = Object.freeze({ relevantCtr: 0.12, otherCtr: 0.03, positionDecay: 0.3, noise: 0.3 });

/** @param {() => number} rand */
const gaussian = (rand) => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());

/**
 * A reader's pseudonymous id, as a site would send it: a hash, never the identifier itself.
 * @param {number} reader
 * @param {number} seed
 */
export const hashedUser = (reader, seed) => crypto.createHash('sha256').update(`reader-${seed}-${reader}`).digest('hex').slice(0, 32);

/**
 * @typedef {object} SimulateOptions
 * @property {string} url the server, e.g. http://127.0.0.1:8080
 * @property {string} collection
 * @property {{id: string, category?: string, site?: string}[]} pages pages readers view (documents of the collection)
 * @property {number} views
 * @property {number} [users] distinct readers (default views / 5)
 * @property {number} [k] items shown per view (default 5)
 * @property {number} [seed]
 * @property {string} [key] API key (when server.openReads is false)
 * @property {ReaderModel} [reader]
 * @property {Record<string, number>} [armEffect] click-probability multiplier per arm name (default 1)
 * @property {number} [batchSize] events per POST /v1/events
 * @property {number} [concurrency] views in flight
 * @property {(msg: string) => void} [log]
 */

/**
 * @param {SimulateOptions} options
 * @returns {Promise<{views: number, impressions: number, clicks: number, events: number, truth: Record<string, {shown: number, expectedCtr: number, clicks: number}>}>}
 */
export async function simulateReaders(options) {
  const rand = seededRandom(options.seed ?? 1);
  const reader = options.reader ?? DEFAULT_READER;
  const k = options.k ?? 5;
  const users = Math.max(1, options.users ?? Math.ceil(options.views / 5));
  const batchSize = options.batchSize ?? 500;
  const headers = /** @type {Record<string, string>} */ ({ ...(options.key ? { authorization: `Bearer ${options.key}` } : {}) });
  /** @type {Record<string, any>[]} */
  let batch = [];
  let events = 0;
  let impressions = 0;
  let clickCount = 0;
  /** @type {Record<string, {shown: number, sumP: number, clicks: number}>} */
  const truth = {};
  const send = async () => {
    if (!batch.length) return;
    const body = `${batch.map((e) => JSON.stringify(e)).join('\n')}\n`;
    events += batch.length;
    batch = [];
    const res = await fetch(`${options.url}/v1/events`, { method: 'POST', headers: { ...headers, 'content-type': 'application/x-ndjson' }, body });
    if (res.status !== 200) throw new Error(`POST /v1/events answered ${res.status}: ${await res.text()}`);
  };
  // Every random draw happens in view order (before any await), so a run is the same whatever the timing.
  const plans = Array.from({ length: options.views }, () => ({
    page: options.pages[Math.floor(rand() * options.pages.length)],
    user: hashedUser(Math.floor(rand() * users), options.seed ?? 1),
    noise: Math.exp(reader.noise * gaussian(rand)),
    draws: Array.from({ length: k }, () => rand()),
  }));
  /** @param {typeof plans[number]} plan */
  const view = async (plan) => {
    const q = new URLSearchParams({ k: String(k), user: plan.user });
    const res = await fetch(`${options.url}/v1/collections/${options.collection}/documents/${encodeURIComponent(plan.page.id)}/related?${q}`, { headers });
    if (res.status !== 200) throw new Error(`related of ${plan.page.id} answered ${res.status}: ${await res.text()}`);
    const answer = /** @type {{request_id: string, arm: string, model: string, results: {id: string, score: number, category?: string}[]}} */ (await res.json());
    if (!answer.results.length) return;
    impressions++;
    batch.push({
      type: 'impression', request_id: answer.request_id, page_id: plan.page.id, collection: options.collection, model: answer.model, arm: answer.arm,
      user: plan.user, ...(plan.page.category ? { category: plan.page.category } : {}), ...(plan.page.site ? { site: plan.page.site } : {}),
      items: answer.results.map((r, i) => ({ id: r.id, position: i + 1, score: Math.max(-1, Math.min(1, r.score)), ...(r.category ? { category: r.category } : {}) })),
    });
    const t = (truth[answer.arm] ??= { shown: 0, sumP: 0, clicks: 0 });
    answer.results.forEach((r, i) => {
      const relevant = plan.page.category !== undefined && r.category === plan.page.category;
      const base = relevant ? reader.relevantCtr : reader.otherCtr;
      const p = Math.min(1, base / (1 + reader.positionDecay * i) * (options.armEffect?.[answer.arm] ?? 1) * plan.noise);
      t.shown++;
      t.sumP += p;
      if (plan.draws[i] < p) {
        t.clicks++;
        clickCount++;
        batch.push({ type: 'click', request_id: answer.request_id, page_id: plan.page.id, clicked_id: r.id, position: i + 1 });
      }
    });
    if (batch.length >= batchSize) await send();
  };
  const concurrency = options.concurrency ?? 8;
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < plans.length) {
      const plan = plans[next++];
      await view(plan);
      if (next % 500 === 0) options.log?.(`simulate: ${next} of ${plans.length} views`);
    }
  }));
  await send();
  return {
    views: options.views, impressions, clicks: clickCount, events,
    truth: Object.fromEntries(Object.entries(truth).map(([arm, t]) => [arm, { shown: t.shown, clicks: t.clicks, expectedCtr: t.shown ? t.sumP / t.shown : 0 }])),
  };
}
