// Step 4: npm dependencies and our native MeCab addon.
import fs from 'node:fs';
import path from 'node:path';
import { NATIVE_ADDON, REPO_ROOT } from '../paths.js';
import { hashFile, hashStrings, readStamp, run } from './run.js';

const LOCK = path.join(REPO_ROOT, 'package-lock.json');
const STAMP = path.join(REPO_ROOT, 'node_modules', '.scdv-lock.sha256');
const NATIVE_SOURCES = [path.join(REPO_ROOT, 'binding.gyp'), path.join(REPO_ROOT, 'pipeline', 'tokenizer', 'native', 'mecab_addon.cc')];
const NATIVE_STAMP = path.join(REPO_ROOT, 'build', '.scdv-native.sha256');

/**
 * `npm install` when node_modules does not match package-lock.json, then (re)build the addon when its sources changed.
 * @param {(msg: string) => void} log
 */
export function ensureNodeDependencies(log) {
  const lockHash = hashFile(LOCK);
  if (readStamp(STAMP) !== lockHash) {
    // `npm install` rather than `npm ci`: npm 11 leaves other platforms' optional packages out of the
    // lock file it writes, and `npm ci` then refuses it. Scripts are off: the addon is built below.
    log('npm: installing dependencies');
    run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], { cwd: REPO_ROOT });
    fs.writeFileSync(STAMP, lockHash + '\n');
  } else {
    log('npm: dependencies up to date');
  }
  const nativeHash = hashStrings(NATIVE_SOURCES.map((f) => hashFile(f)));
  if (fs.existsSync(NATIVE_ADDON) && readStamp(NATIVE_STAMP) === nativeHash) {
    log('native addon: up to date');
    return;
  }
  log('native addon: building (node-gyp)');
  run('npm', ['run', '--silent', 'build:native'], { cwd: REPO_ROOT, quiet: true });
  fs.writeFileSync(NATIVE_STAMP, nativeHash + '\n');
}
