// One way to run a list of node:test files for the suite runners (tests/run.js, tests/opensearch/run.js,
// tests/reliability/run.js), so that a stuck test cannot stall CI: every test gets a time limit, a file whose tests
// are done exits even if something it started still runs (a load loop, a socket), and the whole suite has a wall
// budget after which the process groups of the files still running are killed and the suite reported as failed,
// with the reason. Each file runs in a `node --test` of its own, up to `concurrency` at once (longest first, by the
// times of the previous run, or of a committed file of expected times where it has none), and the suite ends with
// its slowest files, the sum of the files' times and its wall time.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The oldest Node 20 with --test-force-exit (20.14) and --test-timeout (20.11); older ones run without them. */
const FORCE_EXIT_SUPPORTED = (() => {
  const [major, minor] = process.versions.node.split('.').map(Number);
  return major > 20 || (major === 20 && minor >= 14);
})();

/** Each file's wall time in the previous run, to start the longest first (a cache: any content is fine). */
const TIMES_FILE = path.join(os.tmpdir(), 'scdv-test-file-times.json');

/** @param {string} file @returns {Record<string, number>} */
function readTimes(file) {
  try {
    const t = JSON.parse(fs.readFileSync(file, 'utf8'));
    return t && typeof t === 'object' ? t : {};
  } catch {
    return {};
  }
}

/** @returns {Record<string, number>} */
const previousTimes = () => readTimes(TIMES_FILE);

/** @param {Record<string, number>} times */
function saveTimes(times) {
  try {
    const tmp = `${TIMES_FILE}.${process.pid}`;
    fs.writeFileSync(tmp, JSON.stringify({ ...previousTimes(), ...times }));
    fs.renameSync(tmp, TIMES_FILE);
  } catch { /* only an ordering hint */ }
}

/** The counts at the end of a spec or TAP report: `ℹ pass 12` or `# pass 12`. @param {string} out */
function counts(out) {
  /** @type {Record<string, number>} */
  const c = {};
  for (const m of out.matchAll(/^(?:ℹ|#) (tests|pass|fail|cancelled|skipped|todo) (\d+)$/gm)) c[m[1]] = Number(m[2]);
  return c;
}

const seconds = (/** @type {number} */ ms) => `${(ms / 1000).toFixed(1)} s`;

/**
 * CPU milliseconds (user + system) of this process's children that have ended and been waited for, with theirs
 * (Linux: /proc/self/stat's cutime and cstime, in ticks of 10 ms); null elsewhere. Taken when a file's process ends, the
 * difference is about that file's CPU time, which a loaded machine stretches far less than its wall time.
 * @returns {number | null}
 */
function childrenCpuMs() {
  try {
    const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return null;
  }
}

/**
 * @typedef {object} BesideCommand
 * @property {string} name e.g. "typecheck"
 * @property {string} command
 * @property {string[]} args
 * @property {NodeJS.ProcessEnv} [env] default: the suite's
 * @property {number} budgetMs its own wall limit, after which it is killed and counted as failed
 * @property {number} [status] set when it has ended: its exit status (1 when killed)
 */

/**
 * Run `node --test` over `files`, each file in a process of its own, `concurrency` at a time.
 * @param {object} o
 * @param {string} o.name for the messages, e.g. "opensearch suite"
 * @param {string[]} o.files
 * @param {string} o.cwd
 * @param {string[]} [o.extraArgs] more `node --test` arguments (e.g. --test-name-pattern)
 * @param {NodeJS.ProcessEnv} [o.env]
 * @param {number} o.budgetMs wall time for the whole suite
 * @param {number} [o.perTestMs] a test's limit unless it sets its own (default 10 min)
 * @param {number} [o.concurrency] files run at once (default 1)
 * @param {string[]} [o.alone] files (of `files`) that run when no other file runs: after the others, one at a time
 * @param {'inherit' | 'ignore'} [o.stdio] default inherit
 * @param {number} [o.slowest] how many of the slowest files the closing summary names (default 10)
 * @param {string} [o.expectedTimes] a JSON file of each file's expected wall time in ms (committed with the tests), the
 *   order of the first run on a machine, before it has times of its own, and of files new since its last run
 * @param {string} [o.recordTimes] where to write this run's times (ms, rounded to 100) when it completed: how the
 *   `expectedTimes` file is refreshed
 * @param {BesideCommand[]} [o.beside] commands (the type-check, pytest) run one after another in a lane of their own
 *   beside the shared files, not beside the `alone` ones, which start when they are done; each is reported like a
 *   file (held output, wall and CPU time) and its exit status written to its `status`; a failed one fails the suite
 * @returns {Promise<number>} the exit status (1 when a file failed or the budget ran out)
 */
export function runTestFiles(o) {
  const limits = FORCE_EXIT_SUPPORTED ? ['--test-force-exit', `--test-timeout=${o.perTestMs ?? 600_000}`] : [];
  const extra = o.extraArgs ?? [];
  // A file's report is held until it ends, so it goes through a pipe: name the reporter a terminal would get.
  const reporter = extra.some((a) => a.startsWith('--test-reporter')) ? [] : [`--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`];
  // NODE_TEST_CONTEXT (set when this runs inside a test) would make the child report to a parent runner instead.
  const { NODE_TEST_CONTEXT: _, ...env } = o.env ?? process.env;
  const quiet = o.stdio === 'ignore';
  const say = (/** @type {string} */ s) => { if (!quiet) process.stderr.write(s); };
  const concurrency = Math.max(1, o.concurrency ?? 1);
  const alone = new Set(o.alone ?? []);
  const before = { ...(o.expectedTimes ? readTimes(o.expectedTimes) : {}), ...previousTimes() };
  const byTime = (/** @type {string[]} */ list) => [...list].sort((a, b) => (before[b] ?? 0) - (before[a] ?? 0));
  const shared = byTime(o.files.filter((f) => !alone.has(f)));
  const lonely = byTime(o.files.filter((f) => alone.has(f)));

  /** @type {Map<string, import('node:child_process').ChildProcess>} */
  const running = new Map();
  /** @type {Record<string, number>} */
  const times = {};
  /** @type {Record<string, number>} */
  const cpu = {};
  let cpuSeen = childrenCpuMs();
  /** @type {string[]} */
  const failed = [];
  const total = { tests: 0, pass: 0, fail: 0 };
  let overran = false;
  let stopping = false;
  const t0 = Date.now();
  const load0 = os.loadavg();

  // Each file in its own process group, so that on overrun the runner, its test file and what they started go together.
  const killAll = (/** @type {NodeJS.Signals} */ signal) => {
    for (const child of running.values()) { try { process.kill(-(child.pid ?? 0), signal); } catch { /* gone */ } }
  };
  const forward = () => { stopping = true; killAll('SIGTERM'); };
  process.once('SIGINT', forward);
  process.once('SIGTERM', forward);
  const timer = setTimeout(() => {
    overran = true;
    stopping = true;
    say(`\n== ${o.name}: still running after its budget of ${Math.round(o.budgetMs / 1000)} s: killing ${[...running.keys()].join(', ')}\n`);
    killAll('SIGKILL');
  }, o.budgetMs);

  /**
   * One process, its output held until it ends. @param {string} file its name in the reports
   * @param {{command: string, args: string[], env?: NodeJS.ProcessEnv, budgetMs?: number}} [cmd] default: `node --test file`
   * @returns {Promise<number>} its exit status
   */
  const runFile = (file, cmd) => new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(cmd?.command ?? process.execPath, cmd?.args ?? ['--test', ...limits, ...reporter, ...extra, file],
      { cwd: o.cwd, stdio: ['ignore', 'pipe', 'pipe'], env: cmd?.env ?? env, detached: true });
    running.set(file, child);
    const limit = cmd?.budgetMs === undefined ? null : setTimeout(() => {
      out.push(Buffer.from(`\n${file}: still running after its limit of ${Math.round((cmd.budgetMs ?? 0) / 1000)} s: killed\n`));
      try { process.kill(-(child.pid ?? 0), 'SIGKILL'); } catch { /* gone */ }
    }, cmd.budgetMs);
    /** @type {Buffer[]} */
    const out = [];
    child.stdout?.on('data', (d) => out.push(d));
    child.stderr?.on('data', (d) => out.push(d));
    child.on('exit', () => {
      const now = childrenCpuMs();
      if (now !== null && cpuSeen !== null) cpu[file] = now - cpuSeen;
      cpuSeen = now;
    });
    child.on('close', (code, signal) => {
      if (limit) clearTimeout(limit);
      running.delete(file);
      const ms = Date.now() - started;
      times[file] = ms;
      const text = Buffer.concat(out).toString('utf8');
      const c = counts(text);
      total.tests += c.tests ?? 0;
      total.pass += c.pass ?? 0;
      total.fail += c.fail ?? 0;
      const ok = code === 0;
      if (!ok) failed.push(file);
      const cpuText = file in cpu ? `, CPU ${seconds(cpu[file])}` : '';
      say(`\n== ${file}: ${ok ? 'ok' : `FAILED (${signal ?? `exit ${code}`})`} in ${seconds(ms)}${cpuText}\n${text}`);
      resolve(code ?? 1);
    });
  });

  /** Runs `queue` through `width` slots. @param {string[]} queue @param {number} width */
  const drain = async (queue, width) => {
    const next = async () => {
      for (let f = queue.shift(); f !== undefined && !stopping; f = queue.shift()) await runFile(f);
    };
    await Promise.all(Array.from({ length: Math.min(width, queue.length) }, next));
  };

  const besideDone = (async () => {
    for (const c of o.beside ?? []) if (!stopping) c.status = await runFile(c.name, c);
  })();

  return (async () => {
    await Promise.all([drain(shared, concurrency), besideDone]);
    await drain(lonely, 1);
    clearTimeout(timer);
    process.off('SIGINT', forward);
    process.off('SIGTERM', forward);
    if (!overran && !stopping) {
      saveTimes(times);
      if (o.recordTimes) {
        const rounded = Object.fromEntries(Object.entries(times).sort((a, b) => b[1] - a[1]).map(([f, ms]) => [f, Math.round(ms / 100) * 100]));
        fs.writeFileSync(o.recordTimes, `${JSON.stringify(rounded, null, 1)}\n`);
      }
    }
    const ran = Object.entries(times).sort((a, b) => b[1] - a[1]);
    const sum = ran.reduce((s, [, ms]) => s + ms, 0);
    const load1 = os.loadavg();
    const n = o.slowest ?? 10;
    say(`\n== ${o.name}: the ${Math.min(n, ran.length)} slowest of ${ran.length} files\n`);
    for (const [f, ms] of ran.slice(0, n)) say(`${seconds(ms).padStart(9)}  ${f in cpu ? `(CPU ${seconds(cpu[f])})`.padStart(14) : ''}  ${f}\n`);
    const cpuSum = Object.values(cpu).reduce((s, ms) => s + ms, 0);
    const besideRan = (o.beside ?? []).filter((c) => c.name in times).length;
    const ranText = `${ran.length - besideRan} files${besideRan ? ` and ${besideRan} command${besideRan > 1 ? 's' : ''} beside them` : ''}`;
    say(`== ${o.name}: ${ranText}, ${total.tests} tests, ${total.pass} passed, ${total.fail} failed; `
      + `files' times sum to ${seconds(sum)}${cpuSum ? ` (CPU ${seconds(cpuSum)})` : ''}, wall ${seconds(Date.now() - t0)} with ${concurrency} at a time; `
      + `load average ${load0[0].toFixed(2)} at the start, ${load1[0].toFixed(2)} at the end\n`);
    if (failed.length) say(`== ${o.name}: failed: ${failed.join(', ')}\n`);
    return overran || failed.length || ran.length < o.files.length + (o.beside?.length ?? 0) ? 1 : 0;
  })();
}
