// The one shard-processing skeleton of the tokenise and embed workers (pipeline/queue/shard.js): lines over the
// size limit and lines that do not parse are rejected with their line number, documents reach `flush` in batches,
// and the marker is written last — never when the shard failed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../pipeline/config.js';
import { processShardLines, readShardResult, shardMarker } from '../../pipeline/queue/shard.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-shard-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const lines = [
  JSON.stringify({ id: 'a', body: 'one' }),
  '',
  '{not json',
  JSON.stringify({ id: 'b', body: 'x'.repeat(200) }),
  JSON.stringify({ id: 'c', body: 'three' }),
  JSON.stringify({ id: 'a', body: 'again' }),
  JSON.stringify({ id: 'd', body: 'four' }),
];
const corpus = path.join(tmp, 'corpus.jsonl');
fs.writeFileSync(corpus, lines.join('\n') + '\n');
const size = fs.statSync(corpus).size;
const config = loadConfig({ overrides: { corpus: { maxDocumentBytes: 100 } } });

/** @param {string} outDir */
const job = (outDir) => ({ runKey: 'k1', corpus, outDir, config, shard: { index: 3, start: 0, end: size, firstLine: 1, lines: lines.length } });
const fresh = () => ({ shard: 3, runKey: 'k1', lines: 0, documents: 0, rejected: /** @type {any[]} */ ([]), seconds: 0, worker: 'test' });

test('rejections name their line, documents are flushed in batches, the marker is written last', async () => {
  const outDir = path.join(tmp, 'ok');
  /** @type {string[][]} */
  const batches = [];
  let blank = 0;
  let bytes = 0;
  const result = await processShardLines(job(outDir), {
    result: fresh(), batchSize: 2,
    flush: async (batch) => {
      assert.equal(readShardResult(outDir, 3, 'k1'), null, 'no marker before the last flush');
      batches.push(batch.map((b) => `${b.line}:${b.doc.id}`));
    },
    onLine: (buf) => { bytes += buf.length; },
    onBlank: () => { blank++; },
    accept: (doc, line) => (doc.id === 'a' && line > 1 ? { line, id: doc.id, code: 'DUPLICATE_ID', reason: 'repeated' } : null),
  });
  assert.deepEqual(batches, [['1:a', '5:c'], ['7:d']]);
  assert.equal(blank, 1);
  assert.equal(bytes, Buffer.byteLength(lines.filter((l) => l.length <= 100).join('')));
  assert.equal(result.lines, 7);
  assert.deepEqual(result.rejected.map((r) => [r.line, r.code]), [[3, 'INVALID_JSON'], [4, 'TOO_LARGE'], [6, 'DUPLICATE_ID']]);
  assert.match(result.rejected[1].reason, /exceeds corpus\.maxDocumentBytes = 100/);
  assert.deepEqual(readShardResult(outDir, 3, 'k1'), result);
});

test('a failing flush leaves no marker and runs the cleanup', async () => {
  const outDir = path.join(tmp, 'fail');
  let abandoned = false;
  await assert.rejects(processShardLines(job(outDir), {
    result: fresh(), batchSize: 2,
    flush: async () => { throw new Error('disk full'); },
    abandon: () => { abandoned = true; },
  }), /disk full/);
  assert.equal(abandoned, true);
  assert.equal(fs.existsSync(shardMarker(outDir, 3)), false);
});
