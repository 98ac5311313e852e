// The training parameters exist twice — in the Node config users edit and in the Python stages that
// validate them. This keeps the two sets of defaults identical.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { DEFAULT_CONFIG } from '../../pipeline/config.js';
import { REPO_ROOT, VENV_PYTHON } from '../../pipeline/paths.js';

test('Node and Python training defaults agree', () => {
  const res = spawnSync(VENV_PYTHON, ['-c', 'import json; from scdv.config import Config; print(json.dumps(Config().to_dict()))'], {
    env: { ...process.env, PYTHONPATH: path.join(REPO_ROOT, 'workers') }, encoding: 'utf8',
  });
  assert.equal(res.status, 0, res.stderr);
  assert.deepEqual(JSON.parse(res.stdout), DEFAULT_CONFIG.train);
});
