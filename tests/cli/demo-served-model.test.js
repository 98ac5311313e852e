// `npm start` after `scdv activate --model mine`: the demo serves the activated model (and says so loudly) instead
// of switching the server back to its own model; an activated model that is gone falls back to the demo's, said too.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-demo-served-'));
process.env.SCDV_MODELS_DIR = path.join(tmp, 'models');
process.env.SCDV_DATA_DIR = path.join(tmp, 'data');
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const { demoServedModel, DEMO_MODEL } = await import('../../pipeline/commands/demo.js');
const { FileActiveRecords } = await import('../../pipeline/serving/active.js');
const { MODEL_FORMAT } = await import('../../pipeline/model/format.js');
const { DEFAULT_CONFIG } = await import('../../pipeline/config.js');

/** @param {string} name */
function fakeModel(name) {
  fs.mkdirSync(path.join(tmp, 'models', name), { recursive: true });
  fs.writeFileSync(path.join(tmp, 'models', name, 'manifest.json'), JSON.stringify({ format: MODEL_FORMAT, created_at: '2026-12-01T00:00:00Z' }));
}

test('no activation recorded: the demo serves its own model, quietly', async () => {
  assert.deepEqual(await demoServedModel(DEFAULT_CONFIG, {}), { model: DEMO_MODEL, note: null });
});

test('after scdv activate --model mine the demo serves mine and says which model it serves and why', async () => {
  fakeModel(DEMO_MODEL);
  fakeModel('mine');
  await new FileActiveRecords().write({ model: 'mine', previous: DEMO_MODEL, activated_at: '2026-12-01T10:00:00.000Z' });
  const served = await demoServedModel(DEFAULT_CONFIG, {});
  assert.equal(served.model, 'mine');
  assert.match(served.note ?? '', /serving model "mine", the one activated on 2026-12-01T10:00:00.000Z/);
  assert.match(served.note ?? '', new RegExp(`npx scdv activate --model ${DEMO_MODEL} --server URL`));
});

test('an activated model that is gone: the demo serves its own and says so', async () => {
  await new FileActiveRecords().write({ model: 'gone', previous: DEMO_MODEL, activated_at: '2026-12-01T10:00:00.000Z' });
  const served = await demoServedModel(DEFAULT_CONFIG, {});
  assert.equal(served.model, DEMO_MODEL);
  assert.match(served.note ?? '', /the active model "gone" .* is not in .*: serving the demo's model/);
});

test('a reused model is not said to be trained now: the summary says when it was trained', async () => {
  const { printTrainSummary } = await import('../../pipeline/commands/train.js');
  const m = { name: DEMO_MODEL, created_at: '2026-11-30T09:00:00.000Z', timings: { total_s: 36, word2vec_s: 10 }, stages: {},
    counts: { vocabulary: 10, clusters: 2, dims: 8, density: 0.5 }, tokens: { trainingDocuments: 3 }, hyperparameters: { gmm: { covariance_type: 'tied' } } };
  const write = process.stderr.write;
  let out = '';
  process.stderr.write = /** @type {any} */ ((/** @type {string} */ s) => { out += s; return true; });
  try {
    printTrainSummary('/m', m, { reused: true });
    printTrainSummary('/m', m);
  } finally {
    process.stderr.write = write;
  }
  const [reused, , , trained] = out.split('\n');
  assert.match(reused, /^model "livedoor-sample" reused, trained earlier \(2026-11-30T09:00:00.000Z, in 36s\): \/m$/);
  assert.doesNotMatch(reused, /trained in/);
  assert.match(trained, /^model "livedoor-sample" trained in 36s/);
});
