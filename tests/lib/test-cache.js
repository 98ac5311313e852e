// Folders the tests build once and copy afterwards (trained models, indexed collections), kept in the system's
// temporary folder under a hash of everything that shapes them, so a change to any of it builds them again. Test files
// run at once (tests/lib/suite.js) ask for the same folder at the same moment: the first builds it under a lock,
// the others wait for it and copy it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { REPO_ROOT } from '../../pipeline/paths.js';

/**
 * The files below `rel` (a file or a folder of the repository, recursively; build folders skipped except the
 * native addons, whose `.node` files are what runs), sorted. A missing path counts as none.
 * @param {string} rel
 * @returns {string[]}
 */
function filesBelow(rel) {
  const abs = path.join(REPO_ROOT, rel);
  /** @type {string[]} */
  const out = [];
  const walk = (/** @type {string} */ p) => {
    let st;
    try { st = fs.statSync(p); } catch { return; }
    if (st.isFile()) { out.push(p); return; }
    if (!st.isDirectory()) return;
    for (const e of fs.readdirSync(p)) {
      const child = path.join(p, e);
      if (e === 'build') {
        const release = path.join(child, 'Release');
        if (fs.existsSync(release)) for (const f of fs.readdirSync(release)) if (f.endsWith('.node')) out.push(path.join(release, f));
        continue;
      }
      if (e === 'node_modules' || e === '__pycache__') continue;
      walk(child);
    }
  };
  walk(abs);
  return out.sort();
}

/**
 * A short hash of some values and of the contents of repository paths (files or folders).
 * @param {unknown[]} values
 * @param {string[]} paths relative to the repository
 */
export function inputsHash(values, paths) {
  const h = crypto.createHash('sha256').update(JSON.stringify(values));
  for (const f of paths.flatMap(filesBelow)) h.update(path.relative(REPO_ROOT, f)).update(fs.readFileSync(f));
  return h.digest('hex').slice(0, 16);
}

/** @param {number} pid */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return /** @type {NodeJS.ErrnoException} */ (e).code === 'EPERM';
  }
}

/**
 * Runs `fn` holding the lock `lock` (a folder holding the holder's pid), waiting while another live process holds it.
 * A holder that died leaves its lock behind: the next one takes it over. The lock only saves duplicate work; the
 * caches stay correct without it, since they appear by an atomic rename.
 * @template T
 * @param {string} lock
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
export async function withLock(lock, fn) {
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch (e) {
      if (/** @type {NodeJS.ErrnoException} */ (e).code !== 'EEXIST') throw e;
      let pid = 0;
      try { pid = Number(fs.readFileSync(path.join(lock, 'pid'), 'utf8')); } catch { /* not written yet */ }
      const since = fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs;
      if (since === undefined) continue; // released meanwhile
      // No pid yet: its holder is between mkdir and writing it, unless it died there (an old lock).
      const stale = pid ? !alive(pid) : Date.now() - since > 10_000;
      if (stale) fs.rmSync(lock, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * The folder `scdv-test-<kind>-<key>` in the system's temporary folder, built by `build(folder)` when it does not
 * exist yet (into a scratch folder, renamed into place when complete).
 * @param {string} kind e.g. 'models'
 * @param {string} key the hash of its inputs
 * @param {(dir: string) => Promise<void>} build fills `dir`
 * @returns {Promise<string>}
 */
export async function cachedFolder(kind, key, build) {
  const dir = path.join(os.tmpdir(), `scdv-test-${kind}-${key}`);
  const done = path.join(dir, '.complete');
  if (fs.existsSync(done)) return dir;
  await withLock(`${dir}.lock`, async () => {
    if (fs.existsSync(done)) return;
    const tmp = `${dir}.tmp-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true });
    try {
      await build(tmp);
      fs.writeFileSync(path.join(tmp, '.complete'), '');
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(tmp, dir);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
  return dir;
}
