// The local OpenSearch the other tests build on: one node starts from the cached install with the modules set-up
// adds (analysis-common, lang-painless), takes a signed vector split into non-negative weighted terms (the store's
// feature field, pipeline/store/opensearch/encoding.js) and finds it with the agreeing-sign query; two nodes form
// a cluster that places replicas.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startOpenSearch } from '../lib/opensearch.js';
import { analysisSettings, featureTerms, mappingOf } from '../../pipeline/store/opensearch/encoding.js';

/**
 * @param {string} url
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<{status: number, json: any}>}
 */
async function call(url, method, path, body) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

test('one node: the feature field holds a split-sign vector as weighted terms and the agreeing-sign query finds it', async (t) => {
  const os = await startOpenSearch({ nodes: 1, name: 'scdv-smoke' });
  t.after(() => os.stop());
  const [url] = os.urls;
  // One query clause per non-zero of a query vector: thousands, over the default limit of 1024.
  const settings = await call(url, 'GET', '/_nodes/settings?filter_path=**.max_clause_count');
  assert.match(JSON.stringify(settings.json), /"max_clause_count":"65536"/);

  // The analyzer (analysis-common) and the scripted similarity (lang-painless) of the store's layout.
  const created = await call(url, 'PUT', '/smoke', {
    settings: { number_of_shards: 1, number_of_replicas: 0, ...analysisSettings() },
    mappings: { properties: { f: mappingOf({}).properties.f, vv: { type: 'object', enabled: false } } },
  });
  assert.equal(created.status, 200, JSON.stringify(created.json));

  const a = { 3: 0.6, 7: -0.8 };
  const b = { 3: -0.6, 7: 0.8 };
  /** @param {Record<number, number>} v */
  const terms = (v) => featureTerms(Uint32Array.from(Object.keys(v), Number), Float32Array.from(Object.values(v)));
  assert.match(terms(a), /^p3\|\d+ n7\|\d+$/, 'p<i> for positive values, n<i> for the magnitude of negative ones');
  for (const [id, v] of /** @type {const} */ ([['a', a], ['b', b]])) {
    const put = await call(url, 'PUT', `/smoke/_doc/${id}?refresh=wait_for`, { f: terms(v), vv: v });
    assert.equal(put.status, 201, JSON.stringify(put.json));
  }
  // Query = a: its positive part matches a's p3, its negative part a's n7; b agrees on neither sign.
  const should = [{ term: { f: { value: 'p3', boost: 0.6 } } }, { term: { f: { value: 'n7', boost: 0.8 } } }];
  const found = await call(url, 'POST', '/smoke/_search', { query: { bool: { should } } });
  assert.equal(found.status, 200, JSON.stringify(found.json));
  const hits = found.json.hits.hits;
  assert.deepEqual(hits.map((/** @type {any} */ h) => h._id), ['a']);
  // A term's weight keeps 8 significant bits, truncated: the score is just under the dot product (1.0).
  assert.ok(hits[0]._score <= 1 && hits[0]._score > 1 - 2 ** -6, `score ${hits[0]._score}`);
  assert.deepEqual(hits[0]._source.vv, { 3: 0.6, 7: -0.8 });
});

test('two nodes form one cluster and place a replica (green)', async (t) => {
  const os = await startOpenSearch({ nodes: 2, name: 'scdv-pair' });
  t.after(() => os.stop());
  assert.equal(os.urls.length, 2);
  const created = await call(os.urls[0], 'PUT', '/pair', { settings: { number_of_shards: 2, number_of_replicas: 1 } });
  assert.equal(created.status, 200, JSON.stringify(created.json));
  const health = await os.waitHealth('green', 60_000);
  assert.equal(health.number_of_nodes, 2);
  const shards = await call(os.urls[1], 'GET', '/_cat/shards/pair?format=json');
  const byNode = new Set(shards.json.map((/** @type {any} */ s) => s.node));
  assert.equal(shards.json.length, 4, JSON.stringify(shards.json));
  assert.equal(byNode.size, 2, `every copy on one node: ${JSON.stringify(shards.json)}`);
  assert.ok(shards.json.every((/** @type {any} */ s) => s.state === 'STARTED'), JSON.stringify(shards.json));
});
