// Waiting in tests for a condition rather than for a fixed time: on a loaded machine (CI runs files in parallel
// on shared cores) a fixed sleep is sometimes too short, and usually longer than needed.

/** @param {number} ms */
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `fn` until it returns a truthy value, and resolves with that value. Past `timeoutMs` (generous: the
 * condition is expected far sooner) it fails, naming `what` and, when given, `last()` — the state last seen.
 * @template T
 * @param {() => T | Promise<T>} fn
 * @param {{timeoutMs?: number, everyMs?: number, what?: string, last?: () => unknown}} [options]
 * @returns {Promise<T>}
 */
export async function waitFor(fn, options = {}) {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) {
      const seen = options.last ? `; last seen: ${JSON.stringify(options.last())}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.what ?? 'a condition'}${seen}`);
    }
    await sleep(options.everyMs ?? 20);
  }
}
