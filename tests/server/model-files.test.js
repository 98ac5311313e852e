// The model files check: `scdv index` records a digest of the model files it embedded with; a server
// refuses to serve (start, activate, follow) a model whose files on its host differ, naming both digests and the
// folder to copy. The digest of a large file is cached by size, mtime, ctime and inode. Real models, store and Redis.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const h = await import('./helpers.js');
const { startServer } = await import('../../server/start.js');
const { modelsDir } = await import('../../pipeline/paths.js');
const { readIndexed, recordIndexed, forgetIndexed, checkModelFiles } = await import('../../pipeline/serving/index.js');
const { modelFilesDigest, DIGEST_CACHE_FILE } = await import('../../pipeline/model/files-digest.js');
const { vectorLayout } = await import('../../pipeline/embed/layout.js');

/** @type {string} */
let redisUrl;
const KEY = { authorization: `Bearer ${h.API_KEY}` };

before(async () => {
  ({ redis: { url: redisUrl } } = await h.setup());
});
after(async () => {
  forgetIndexed(h.MODEL_B, 'articles');
  await h.teardown();
});

/** @param {any} e */
const isMismatch = (e) => e.code === 'SCDV_MODEL_FILES_MISMATCH';

test('the digest covers the files the embedder reads, and is cached by size and mtime', async () => {
  const dir = path.join(modelsDir(), h.MODEL_B);
  const d1 = await modelFilesDigest(h.MODEL_B);
  assert.match(d1, /^[0-9a-f]{64}$/);
  const cache = JSON.parse(fs.readFileSync(path.join(dir, DIGEST_CACHE_FILE), 'utf8'));
  assert.ok(cache.files['word_topics.bin'] && cache.files['manifest.json'], JSON.stringify(Object.keys(cache.files)));
  // A cached hash is used while size and mtime are unchanged: poison it, the digest changes (so the cache is read)...
  const poisoned = { files: { ...cache.files, 'manifest.json': { ...cache.files['manifest.json'], sha256: '0'.repeat(64) } } };
  fs.writeFileSync(path.join(dir, DIGEST_CACHE_FILE), JSON.stringify(poisoned));
  assert.notEqual(await modelFilesDigest(h.MODEL_B), d1);
  // ...and touching the file (new mtime) makes it hash the file again.
  const manifest = path.join(dir, 'manifest.json');
  const t = new Date(Date.now() + 5000);
  fs.utimesSync(manifest, t, t);
  assert.equal(await modelFilesDigest(h.MODEL_B), d1);
  // Other bytes in a model file: another digest.
  const other = path.join(modelsDir(), h.MODEL_A);
  assert.notEqual(await modelFilesDigest(h.MODEL_A), d1, `${other} and ${dir} hold different models`);
});

test('a model file rewritten in place with its size and mtime kept gets a new digest (the cache also keys on ctime and inode)', async () => {
  const file = path.join(modelsDir(), h.MODEL_B, 'manifest.json');
  const d1 = await modelFilesDigest(h.MODEL_B);
  const bytes = fs.readFileSync(file);
  const st = fs.statSync(file);
  try {
    // Same length, other bytes: the first space of the indentation becomes a tab (the same JSON), then the times
    // are set back as they were.
    const other = Buffer.from(bytes);
    other[other.indexOf(0x20)] = 0x09;
    assert.deepEqual(JSON.parse(other.toString()), JSON.parse(bytes.toString()));
    fs.writeFileSync(file, other);
    fs.utimesSync(file, st.atime, st.mtime);
    assert.equal(fs.statSync(file).size, st.size);
    assert.equal(fs.statSync(file).mtimeMs, st.mtimeMs);
    assert.notEqual(await modelFilesDigest(h.MODEL_B), d1, 'the changed bytes are hashed, not the cached hash trusted');
  } finally {
    fs.writeFileSync(file, bytes);
    fs.utimesSync(file, st.atime, st.mtime);
  }
  assert.equal(await modelFilesDigest(h.MODEL_B), d1, 'the original bytes: the original digest');
});

test('activating a copy of a model whose word_topics.bin hash table has no empty slot (mtime kept) is refused naming the file', async () => {
  const copy = 'srv-b-damaged';
  const dir = path.join(modelsDir(), copy);
  fs.cpSync(path.join(modelsDir(), h.MODEL_B), dir, { recursive: true, preserveTimestamps: true });
  fs.rmSync(path.join(dir, 'indexed.json'), { force: true }); // a copy not indexed yet: no digest to compare
  const file = path.join(dir, 'word_topics.bin');
  const st = fs.statSync(file);
  const b = fs.readFileSync(file);
  const slots = b.readUInt32LE(32);
  const at = Number(b.readBigUInt64LE(80));
  for (let i = 0; i < slots; i++) b.writeUInt32LE(1, at + 4 * i);
  fs.writeFileSync(file, b);
  fs.utimesSync(file, st.atime, st.mtime);
  const srv = await startServer({ config: h.testConfig(), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  try {
    const res = await srv.app.inject({ method: 'POST', url: `/v1/models/${copy}/activate`, headers: KEY });
    assert.equal(res.statusCode, 500, res.body);
    const body = res.json();
    assert.equal(body.error, 'SCDV_MODEL_CORRUPT');
    assert.ok(body.message.includes(`${copy}/word_topics.bin`), body.message);
    assert.match(body.message, /hash table has \d+ used slots of \d+ for \d+ words \(no empty slot/);
    assert.equal(srv.ctx.models.current?.name, h.MODEL_A, 'the serving model is unchanged');
    const text = await srv.app.inject({ method: 'POST', url: '/v1/collections/articles/related', payload: { text: 'サッカーの試合', k: 3 } });
    assert.equal(text.statusCode, 200, 'text requests are answered by the model still serving');
  } finally {
    await srv.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('checkModelFiles: equal digests pass, entries without one are not checked, a different one is refused', async () => {
  const local = await modelFilesDigest(h.MODEL_B);
  await checkModelFiles(h.MODEL_B, { articles: { model_files_sha256: local }, old: {} });
  await assert.rejects(checkModelFiles(h.MODEL_B, { articles: { model_files_sha256: 'a'.repeat(64) } }), (/** @type {any} */ e) => {
    assert.ok(isMismatch(e), e.message);
    assert.equal(e.status, 409);
    assert.ok(e.message.includes(local) && e.message.includes('a'.repeat(64)), e.message);
    assert.ok(e.message.includes(`models/${h.MODEL_B}/`), e.message);
    assert.equal(e.details.folder, path.join(modelsDir(), h.MODEL_B));
    return true;
  });
});

test('a server refuses to start with, or to activate, a model whose files differ from the index\'s', async () => {
  const config = h.testConfig();
  const entry = readIndexed(h.MODEL_A).articles;
  const layout = entry?.layout ?? vectorLayout(config.embed, 144, 1);
  // What `scdv index` on another host, with other files for model B, would have recorded.
  recordIndexed(h.MODEL_B, 'articles', layout, undefined, undefined, 'b'.repeat(64));
  await assert.rejects(startServer({ config, model: h.MODEL_B, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 }), isMismatch);
  const srv = await startServer({ config, model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  try {
    const res = await srv.app.inject({ method: 'POST', url: `/v1/models/${h.MODEL_B}/activate`, headers: KEY });
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(res.json().error, 'SCDV_MODEL_FILES_MISMATCH');
    assert.equal(srv.ctx.models.current?.name, h.MODEL_A);
    // The files that were indexed with: served.
    recordIndexed(h.MODEL_B, 'articles', layout, undefined, undefined, await modelFilesDigest(h.MODEL_B));
    const ok = await srv.app.inject({ method: 'POST', url: `/v1/models/${h.MODEL_B}/activate`, headers: KEY, payload: { collections: ['articles'] } });
    assert.equal(ok.statusCode, 200, ok.body);
    await srv.app.inject({ method: 'POST', url: `/v1/models/${h.MODEL_A}/activate`, headers: KEY });
  } finally {
    await srv.close();
  }
});
