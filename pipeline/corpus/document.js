// One corpus line -> a validated document, or a rejection that names the line, the field and the reason.
import { isUtf8 } from 'node:buffer';
import { ISSUE } from '../line-issues.js';
import { parseDate } from '../dates.js';

/**
 * @typedef {object} Document
 * @property {string} id
 * @property {string} title
 * @property {string} body
 * @property {string} [url]
 * @property {string} [published_at] ISO 8601
 * @property {string} [site]
 * @property {string} [category]
 * @property {AdFields} [ad] an ad's fields, from the line's advertiser, landing_url, keywords, deal_id, exclude_sites and
 *   exclude_categories
 */

/**
 * What an ad server needs of an ad besides its text (stored as metadata, returned in match answers as `ad`).
 * @typedef {object} AdFields
 * @property {string} [advertiser]
 * @property {string} [landing_url] http(s) URL the ad leads to
 * @property {string[]} [keywords] the advertiser's keywords (returned; matching is by the ad's text)
 * @property {string} [deal_id] the deal it is sold under (private marketplace), when any
 * @property {string[]} [exclude_sites] sites (or their subdomains) whose pages must not show the ad
 * @property {string[]} [exclude_categories] categories whose pages must not show the ad
 */

/** The ad fields of a line, and their limits. */
export const AD_LIMITS = Object.freeze({
  advertiser: 200, landing_url: 2048, deal_id: 200, keyword: 100, keywords: 50,
  /** entries of exclude_sites and of exclude_categories, and the characters of each */ exclusions: 100, exclusion: 200,
});
/** An ad's lists of the pages it must not be shown on (brand safety, pipeline/match/safety.js). */
export const AD_EXCLUSIONS = /** @type {const} */ (['exclude_sites', 'exclude_categories']);
/** An ad's landing URL: http(s), a host, no spaces or control characters (the API's schema uses the same pattern). */
export const LANDING_URL_PATTERN = '^https?://[^\\u0000-\\u0020/?#]+[^\\u0000-\\u0020]*$';
const LANDING_URL = new RegExp(LANDING_URL_PATTERN, 'u');
/** Characters as JSON Schema's maxLength counts them (code points, not UTF-16 units). @param {string} s */
const codePoints = (s) => { let n = 0; for (const _ of s) n++; return n; };

/** @typedef {{line: number, code: import('../line-issues.js').LineIssueCode, reason: string, id?: string}} LineIssue one line's issue (codes: pipeline/line-issues.js) */

export const MAX_ID_LENGTH = 512;
/**
 * A UTF-16 surrogate without its pair: such a string is not Unicode text and cannot be stored as UTF-8 (it would
 * become U+FFFD, so "t\ud800" and "t\udbff" would be one document).
 */
export const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Why a string cannot be a document id, or undefined when it can. The one rule for ids, wherever they come from.
 * @param {string} id
 */
export function idProblem(id) {
  if (id.length > MAX_ID_LENGTH) return `is longer than ${MAX_ID_LENGTH} characters`;
  if (/[\t\n\r]/.test(id)) return 'contains a tab or line break';
  const lone = LONE_SURROGATE.exec(id);
  if (lone) return `contains a lone surrogate (\\u${lone[0].charCodeAt(0).toString(16)} at ${lone.index}): not well-formed Unicode, it cannot be stored as UTF-8`;
  return undefined;
}
/** A line's optional text fields (each a string when present). */
export const OPTIONAL_TEXT_FIELDS = Object.freeze(/** @type {const} */ (['url', 'site', 'category']));
/**
 * The metadata a document keeps besides its id and body, in the order it is stored (DocumentMeta,
 * pipeline/embed/meta.js): the title, the optional text fields, the publication date (ISO 8601), an ad's fields.
 * The one list of them for code that enumerates them.
 */
export const META_FIELDS = Object.freeze(/** @type {const} */ (['title', ...OPTIONAL_TEXT_FIELDS, 'published_at', 'ad']));
/**
 * The same fields in the order a search result carries them after `id` and `score` (the API's answers and precomputed
 * entries: resultItem in pipeline/match/, the response schema in server/schemas.js; the native store's fused answers
 * write this order too, `kFields` in pipeline/store/native/src/result_fields.cc).
 */
export const RESULT_FIELDS = Object.freeze(/** @type {const} */ (['title', 'url', 'published_at', 'category', 'site', 'ad']));
/** An ad's single-text fields; with `keywords` and AD_EXCLUSIONS, AD_FIELDS: the line's fields that make `ad`. */
const AD_TEXT_FIELDS = /** @type {const} */ (['advertiser', 'landing_url', 'deal_id']);
/** Every field of a corpus line that goes into a document's `ad` (AdFields), in the order it is stored. */
export const AD_FIELDS = Object.freeze(/** @type {const} */ ([...AD_TEXT_FIELDS, 'keywords', ...AD_EXCLUSIONS]));
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;

/**
 * Where and how a line is not JSON, from JSON.parse's message without the part of the line it quotes (V8 quotes
 * its start): reasons reach job statuses and reports, and a corpus line is no business of theirs.
 * @param {string} message
 */
export function jsonProblem(message) {
  const at = /at position (\d+)/.exec(message);
  const kind = message.replace(/^Unexpected token '.*?'/s, 'Unexpected token').replace(/, ".*$/s, '')
    .replace(/\s*(?:in|after) JSON\b.*$/s, '').replace(/\s*at position \d+.*$/s, '');
  const safe = /^[A-Za-z ,':{}[\]-]{1,80}$/.test(kind) ? kind.toLowerCase() : 'not valid JSON';
  return `${at ? ` at character ${Number(at[1]) + 1}` : ''}: ${safe}`;
}

/**
 * Parse and validate one line.
 * @param {Buffer} buf the line without its newline
 * @param {number} line 1-based line number
 * @returns {{doc: Document, warnings: LineIssue[]} | {error: LineIssue} | {blank: true}}
 */
export function parseDocument(buf, line) {
  if (!isUtf8(buf)) return { error: { line, code: ISSUE.INVALID_UTF8, reason: 'line is not valid UTF-8' } };
  const text = buf.toString('utf8');
  if (text.trim() === '') return { blank: true };
  let raw;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { error: { line, code: ISSUE.INVALID_JSON, reason: `invalid JSON${jsonProblem(/** @type {Error} */ (err).message)}` } };
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { error: { line, code: ISSUE.NOT_AN_OBJECT, reason: 'a line must hold one JSON object' } };
  }
  const fail = (/** @type {import('../line-issues.js').LineIssueCode} */ code, /** @type {string} */ reason) =>
    ({ error: { line, code, reason, ...(typeof raw.id === 'string' ? { id: raw.id } : {}) } });

  let id = raw.id;
  if (id === undefined || id === null || id === '') return fail(ISSUE.MISSING_FIELD, 'field "id" is missing or empty');
  if (Number.isInteger(id)) id = String(id);
  if (typeof id !== 'string') return fail(ISSUE.INVALID_FIELD, `field "id" must be a string, got ${typeof id}`);
  const problem = idProblem(id);
  if (problem) return fail(ISSUE.INVALID_FIELD, `field "id" ${problem}`);

  if (raw.body === undefined || raw.body === null) return fail(ISSUE.MISSING_FIELD, 'field "body" is missing');
  if (typeof raw.body !== 'string') return fail(ISSUE.INVALID_FIELD, `field "body" must be a string, got ${typeof raw.body}`);
  if (raw.body.trim() === '') return fail(ISSUE.EMPTY_BODY, 'field "body" is empty');
  if (raw.title !== undefined && raw.title !== null && typeof raw.title !== 'string') {
    return fail(ISSUE.INVALID_FIELD, `field "title" must be a string, got ${typeof raw.title}`);
  }
  /** @type {Document} */
  const doc = { id, title: raw.title ?? '', body: raw.body };
  for (const f of OPTIONAL_TEXT_FIELDS) {
    if (raw[f] === undefined || raw[f] === null) continue;
    if (typeof raw[f] !== 'string') return fail(ISSUE.INVALID_FIELD, `field "${f}" must be a string, got ${typeof raw[f]}`);
    doc[f] = raw[f];
  }
  const ad = adFields(raw);
  if (typeof ad === 'string') return fail(ISSUE.INVALID_FIELD, ad);
  if (ad) doc.ad = ad;
  // livedoor and many crawls call it `date`; both are accepted, `published_at` wins.
  const published = raw.published_at ?? raw.date;
  if (published !== undefined && published !== null) {
    const field = raw.published_at != null ? 'published_at' : 'date';
    const ms = typeof published === 'string' || typeof published === 'number' ? parseDate(String(published)) : NaN;
    if (Number.isNaN(ms)) return fail(ISSUE.INVALID_FIELD, `field "${field}" is not a date: ${JSON.stringify(published)}`);
    doc.published_at = new Date(ms).toISOString();
  }
  /** @type {LineIssue[]} */
  const warnings = [];
  if (CONTROL.test(doc.body) || CONTROL.test(doc.title)) {
    warnings.push({ line, id, code: ISSUE.CONTROL_CHARACTERS, reason: 'control characters replaced by spaces' });
  }
  return { doc, warnings };
}

/**
 * The text a document is tokenised from.
 * @param {Document} doc
 */
export function documentText(doc) {
  return doc.title ? `${doc.title}\n${doc.body}` : doc.body;
}

/**
 * The ad fields of a parsed line: undefined without any, the reason when one is invalid.
 * @param {Record<string, any>} raw
 * @returns {AdFields | string | undefined}
 */
function adFields(raw) {
  /** @type {AdFields} */
  const ad = {};
  for (const f of AD_TEXT_FIELDS) {
    const v = raw[f];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string' || v === '' || codePoints(v) > AD_LIMITS[f]) return `field "${f}" must be a string of 1 to ${AD_LIMITS[f]} characters`;
    ad[f] = v;
  }
  if (ad.landing_url !== undefined && !LANDING_URL.test(ad.landing_url)) return `field "landing_url" must be an http or https URL, got ${JSON.stringify(ad.landing_url.slice(0, 100))}`;
  const k = raw.keywords;
  if (k !== undefined && k !== null) {
    if (!Array.isArray(k) || k.length > AD_LIMITS.keywords || !k.every((w) => typeof w === 'string' && w !== '' && codePoints(w) <= AD_LIMITS.keyword)) {
      return `field "keywords" must be a list of at most ${AD_LIMITS.keywords} strings of 1 to ${AD_LIMITS.keyword} characters`;
    }
    ad.keywords = k;
  }
  for (const f of AD_EXCLUSIONS) {
    const v = raw[f];
    if (v === undefined || v === null) continue;
    if (!Array.isArray(v) || v.length > AD_LIMITS.exclusions || !v.every((w) => typeof w === 'string' && w !== '' && codePoints(w) <= AD_LIMITS.exclusion)) {
      return `field "${f}" must be a list of at most ${AD_LIMITS.exclusions} strings of 1 to ${AD_LIMITS.exclusion} characters`;
    }
    ad[f] = v;
  }
  return Object.keys(ad).length ? ad : undefined;
}
