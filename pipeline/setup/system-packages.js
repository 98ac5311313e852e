// Step 1: Debian packages the pipeline needs (MeCab, its dictionary sources and tools, Redis, xz, chromium for tests).
import { spawnSync } from 'node:child_process';
import { run, onPath, succeeds } from './run.js';

export const REQUIRED_PACKAGES = [
  'mecab', 'libmecab-dev', 'mecab-ipadic', 'mecab-ipadic-utf8', 'mecab-utils', 'redis-server', 'xz-utils',
  // Headless browser for the tests that render /docs, /admin/queues and the training report, and a
  // Japanese font so that its pages (and screenshots) show words rather than empty boxes.
  'chromium', 'fonts-ipafont-gothic',
];

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
 * Install what is missing via apt-get when root; otherwise print the exact command and stop.
 * @param {(msg: string) => void} log
 */
export function ensureSystemPackages(log) {
  if (!onPath('dpkg-query')) {
    const tools = ['mecab', 'mecab-config', 'redis-server', 'xz'];
    const absent = tools.filter((t) => !onPath(t));
    if (absent.length) {
      throw new SetupError(
        `This is not a Debian/Ubuntu system and these tools are missing: ${absent.join(', ')}.\n` +
          'Install MeCab 0.996 with its development files and ipadic, Redis 6+ and xz, then run `npm run setup` again.',
      );
    }
    log('system packages: not a Debian system; mecab, redis-server and xz are on PATH');
    return;
  }
  const wanted = [...REQUIRED_PACKAGES];
  if (needsPythonVenvPackage()) wanted.push('python3-venv');
  const missing = missingDebianPackages(wanted);
  if (missing.length === 0) {
    log('system packages: all present');
    return;
  }
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot) {
    throw new SetupError(
      `Missing system packages: ${missing.join(' ')}\nInstall them with:\n\n` +
        `  sudo apt-get update && sudo apt-get install -y ${missing.join(' ')}\n\nthen run the same npm command again.`,
    );
  }
  log(`system packages: installing ${missing.join(' ')} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update', '-qq'], { env });
  run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { env });
  const still = missingDebianPackages(missing);
  if (still.length) throw new SetupError(`apt-get finished but these packages are still missing: ${still.join(' ')}`);
}

/** A set-up failure with a message meant for the user (no stack trace). */
export class SetupError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'SetupError';
  }
}
