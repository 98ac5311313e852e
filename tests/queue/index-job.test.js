// The one builder of an `index` shard job's payload (scdv index and the server's bulk jobs both queue it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { indexShardJob } from '../../pipeline/queue/index-job.js';
import { jobSettings } from '../../pipeline/queue/job-schemas.js';
import { findDuplicateIds } from '../../pipeline/corpus/duplicates.js';
import { planShards } from '../../pipeline/corpus/plan.js';
import { usePaths } from '../../pipeline/paths.js';
import { loadConfig } from '../../pipeline/config.js';

test('an index job carries the model and its store backend (no store folder) and only the repeated ids of its own shard', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-index-job-'));
  try {
    usePaths({ storeDir: path.join(dir, 'store') });
    const corpus = path.join(dir, 'c.jsonl');
    // ids: a b a | c b d | a e f -> line 3 repeats line 1, 5 repeats 2, 7 repeats 1
    const ids = ['a', 'b', 'a', 'c', 'b', 'd', 'a', 'e', 'f'];
    fs.writeFileSync(corpus, ids.map((id) => JSON.stringify({ id, body: `本文 ${id}` })).join('\n') + '\n');
    const config = loadConfig({});
    const plan = await planShards(corpus, 3);
    assert.equal(plan.shards.length, 3);
    const dups = await findDuplicateIds(corpus, config.corpus.maxDocumentBytes);
    const run = { runKey: 'k1', corpus, outDir: path.join(dir, 'run'), model: 'm1', collection: 'news', config, duplicates: dups };
    const jobs = plan.shards.map((s) => indexShardJob(run, s));
    assert.deepEqual(jobs.map((j) => j.duplicates), [[[3, 1]], [[5, 2]], [[7, 1]]]);
    assert.deepEqual(jobs[1], {
      runKey: 'k1', corpus, shard: plan.shards[1], outDir: run.outDir, model: 'm1', backend: 'native',
      collection: 'news', config: jobSettings(config), duplicates: [[5, 2]],
    });
    for (const key of ['store', 'server', 'queue', 'events']) assert.ok(!(key in jobs[0].config), `a job carries no ${key} settings`);
    const remote = loadConfig({ overrides: { store: { backend: 'opensearch' } } });
    assert.equal(indexShardJob({ ...run, config: remote }, plan.shards[0]).backend, 'opensearch');
    assert.ok(!('storeDir' in jobs[0]), 'a store folder is a path on the submitting host: it does not travel');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
