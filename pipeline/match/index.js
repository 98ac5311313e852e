// Precomputed matches, the folder's public face: the key layout, the entry encoding, lookup and invalidation, and
// the job's data (precomputed.js); re-ranking of result lists: rerank.js; brand safety: safety.js; the derived
// default min_score: threshold.js.
export { resultItem, answerBytes, encodeEntry, entryResults, splitEntry, keys, lookupMatch, invalidate, invalidateCollection } from './precomputed.js';
/** @typedef {import('./precomputed.js').ResultItem} ResultItem */
/** @typedef {import('./precomputed.js').MatchEntry} MatchEntry */
/** @typedef {import('./precomputed.js').PrecomputeJob} PrecomputeJob */
