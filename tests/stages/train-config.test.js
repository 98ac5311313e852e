// The training parameters' defaults live in the Node config (pipeline/config.js). The Python stages validate the
// same parameters again (workers/scdv/config.py) and their estimators take them as constructor arguments: this
// keeps every Python default identical to the configured one, so a stage run outside the pipeline (or a test)
// never silently trains with other settings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { DEFAULT_CONFIG } from '../../pipeline/config.js';
import { REPO_ROOT, VENV_PYTHON } from '../../pipeline/paths.js';

/** @param {string} code */
function python(code) {
  const res = spawnSync(VENV_PYTHON, ['-c', code], { env: { ...process.env, PYTHONPATH: path.join(REPO_ROOT, 'workers') }, encoding: 'utf8' });
  assert.equal(res.status, 0, res.stderr);
  return JSON.parse(res.stdout);
}

test('Node and Python training defaults agree', () => {
  assert.deepEqual(python('import json; from scdv.config import Config; print(json.dumps(Config().to_dict()))'), DEFAULT_CONFIG.train);
});

/** The estimator that takes each config section, as scdv/train.py calls it. */
const ESTIMATORS = { word2vec: 'scdv.word2vec.Word2VecTrainer', gmm: 'scdv.gmm.FastGaussianMixture', topics: 'scdv.topics.WordTopicVectorizer' };
/** Config keys passed under another parameter name. */
const PARAMETER_OF = /** @type {Record<string, Record<string, string>>} */ ({ gmm: { seed: 'random_state' } });
/** Config keys the stage applies itself (scdv/train.py samples gmm.max_fit_words words before fitting). */
const APPLIED_BY_THE_STAGE = /** @type {Record<string, string[]>} */ ({ gmm: ['max_fit_words'] });

test('every estimator parameter set by the config is required or defaults to the configured value', () => {
  const signatures = python(`
import importlib, inspect, json
import numpy as np
def parameters(path):
    module, name = path.rsplit(".", 1)
    out = {}
    for p in inspect.signature(getattr(importlib.import_module(module), name)).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        d = p.default
        if d is p.empty:
            out[p.name] = {"required": True}
        else:
            # a numpy scalar type (gmm dtype) is compared by its name, as the config writes it
            out[p.name] = {"default": np.dtype(d).name if isinstance(d, type) and issubclass(d, np.generic) else d}
    return out
print(json.dumps({k: parameters(v) for k, v in json.loads(${JSON.stringify(JSON.stringify(ESTIMATORS))}).items()}, default=repr))
`);
  /** @type {string[]} */
  const problems = [];
  let checked = 0;
  for (const [section, defaults] of Object.entries(DEFAULT_CONFIG.train)) {
    const estimator = ESTIMATORS[/** @type {keyof typeof ESTIMATORS} */ (section)];
    for (const [key, value] of Object.entries(defaults)) {
      if (APPLIED_BY_THE_STAGE[section]?.includes(key)) continue;
      const name = PARAMETER_OF[section]?.[key] ?? key;
      const p = signatures[section][name];
      if (!p) problems.push(`${estimator} has no parameter ${name} for train.${section}.${key}`);
      else if (!p.required && JSON.stringify(p.default) !== JSON.stringify(value)) {
        problems.push(`${estimator}(${name}=${JSON.stringify(p.default)}) but train.${section}.${key} is ${JSON.stringify(value)} in pipeline/config.js`);
      }
      checked++;
    }
  }
  assert.deepEqual(problems, []);
  assert.equal(checked, 26, 'every training parameter but gmm.max_fit_words was checked');
});

test('the schema says the cluster count that gmm.n_components null trains, as workers/scdv/config.py computes it', async () => {
  const { CONFIG_SCHEMA } = await import('../../pipeline/config/schema.js');
  const note = CONFIG_SCHEMA.properties.train.properties.gmm.properties.n_components.note;
  const bounds = python('import json; from scdv import config as c; print(json.dumps([c.AUTO_CLUSTERS_MIN, c.AUTO_CLUSTERS_MAX, [c.clusters_for(n) for n in (306, 2896, 7200)]]))');
  assert.equal(note, `null: √(N/2) for N training documents, rounded, from ${bounds[0]} to ${bounds[1]}`);
  // round(√(N/2)) as pipeline/inspect/advice.js computes its rule of thumb
  assert.deepEqual(bounds[2], [306, 2896, 7200].map((n) => Math.min(bounds[1], Math.max(bounds[0], Math.round(Math.sqrt(n / 2))))));
});
