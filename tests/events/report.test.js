// scdv report clicks: the statistics (Wilson, Newcombe) against published figures, the join of clicks to
// impressions, the time range, the losses flagged, and the command's table, JSON and chart page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { EventLog, listSegments } from '../../pipeline/events/log.js';
import { bandOf, clickReport, differenceInterval, wilson } from '../../pipeline/events/clicks.js';
import { formatClickReport } from '../../pipeline/events/clicks-text.js';
import { renderClicksPage } from '../../pipeline/report/clicks-page.js';
import { DEFAULT_CONFIG } from '../../pipeline/config.js';
import { REPO_ROOT } from '../../pipeline/paths.js';

const near = (/** @type {number} */ a, /** @type {number} */ b, eps = 5e-4) => assert.ok(Math.abs(a - b) < eps, `${a} vs ${b}`);

test('Wilson and Newcombe intervals match published figures', () => {
  const w = wilson(10, 100);
  near(w.low, 0.0552); near(w.high, 0.1744);
  const z = wilson(0, 50);
  near(z.low, 0); near(z.high, 0.0713);
  // Newcombe (1998), example (a): 56/70 vs 48/80 -> 0.2000, 95 % interval 0.0524 to 0.3339 (method 10).
  const d = differenceInterval({ clicks: 56, impressions: 70 }, { clicks: 48, impressions: 80 });
  near(d.diff, 0.2); near(d.low, 0.0524); near(d.high, 0.3339);
});

test('similarity bands', () => {
  assert.equal(bandOf(0.35, 0.1), '0.30-0.40');
  assert.equal(bandOf(0.3, 0.1), '0.30-0.40');
  assert.equal(bandOf(1, 0.1), '0.90-1.00');
  assert.equal(bandOf(0, 0.1), '0.00-0.10');
  assert.equal(bandOf(-0.2, 0.1), '<0');
  assert.equal(bandOf(0.26, 0.05), '0.250-0.300');
});

/**
 * A log with two arms: in band 0.30-0.40 arm b gets 10 clicks of 200 against a's 40 of 200; in band 0.60-0.70 both
 * get 20 of 200. Plus a click by page id only, one without an impression, and an impression outside the range.
 * @param {string} dir
 */
async function writeLog(dir) {
  const log = new EventLog({ ...DEFAULT_CONFIG.events, dir });
  /** @type {Record<string, any>[]} */
  const events = [];
  let n = 0;
  const ts = '2026-11-10T10:00:00Z';
  for (const [arm, band, clicks, category] of /** @type {const} */ ([['a', 0.35, 40, 'sports'], ['b', 0.35, 10, 'sports'], ['a', 0.65, 20, 'movies'], ['b', 0.65, 20, 'movies']])) {
    for (let i = 0; i < 100; i++) {
      const rid = `r${++n}`;
      events.push({ type: 'impression', request_id: rid, page_id: `p${n}`, arm, category, site: 'news.example', ts, items: [{ id: 'x', position: 1, score: band }, { id: 'y', position: 2, score: band + 0.01 }] });
      if (i < clicks) events.push({ type: 'click', request_id: rid, clicked_id: i % 2 ? 'x' : 'y', ts });
    }
  }
  events.push({ type: 'click', page_id: 'p1', clicked_id: 'x', ts }); // by page: p1's impression (x not yet clicked there)
  events.push({ type: 'click', request_id: 'nowhere', clicked_id: 'x', ts });
  events.push({ type: 'click', request_id: 'r2', clicked_id: 'not-shown', ts });
  events.push({ type: 'impression', request_id: 'old', arm: 'a', ts: '2026-10-01T00:00:00Z', items: [{ id: 'x', position: 1, score: 0.35 }] });
  await log.append(events);
  await log.close();
  fs.appendFileSync(listSegments(dir)[0].file, '{"type":"impre');
}

test('CTR per band, arm, position and genre; the losing arm is flagged where it loses, not where it ties', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-clicks-'));
  await writeLog(dir);
  const r = await clickReport(dir, { since: '2026-11-01', until: '2026-11-30', bandWidth: 0.1, minImpressions: 100 });
  assert.equal(r.totals.impressions, 400);
  assert.equal(r.totals.shown, 800);
  assert.equal(r.totals.clicks, 91, '90 by request id, 1 by page id');
  assert.equal(r.totals.unmatched_clicks, 2);
  assert.equal(r.totals.torn_lines, 1);
  assert.deepEqual(r.bands.map((c) => [c.key, c.impressions, c.clicks]), [['0.30-0.40', 400, 51], ['0.60-0.70', 400, 40]]);
  assert.deepEqual(r.arms.map((c) => [c.key, c.impressions, c.clicks]), [['a', 400, 61], ['b', 400, 30]]);
  assert.deepEqual(r.positions.map((c) => c.key), ['1', '2']);
  assert.deepEqual(r.categories.map((c) => c.key), ['movies', 'sports']);
  assert.deepEqual(r.losses.map((l) => [l.dimension, l.value, l.arm, l.against]), [['band', '0.30-0.40', 'b', 'a'], ['category', 'sports', 'b', 'a']]);
  const all = await clickReport(dir, { bandWidth: 0.1, minImpressions: 100 });
  assert.equal(all.totals.impressions, 401, 'without a range, the October impression counts');
  const few = await clickReport(dir, { since: '2026-11-01', bandWidth: 0.1, minImpressions: 1000 });
  assert.deepEqual(few.losses, [], 'cells under minImpressions are never flagged');
  const text = formatClickReport(r);
  assert.match(text, /LOSS: arm b loses to a in band 0\.30-0\.40: CTR 5\.00% vs 20\.50%/);
  const html = renderClicksPage(r);
  assert.match(html, /<span class="flag">b<\/span>/);
  assert.ok(!/<script/i.test(html) && !/https?:\/\/(?!www\.w3\.org)/.test(html), 'self-contained');
  fs.rmSync(dir, { recursive: true, force: true });
});

test('scdv report clicks: table, --json, the chart page, and a bad date named', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-clicks-'));
  await writeLog(dir);
  const cfg = path.join(dir, 'config.json');
  fs.writeFileSync(cfg, JSON.stringify({ events: { dir } }));
  const cli = (/** @type {string[]} */ args) => spawnSync(process.execPath, [path.join(REPO_ROOT, 'pipeline', 'cli.js'), 'report', 'clicks', '--config', cfg, ...args], { encoding: 'utf8' });
  const json = cli(['--since', '2026-11-01', '--json']);
  assert.equal(json.status, 0, json.stderr);
  assert.equal(JSON.parse(json.stdout).totals.impressions, 400);
  assert.ok(fs.existsSync(path.join(dir, 'clicks-report.html')));
  const table = cli([]);
  assert.match(table.stdout, /^similarity band\s+impressions\s+clicks\s+CTR\s+95% interval$/m);
  const bad = cli(['--since', '1 Nov']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--since must be an ISO 8601 date/);
  fs.rmSync(dir, { recursive: true, force: true });
});
