// Segments of format 3 (12-bit forward values, LEB128 index gaps, u8/u16 posting gaps; written before format 4)
// on users' disks: they open and search as they are, with the scores of their 12-bit values, and a merge rewrites
// them as format 4 (11-bit values, nibble index gaps, patched posting gaps). The fixture
// (tests/store/fixtures/format3) was made by its make.js with the format-3 store of main at 1df8414.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { storedValuesFormat3 } from './helpers.js';
import { checkOldFormatFixture } from './old-format.js';

test('a format-3 segment opens, returns its 12-bit values and scores with them; a merge rewrites it as format 4 (11-bit codes of those values)', async () => {
  await checkOldFormatFixture({
    version: 3,
    storedAsWritten: storedValuesFormat3,
    inspect: (c, segmentInfo) => {
      const layouts = segmentInfo(c.stats().segmentDetails[0].path).postingsByGapLayout;
      assert.ok(layouts['8'] > 0 && layouts['16'] > 0, `u8 and u16 gap blocks in the fixture: ${JSON.stringify(layouts)}`);
    },
  });
});
