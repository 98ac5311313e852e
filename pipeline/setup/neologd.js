// Step 2: compile mecab-ipadic-neologd from seed CSVs (recipe: shared/dictionaries/neologd/SOURCE.md).
// The ~0.8 GB result is cached outside the clone under a key made of its inputs, so a fresh
// clone (or an unchanged re-run) only re-links it; dictionaries/build/neologd points at the cache.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import {
  ACTIVE_DICT_FILE, DICT_BUILD_DIR, IPADIC_SOURCE_DIR, IPADIC_UTF8_DIR, NEOLOGD_LINK, SHARED_DIR, cacheDir,
} from '../paths.js';
import { hashFile, hashStrings, run, onPath } from './run.js';
import { SetupError } from './system-packages.js';

/** Bump when the build recipe changes, so cached builds are not reused. */
const RECIPE_VERSION = 'neologd-recipe-1';
const UPSTREAM_REPO = 'https://github.com/neologd/mecab-ipadic-neologd.git';
/** Upstream installs these seeds only on request; the default build leaves them out. */
const OPTIONAL_SEED = /(adjective-exp|date-time-infreq|quantity-infreq)/;

/**
 * Where to find seed CSVs: $NEOLOGD_SEED_DIR, then ../shared, then (online) the upstream repository.
 * @param {(msg: string) => void} log
 * @returns {{dir: string, origin: string} | null}
 */
function findSeedDir(log) {
  const candidates = [];
  if (process.env.NEOLOGD_SEED_DIR) candidates.push({ dir: process.env.NEOLOGD_SEED_DIR, origin: '$NEOLOGD_SEED_DIR' });
  candidates.push({ dir: path.join(SHARED_DIR, 'dictionaries', 'neologd', 'seed'), origin: '../shared' });
  for (const c of candidates) {
    if (seedFiles(c.dir).length > 0) return c;
    if (c.origin === '$NEOLOGD_SEED_DIR') log(`neologd: $NEOLOGD_SEED_DIR=${c.dir} holds no *.csv.xz seed files`);
  }
  if (process.env.SCDV_OFFLINE === '1' || !onPath('git')) return null;
  const clone = path.join(cacheDir(), 'neologd-upstream');
  if (seedFiles(path.join(clone, 'seed')).length === 0) {
    log('neologd: no local seeds; trying the upstream repository (60 s limit)');
    fs.rmSync(clone, { recursive: true, force: true });
    const res = spawnSync('git', ['clone', '--depth', '1', UPSTREAM_REPO, clone], {
      stdio: 'ignore', timeout: 60_000, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
    });
    if (res.status !== 0) {
      fs.rmSync(clone, { recursive: true, force: true });
      return null;
    }
  }
  return { dir: path.join(clone, 'seed'), origin: 'upstream repository' };
}

/**
 * Seed files of the default build in `dir`, sorted by name.
 * @param {string} dir
 * @returns {string[]}
 */
function seedFiles(dir) {
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => n.endsWith('.csv.xz') && !OPTIONAL_SEED.test(n)).sort().map((n) => path.join(dir, n));
}

/**
 * Key of a build: the recipe, the seeds' content and the ipadic sources' names and sizes.
 * @param {string[]} seeds
 */
function buildKey(seeds) {
  const parts = [RECIPE_VERSION];
  for (const f of seeds) parts.push(path.basename(f), hashFile(f));
  for (const n of fs.readdirSync(IPADIC_SOURCE_DIR).sort()) {
    parts.push(n, String(fs.statSync(path.join(IPADIC_SOURCE_DIR, n)).size));
  }
  return hashStrings(parts).slice(0, 16);
}

/**
 * Convert Debian's EUC-JP ipadic sources to UTF-8 into `dest` (dicrc's charset line too).
 * @param {string} dest
 */
function convertIpadicSources(dest) {
  const decoder = new TextDecoder('euc-jp', { fatal: true });
  for (const name of fs.readdirSync(IPADIC_SOURCE_DIR)) {
    if (!/\.(csv|def)$/.test(name) && name !== 'dicrc') continue;
    let text = decoder.decode(fs.readFileSync(path.join(IPADIC_SOURCE_DIR, name)));
    if (name === 'dicrc') text = text.replace(/^config-charset\s*=.*$/m, 'config-charset = UTF-8');
    fs.writeFileSync(path.join(dest, name), text);
  }
}

/**
 * Decompress, compile and move a finished dictionary into place atomically.
 * @param {string[]} seeds
 * @param {string} finalDir
 * @param {(msg: string) => void} log
 */
function compile(seeds, finalDir, log) {
  const work = `${finalDir}.tmp-${process.pid}`;
  fs.rmSync(work, { recursive: true, force: true });
  const src = path.join(work, 'src');
  const out = path.join(work, 'out');
  fs.mkdirSync(src, { recursive: true });
  fs.mkdirSync(out);
  try {
    const t0 = Date.now();
    convertIpadicSources(src);
    for (const seed of seeds) {
      const csv = path.join(src, path.basename(seed).replace(/\.xz$/, ''));
      const fd = fs.openSync(csv, 'w');
      try {
        const res = spawnSync('xz', ['-dc', seed], { stdio: ['ignore', fd, 'pipe'] });
        if (res.status !== 0) throw new SetupError(`xz could not decompress ${seed}: ${res.stderr}`);
      } finally {
        fs.closeSync(fd);
      }
    }
    log(`neologd: sources ready in ${((Date.now() - t0) / 1000).toFixed(1)} s; compiling (about 30 s, 1.5 GB of memory)`);
    const dictIndex = path.join(run('mecab-config', ['--libexecdir'], { quiet: true }).trim(), 'mecab-dict-index');
    run(dictIndex, ['-d', src, '-o', out, '-f', 'UTF-8', '-t', 'UTF-8'], { quiet: true });
    fs.copyFileSync(path.join(src, 'dicrc'), path.join(out, 'dicrc'));
    // Keep the UTF-8 definition files: user dictionaries are compiled against them.
    const defs = path.join(out, 'src-defs');
    fs.mkdirSync(defs);
    for (const n of fs.readdirSync(src)) if (n.endsWith('.def') || n === 'dicrc') fs.copyFileSync(path.join(src, n), path.join(defs, n));
    fs.writeFileSync(path.join(out, 'build-info.json'), JSON.stringify({
      recipe: RECIPE_VERSION, seeds: seeds.map((s) => path.basename(s)), built_at: new Date().toISOString(),
      seconds: (Date.now() - t0) / 1000,
    }, null, 2));
    fs.rmSync(src, { recursive: true, force: true });
    fs.renameSync(out, finalDir);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Record which dictionary the tokenizer uses by default.
 * @param {{name: 'neologd'|'ipadic', dicdir: string, key?: string, origin?: string, warning?: string}} active
 */
function writeActive(active) {
  fs.mkdirSync(DICT_BUILD_DIR, { recursive: true });
  fs.writeFileSync(ACTIVE_DICT_FILE, JSON.stringify(active, null, 2) + '\n');
}

/**
 * Point dictionaries/build/neologd at the cached build.
 * @param {string} target
 */
function link(target) {
  fs.mkdirSync(DICT_BUILD_DIR, { recursive: true });
  try {
    if (fs.readlinkSync(NEOLOGD_LINK) === target) return;
  } catch { /* absent or not a link */ }
  fs.rmSync(NEOLOGD_LINK, { recursive: true, force: true });
  fs.symlinkSync(target, NEOLOGD_LINK);
}

/**
 * Build (or reuse) the neologd dictionary; fall back to ipadic loudly when no seeds exist.
 * @param {(msg: string) => void} log
 */
export function ensureNeologd(log) {
  const found = findSeedDir(log);
  if (!found) {
    fs.rmSync(NEOLOGD_LINK, { recursive: true, force: true });
    const warning =
      'neologd seed CSVs were not found ($NEOLOGD_SEED_DIR, ../shared/dictionaries/neologd/seed, upstream). ' +
      'Falling back to plain ipadic: proper nouns such as 東京スカイツリー or きゃりーぱみゅぱみゅ are split into ' +
      'pieces, so names, products and places lose their identity in the word and topic vectors. Point ' +
      'NEOLOGD_SEED_DIR at a folder of mecab-ipadic-neologd seed/*.csv.xz files and run `npm run setup` again.';
    log(`\n${'!'.repeat(78)}\nWARNING: ${warning}\n${'!'.repeat(78)}\n`);
    writeActive({ name: 'ipadic', dicdir: IPADIC_UTF8_DIR, warning });
    return;
  }
  const seeds = seedFiles(found.dir);
  const key = buildKey(seeds);
  const finalDir = path.join(cacheDir(), 'dict', `neologd-${key}`);
  if (!fs.existsSync(path.join(finalDir, 'sys.dic'))) {
    log(`neologd: building from ${seeds.length} seed files (${found.origin}) into ${finalDir}`);
    fs.mkdirSync(path.dirname(finalDir), { recursive: true });
    compile(seeds, finalDir, log);
  } else {
    log(`neologd: cached build ${key} is up to date`);
  }
  link(finalDir);
  writeActive({ name: 'neologd', dicdir: path.relative(DICT_BUILD_DIR, NEOLOGD_LINK), key, origin: found.origin });
}
