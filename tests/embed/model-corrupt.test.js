// A damaged model file is a catalogue error naming the file (SCDV_MODEL_CORRUPT, 500), never a plain Error that the
// server would answer as SCDV_INTERNAL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadModel } from '../../pipeline/model/load.js';
import { MODEL_FORMAT } from '../../pipeline/model/format.js';
import { loadLexicon } from '../../pipeline/embed/index.js';
import { REPO_ROOT, VENV_PYTHON } from '../../pipeline/paths.js';

const modelsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-model-corrupt-'));
test.after(() => fs.rmSync(modelsDir, { recursive: true, force: true }));
const WORDS = ['犬', '猫', '馬'];

/** A valid three-word model folder written by the Python writer. @param {string} name */
function writeModel(name) {
  const dir = path.join(modelsDir, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ format: MODEL_FORMAT }));
  fs.writeFileSync(path.join(dir, 'vocab.txt'), WORDS.map((w, i) => `${w}\t${10 - i}\t1.5\n`).join(''));
  const res = spawnSync(VENV_PYTHON, ['-c', `
import sys, numpy as np
from scdv.topics import WordTopicVectorizer
words = sys.argv[2].split(",")
rng = np.random.default_rng(1)
WordTopicVectorizer(keep_fraction=None, idf_power=1.0).write(sys.argv[1], words, rng.standard_normal((3, 4)), np.full((3, 2), 0.5), np.ones(3))
`, path.join(dir, 'word_topics.bin'), WORDS.join(',')], { env: { ...process.env, PYTHONPATH: path.join(REPO_ROOT, 'workers') }, encoding: 'utf8' });
  assert.equal(res.status, 0, res.stderr);
  return dir;
}

/** @param {string} file @param {RegExp} reason */
const corrupt = (file, reason) => (/** @type {any} */ err) => {
  assert.equal(err.code, 'SCDV_MODEL_CORRUPT');
  assert.equal(err.status, 500);
  assert.ok(err.message.includes(file), err.message);
  assert.match(err.message, reason);
  return true;
};

test('a valid model loads (the fixture is sound)', () => {
  writeModel('ok');
  for (const inMemory of [false, true]) {
    const m = loadModel('ok', { modelsDir, inMemory });
    assert.equal(m.wordTopics.nWords, 3);
    assert.equal(loadLexicon(m).idf.length, 3);
  }
});

test('a truncated, foreign or missing word_topics.bin is SCDV_MODEL_CORRUPT naming the file', () => {
  const dir = writeModel('damaged');
  const file = path.join(dir, 'word_topics.bin');
  const bytes = fs.readFileSync(file);
  for (const inMemory of [false, true]) {
    fs.writeFileSync(file, bytes.subarray(0, bytes.length - 8));
    assert.throws(() => loadModel('damaged', { modelsDir, inMemory }), corrupt(file, /truncated or padded/));
    fs.writeFileSync(file, bytes.subarray(0, 40));
    assert.throws(() => loadModel('damaged', { modelsDir, inMemory }), corrupt(file, /shorter than the 128-byte header/));
    fs.writeFileSync(file, Buffer.concat([Buffer.from('NOTAWTV!'), bytes.subarray(8)]));
    assert.throws(() => loadModel('damaged', { modelsDir, inMemory }), corrupt(file, /bad magic/));
    fs.rmSync(file);
    assert.throws(() => loadModel('damaged', { modelsDir, inMemory }), (/** @type {any} */ err) => {
      corrupt(file, /ENOENT/)(err);
      assert.equal(err.cause?.code, 'ENOENT', 'the file system error is kept as cause');
      return true;
    });
  }
});

test('a vocab.txt that disagrees with word_topics.bin is SCDV_MODEL_CORRUPT naming vocab.txt', () => {
  const dir = writeModel('vocab');
  const vocab = path.join(dir, 'vocab.txt');
  const m = loadModel('vocab', { modelsDir });
  fs.writeFileSync(vocab, `${WORDS[0]}\t10\t1.5\n`);
  assert.throws(() => loadLexicon(m), corrupt(vocab, /1 words, word_topics\.bin of model vocab has 3/));
  fs.writeFileSync(vocab, WORDS.map((w) => `${w}\t10\n`).join(''));
  assert.throws(() => loadLexicon(m), corrupt(vocab, /line 1 has no idf/));
  fs.writeFileSync(vocab, ['x', ...WORDS.slice(1)].map((w) => `${w}\t10\t1.5\n`).join(''));
  assert.throws(() => loadLexicon(m), corrupt(vocab, /disagree at row 0/));
  fs.rmSync(vocab);
  assert.throws(() => loadLexicon(m), corrupt(vocab, /cannot be read/));
});

/** Header fields of word_topics.bin (workers/scdv/wtv_format.py): hash_slots at 32, off_hash at 80. @param {Buffer} b */
const hashTable = (b) => ({ slots: b.readUInt32LE(32), at: Number(b.readBigUInt64LE(80)) });

test('a word_topics.bin whose hash table has no empty slot, or names rows that do not exist, is refused at load', () => {
  const dir = writeModel('hash');
  const file = path.join(dir, 'word_topics.bin');
  const bytes = fs.readFileSync(file);
  const { slots, at } = hashTable(bytes);
  assert.ok(slots >= 2 * WORDS.length, `the writer leaves half the slots empty (${slots} slots)`);
  /** @param {(b: Buffer) => void} damage */
  const write = (damage) => {
    const b = Buffer.from(bytes);
    damage(b);
    fs.writeFileSync(file, b);
  };
  for (const inMemory of [false, true]) {
    // Every slot used (same size, so only the content tells): a lookup of an unknown word would never end.
    write((b) => { for (let i = 0; i < slots; i++) b.writeUInt32LE(1 + (i % WORDS.length), at + 4 * i); });
    assert.throws(() => loadModel('hash', { modelsDir, inMemory }), corrupt(file, /hash table has \d+ used slots of \d+ for 3 words \(no empty slot/));
    // One extra used slot: still some empty ones, but not one slot per word.
    write((b) => {
      let i = 0;
      while (b.readUInt32LE(at + 4 * i) !== 0) i++;
      b.writeUInt32LE(1, at + 4 * i);
    });
    assert.throws(() => loadModel('hash', { modelsDir, inMemory }), corrupt(file, /hash table has 4 used slots of \d+ for 3 words/));
    write((b) => {
      let i = 0;
      while (b.readUInt32LE(at + 4 * i) === 0) i++;
      b.writeUInt32LE(7, at + 4 * i);
    });
    assert.throws(() => loadModel('hash', { modelsDir, inMemory }), corrupt(file, /slot \d+ names row 6, past the 3 words/));
    // Header numbers that do not fit the writer's layout.
    write((b) => b.writeUInt32LE(slots - 1, 32));
    assert.throws(() => loadModel('hash', { modelsDir, inMemory }), corrupt(file, /inconsistent header: hash_slots \d+ is not a power of two/));
    write((b) => b.writeUInt32LE(2, 32));
    assert.throws(() => loadModel('hash', { modelsDir, inMemory }), corrupt(file, /hash_slots 2 is less than twice the 3 words/));
    write((b) => b.writeBigUInt64LE(BigInt(at + 4 * slots), 80));
    assert.throws(() => loadModel('hash', { modelsDir, inMemory }), corrupt(file, /section hash ends at byte \d+, past the end of the file/));
    write((b) => b.writeBigUInt64LE(64n, 40));
    assert.throws(() => loadModel('hash', { modelsDir, inMemory }), corrupt(file, /section row_ptr starts at byte 64, inside the header/));
  }
  fs.writeFileSync(file, bytes);
  assert.equal(loadModel('hash', { modelsDir }).wordTopics.indexOf(WORDS[1]), 1, 'the sound file loads again');
});

test('a lookup probes each slot at most once: a table filled after loading answers "unknown", it does not spin', () => {
  const dir = writeModel('spin');
  const file = path.join(dir, 'word_topics.bin');
  const wordTopicsUrl = new URL('../../pipeline/model/word-topics.js', import.meta.url).href;
  // In a child with a time limit, as the loop it guards against would never return. Both readers: whole-section
  // views of bytes in memory (their table overwritten in place) and positional reads (the file rewritten).
  const res = spawnSync(process.execPath, ['--input-type=module', '-e', `
    import fs from 'node:fs';
    import { WordTopics } from ${JSON.stringify(wordTopicsUrl)};
    const file = ${JSON.stringify(file)};
    const bytes = new Uint8Array(fs.readFileSync(file));
    const b = Buffer.from(bytes.buffer);
    const slots = b.readUInt32LE(32), at = Number(b.readBigUInt64LE(80));
    const inMemory = WordTopics.fromBytes(bytes, file);
    const positional = WordTopics.open(file);
    for (let i = 0; i < slots; i++) b.writeUInt32LE(1, at + 4 * i);
    fs.writeFileSync(file, b);
    console.log(JSON.stringify([inMemory.indexOf('未知語'), positional.indexOf('未知語'), inMemory.indexOf(${JSON.stringify(WORDS[0])})]));
  `], { encoding: 'utf8', timeout: 20_000, killSignal: 'SIGKILL' });
  assert.equal(res.signal, null, `the lookups did not finish within 20 s: ${res.stderr}`);
  assert.equal(res.status, 0, res.stderr);
  assert.deepEqual(JSON.parse(res.stdout), [-1, -1, 0], 'unknown words are unknown; a known word is still found');
});
