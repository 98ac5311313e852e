// The system-packages step says what it would install, why and how big, and with SCDV_SYSTEM_SETUP=0 changes
// nothing: it prints the exact command and lets set-up go on. Packages are injected as "missing" so that the step
// never installs anything here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { ensureSystemPackages, estimateInstallSize, describePlan, PACKAGE_PURPOSES } from '../../pipeline/setup/system-packages.js';

/** @param {string[]} missing @param {boolean} isRoot */
function planFor(missing, isRoot) {
  /** @type {string[]} */
  const lines = [];
  const left = ensureSystemPackages((m) => lines.push(m), { env: { SCDV_SYSTEM_SETUP: '0' }, missing, isRoot });
  return { left, out: lines.join('\n') };
}

test('SCDV_SYSTEM_SETUP=0 prints each missing package with its purpose and the exact command, installs nothing', () => {
  const missing = ['mecab', 'redis-server', 'chromium', 'g++'];
  const { left, out } = planFor(missing, true);
  assert.deepEqual(left, missing, 'the packages left out are returned so a later failure can name them');
  assert.match(out, /4 missing/);
  for (const p of missing) {
    const why = PACKAGE_PURPOSES[/** @type {keyof typeof PACKAGE_PURPOSES} */ (p)];
    assert.ok(out.includes(`${p}`) && out.includes(why), `the plan names ${p} and why: ${why}\n${out}`);
  }
  assert.match(out, /tokeniser/);
  assert.match(out, /queues/);
  assert.match(out, /disk: (about \d+(\.\d)? [MG]B|size unknown)/);
  assert.ok(out.includes('\n  apt-get update && apt-get install -y --no-install-recommends mecab redis-server chromium g++\n'), out);
  assert.match(out, /SCDV_SYSTEM_SETUP=0/);
  assert.doesNotMatch(out, /installing with apt-get/);
});

test('not root: the printed command uses sudo', () => {
  const { out } = planFor(['xz-utils'], false);
  assert.ok(out.includes('  sudo apt-get update && sudo apt-get install -y --no-install-recommends xz-utils\n'), out);
});

test('the disk estimate comes from apt (with dependencies), and is "size unknown" when apt cannot tell', () => {
  // A small package from Debian/Ubuntu that the project does not install (the first one not installed here).
  const candidates = ['cowsay', 'sl', 'fortune-mod'];
  const q = spawnSync('dpkg-query', ['-W', '-f=${Package} ${db:Status-Status}\n', ...candidates], { encoding: 'utf8' });
  const installed = (q.stdout || '').split('\n').filter((l) => l.endsWith(' installed')).map((l) => l.split(' ')[0]);
  const pkg = candidates.find((c) => !installed.includes(c));
  assert.ok(pkg, 'one of cowsay, sl, fortune-mod is not installed');
  const size = estimateInstallSize([pkg]);
  assert.ok(size, `apt estimates ${pkg} (needs apt package lists: apt-get update)`);
  assert.ok(size.kib > 0 && size.packages >= 1, JSON.stringify(size));
  assert.match(describePlan([pkg], size), /disk: about \d+ MB of disk \(\d+ packages with their dependencies/);

  assert.equal(estimateInstallSize(['no-such-package-scdv']), undefined, 'an unknown package: no estimate, no throw');
  assert.equal(estimateInstallSize(['mecab']), undefined, 'already installed: nothing to estimate');
  assert.match(describePlan(['mecab'], undefined), /disk: size unknown/);
});
