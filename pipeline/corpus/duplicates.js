// Repeated document ids in a corpus, found in one streaming pass, so that a stage whose shards run in parallel
// can keep the first occurrence of an id (as tokenise does when it merges its shards) and report the others.
import { readLines } from './lines.js';
import { parseDocument } from './document.js';
import { ISSUE } from '../line-issues.js';

/**
 * Lines holding a valid document whose id an earlier valid document already had.
 * @param {string} file
 * @param {number} maxLineBytes lines over it are rejected anyway and are not looked at
 * @returns {Promise<Map<number, {id: string, firstLine: number}>>} line -> its id and the line of its first occurrence
 */
export async function findDuplicateIds(file, maxLineBytes) {
  /** @type {Map<string, number>} */
  const first = new Map();
  /** @type {Map<number, {id: string, firstLine: number}>} */
  const dups = new Map();
  for await (const l of readLines(file, { maxLineBytes })) {
    if ('tooLongBytes' in l) continue;
    const parsed = parseDocument(l.buf, l.lineNo);
    if (!('doc' in parsed)) continue;
    const seen = first.get(parsed.doc.id);
    if (seen === undefined) first.set(parsed.doc.id, l.lineNo);
    else dups.set(l.lineNo, { id: parsed.doc.id, firstLine: seen });
  }
  return dups;
}

/**
 * The duplicates that fall in a shard, as job data.
 * @param {Map<number, {id: string, firstLine: number}>} dups
 * @param {{firstLine: number, lines: number}} shard
 * @returns {[number, number][]} [line, first line] pairs
 */
export function duplicatesIn(dups, shard) {
  /** @type {[number, number][]} */
  const out = [];
  for (const [line, d] of dups) if (line >= shard.firstLine && line < shard.firstLine + shard.lines) out.push([line, d.firstLine]);
  return out;
}

/**
 * The rejection of a duplicate line, worded as tokenise words it.
 * @param {number} line
 * @param {string} id
 * @param {number} firstLine
 */
export const duplicateIssue = (line, id, firstLine) => ({ line, id, code: ISSUE.DUPLICATE_ID, reason: `duplicate id "${id}" (first on line ${firstLine})` });
