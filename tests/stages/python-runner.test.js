// The one runner of the Python modules (pipeline/python.js), as the training worker and `scdv eval` use it:
// progress lines, the result line, the module's own error message, and a process that dies without one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runPython, runPythonModule } from '../../pipeline/python.js';
import { runPythonStage } from '../../workers/train.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-python-runner-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

test('a stage\'s bad input fails with the worker\'s own message, marked as input error', async () => {
  const corpus = path.join(tmp, 'tokens.txt');
  fs.writeFileSync(corpus, 'a b c\n');
  await assert.rejects(
    runPythonStage({ stage: 'word2vec', corpus, workDir: tmp, params: { gmm: { n_components: 'x' } } }),
    (/** @type {any} */ err) => {
      assert.equal(err.message, 'word2vec: config key gmm.n_components must be int, got "x"');
      assert.equal(err.inputError, true);
      return true;
    },
  );
});

test('bad arguments are an error line of the worker too', async () => {
  await assert.rejects(
    runPythonStage({ stage: /** @type {any} */ ('nope'), corpus: 'x', workDir: tmp, params: {} }),
    (/** @type {any} */ err) => {
      assert.match(err.message, /^setup: bad arguments: argument stage: invalid choice: 'nope'/);
      assert.equal(err.inputError, true);
      return true;
    },
  );
});

test('a module that dies without an error line fails with its exit and the tail of its stderr', async () => {
  await assert.rejects(runPythonModule('scdv.no_such_module', []), (/** @type {any} */ err) => {
    assert.equal(err.code, 'SCDV_EVAL_FAILED');
    assert.match(err.message, /eval step scdv\.no_such_module failed: python exited with 1: .*No module named scdv\.no_such_module/);
    return true;
  });
});

test('progress lines reach onProgress and the result line is returned', async () => {
  const corpus = path.join(tmp, 'words.txt');
  const line = Array.from({ length: 40 }, (_, i) => `w${i % 20}`).join(' ');
  fs.writeFileSync(corpus, `${line}\n`.repeat(30));
  /** @type {Record<string, any>[]} */
  const progress = [];
  const r = await runPython('scdv.train', ['word2vec', '--corpus', corpus, '--out', tmp, '--config',
    JSON.stringify({ word2vec: { vector_size: 4, min_count: 1, epochs: 2, workers: 1 }, gmm: { n_components: 2 } })], {
    onProgress: (p) => progress.push(p),
    fail: () => new Error('unexpected failure'),
    spawnFailed: (err) => err,
  });
  assert.equal(r.type, 'result');
  assert.equal(r.stages.word2vec.n_words, 20);
  assert.ok(progress.some((p) => p.stage === 'word2vec' && p.epoch === 2), JSON.stringify(progress));
});

test('aborting kills the process and rejects with the abort', async () => {
  const ac = new AbortController();
  const run = runPython('scdv.train', ['--help'], { signal: ac.signal, fail: () => new Error('ended'), spawnFailed: (err) => err });
  ac.abort();
  await assert.rejects(run, { name: 'AbortError' });
});
