// The reader-event log: acknowledged events survive SIGKILL of the writer, torn lines are skipped and counted,
// retention removes the oldest segments by size and age, a full backlog is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { EventLog, applyRetention, listSegments, readEvents } from '../../pipeline/events/log.js';
import { DEFAULT_CONFIG } from '../../pipeline/config.js';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-events-'));

for (const fsync of ['always', 'never']) {
  test(`every acknowledged event is stored after SIGKILL of the writer (fsync ${fsync})`, async () => {
    const dir = tmp();
    const child = spawn(process.execPath, [path.join(import.meta.dirname, 'log-child.js'), dir, fsync], { stdio: ['ignore', 'pipe', 'inherit'] });
    /** @type {Set<string>} */
    const acked = new Set();
    let buf = '';
    await new Promise((resolve) => {
      child.stdout.on('data', (d) => {
        buf += d;
        const lines = buf.split('\n');
        buf = lines.pop() ?? '';
        for (const l of lines) for (const id of l.split(',')) acked.add(id);
        if (acked.size >= 20_000 && !child.killed) { child.kill('SIGKILL'); }
      });
      child.on('exit', resolve);
    });
    /** @type {Set<string>} */
    const stored = new Set();
    const summary = await readEvents(dir, (ev) => { stored.add(ev.id); });
    const lost = [...acked].filter((id) => !stored.has(id));
    assert.ok(acked.size >= 20_000, `only ${acked.size} acknowledged`);
    assert.deepEqual(lost.slice(0, 5), [], `${lost.length} acknowledged events lost`);
    assert.ok(summary.segments > 1, 'segments rotate at segmentBytes');
    fs.rmSync(dir, { recursive: true, force: true });
  });
}

test('a torn last line is skipped and counted; the next writer starts a new segment', async () => {
  const dir = tmp();
  const log = new EventLog({ ...DEFAULT_CONFIG.events, dir });
  await log.append([{ type: 'click', id: 'a', page_id: 'p', clicked_id: 'x' }]);
  await log.close();
  const [seg] = listSegments(dir);
  fs.appendFileSync(seg.file, '{"type":"click","id":"b","pa');
  const log2 = new EventLog({ ...DEFAULT_CONFIG.events, dir });
  await log2.append([{ type: 'click', id: 'c', page_id: 'p', clicked_id: 'x' }]);
  await log2.close();
  /** @type {string[]} */
  const ids = [];
  const summary = await readEvents(dir, (ev) => { ids.push(ev.id); });
  assert.deepEqual(ids.sort(), ['a', 'c']);
  assert.equal(summary.torn, 1);
  assert.equal(listSegments(dir).length, 2);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a segment deleted under the writer (another process\'s retention) is replaced before the next write', async () => {
  const dir = tmp();
  const log = new EventLog({ ...DEFAULT_CONFIG.events, dir });
  await log.append([{ type: 'click', id: 'a', page_id: 'p', clicked_id: 'x' }]);
  fs.unlinkSync(listSegments(dir)[0].file);
  await log.append([{ type: 'click', id: 'b', page_id: 'p', clicked_id: 'x' }]);
  await log.close();
  /** @type {string[]} */
  const ids = [];
  await readEvents(dir, (ev) => { ids.push(ev.id); });
  assert.deepEqual(ids, ['b'], 'the acknowledged event after the deletion is in the folder');
  fs.rmSync(dir, { recursive: true, force: true });
});

test('retention deletes the oldest segments past maxBytes and maxAgeDays, never the one being written', async () => {
  const dir = tmp();
  const log = new EventLog({ ...DEFAULT_CONFIG.events, dir, segmentBytes: 1000, maxBytes: 0, maxAgeDays: 0 });
  for (let i = 0; i < 20; i++) await log.append([{ type: 'click', id: String(i), page_id: 'p'.repeat(300), clicked_id: 'x' }]);
  await log.close();
  const before = listSegments(dir);
  assert.ok(before.length >= 5, `${before.length} segments`);
  const total = before.reduce((n, s) => n + s.size, 0);
  const deleted = applyRetention(dir, { maxBytes: Math.floor(total / 2), maxAgeDays: 0 });
  const after = listSegments(dir);
  assert.ok(after.reduce((n, s) => n + s.size, 0) <= total / 2);
  assert.deepEqual(deleted, before.slice(0, deleted.length).map((s) => s.name), 'oldest first');
  // By age: every segment is "older" than 1 day at a clock 2 days ahead, except the one kept.
  const keep = after[after.length - 1].file;
  applyRetention(dir, { maxBytes: 0, maxAgeDays: 1 }, keep, Date.now() + 2 * 86_400_000);
  assert.deepEqual(listSegments(dir).map((s) => s.file), [keep]);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a backlog over maxPendingBytes is refused with SCDV_EVENTS_BACKLOG, nothing of it acknowledged', async () => {
  const dir = tmp();
  const log = new EventLog({ ...DEFAULT_CONFIG.events, dir, maxPendingBytes: 1000 });
  const first = log.append([{ type: 'click', id: 'x'.repeat(900), page_id: 'p', clicked_id: 'x' }]);
  const second = log.append([{ type: 'click', id: 'y'.repeat(1200), page_id: 'p', clicked_id: 'x' }]);
  await assert.rejects(log.append([{ type: 'click', id: 'z', page_id: 'p', clicked_id: 'x' }]), { code: 'SCDV_EVENTS_BACKLOG' });
  await first;
  await second;
  await log.close();
  await assert.rejects(log.append([{ type: 'click' }]), { code: 'SCDV_EVENT_LOG_CLOSED' });
  fs.rmSync(dir, { recursive: true, force: true });
});

test('lines are framed by LF alone: a CR in an acknowledged line never splits it, and reads back as the same event', async () => {
  const dir = tmp();
  const log = new EventLog({ ...DEFAULT_CONFIG.events, dir });
  // JSON allows CR and LF as whitespace between tokens: the writer drops them, the file holds one line per event.
  const click = '{"type":"click",\r"page_id":"p",\r\n"clicked_id":"x"}';
  const impression = '{"type":"impression","request_id":"r","items":[{"id":"a","position":1,"score":0.5},\r{"id":"b","position":2,"score":0.4}\r]}';
  await log.appendLines([click, impression]);
  await log.close();
  const [seg] = listSegments(dir);
  const text = fs.readFileSync(seg.file, 'utf8');
  assert.ok(!text.includes('\r'), JSON.stringify(text));
  assert.equal(text.split('\n').length, 3);
  // A segment written with CRs (by hand, or by an older writer) and CRLF line ends reads the same.
  const lone = '{"type":"click",\r"page_id":"p",\r"clicked_id":"z"}';
  fs.appendFileSync(seg.file, `${lone}\r\n{"type":"click","page_id":"q","clicked_id":"y"}\r\n`);
  /** @type {Record<string, any>[]} */
  const events = [];
  const summary = await readEvents(dir, (ev) => { events.push(ev); });
  assert.equal(summary.torn, 0);
  assert.deepEqual(events, [JSON.parse(click), JSON.parse(impression), JSON.parse(lone), { type: 'click', page_id: 'q', clicked_id: 'y' }]);
  assert.equal(events[1].items.length, 2, 'no phantom objects');
  fs.rmSync(dir, { recursive: true, force: true });
});
