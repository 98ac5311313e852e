// The labelled corpus of `scdv eval`: every line must be a good document with a label, since a skipped line
// would silently change what is measured. Problems are collected and reported together, with line and field.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { readLines } from '../corpus/lines.js';
import { parseDocument } from '../corpus/document.js';
import { errors } from '../errors.js';

/**
 * @typedef {object} LabelledDocument
 * @property {string} id
 * @property {string} title
 * @property {string} body
 * @property {string} label
 * @property {number} line
 */

/**
 * @param {string} file
 * @param {string} labelField
 * @param {{maxDocumentBytes: number, minDocuments?: number}} opts
 * @returns {Promise<{docs: LabelledDocument[], sha256: string, labels: Record<string, number>}>}
 */
export async function readLabelledCorpus(file, labelField, opts) {
  if (!fs.existsSync(file)) throw errors.CORPUS_NOT_FOUND(file, 'no such file');
  const hash = crypto.createHash('sha256');
  hash.update(fs.readFileSync(file));
  /** @type {LabelledDocument[]} */
  const docs = [];
  /** @type {string[]} */
  const problems = [];
  /** @type {Map<string, number>} */
  const seen = new Map();
  /** Lines without the label, and the fields the lines have (named when the label is missing). */
  const missing = /** @type {number[]} */ ([]);
  const fields = /** @type {Map<string, number>} */ (new Map());
  let lines = 0;
  for await (const l of readLines(file, { maxLineBytes: opts.maxDocumentBytes })) {
    if ('tooLongBytes' in l) { problems.push(`line ${l.lineNo}: ${l.tooLongBytes} bytes, over corpus.maxDocumentBytes = ${opts.maxDocumentBytes}`); continue; }
    const parsed = parseDocument(l.buf, l.lineNo);
    if ('blank' in parsed) continue;
    if ('error' in parsed) { problems.push(`line ${l.lineNo}: ${parsed.error.reason}`); continue; }
    const { doc } = parsed;
    const raw = JSON.parse(l.buf.toString('utf8'));
    lines++;
    for (const key of Object.keys(raw)) fields.set(key, (fields.get(key) ?? 0) + 1);
    const label = raw[labelField];
    if (label === undefined || label === null || label === '') { missing.push(l.lineNo); continue; }
    if (typeof label !== 'string' && typeof label !== 'number') {
      problems.push(`line ${l.lineNo}: field "${labelField}" (the label) must be a string or a number, got ${Array.isArray(label) ? 'an array' : typeof label}`);
      continue;
    }
    const first = seen.get(doc.id);
    if (first !== undefined) { problems.push(`line ${l.lineNo}: duplicate id "${doc.id}" (first on line ${first})`); continue; }
    seen.set(doc.id, l.lineNo);
    docs.push({ id: doc.id, title: doc.title, body: doc.body, label: String(label), line: l.lineNo });
  }
  if (missing.length) {
    // One sentence for every line without the label (not one per line), naming the fields that do exist.
    const have = [...fields].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([k, n]) => (n === lines ? k : `${k} (${n} lines)`));
    problems.unshift(`field "${labelField}" (the label, --label-field) is missing or empty on ${missing.length} of ${lines} lines ` +
      `(line${missing.length > 1 ? 's' : ''} ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}); the lines have the fields ${have.join(', ')}`);
  }
  if (problems.length) {
    const bad = problems.length + (missing.length ? missing.length - 1 : 0);
    throw errors.EVAL_CORPUS_INVALID(file, `${bad} bad line(s), every line must be a document with a label: ` +
      `${problems.slice(0, 5).join('; ')}${problems.length > 5 ? '; …' : ''}`);
  }
  const min = opts.minDocuments ?? 2;
  if (docs.length < min) throw errors.EVAL_CORPUS_INVALID(file, `${docs.length} document(s); at least ${min} are needed`);
  /** @type {Record<string, number>} */
  const labels = {};
  for (const d of docs) labels[d.label] = (labels[d.label] ?? 0) + 1;
  if (Object.values(labels).every((n) => n < 2)) {
    throw errors.EVAL_CORPUS_INVALID(file, `no two documents share a value of field "${labelField}": nothing to retrieve`);
  }
  return { docs, sha256: hash.digest('hex'), labels };
}
