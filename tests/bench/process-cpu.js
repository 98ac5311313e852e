// CPU time of running processes from /proc (Linux): what the benchmarks read of an OpenSearch node's JVM, the
// figure a loaded machine distorts least.
import fs from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat's CPU times (USER_HZ: 100 on Linux). */
const USER_HZ = 100;

/**
 * User + system CPU milliseconds a process has used so far (all its threads).
 * @param {number} pid
 */
export function processCpuMs(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // after "pid (comm) ": utime and stime are fields 14 and 15 of stat(5)
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / USER_HZ;
}

/**
 * processCpuMs summed over processes.
 * @param {number[]} pids
 */
export const processesCpuMs = (pids) => pids.reduce((sum, pid) => sum + processCpuMs(pid), 0);
