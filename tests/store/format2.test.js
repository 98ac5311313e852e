// Segments of format 2 (float16 forward values, written before format 3's 12-bit codes) on users' disks: they
// open and search as they are, with the scores of their float16 values, and a merge rewrites them as format 4.
// The fixture (tests/store/fixtures/format2) was made by its make.js with the format-2 store.
import { test } from 'node:test';
import { storedValuesFormat2 } from './helpers.js';
import { checkOldFormatFixture } from './old-format.js';

test('a format-2 segment opens, returns its float16 values and scores with them; a merge rewrites it as format 4 (11-bit codes of those values)', async () => {
  await checkOldFormatFixture({ version: 2, storedAsWritten: storedValuesFormat2 });
});
