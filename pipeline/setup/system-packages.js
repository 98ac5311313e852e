// Step 1: Debian packages the pipeline needs (MeCab, its dictionary sources and tools, Redis, xz, build tools,
// chromium for tests). Before it changes the system it says what it will install, why, and about how much disk
// that takes; SCDV_SYSTEM_SETUP=0 leaves the system alone and prints the command to run instead.
import { spawnSync } from 'node:child_process';
import { run, onPath, succeeds } from './run.js';

/** Each Debian package the project needs, with the feature that needs it (printed before installing). */
export const PACKAGE_PURPOSES = {
  mecab: 'MeCab, the tokeniser',
  'libmecab-dev': 'MeCab headers and mecab-config, to build the native tokeniser addon',
  'mecab-ipadic': 'ipadic dictionary sources, the base of the neologd dictionary',
  'mecab-ipadic-utf8': 'ipadic in UTF-8, the fallback dictionary for tokenising',
  'mecab-utils': 'mecab-dict-index, to compile the neologd dictionary',
  'redis-server': 'Redis, for the job queues and precomputed ad matches',
  'xz-utils': 'xz, to unpack the neologd seed files',
  'g++': 'C++17 compiler, to build the native addons (tokeniser, vector store)',
  make: 'make, used by node-gyp to build the native addons',
  // Headless browser for the tests that render /docs, /admin/queues and the training report, and a
  // Japanese font so that its pages (and screenshots) show words rather than empty boxes.
  chromium: 'headless browser for the tests that render pages (/docs, /admin/queues, report.html)',
  'fonts-ipafont-gothic': 'Japanese font, so rendered pages show words rather than empty boxes',
  'python3-venv': "Python's venv module, for the training workers' virtual environment",
  'openjdk-17-jre-headless': 'Java 17, to run OpenSearch (the opensearch store backend)',
  unzip: 'unzip, to unpack the OpenSearch distribution',
};

/** Wanted only when set-up installs OpenSearch (pipeline/store/opensearch/install.js). */
export const OPENSEARCH_PACKAGES = ['openjdk-17-jre-headless', 'unzip'];

export const REQUIRED_PACKAGES = Object.keys(PACKAGE_PURPOSES).filter((p) => p !== 'python3-venv' && !OPENSEARCH_PACKAGES.includes(p));

/**
 * Packages from `names` that dpkg does not report as installed.
 * @param {string[]} names
 * @returns {string[]}
 */
function missingDebianPackages(names) {
  const res = spawnSync('dpkg-query', ['-W', '-f=${Package} ${db:Status-Status}\n', ...names], { encoding: 'utf8' });
  const installed = new Set(
    (res.stdout || '').split('\n').filter((l) => l.endsWith(' installed')).map((l) => l.split(' ')[0]),
  );
  return names.filter((n) => !installed.has(n));
}

/** Python's venv module is a separate Debian package when the system python3 is used. */
function needsPythonVenvPackage() {
  return !succeeds('python3', ['-c', 'import venv, ensurepip']);
}

/**
 * About how much disk installing `names` (with the dependencies apt would add) takes, from apt's own data and
 * without changing anything: `apt-get --simulate` lists the packages, `apt-cache show` their Installed-Size.
 * Undefined when apt cannot tell (e.g. no package lists yet on a fresh machine).
 * @param {string[]} names
 * @returns {{kib: number, packages: number} | undefined}
 */
export function estimateInstallSize(names) {
  const env = { ...process.env, LANG: 'C', LC_ALL: 'C' };
  const sim = spawnSync('apt-get', ['install', '--simulate', '--no-install-recommends', ...names], { encoding: 'utf8', env, timeout: 60_000 });
  if (sim.error || sim.status !== 0) return undefined;
  const all = [...(sim.stdout || '').matchAll(/^Inst (\S+)/gm)].map((m) => m[1]);
  if (all.length === 0) return undefined;
  const show = spawnSync('apt-cache', ['show', '--no-all-versions', ...all], { encoding: 'utf8', env, timeout: 60_000 });
  if (show.error || show.status !== 0) return undefined;
  const sizes = [...(show.stdout || '').matchAll(/^Installed-Size: (\d+)/gm)].map((m) => Number(m[1]));
  if (sizes.length === 0) return undefined;
  return { kib: sizes.reduce((a, b) => a + b, 0), packages: all.length };
}

/**
 * The exact command that installs `missing` (prefixed with sudo when not root).
 * @param {string[]} missing
 * @param {boolean} isRoot
 */
export function installCommand(missing, isRoot) {
  const sudo = isRoot ? '' : 'sudo ';
  return `${sudo}apt-get update && ${sudo}apt-get install -y --no-install-recommends ${missing.join(' ')}`;
}

/**
 * The text shown before any system change: each package and why, and the disk estimate.
 * @param {string[]} missing
 * @param {{kib: number, packages: number} | undefined} size
 */
export function describePlan(missing, size) {
  const width = Math.max(...missing.map((p) => p.length));
  const lines = missing.map((p) => `  ${p.padEnd(width)}  ${PACKAGE_PURPOSES[/** @type {keyof typeof PACKAGE_PURPOSES} */ (p)] ?? ''}`.trimEnd());
  const disk = size
    ? `about ${formatKib(size.kib)} of disk (${size.packages} packages with their dependencies, as apt reports)`
    : 'size unknown (apt could not tell; its package lists may not be downloaded yet)';
  return `system packages: ${missing.length} missing, needed for:\n${lines.join('\n')}\n  disk: ${disk}`;
}

/** @param {number} kib */
function formatKib(kib) {
  return kib >= 1024 * 1024 ? `${(kib / 1024 / 1024).toFixed(1)} GB` : `${Math.max(1, Math.round(kib / 1024))} MB`;
}

/**
 * Install what is missing via apt-get when root, after printing the plan. With SCDV_SYSTEM_SETUP=0 (or when not
 * root) nothing is changed: the plan and the exact command are printed. With SCDV_SYSTEM_SETUP=0 set-up goes on
 * and the packages still missing are returned, so that a later step that fails can name them.
 * @param {(msg: string) => void} log
 * @param {{env?: NodeJS.ProcessEnv, missing?: string[], isRoot?: boolean, extra?: string[]}} [opts] `missing` and
 *   `isRoot` replace what dpkg and the process report (tests use them to see the plan without installing
 *   anything); `extra`: optional packages wanted this time (OPENSEARCH_PACKAGES)
 * @returns {string[]} packages left missing on purpose (SCDV_SYSTEM_SETUP=0)
 */
export function ensureSystemPackages(log, opts = {}) {
  const env = opts.env ?? process.env;
  const systemSetup = env.SCDV_SYSTEM_SETUP !== '0';
  if (!opts.missing && !onPath('dpkg-query')) {
    const tools = ['mecab', 'mecab-config', 'redis-server', 'xz', ...(opts.extra?.length ? ['java', 'unzip'] : [])];
    const absent = tools.filter((t) => !onPath(t));
    if (absent.length) {
      throw new SetupError(
        `This is not a Debian/Ubuntu system and these tools are missing: ${absent.join(', ')}.\n` +
          'Install MeCab 0.996 with its development files and ipadic, Redis 6+ and xz, then run `npm run setup` again.',
      );
    }
    log('system packages: not a Debian system; mecab, redis-server and xz are on PATH');
    return [];
  }
  let missing = opts.missing;
  if (!missing) {
    const wanted = [...REQUIRED_PACKAGES, ...(opts.extra ?? [])];
    if (needsPythonVenvPackage()) wanted.push('python3-venv');
    missing = missingDebianPackages(wanted);
  }
  if (missing.length === 0) {
    log('system packages: all present');
    return [];
  }
  const isRoot = opts.isRoot ?? (typeof process.getuid === 'function' && process.getuid() === 0);
  const size = estimateInstallSize(missing);
  log(describePlan(missing, size));
  if (!systemSetup) {
    log(
      'system packages: not installing them (SCDV_SYSTEM_SETUP=0); to install them yourself, run:\n\n' +
        `  ${installCommand(missing, isRoot)}\n\nSet-up continues; a later step fails if it needs one of them.`,
    );
    return missing;
  }
  if (!isRoot) {
    throw new SetupError(
      `Missing system packages: ${missing.join(' ')}\nInstall them with:\n\n  ${installCommand(missing, false)}\n\n` +
        'then run the same npm command again (SCDV_SYSTEM_SETUP=0 goes on without them).',
    );
  }
  log(`system packages: installing with apt-get (SCDV_SYSTEM_SETUP=0 skips this and prints the command instead)`);
  const aptEnv = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update', '-qq'], { env: aptEnv });
  if (!size) {
    const after = estimateInstallSize(missing);
    if (after) log(`system packages: apt now reports about ${formatKib(after.kib)} for ${after.packages} packages`);
  }
  run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { env: aptEnv });
  const still = missingDebianPackages(missing);
  if (still.length) throw new SetupError(`apt-get finished but these packages are still missing: ${still.join(' ')}`);
  return [];
}

/** A set-up failure with a message meant for the user (no stack trace). */
export class SetupError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'SetupError';
  }
}
