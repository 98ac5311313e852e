// One way to run a list of node:test files for the suite runners (tests/run.js, tests/opensearch/run.js,
// tests/reliability/run.js), so that a stuck test cannot stall CI: every test gets a time limit, a file whose tests
// are done exits even if something it started still runs (a load loop, a socket), and the whole suite has a wall
// budget after which its process group is killed and the suite reported as failed, with the reason.
import { spawn } from 'node:child_process';

/** The oldest Node 20 with --test-force-exit (20.14) and --test-timeout (20.11); older ones run without them. */
const FORCE_EXIT_SUPPORTED = (() => {
  const [major, minor] = process.versions.node.split('.').map(Number);
  return major > 20 || (major === 20 && minor >= 14);
})();

/**
 * Run `node --test` over `files`, one file at a time.
 * @param {object} o
 * @param {string} o.name for the messages, e.g. "opensearch suite"
 * @param {string[]} o.files
 * @param {string} o.cwd
 * @param {string[]} [o.extraArgs] more `node --test` arguments (e.g. --test-name-pattern)
 * @param {NodeJS.ProcessEnv} [o.env]
 * @param {number} o.budgetMs wall time for the whole suite
 * @param {number} [o.perTestMs] a test's limit unless it sets its own (default 10 min)
 * @param {'inherit' | 'ignore'} [o.stdio] default inherit
 * @returns {Promise<number>} the exit status (1 when the budget ran out)
 */
export function runTestFiles(o) {
  const limits = FORCE_EXIT_SUPPORTED ? ['--test-force-exit', `--test-timeout=${o.perTestMs ?? 600_000}`] : [];
  const args = ['--test', '--test-concurrency=1', ...limits, ...(o.extraArgs ?? []), ...o.files];
  // NODE_TEST_CONTEXT (set when this runs inside a test) would make the child report to a parent runner instead.
  const { NODE_TEST_CONTEXT: _, ...env } = o.env ?? process.env;
  // Its own process group, so that on overrun the runner, its test file and what they started go together.
  const child = spawn(process.execPath, args, { cwd: o.cwd, stdio: o.stdio ?? 'inherit', env, detached: true });
  const forward = () => { try { process.kill(-(child.pid ?? 0), 'SIGTERM'); } catch { /* gone */ } };
  process.once('SIGINT', forward);
  process.once('SIGTERM', forward);
  let overran = false;
  const timer = setTimeout(() => {
    overran = true;
    process.stderr.write(`\n== ${o.name}: still running after its budget of ${Math.round(o.budgetMs / 1000)} s: killing it\n`);
    try { process.kill(-(child.pid ?? 0), 'SIGKILL'); } catch { /* gone */ }
  }, o.budgetMs);
  return new Promise((resolve) => {
    child.on('exit', (code) => {
      clearTimeout(timer);
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(overran ? 1 : code ?? 1);
    });
  });
}
