// Writing documents now, in this process (searchable when the request answers): the one write path of
// PUT …/documents/:id and of the synchronous bulk (documents:bulk?sync=true). Lines are read and checked by the
// corpus reader's functions and store rows are made by storeRows, as the queued bulk's index workers do.
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseDocument } from '../pipeline/corpus/document.js';
import { readLines } from '../pipeline/corpus/lines.js';
import { duplicateIssue } from '../pipeline/corpus/duplicates.js';
import { storeRows } from '../pipeline/embed/meta.js';
import { invalidate } from '../pipeline/match/index.js';
import { expandSettingsOf, ownCollectionOf, writeExpanded } from '../pipeline/match/expand.js';
import { markExpansionsStale, recordExpansion, sourceCollection } from '../pipeline/serving/ad-expansion.js';
import { ISSUE, LINE_ISSUES } from '../pipeline/line-issues.js';
import { errors } from '../pipeline/errors.js';
import { elasticsearchBulkError } from './bulk-uploads.js';

/**
 * Embed documents with the serving model, in `collection`'s layout, and upsert those that have a vector into it
 * (created with its first document, which records its layout), then forget cached and precomputed results that may list them.
 * @param {import('./app.js').AppContext} ctx
 * @param {import('./model-state.js').ServingModel} servingModel
 * @param {string} collection
 * @param {import('../pipeline/corpus/document.js').Document[]} docs
 * @returns {Promise<{vectors: import('../pipeline/embed/vectorizer.js').Embedding[], empty: Set<number>}>} empty: positions without a vector (not written)
 */
export async function writeDocuments(ctx, servingModel, collection, docs) {
  // The collection's layout (recorded; else a new collection's: the ads' for an ad collection, adEmbed).
  const { embed, recorded } = await servingModel.collectionEmbed(collection, ctx.config.server.modelPollMs);
  const coll = await servingModel.writableCollection(collection, servingModel.embedderOf(embed).width);
  const t0 = process.hrtime.bigint();
  // Off the event loop, on threads that yield to the searches (server.writeEmbedNice).
  const vectors = await servingModel.embedWritten(docs.map((d) => ({ title: d.title, body: d.body })), embed);
  const perText = Number(process.hrtime.bigint() - t0) / 1e9 / Math.max(1, docs.length);
  for (let i = 0; i < docs.length; i++) ctx.metrics.embedDuration.observe(perText);
  const { rows, empty } = storeRows(docs, vectors);
  if (rows.length) {
    // An expanded ad collection (adEmbed.expand): the own vectors are kept apart, the expanded ones written.
    const expand = expandSettingsOf(ctx.config.adEmbed, collection);
    if (expand) {
      const own = await servingModel.writableCollection(ownCollectionOf(collection), coll.width);
      const expanded = await writeExpanded({ own, target: coll, source: await sourceCollection(servingModel.store, expand.from) }, rows, expand);
      if (!servingModel.records[collection]?.expansion) await recordExpansion(servingModel.store, collection, expand, expanded);
    } else await coll.upsert(rows);
    // The ads expanded from this collection no longer reflect it: marked stale (re-expanded by `scdv precompute`).
    // Once the served records say so, a write reads no record (on OpenSearch that would be a request per write).
    if (Object.values(servingModel.records).some((e) => e?.expansion?.from === collection && !e.expansion.stale)) await markExpansionsStale(servingModel.store, collection);
    if (!recorded) await servingModel.recordWrittenLayout(collection, embed);
    ctx.relatedCache.forget(`${servingModel.name}\0${collection}`);
    if (ctx.hub) await invalidate(ctx.hub.redis, ctx.config.queue.prefix, servingModel.name, collection, rows.map((r) => r.id));
  }
  return { vectors, empty: new Set(empty) };
}

/**
 * A synchronous bulk body, in memory: at most `limit` bytes (server.bodyLimit), else a 413 that points to the
 * queued bulk.
 * @param {NodeJS.ReadableStream} body
 * @param {number} limit
 * @param {number} declared the content-length header (NaN when absent)
 */
export async function readSyncBody(body, limit, declared) {
  const tooLarge = () => errors.BULK_SYNC_TOO_LARGE(`${limit} bytes`, 'bodyLimit', declared > limit ? `${declared} bytes` : 'more');
  if (declared > limit) throw tooLarge();
  /** @type {Buffer[]} */
  const chunks = [];
  let bytes = 0;
  await pipeline(body, new Writable({
    write(chunk, _enc, cb) {
      bytes += chunk.length;
      if (bytes > limit) { cb(tooLarge()); return; }
      chunks.push(chunk);
      cb();
    },
  }));
  return Buffer.concat(chunks, bytes);
}

/**
 * @typedef {object} BulkItem one result per non-blank line of a synchronous bulk, in input order
 * @property {number} index 0-based position among the items
 * @property {number} line 1-based line number in the body
 * @property {string} [id]
 * @property {number} status 200 written; 400 the line was rejected; 422 no word of it is in the model
 * @property {string} [result] "written"
 * @property {number} [known_words]
 * @property {number} [unknown_words]
 * @property {number} [nnz]
 * @property {{code: string, message: string}[]} [warnings]
 * @property {{code: string, message: string, line: number, field?: string}} [error] code: pipeline/line-issues.js
 */

/**
 * A field a line issue's reason names (`field "body" is missing`).
 * @param {string} reason
 */
const fieldOf = (reason) => /field "([^"]+)"/.exec(reason)?.[1];

/**
 * @param {import('../pipeline/corpus/document.js').LineIssue} issue
 * @returns {BulkItem['error']}
 */
function itemError(issue) {
  const field = fieldOf(issue.reason);
  return { code: issue.code, message: issue.reason, line: issue.line, ...(field ? { field } : {}) };
}

/**
 * Embed and write the documents of a JSON Lines body now, one result per non-blank line in input order; a bad line
 * fails alone. A store failure fails the request (nothing is reported written; native: nothing was, OpenSearch:
 * some may have been, and a retry rewrites them: every write is an upsert).
 * @param {import('./app.js').AppContext} ctx
 * @param {import('./model-state.js').ServingModel} servingModel
 * @param {string} collection
 * @param {Buffer} body
 * @returns {Promise<{errors: boolean, items: BulkItem[]}>}
 */
export async function syncBulk(ctx, servingModel, collection, body) {
  const { config } = ctx;
  const es = elasticsearchBulkError(body.subarray(0, 64 * 1024));
  if (es) throw es;
  const max = config.server.syncBulkMaxDocuments;
  const lines = [];
  for await (const l of readLines(body, { maxLineBytes: config.corpus.maxDocumentBytes })) {
    if ('buf' in l && l.buf.toString('utf8').trim() === '') continue;
    lines.push(l);
  }
  if (lines.length > max) throw errors.BULK_SYNC_TOO_LARGE(`${max} documents`, 'syncBulkMaxDocuments', `${lines.length}`);
  if (lines.length === 0) throw errors.BULK_SOURCE_INVALID('body', 'has no documents: send one JSON document per line');

  /** @type {BulkItem[]} */
  const items = [];
  /** @type {{item: BulkItem, doc: import('../pipeline/corpus/document.js').Document}[]} */
  const accepted = [];
  /** @type {Map<string, number>} id -> first line (the first occurrence wins, as in the queued bulk) */
  const seen = new Map();
  for (const l of lines) {
    /** @type {BulkItem} */
    const item = { index: items.length, line: l.lineNo, status: 400 };
    items.push(item);
    if ('tooLongBytes' in l) {
      item.error = itemError({ line: l.lineNo, code: ISSUE.TOO_LARGE, reason: `line of ${l.tooLongBytes} bytes exceeds corpus.maxDocumentBytes = ${config.corpus.maxDocumentBytes}` });
      continue;
    }
    const parsed = parseDocument(l.buf, l.lineNo);
    if ('blank' in parsed) continue; // not reached: blank lines were skipped above
    if ('error' in parsed) {
      if (parsed.error.id !== undefined) item.id = parsed.error.id;
      item.error = itemError(parsed.error);
      continue;
    }
    item.id = parsed.doc.id;
    const first = seen.get(parsed.doc.id);
    if (first !== undefined) { item.error = itemError(duplicateIssue(l.lineNo, parsed.doc.id, first)); continue; }
    seen.set(parsed.doc.id, l.lineNo);
    if (parsed.warnings.length) item.warnings = parsed.warnings.map((w) => ({ code: w.code, message: w.reason }));
    accepted.push({ item, doc: parsed.doc });
  }
  if (accepted.length) {
    const { vectors, empty } = await writeDocuments(ctx, servingModel, collection, accepted.map((a) => a.doc));
    accepted.forEach(({ item }, i) => {
      const v = vectors[i];
      if (empty.has(i)) {
        item.status = 422;
        item.error = { code: ISSUE.NO_KNOWN_WORDS, message: `none of its ${v.unknownWords} distinct words is in model ${servingModel.name} (${LINE_ISSUES.NO_KNOWN_WORDS.meaning})`, line: item.line };
      } else {
        Object.assign(item, { status: 200, result: 'written', known_words: v.knownWords, unknown_words: v.unknownWords, nnz: v.indices.length });
      }
    });
  }
  return { errors: items.some((i) => i.status !== 200), items };
}
