// Activating one's own model: the 409 names the rule and the exact `scdv index` commands that satisfy
// it, and `{"collections": [...]}` serves a model for the collections it has (a site without ads), while the
// default stays strict. Real models, store and Redis (helpers.js); model B's `ads` is deleted here.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const h = await import('./helpers.js');
const { startServer } = await import('../../server/start.js');
const { dataDir, storeDirFor } = await import('../../pipeline/paths.js');
const { openStore } = await import('../../pipeline/store/index.js');
const { recordIndexed } = await import('../../pipeline/serving/index.js');
const { vectorLayout } = await import('../../pipeline/embed/layout.js');

/** @type {import('../../server/start.js').RunningServer} */
let srv;
const KEY = { authorization: `Bearer ${h.API_KEY}` };
const DOC = 'sports-watch-4597641';
const ADS_CORPUS = '/srv/corpora/ads.jsonl';

before(async () => {
  const { redis } = await h.setup();
  const storeB = openStore(storeDirFor(h.MODEL_B));
  await storeB.dropCollection('ads'); // model B: a news site's own model, built without ads
  await storeB.close();
  const config = h.testConfig();
  srv = await startServer({ config, model: h.MODEL_A, redisUrl: redis.url, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  // What `scdv index --collection ads --corpus …` records for model A (the helpers index in-process).
  const width = /** @type {import('../../server/model-state.js').ServingModel} */ (srv.ctx.models.current).width;
  recordIndexed(h.MODEL_A, 'ads', vectorLayout(config.embed, width, 0), 'f'.repeat(64), ADS_CORPUS);
});
after(async () => {
  await srv?.close();
  await h.teardown();
});

/** @param {import('light-my-request').InjectOptions | string} opts */
const call = (opts) => h.inject(srv.app, opts);
/** @param {Record<string, unknown> | undefined} body */
const activateB = (body) => call({ method: 'POST', url: `/v1/models/${h.MODEL_B}/activate`, headers: KEY, ...(body === undefined ? {} : { payload: body }) });

test('the default stays strict: the 409 states the rule and the exact commands, with the recorded corpus', async () => {
  // A collection indexed without a recorded corpus (a PUT): its command gets a placeholder.
  const put = await call({ method: 'PUT', url: '/v1/collections/only-a/documents/x1', headers: KEY, payload: { body: 'サッカーの試合と選手' } });
  assert.equal(put.status, 200, JSON.stringify(put.body));

  const refused = await activateB(undefined);
  assert.equal(refused.status, 409, JSON.stringify(refused.body));
  assert.equal(refused.body.error, 'SCDV_MODEL_NOT_BUILT');
  const msg = refused.body.message;
  assert.match(msg, /lacks collection\(s\) ads, only-a that model srv-a serves/);
  assert.match(msg, /an activation keeps every collection with documents the active model serves/, 'the rule is stated');
  assert.ok(msg.includes(`\`scdv index --model ${h.MODEL_B} --collection ads --corpus ${ADS_CORPUS}\``), msg);
  assert.ok(msg.includes(`\`scdv index --model ${h.MODEL_B} --collection only-a --corpus <corpus of only-a>\``), msg);
  assert.ok(msg.includes('{"collections":["articles"]}'), 'the body that serves only what model B has');
  assert.deepEqual(refused.body.details, {
    missing: ['ads', 'only-a'],
    commands: [`scdv index --model ${h.MODEL_B} --collection ads --corpus ${ADS_CORPUS}`, `scdv index --model ${h.MODEL_B} --collection only-a --corpus <corpus of only-a>`],
    serve_only: { collections: ['articles'] },
  });
  assert.equal((await call('/v1/models')).body.active, h.MODEL_A, 'nothing switched');
});

test('collections named in the body must be in the new model; the body is validated', async () => {
  const refused = await activateB({ collections: ['articles', 'ads'] });
  assert.equal(refused.status, 409, JSON.stringify(refused.body));
  assert.match(refused.body.message, /lacks collection\(s\) ads that the activation's "collections" names/);
  assert.deepEqual(refused.body.details.missing, ['ads']);
  assert.equal(refused.body.details.serve_only, undefined);
  for (const [payload, field] of /** @type {const} */ ([
    [{ collections: ['../x'] }, 'body.collections.0'],
    [{ collection: ['articles'] }, 'body.collection'],
    [{ collections: 'articles' }, 'body.collections'],
  ])) {
    const bad = await activateB(payload);
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
    assert.equal(bad.body.details.field, field);
  }
  // No body is the default activation; a JSON null is not an object.
  const nul = await call({ method: 'POST', url: `/v1/models/${h.MODEL_B}/activate`, headers: { ...KEY, 'content-type': 'application/json' }, payload: 'null' });
  assert.equal(nul.status, 400, JSON.stringify(nul.body));
  assert.equal((await call('/v1/models')).body.active, h.MODEL_A);
});

test('{"collections": ["articles"]} serves model B for what it has: articles answer, ads are 404 naming the model', async () => {
  const act = await activateB({ collections: ['articles'] });
  assert.equal(act.status, 200, JSON.stringify(act.body));
  assert.deepEqual(act.body, { active: h.MODEL_B, previous: h.MODEL_A, changed: true, unserved: ['ads', 'only-a'] });
  const record = JSON.parse(fs.readFileSync(path.join(dataDir(), 'server', 'active-model.json'), 'utf8'));
  assert.equal(record.model, h.MODEL_B);
  assert.deepEqual(record.collections, ['articles']);
  assert.deepEqual(record.unserved, ['ads', 'only-a']);

  const rel = await call(`/v1/collections/articles/documents/${DOC}/related?k=3`);
  assert.equal(rel.status, 200, JSON.stringify(rel.body));
  assert.equal(rel.body.model, h.MODEL_B);
  assert.equal(rel.body.results.length, 3);
  const ads = await call('/v1/collections/ads/documents/ad-phone');
  assert.equal(ads.status, 404);
  assert.equal(ads.body.error, 'SCDV_COLLECTION_NOT_FOUND');
  assert.match(ads.body.message, new RegExp(`"ads" not found in the store of model ${h.MODEL_B}`));

  // Back to A with the default rule: A holds everything B serves, so nothing is reported unserved.
  const back = await call({ method: 'POST', url: `/v1/models/${h.MODEL_A}/activate`, headers: KEY });
  assert.deepEqual(back.body, { active: h.MODEL_A, previous: h.MODEL_B, changed: true });
  const record2 = JSON.parse(fs.readFileSync(path.join(dataDir(), 'server', 'active-model.json'), 'utf8'));
  assert.equal(record2.collections, undefined, 'a default activation records no choice');
  assert.equal((await call('/v1/collections/ads/documents/ad-phone')).status, 200);
});
