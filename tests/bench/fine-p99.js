// autocannon's percentiles are whole milliseconds: too coarse to read a goal of a few milliseconds (5 ms against 6)
// or a 20 % change of a ~10 ms p99. Its instances also report each response's time as measured (hrtime-based, ms).

/**
 * Wait for an autocannon run, keeping its 2xx responses' times: its result, with p99Fine, the 99th percentile of those
 * times to 0.01 ms (NaN: none answered 2xx).
 * @param {any} instance what autocannon(options) returned, before it ends
 * @returns {Promise<any>}
 */
export async function withFineP99(instance) {
  /** @type {number[]} */
  const times = [];
  instance.on('response', (/** @type {unknown} */ _client, /** @type {number} */ status, /** @type {number} */ _bytes, /** @type {number} */ ms) => {
    if (status >= 200 && status < 300) times.push(ms);
  });
  const result = await instance;
  times.sort((a, b) => a - b);
  return { ...result, p99Fine: times.length ? Math.round(100 * times[Math.ceil(0.99 * times.length) - 1]) / 100 : NaN };
}
