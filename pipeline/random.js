// Seeded randomness, so that simulated runs (reader events) and every test fixture are repeatable.

/**
 * Seeded uniform numbers in [0, 1) (mulberry32, a small PRNG): the same seed gives the same run.
 * @param {number} seed
 */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
