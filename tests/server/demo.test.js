// `npm start` (scdv demo) end to end: it must reach "Serving on URL", answer there, and stop cleanly on
// SIGINT with its private Redis. A small test model stands in for the demo's own, so nothing is trained here.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';

const h = await import('./helpers.js');
const { REPO_ROOT } = await import('../../pipeline/paths.js');
const { DEMO_MODEL, DEMO_API_KEY } = await import('../../pipeline/commands/demo.js');
const { loadConfig } = await import('../../pipeline/config.js');
const { adEmbedSettings } = await import('../../pipeline/embed/layout.js');
const { createEmbedder } = await import('../../pipeline/embed/index.js');
const { readIndexed, recordIndexed } = await import('../../pipeline/serving/index.js');

after(() => h.teardown());

test('npm start: trains nothing when the model exists, indexes, serves, answers, stops on SIGINT', { timeout: 180_000 }, async () => {
  await h.setup();
  const models = /** @type {string} */ (process.env.SCDV_MODELS_DIR);
  fs.cpSync(path.join(models, h.MODEL_A), path.join(models, DEMO_MODEL), { recursive: true });
  // The demo starts its own private Redis, in a folder under TMPDIR: a private TMPDIR lets us see it go.
  const tmpdir = fs.mkdtempSync(path.join(h.tmp, 'demo-tmp-'));
  /** @type {NodeJS.ProcessEnv} */
  const env = { ...process.env, TMPDIR: tmpdir };
  delete env.REDIS_URL;
  // The small test model is 144 wide: keep a quarter of the entries, as the other server tests do.
  const config = path.join(h.tmp, 'demo-config.json');
  fs.writeFileSync(config, JSON.stringify({ embed: { keepCount: 36 } }));
  // Collections left by another vector layout are re-created: articles of another width (pure SCDV), ads of the
  // same width recorded with other settings (either would refuse the demo's vectors).
  const demoEmbed = loadConfig({ overrides: { embed: { keepCount: 36 } } });
  const pureScdv = loadConfig({ overrides: { embed: { keepCount: 36, hybrid: { alpha: 1 } } } }); // 144 wide, no lexical block
  await h.indexDocs(DEMO_MODEL, 'articles', h.sampleDocs().slice(0, 3), pureScdv);
  // The ads in the ads' layout (adEmbed), recorded with another keepCount.
  const adConfig = { ...demoEmbed, embed: adEmbedSettings(demoEmbed.embed, demoEmbed.adEmbed) };
  await h.indexDocs(DEMO_MODEL, 'ads', h.sampleDocs().slice(0, 3), adConfig);
  const e = await createEmbedder(DEMO_MODEL, adConfig);
  e.model.wordTopics.close();
  recordIndexed(DEMO_MODEL, 'ads', { ...e.layout, embed: { ...e.layout.embed, keepCount: 20 } });
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'pipeline', 'cli.js'), 'demo', '--config', config], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  try {
    const url = await new Promise((resolve, reject) => {
      const timer = setInterval(() => {
        const m = /^Serving on (http:\/\/\S+)$/m.exec(out);
        if (m) { clearInterval(timer); resolve(m[1]); }
      }, 100);
      exited.then((r) => { clearInterval(timer); reject(new Error(`demo exited before serving: ${JSON.stringify(r)}\n${out}\n${err}`)); });
    });
    const all = out + err; // summaries go to stderr, answers to stdout
    assert.match(all, /exists \(delete it to train again\)/);
    assert.match(all, /Collection "articles" was indexed with another vector layout \(width 144, now \d+\): re-creating it/);
    assert.match(all, /Collection "ads" was indexed with another vector layout \(embed\.keepCount 20 vs null\): re-creating it/);
    const ads = readIndexed(DEMO_MODEL).ads.layout.embed;
    assert.deepEqual([ads.keepCount, ads.keepFraction, ads.hybrid.alpha], [null, 0.1, 0.5], 'the ads are re-indexed in the ads\' layout');
    assert.equal(readIndexed(DEMO_MODEL).articles.layout.embed.keepCount, 36);
    assert.match(all, /indexed 306 documents into livedoor-sample\/articles/);
    assert.match(all, /indexed 108 documents into livedoor-sample\/ads/);
    assert.match(out, /served from precomputed/);
    // The ads' default min_score is derived from the articles when they are indexed and again when precomputed,
    // recorded beside their layout, and every printed match says what it cut.
    assert.match(all, /default min_score of "ads": [\d.]+ \(the 99th percentile of [\d,]+ articles–ads pairs of different categories/);
    const recorded = readIndexed(DEMO_MODEL).ads.match_min_score;
    assert.ok(recorded && recorded.source === 'articles' && recorded.basis === 'different-category', JSON.stringify(recorded));
    assert.match(out, new RegExp(`\\(.*min_score ${recorded.value}, the collection's derived threshold; .*docs/matching\\.md\\)`));
    const listed = /** @type {any} */ (await (await fetch(`${url}/v1/models`)).json()).models.find((/** @type {any} */ m) => m.name === DEMO_MODEL);
    assert.deepEqual(listed.collections.find((/** @type {any} */ c) => c.name === 'ads').match_min_score, recorded);

    const related = await fetch(`${url}/v1/collections/articles/documents/sports-watch-4597641/related?k=3`);
    assert.equal(related.status, 200);
    const body = /** @type {any} */ (await related.json());
    assert.equal(body.results.length, 3);
    assert.ok(!body.results.some((/** @type {any} */ r) => r.id === 'sports-watch-4597641'));
    // The demo key works on write routes; no key does not.
    const put = (/** @type {Record<string, string>} */ headers) => fetch(`${url}/v1/collections/articles/documents/demo-test-1`, {
      method: 'PUT', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ title: '野球', body: 'プロ野球の監督が試合後に語った。' }),
    });
    assert.equal((await put({})).status, 401);
    assert.equal((await put({ authorization: `Bearer ${DEMO_API_KEY}` })).status, 200);
  } finally {
    child.kill('SIGINT');
  }
  const r = /** @type {{code: number|null, signal: string|null}} */ (await exited);
  assert.deepEqual(r, { code: 0, signal: null }, `demo did not stop cleanly:\n${err}`);
  assert.match(out, /stopping: finishing requests in flight/);
  assert.match(out + err, /Redis: private redis-server/);
  // Its private Redis stopped with it: its folder (socket included) is removed on a clean stop.
  assert.deepEqual(fs.readdirSync(tmpdir).filter((n) => n.startsWith('scdv-redis-')), []);
});
