// A thread's share of the cores (SCHED_BATCH and niceness, paced sections): the scdv_threads addon's JS face.
export { yieldThisThread, paceThisThread } from './scheduling.js';
/** @typedef {import('./scheduling.js').ThreadYield} ThreadYield */
/** @typedef {import('./scheduling.js').PaceSettings} PaceSettings */
/** @typedef {import('./scheduling.js').PacedSection} PacedSection */
/** @typedef {import('./scheduling.js').ThreadPacer} ThreadPacer */
