// Seeded randomness shared by tests and benchmarks, so every fixture and synthetic collection is reproducible.

/** Mulberry32: small seeded PRNG, uniform in [0, 1) (the project's one implementation). */
export { seededRandom as rng } from '../../pipeline/random.js';
