// Step 4: npm dependencies and our native addons (the MeCab binding, the vector store, thread scheduling).
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../paths.js';
import { hashFile, hashStrings, readStamp, run } from './run.js';

const LOCK = path.join(REPO_ROOT, 'package-lock.json');
const STAMP = path.join(REPO_ROOT, 'node_modules', '.scdv-lock.sha256');

/**
 * Each addon: the folder holding its binding.gyp, its sources, and the npm script that builds it.
 * A stamp of the sources' hash beside the output decides whether to rebuild. The store compiles the threads addon's
 * include/thread_yield.h too, so that header is among its sources.
 */
export const ADDONS = [
  { name: 'MeCab binding', dir: REPO_ROOT, sources: ['binding.gyp', 'pipeline/tokenizer/native'], output: 'build/Release/scdv_mecab.node', script: 'build:native' },
  { name: 'vector store', dir: path.join(REPO_ROOT, 'pipeline', 'store', 'native'), sources: ['binding.gyp', 'src', '../../threads/native/include'], output: 'build/Release/scdv_store.node', script: 'build:store' },
  { name: 'thread scheduling', dir: path.join(REPO_ROOT, 'pipeline', 'threads', 'native'), sources: ['binding.gyp', 'src', 'include'], output: 'build/Release/scdv_threads.node', script: 'build:threads' },
];

/**
 * Files under the given paths (relative to dir), sorted, for hashing.
 * @param {string} dir
 * @param {string[]} rel
 * @returns {string[]}
 */
export function sourceFiles(dir, rel) {
  return rel.flatMap((r) => {
    const p = path.join(dir, r);
    if (!fs.existsSync(p)) return [];
    if (fs.statSync(p).isFile()) return [p];
    return fs.readdirSync(p, { recursive: true, encoding: 'utf8' })
      .map((f) => path.join(p, f))
      .filter((f) => fs.statSync(f).isFile() && /\.(cc|cpp|h|hpp|gyp|gypi)$/.test(f));
  }).sort();
}

/**
 * `npm install` when node_modules does not match package-lock.json, then (re)build each addon whose sources changed.
 * @param {(msg: string) => void} log
 */
export function ensureNodeDependencies(log) {
  const lockHash = hashFile(LOCK);
  if (readStamp(STAMP) !== lockHash) {
    // `npm install` rather than `npm ci`: npm 11 leaves other platforms' optional packages out of the
    // lock file it writes, and `npm ci` then refuses it. Scripts are off: the addons are built below.
    log('npm: installing dependencies');
    run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], { cwd: REPO_ROOT });
    fs.writeFileSync(STAMP, lockHash + '\n');
  } else {
    log('npm: dependencies up to date');
  }
  for (const addon of ADDONS) {
    if (!fs.existsSync(path.join(addon.dir, 'binding.gyp'))) continue;
    const files = sourceFiles(addon.dir, addon.sources);
    const want = hashStrings(files.flatMap((f) => [path.relative(addon.dir, f), hashFile(f)]));
    const output = path.join(addon.dir, addon.output);
    // The stamp lives outside build/, which node-gyp wipes on every rebuild.
    const stampFile = path.join(addon.dir, '.scdv-native.sha256');
    if (fs.existsSync(output) && readStamp(stampFile) === want) {
      log(`native ${addon.name}: up to date`);
      continue;
    }
    log(`native ${addon.name}: building (node-gyp)`);
    run('npm', ['run', '--silent', addon.script], { cwd: REPO_ROOT, quiet: true });
    fs.writeFileSync(stampFile, want + '\n');
  }
  linkOwnCommand(log);
}

/**
 * `node_modules/.bin/scdv` → `pipeline/scdv.cjs`, so that `npx scdv` in the clone runs this checkout's command at
 * once. npm links only the dependencies' commands there; without this link `npx scdv` installs the clone itself
 * into npm's cache, which runs its implicit `node-gyp rebuild` (binding.gyp at the root): 8-16 s, and offline a
 * failed rebuild that has already deleted `build/`.
 * @param {(msg: string) => void} log
 * @param {string} [root]
 * @returns {string} the link's path
 */
export function linkOwnCommand(log, root = REPO_ROOT) {
  const bin = path.join(root, 'node_modules', '.bin');
  const link = path.join(bin, 'scdv');
  const target = path.relative(bin, path.join(root, 'pipeline', 'scdv.cjs'));
  let current = null;
  try { current = fs.readlinkSync(link); } catch { /* absent, or not a link */ }
  if (current === target) return link;
  fs.mkdirSync(bin, { recursive: true });
  fs.rmSync(link, { force: true });
  fs.symlinkSync(target, link);
  log('npx scdv: linked node_modules/.bin/scdv to pipeline/scdv.cjs');
  return link;
}
