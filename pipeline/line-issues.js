// The catalogue of per-line issue codes: what users read in a run's rejected.jsonl / warnings.jsonl, in `scdv index`
// output and in a bulk job's status (`issues`). They are not errors (pipeline/errors.js): one bad line never stops
// a run; it is reported with its line number, its code and a reason naming the field or limit.
//
// outcome: 'rejected' — the line is not used; 'warning' — the document is kept with a remark; 'empty' — the
// document is valid but has no vector (`scdv index`, bulk jobs), so it is not indexed.

/**
 * @typedef {object} LineIssueKind
 * @property {'rejected'|'warning'|'empty'} outcome
 * @property {string} meaning
 * @property {string} [requestError] the catalogue error (pipeline/errors.js) a single request gets for the same problem
 */

export const LINE_ISSUES = Object.freeze({
  INVALID_UTF8: { outcome: 'rejected', meaning: 'the line is not valid UTF-8' },
  INVALID_JSON: { outcome: 'rejected', meaning: 'the line is not valid JSON (the reason quotes the parser)' },
  NOT_AN_OBJECT: { outcome: 'rejected', meaning: 'the line holds JSON that is not an object' },
  MISSING_FIELD: { outcome: 'rejected', meaning: 'a required field (id, body) is missing or empty' },
  INVALID_FIELD: { outcome: 'rejected', meaning: 'a field has the wrong type or an invalid value (the reason names it)' },
  EMPTY_BODY: { outcome: 'rejected', meaning: 'the body is blank' },
  TOO_LARGE: { outcome: 'rejected', meaning: 'the line is longer than corpus.maxDocumentBytes' },
  DUPLICATE_ID: { outcome: 'rejected', meaning: 'an earlier line has the same id (the first occurrence is kept)' },
  CONTROL_CHARACTERS: { outcome: 'warning', meaning: 'control characters in the text were replaced by spaces' },
  NOT_JAPANESE: { outcome: 'warning', meaning: 'the text is mostly not Japanese (with no token kept, the document is empty)' },
  NO_TOKENS: { outcome: 'warning', meaning: 'no token survived the tokenizer filters: the document is kept but adds nothing to training' },
  NO_KNOWN_WORDS: {
    outcome: 'empty', meaning: 'none of the document\'s words is in the model, so it has no vector and is not indexed',
    requestError: 'SCDV_NO_USABLE_WORDS',
  },
});

/** @typedef {keyof typeof LINE_ISSUES} LineIssueCode */

/**
 * The codes by name, so that a misspelt code is a type error: ISSUE.TOO_LARGE === 'TOO_LARGE'.
 * @type {{readonly [K in LineIssueCode]: K}}
 */
export const ISSUE = /** @type {any} */ (Object.freeze(Object.fromEntries(Object.keys(LINE_ISSUES).map((k) => [k, k]))));
