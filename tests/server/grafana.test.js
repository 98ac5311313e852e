// The Grafana dashboard (docs/grafana/scdv-recommender.json) queries only what the server exports: every metric name in
// its PromQL expressions (panels and template variables) is in a real /metrics scrape, a _bucket/_sum/_count series
// only of a histogram (or summary); every panel reads the Prometheus data source chosen by the $datasource variable.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const h = await import('./helpers.js');
const { startServer } = await import('../../server/start.js');
const { REPO_ROOT } = await import('../../pipeline/paths.js');

const DASHBOARD = path.join(REPO_ROOT, 'docs', 'grafana', 'scdv-recommender.json');
/** PromQL words that are not metric names. */
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/** @type {import('../../server/start.js').RunningServer} */
let srv;

before(async () => {
  const { redis } = await h.setup();
  srv = await startServer({ config: h.testConfig(), model: h.MODEL_A, redisUrl: redis.url, host: '127.0.0.1', port: 0, indexWorkers: 0 });
});
after(async () => {
  await srv?.close();
  await h.teardown();
});

/**
 * Metric names a PromQL expression reads: identifiers left once label matchers, ranges, grouping clauses, strings
 * and Grafana variables are removed, that are not functions (followed by "(") or keywords.
 * @param {string} expr
 */
export function metricNames(expr) {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ');
  return [...bare.matchAll(/([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?/g)]
    .filter((m) => !m[2] && !KEYWORDS.has(m[1].toLowerCase()) && !/[0-9.]/.test(bare[/** @type {number} */ (m.index) - 1] ?? ''))
    .map((m) => m[1])
    .filter((w, i, all) => all.indexOf(w) === i);
}

test('metricNames reads metric names out of PromQL', () => {
  assert.deepEqual(metricNames('histogram_quantile(0.95, sum by (le, route) (rate(scdv_http_request_duration_seconds_bucket{job=~"$job"}[$__rate_interval])))'),
    ['scdv_http_request_duration_seconds_bucket']);
  assert.deepEqual(metricNames('sum(rate(a_total{x="y"}[5m])) / sum(rate(b_total[5m])) > bool 0'), ['a_total', 'b_total']);
  assert.deepEqual(metricNames('max by (model) (scdv_model_active)'), ['scdv_model_active']);
});

test('every metric the dashboard queries is exported by /metrics', async () => {
  // Some traffic first, so that labelled series exist too (the TYPE lines are there regardless).
  await srv.app.inject('/v1/collections/articles/documents/sports-watch-4597641/related?k=3');
  const res = await srv.app.inject('/metrics');
  assert.equal(res.statusCode, 200);
  /** @type {Map<string, string>} name -> type */
  const exported = new Map([...res.body.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]));
  assert.ok(exported.size > 20, res.body.slice(0, 500));

  const dash = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8'));
  const panels = dash.panels.flatMap((/** @type {any} */ p) => [p, ...(p.panels ?? [])]);
  /** @type {{where: string, expr: string}[]} */
  const exprs = [
    ...panels.flatMap((/** @type {any} */ p) => (p.targets ?? []).map((/** @type {any} */ t) => ({ where: `panel "${p.title}" ${t.refId}`, expr: t.expr }))),
    ...dash.templating.list.filter((/** @type {any} */ v) => v.type === 'query')
      .map((/** @type {any} */ v) => ({ where: `variable $${v.name}`, expr: String(v.query?.query ?? v.query).replace(/^label_values\((\w+),.*$/, '$1') })),
  ];
  assert.ok(exprs.length >= 20, `queries found: ${exprs.length}`);
  const problems = [];
  const used = new Set();
  for (const { where, expr } of exprs) {
    const names = metricNames(expr);
    if (names.length === 0) problems.push(`${where}: no metric in ${expr}`);
    for (const name of names) {
      const suffix = /_(bucket|sum|count)$/.exec(name);
      const base = suffix ? name.slice(0, -suffix[0].length) : name;
      if (exported.has(name)) { used.add(name); continue; }
      if (suffix && ['histogram', 'summary'].includes(exported.get(base) ?? '') && !(suffix[1] === 'bucket' && exported.get(base) === 'summary')) { used.add(base); continue; }
      problems.push(`${where}: ${name} is not exported${exported.has(base) ? ` (${base} is a ${exported.get(base)})` : ''}`);
    }
  }
  assert.deepEqual(problems, []);
  // Every metric of server/prometheus.js has a panel (the default process metrics are optional).
  const own = [...exported.keys()].filter((n) => n.startsWith('scdv_') && !/^scdv_(process|nodejs)_/.test(n));
  assert.deepEqual(own.filter((n) => !used.has(n)), [], 'exported metrics without a panel');
});

test('every panel reads the data source chosen by the $datasource variable', () => {
  const dash = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8'));
  const ds = dash.templating.list.find((/** @type {any} */ v) => v.name === 'datasource');
  assert.deepEqual([ds?.type, ds?.query], ['datasource', 'prometheus']);
  for (const p of dash.panels.filter((/** @type {any} */ p) => p.type !== 'row')) {
    assert.equal(p.datasource?.uid, '${datasource}', p.title);
    for (const t of p.targets) assert.equal(t.datasource?.uid, '${datasource}', `${p.title} ${t.refId}`);
  }
});
