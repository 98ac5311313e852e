// `scdv export --format word2vec`: gensim (the project's .venv) loads the text and the binary file, and every
// vector equals the model's own (word_vectors.npy, in the order of vocab.txt).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-export-'));
process.env.SCDV_MODELS_DIR = path.join(tmp, 'models');
process.env.SCDV_DATA_DIR = path.join(tmp, 'data');
const { REPO_ROOT, VENV_PYTHON: PYTHON } = await import('../../pipeline/paths.js');
const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { ensureModels, writeTwoTopicCorpus, TWO_TOPIC_TRAIN } = await import('../lib/tiny-model.js');

const CLI = path.join(REPO_ROOT, 'pipeline', 'cli.js');
const MODEL = 'exp';

/** @param {string[]} args */
const scdv = (args) => spawnSync(process.execPath, [CLI, 'export', ...args], { encoding: 'utf8' });

before(async () => {
  const redis = await startPrivateRedis();
  try {
    await ensureModels({ corpus: writeTwoTopicCorpus(path.join(tmp, 'corpus.jsonl')), models: [{ name: MODEL, overrides: { train: TWO_TOPIC_TRAIN } }], redisUrl: redis.url });
  } finally {
    await redis.stop();
  }
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Loads FILE with gensim and compares it with the model folder; prints a JSON summary. */
const COMPARE = `
import json, sys
import numpy as np
from gensim.models import KeyedVectors
file, binary, model_dir = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
kv = KeyedVectors.load_word2vec_format(file, binary=binary)
words = [l.split("\\t")[0] for l in open(model_dir + "/vocab.txt", encoding="utf-8").read().splitlines() if l]
vectors = np.load(model_dir + "/word_vectors.npy")
print(json.dumps({
    "words": len(kv.index_to_key), "dim": kv.vector_size, "same_order": kv.index_to_key == words,
    "equal": bool(np.array_equal(kv.vectors, vectors)), "dtype": str(kv.vectors.dtype),
    "similar": kv.most_similar(words[0], topn=1)[0][0],
}))
`;

for (const binary of [false, true]) {
  test(`${binary ? 'binary' : 'text'} word2vec: gensim loads it, and every vector equals the model's`, () => {
    const out = path.join(tmp, binary ? 'vectors.bin' : 'vectors.vec');
    const r = scdv(['--model', MODEL, '--format', 'word2vec', ...(binary ? ['--binary'] : []), '--out', out]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /^wrote \d+ word vectors of 16 dimensions/);
    const py = spawnSync(PYTHON, ['-c', COMPARE, out, binary ? '1' : '0', path.join(tmp, 'models', MODEL)], { encoding: 'utf8' });
    assert.equal(py.status, 0, py.stderr);
    const got = JSON.parse(py.stdout);
    assert.ok(got.words >= 24, `${got.words} words`); // the two groups' 24 words at least
    assert.deepEqual({ dim: got.dim, same_order: got.same_order, equal: got.equal, dtype: got.dtype }, { dim: 16, same_order: true, equal: true, dtype: 'float32' });
    assert.equal(fs.readdirSync(tmp).filter((f) => f.includes('.tmp-')).length, 0, 'no temporary file left');
  });
}

test('bad requests are named: an unknown model, an unknown format, a folder that does not exist', () => {
  const noModel = scdv(['--model', 'nope', '--out', path.join(tmp, 'x.vec')]);
  assert.equal(noModel.status, 1);
  assert.match(noModel.stderr, /model "nope" not found/);
  const format = scdv(['--model', MODEL, '--format', 'glove', '--out', path.join(tmp, 'x.vec')]);
  assert.equal(format.status, 2);
  assert.match(format.stderr, /--format must be one of word2vec, got "glove"/);
  const dir = scdv(['--model', MODEL, '--out', path.join(tmp, 'no', 'such', 'x.vec')]);
  assert.equal(dir.status, 2);
  assert.match(dir.stderr, /cannot write .*x\.vec: ENOENT/);
  assert.equal(scdv(['--model', MODEL]).status, 2);
});
