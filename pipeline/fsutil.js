// File helpers shared by stages.
import fs from 'node:fs';

/**
 * Write `content` to `file` atomically (temp file in the same folder, then rename), so readers see the
 * old file or the whole new one, never a part.
 * @param {string} file
 * @param {string} content
 */
export function writeFileAtomic(file, content) {
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    fs.writeFileSync(tmp, content);
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true }); // e.g. a disk full mid-write leaves no partial file behind
    throw err;
  }
}
