// The store against Seismic at equal recall, interleaved: Seismic's own sweep runs after the store's
// searches, so on a shared machine the two figures saw different loads. Here search.baselines.py keeps its
// index after the sweep (`seismic --duel`) and times blocks of queries on request, while this process times the
// same blocks on the store: blocks alternate between the two, and which goes first alternates block by block,
// over several passes. The per-pass medians and their ratio are what to read.
import { spawn } from 'node:child_process';
import readline from 'node:readline';

/**
 * @typedef {object} SeismicServer
 * @property {(queryCut: number, heapFactor: number, lo: number, hi: number) => Promise<number[]>} time
 *   milliseconds of queries lo..hi-1 (row j of the query file is query j)
 * @property {() => void} close
 */

/**
 * Start `search.baselines.py seismic … --duel`; resolves when it has built, swept (its --out file is written)
 * and printed "ready"; null when it exits first or takes longer than timeoutS.
 * @param {string} python
 * @param {string} script
 * @param {string[]} args the seismic sub-command's arguments (without --duel)
 * @param {number} timeoutS
 * @returns {Promise<SeismicServer | null>}
 */
export function startSeismic(python, script, args, timeoutS) {
  const child = spawn(python, [script, 'seismic', ...args, '--duel'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: /** @type {import('node:stream').Readable} */ (child.stdout) });
  /** @type {((line: string) => void)[]} */
  const waiting = [];
  let ready = false;
  return new Promise((resolve) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); resolve(null); }, timeoutS * 1000);
    child.on('exit', () => { clearTimeout(timer); if (!ready) resolve(null); });
    lines.on('line', (line) => {
      if (!ready) {
        // anything the library printed before (its build log) is not ours
        if (line.trim() !== 'ready') return;
        ready = true;
        clearTimeout(timer);
        resolve({
          time: (qc, hf, lo, hi) => new Promise((res) => {
            waiting.push((l) => res(JSON.parse(l)));
            /** @type {import('node:stream').Writable} */ (child.stdin).write(`${qc} ${hf} ${lo} ${hi}\n`);
          }),
          close: () => { /** @type {import('node:stream').Writable} */ (child.stdin).end('quit\n'); },
        });
        return;
      }
      waiting.shift()?.(line);
    });
  });
}

/**
 * @param {object} o
 * @param {SeismicServer} o.seismic
 * @param {{ query_cut: number, heap_factor: number }} o.setting Seismic's setting to time
 * @param {(i: number) => number} o.timeStore milliseconds of the store's search for query i
 * @param {number} o.queries
 * @param {number} [o.block] queries per block
 * @param {number} [o.passes]
 */
export async function duel({ seismic, setting, timeStore, queries, block = 100, passes = 3 }) {
  /** @param {number[]} xs */
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const rounds = [];
  for (let pass = 0; pass < passes; pass++) {
    const store = /** @type {number[]} */ ([]), seis = /** @type {number[]} */ ([]);
    for (let lo = 0, b = 0; lo < queries; lo += block, b++) {
      const hi = Math.min(queries, lo + block);
      const runStore = () => { for (let i = lo; i < hi; i++) store.push(timeStore(i)); };
      if ((b + pass) % 2 === 0) {
        runStore();
        seis.push(...await seismic.time(setting.query_cut, setting.heap_factor, lo, hi));
      } else {
        seis.push(...await seismic.time(setting.query_cut, setting.heap_factor, lo, hi));
        runStore();
      }
    }
    rounds.push({ store_p50_ms: median(store), seismic_p50_ms: median(seis), ratio: median(store) / median(seis) });
  }
  return {
    setting,
    passes,
    queries,
    store_p50_ms: median(rounds.map((r) => r.store_p50_ms)),
    seismic_p50_ms: median(rounds.map((r) => r.seismic_p50_ms)),
    ratio_store_over_seismic: median(rounds.map((r) => r.ratio)),
    rounds,
  };
}
