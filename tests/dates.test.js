// pipeline/dates.js: days and times that do not exist are refused, where Date.parse rolls them over; the corpus
// reader and the store use it (the server's routes are covered in tests/server/hardening.test.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDate } from '../pipeline/dates.js';
import { parseDocument } from '../pipeline/corpus/document.js';
import { normalizeSearchOptions, prepareDoc } from '../pipeline/store/validate.js';

test('parseDate: RFC 3339 dates and date-times, computed exactly; impossible ones are NaN', () => {
  const iso = (/** @type {string} */ s) => new Date(parseDate(s)).toISOString();
  assert.equal(iso('2012-02-29'), '2012-02-29T00:00:00.000Z');
  assert.equal(iso('2012-09-01T10:00:00+09:00'), '2012-09-01T01:00:00.000Z');
  assert.equal(iso('2012-09-01T10:00:00+0900'), '2012-09-01T01:00:00.000Z');
  assert.equal(iso('2012-09-01T10:00:00+09'), '2012-09-01T01:00:00.000Z');
  assert.equal(iso('2012-09-01t10:00:00.5z'), '2012-09-01T10:00:00.500Z');
  assert.equal(iso('2016-12-31T23:59:60Z'), '2017-01-01T00:00:00.000Z', 'a leap second is the next second');
  assert.equal(iso('0099-03-01'), '0099-03-01T00:00:00.000Z', 'years below 100 as written');
  for (const s of ['2010-02-30', '2011-02-29', '2010-13-01', '2010-00-10', '2010-04-31', '2010-02-01T24:00:00Z',
    '2010-02-01T10:60:00Z', '2010-02-01T10:00:00+24:00', '2010/02/30', '2010/02/30 10:00', '2012-09-01T25:00', '', 'yesterday']) {
    assert.ok(Number.isNaN(parseDate(s)), s);
  }
  // Other spellings Date.parse takes are kept (corpus files in the wild), once their day is checked.
  assert.equal(parseDate('2012/09/01 10:00'), Date.parse('2012/09/01 10:00'));
});

test('corpus reader and store refuse a day that does not exist instead of rolling it over', () => {
  const line = (/** @type {object} */ o) => parseDocument(Buffer.from(JSON.stringify({ id: 'a', body: 'x', ...o })), 7);
  const r = line({ published_at: '2010-02-30' });
  assert.ok('error' in r && r.error.code === 'INVALID_FIELD' && /published_at/.test(r.error.reason), JSON.stringify(r));
  const ok = line({ date: '2012-09-01T10:00:00+0900' });
  assert.ok('doc' in ok && ok.doc.published_at === '2012-09-01T01:00:00.000Z');

  const vec = { indices: [0], values: [1] };
  assert.throws(() => prepareDoc({ id: 'a', vector: vec, meta: { published_at: '2010-02-30' } }, 4), { code: 'SCDV_STORE_DOC_INVALID' });
  assert.equal(prepareDoc({ id: 'a', vector: vec, meta: { published_at: '2010-03-02' } }, 4).time, Date.UTC(2010, 2, 2));
  const defaults = { budget: 1, candidates: 30, minPostings: 0 };
  assert.throws(() => normalizeSearchOptions({ since: '2010-02-30' }, defaults), { code: 'SCDV_STORE_QUERY_INVALID' });
  assert.equal(normalizeSearchOptions({ until: '2010-02-28' }, defaults).until, Date.UTC(2010, 1, 28));
});
