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
  for await (const l of readLines(file, { maxLineBytes: opts.maxDocumentBytes })) {
    if ('tooLongBytes' in l) { problems.push(`line ${l.lineNo}: ${l.tooLongBytes} bytes, over corpus.maxDocumentBytes = ${opts.maxDocumentBytes}`); continue; }
    const parsed = parseDocument(l.buf, l.lineNo);
    if ('blank' in parsed) continue;
    if ('error' in parsed) { problems.push(`line ${l.lineNo}: ${parsed.error.reason}`); continue; }
    const { doc } = parsed;
    const raw = JSON.parse(l.buf.toString('utf8'));
    const label = raw[labelField];
    if (label === undefined || label === null || label === '') { problems.push(`line ${l.lineNo}: field "${labelField}" (the label) is missing or empty`); continue; }
    if (typeof label !== 'string' && typeof label !== 'number') {
      problems.push(`line ${l.lineNo}: field "${labelField}" (the label) must be a string or a number, got ${Array.isArray(label) ? 'an array' : typeof label}`);
      continue;
    }
    const first = seen.get(doc.id);
    if (first !== undefined) { problems.push(`line ${l.lineNo}: duplicate id "${doc.id}" (first on line ${first})`); continue; }
    seen.set(doc.id, l.lineNo);
    docs.push({ id: doc.id, title: doc.title, body: doc.body, label: String(label), line: l.lineNo });
  }
  if (problems.length) {
    throw errors.EVAL_CORPUS_INVALID(file, `${problems.length} bad line(s), every line must be a document with a label: ` +
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
