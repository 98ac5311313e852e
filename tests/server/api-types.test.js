// TypeScript types of the API (types/api.d.ts, exported as `scdv-recommender/api`): the committed file is exactly what
// `npm run types:api` generates from the OpenAPI document now, and a small typed client compiles against it (and
// fails where it should: the types are precise).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { REPO_ROOT } from '../../pipeline/paths.js';
import { API_TYPES_FILE, apiTypes } from '../../scripts/api-types.js';

test('types/api.d.ts is what the OpenAPI document generates now (run `npm run types:api` after changing the API)', async () => {
  const fresh = await apiTypes();
  const committed = fs.readFileSync(API_TYPES_FILE, 'utf8');
  assert.ok(fresh === committed, 'types/api.d.ts is stale: run `npm run types:api` and commit it');
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
  assert.equal(pkg.exports['./api'].types, './types/api.d.ts');
});

test('a typed client compiles against scdv-recommender/api', () => {
  const tsc = path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const client = path.join(REPO_ROOT, 'tests', 'fixtures', 'api-client', 'client.ts');
  const r = spawnSync(process.execPath, [
    tsc, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', client,
  ], { cwd: REPO_ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
});
