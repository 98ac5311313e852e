// Running the real `scdv` CLI from a test, in a child process, and reading what it printed.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../../pipeline/paths.js';

export const CLI = path.join(REPO_ROOT, 'pipeline', 'cli.js');

/**
 * Run `scdv args…` to its end with this process's environment plus `env`.
 * @param {string[]} args
 * @param {Record<string, string>} [env] e.g. {REDIS_URL}
 * @returns {{code: number | null, stdout: string, stderr: string, last: () => any}} last: its last stdout line, parsed as JSON
 */
export function runScdv(args, env = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, last: () => JSON.parse(r.stdout.trim().split('\n').pop() ?? '') };
}
