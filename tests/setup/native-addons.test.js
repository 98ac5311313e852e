// Set-up's stale check of the native addons (pipeline/setup/node-deps.js): an addon is rebuilt when a file it compiles
// or includes changes, so every source its binding.gyp names and every header of its include folders must be among
// the files hashed into its stamp, the thread-scheduling header shared by the threads addon and the store included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ADDONS, sourceFiles } from '../../pipeline/setup/node-deps.js';
import { REPO_ROOT } from '../../pipeline/paths.js';

/** @param {string} file a binding.gyp: JSON with # comment lines */
const readGyp = (file) => JSON.parse(fs.readFileSync(file, 'utf8').split('\n').filter((l) => !/^\s*#/.test(l)).join('\n'));

test('each addon hashes every source its binding.gyp compiles and every header of its own include folders', () => {
  assert.deepEqual(ADDONS.map((a) => path.relative(REPO_ROOT, path.join(a.dir, a.output))).sort(),
    ['build/Release/scdv_mecab.node', 'pipeline/store/native/build/Release/scdv_store.node', 'pipeline/threads/native/build/Release/scdv_threads.node']);
  for (const addon of ADDONS) {
    const hashed = new Set(sourceFiles(addon.dir, addon.sources));
    const [target] = readGyp(path.join(addon.dir, 'binding.gyp')).targets;
    const compiled = target.sources.map((/** @type {string} */ s) => path.join(addon.dir, s));
    const includes = target.include_dirs.filter((/** @type {string} */ d) => !d.startsWith('<!'))
      .flatMap((/** @type {string} */ d) => fs.readdirSync(path.join(addon.dir, d)).filter((f) => f.endsWith('.h')).map((f) => path.join(addon.dir, d, f)));
    assert.ok(compiled.length > 0, addon.name);
    assert.deepEqual([...compiled, ...includes].filter((f) => !hashed.has(f)).map((f) => path.relative(REPO_ROOT, f)), [], `${addon.name}: not hashed`);
  }
});

test('the shared thread-scheduling header rebuilds the threads addon and the store, not the MeCab binding', () => {
  const header = path.join(REPO_ROOT, 'pipeline', 'threads', 'native', 'include', 'thread_yield.h');
  const hashing = ADDONS.filter((a) => sourceFiles(a.dir, a.sources).includes(header)).map((a) => a.name);
  assert.deepEqual(hashing.sort(), ['thread scheduling', 'vector store']);
});
