// Helpers of the scaling benchmark (tests/bench/scale.bench.js): the growth-exponent fit, peak memory and CPU
// time of this process and its children sampled from /proc, and the log-log chart.
import fs from 'node:fs';
import { lineChartSvg } from '../../pipeline/report/svg.js';
import { CSS } from '../../pipeline/report/render.js';

/**
 * Least squares on log-log: y ≈ c · n^exponent. Points with n or y not positive are left out (a stage that
 * took no measurable time says nothing about growth).
 * @param {{n: number, y: number}[]} points
 * @returns {{exponent: number, coefficient: number, points: number} | null} null with fewer than two usable sizes
 */
export function fitGrowth(points) {
  const ok = points.filter((p) => p.n > 0 && p.y > 0 && Number.isFinite(p.y));
  if (new Set(ok.map((p) => p.n)).size < 2) return null;
  const xs = ok.map((p) => Math.log(p.n));
  const ys = ok.map((p) => Math.log(p.y));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < xs.length; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) ** 2;
  }
  const exponent = sxy / sxx;
  return { exponent, coefficient: Math.exp(my - exponent * mx), points: ok.length };
}

/**
 * The fitted value at n.
 * @param {{exponent: number, coefficient: number}} fit
 * @param {number} n
 */
export const extrapolate = (fit, n) => fit.coefficient * n ** fit.exponent;

/** Clock ticks per second of /proc/<pid>/stat's CPU times (USER_HZ: 100 on Linux). */
const USER_HZ = 100;

/**
 * This process's descendants (children, grandchildren …) from /proc: pid, command line, resident and peak
 * resident memory in bytes, CPU seconds so far (user + system, all its threads). Processes that end while
 * being read are skipped.
 * @param {number} root
 * @returns {{pid: number, cmd: string, rss: number, hwm: number, cpu: number}[]}
 */
export function descendants(root) {
  /** @type {Map<number, number[]>} */
  const children = new Map();
  /** @type {Map<number, number>} */
  const cpu = new Map();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      // after "pid (comm) ": state ppid … utime stime are fields 4, 14 and 15 of stat(5)
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (f[0] === 'Z') continue; // exited, not yet reaped: no command line, no memory (its last sample counts)
      const ppid = Number(f[1]);
      cpu.set(Number(name), (Number(f[11]) + Number(f[12])) / USER_HZ);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch { /* ended meanwhile */ }
  }
  const out = [];
  const todo = [...(children.get(root) ?? [])];
  while (todo.length) {
    const pid = /** @type {number} */ (todo.pop());
    todo.push(...(children.get(pid) ?? []));
    const m = memoryOf(pid);
    if (m) out.push({ pid, ...m, cpu: cpu.get(pid) ?? 0 });
  }
  return out;
}

/**
 * @param {number} pid
 * @returns {{cmd: string, rss: number, hwm: number} | null}
 */
function memoryOf(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (/** @type {string} */ key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    return { cmd, rss: kb('VmRSS'), hwm: kb('VmHWM') };
  } catch {
    return null;
  }
}

/**
 * Which stage a process works for: a Python training stage names itself on its command line
 * (`-m scdv.train word2vec …`), the model analysis is `-m scdv.analysis`, the lexicon's count `-m scdv.lexicon`;
 * tokenise workers are `cli.js worker tokenize` and work for the lexicon while it is the marked stage (its second
 * tokenise run); anything else belongs to the stage the benchmark marked. The private Redis and the idle Node
 * process that runs the Python stages for the train queue (`cli.js worker train`) are nobody's.
 * @param {string} cmd
 * @param {string} marked
 * @returns {string | null}
 */
export function stageOf(cmd, marked) {
  if (/redis-server|cli\.js worker train\b/.test(cmd)) return null;
  if (/cli\.js worker tokenize\b/.test(cmd)) return marked === 'lexicon' ? 'lexicon' : 'tokenize';
  const py = /-m scdv\.(train (\w+)|analysis|lexicon)/.exec(cmd);
  if (py) return py[2] ?? py[1];
  return marked;
}

/**
 * Samples this process and its children every `ms` until stopped, per stage:
 * - peak memory: the peak of the summed resident memory of the processes working for it (this process counts
 *   for the stage marked, children by stageOf()); a child's own peak (VmHWM) is also taken, so a stage shorter
 *   than the interval is still seen once it has run for one sample;
 * - CPU seconds: this process's between marks, plus each child's last seen total (a child's last `ms` before
 *   it exits can be missed). CPU time, unlike wall time, hardly depends on how many other jobs share the cores.
 */
export class StageSampler {
  /** @param {number} [ms] */
  constructor(ms = 100) {
    /** @type {string} */
    this.marked = 'idle';
    /** @type {Record<string, number>} peak bytes per stage */
    this.peaks = {};
    /** @type {Record<string, number>} this process's CPU seconds per stage */
    this.ownCpu = {};
    /** @type {Map<number, {stage: string, cpu: number}>} children's last seen CPU seconds */
    this.childCpu = new Map();
    this.lastCpu = process.cpuUsage();
    this.timer = setInterval(() => this.sample(), ms);
    this.timer.unref();
  }

  /** @param {string} stage what this process (and its unnamed children) works on from now */
  mark(stage) {
    this.sample();
    const used = process.cpuUsage(this.lastCpu);
    this.ownCpu[this.marked] = (this.ownCpu[this.marked] ?? 0) + (used.user + used.system) / 1e6;
    this.lastCpu = process.cpuUsage();
    this.marked = stage;
    this.sample();
  }

  sample() {
    /** @type {Record<string, number>} */
    const sums = { [this.marked]: process.memoryUsage().rss };
    for (const p of descendants(process.pid)) {
      const stage = stageOf(p.cmd, this.marked);
      if (!stage) continue;
      sums[stage] = (sums[stage] ?? 0) + p.rss;
      if (stage !== this.marked) this.peaks[stage] = Math.max(this.peaks[stage] ?? 0, p.hwm);
      this.childCpu.set(p.pid, { stage: this.childCpu.get(p.pid)?.stage ?? stage, cpu: p.cpu }); // a pid keeps its first stage
    }
    for (const [stage, bytes] of Object.entries(sums)) this.peaks[stage] = Math.max(this.peaks[stage] ?? 0, bytes);
  }

  /** @returns {{peaks: Record<string, number>, cpu: Record<string, number>}} peak bytes and CPU seconds per stage */
  stop() {
    this.mark('idle');
    clearInterval(this.timer);
    /** @type {Record<string, number>} */
    const cpu = { ...this.ownCpu };
    for (const { stage, cpu: s } of this.childCpu.values()) cpu[stage] = (cpu[stage] ?? 0) + s;
    return { peaks: this.peaks, cpu };
  }
}

/** @param {number} y three significant digits, without an exponent */
const short = (y) => String(Number(y.toPrecision(3)));

/**
 * The log-log chart of cost against corpus size, one line per stage: the one place that draws it, with the
 * training report's line chart (log axes, ticks, legend). Points of 0 or below cannot sit on a log axis and are
 * left out. A standalone SVG file: the report's own chart styles are inlined.
 * @param {{name: string, points: {n: number, y: number}[]}[]} series
 * @param {{title: string, yLabel: string}} opts
 */
export function scaleChartSvg(series, opts) {
  const lines = series
    .map((s) => ({
      name: s.name,
      points: s.points.filter((p) => p.n > 0 && p.y > 0)
        .map((p) => ({ x: p.n, y: p.y, label: `${s.name}, ${p.n.toLocaleString('en-US')} documents: ${short(p.y)}` })),
    }))
    .filter((s) => s.points.length);
  const body = lineChartSvg({
    title: opts.title, series: lines, width: 760, height: 460,
    x: { label: 'documents', log: true, format: (v) => v.toLocaleString('en-US') },
    y: { label: opts.yLabel, log: true },
  });
  const style = CSS.split('\n').filter((l) => l.startsWith('.chart')).join('');
  const svg = body.includes('xmlns=') ? body : body.replace('<svg ', '<svg xmlns="http://www.w3.org/2000/svg" ');
  return svg.replace('<title>', `<style>${style}text{font-family:sans-serif}</style><title>`);
}
