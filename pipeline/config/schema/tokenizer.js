// Schema of the sections tokenizer, corpus, workerProcesses and queue (conventions: ./section.js).
import { section } from './section.js';

const strings = { type: 'array', items: { type: 'string' } };

export const tokenizer = section('How texts become tokens (pipeline/tokenizer/).', {
  lang: {
    type: 'string', enum: ['ja', 'en'], default: 'ja',
    description: "'ja': MeCab with the dictionary below; 'en': a plain regex tokeniser for English text (lower case, an English stop list; pipeline/tokenizer/english.js), for checks against published English benchmarks (`--lang en`).",
  },
  dictionary: {
    type: 'string', default: 'default',
    description: "'default' (what setup built: neologd, else ipadic), 'neologd', 'ipadic', or a compiled dictionary folder.",
  },
  userDictionaries: { ...strings, default: [], description: 'Compiled user dictionaries (.dic), e.g. from `scdv dict compile`.' },
  keepPos: {
    ...strings, envFormat: 'json', default: ['名詞', '動詞,自立'],
    description: 'Feature prefixes of kept parts of speech; the longest matching prefix of keepPos ∪ dropPos decides.',
  },
  dropPos: {
    ...strings, envFormat: 'json', default: ['名詞,非自立', '名詞,数', '名詞,形容動詞語幹', '名詞,副詞可能', '名詞,代名詞', '名詞,接尾', '名詞,特殊'],
    description: 'Feature prefixes of dropped parts of speech.',
  },
  singleChar: {
    type: 'string', enum: ['none', 'hiragana', 'non-kanji', 'all'], default: 'non-kanji',
    description: 'Single-character tokens to drop: hiragana only, anything but kanji (default), all, or none.',
  },
  dropDigitsOnly: { type: 'boolean', default: true, description: 'Drop tokens of digits only.' },
  dropNumberCounters: {
    type: 'boolean', default: true,
    description: 'A number followed by one or two kanji/kana (6月, 33歳, 100万円): dates and counts, not topics.',
  },
  dropSymbolsOnly: { type: 'boolean', default: true, description: 'Drop tokens of symbols only.' },
  lowercase: { type: 'boolean', default: true, description: 'ASCII A-Z to a-z in tokens.' },
  maxTokenBytes: { type: 'integer', minimum: 1, default: 100, description: 'Tokens longer than this (UTF-8 bytes) are dropped.' },
  foldLongVowels: {
    type: 'boolean', default: false,
    description: 'Katakana-only tokens of 4+ characters drop a final ー: コンピューター and コンピュータ are one token.',
  },
  joinNouns: {
    type: 'boolean', default: false,
    description: 'Adjacent kept nouns also give their concatenation as one more token (新型 コロナ -> + 新型コロナ).',
  },
  stopwords: section('Stop words dropped from the tokens.', {
    families: {
      type: ['array', 'null'], items: { type: 'string' }, default: null,
      description: 'Families are the files dictionaries/stopwords/<family>.txt; null means all of them.',
    },
    extra: { ...strings, default: [], description: 'Further stop words of your own.' },
  }),
});

export const corpus = section('Reading a corpus (JSON Lines).', {
  maxDocumentBytes: {
    type: 'integer', minimum: 1, default: 1 << 20,
    description: 'A line longer than this is rejected (and skipped without being held in memory).',
  },
  warnRejectedFraction: {
    type: 'number', minimum: 0, maximum: 1, default: 0.1,
    description: "A run that rejects more than this fraction of the corpus's lines says so in its summary (a run that rejects every line fails whatever this is: a corpus with nothing usable is an error).",
  },
});

export const workerProcesses = section('Local worker processes of `scdv tokenize`, `scdv train` and `scdv index` (--workers, tokenize/index.workers).', {
  maxPerCore: {
    type: 'integer', minimum: 1, default: 2,
    description: 'At most this many per core (os.availableParallelism()): a larger count is capped with a warning.',
    why: 'each worker holds a dictionary or model (about 550 MB), and more than the cores can run only compete.',
  },
  allowMany: { type: 'boolean', default: false, description: 'true (or --allow-many-workers): start the requested count however many cores there are.' },
});

/**
 * @param {string} what
 * @param {number} ageS
 * @param {number} count
 */
const keep = (what, ageS, count) => section(`${what} jobs kept per queue (Bull Board shows what ran): for up to ageS seconds, at most count of them.`, {
  ageS: { type: 'integer', minimum: 1, default: ageS, description: `Seconds a ${what.toLowerCase()} job is kept.` },
  count: { type: 'integer', minimum: 1, default: count, description: `${what} jobs kept at most.` },
});

export const queue = section('The Bull job queues (pipeline/queue/).', {
  prefix: {
    type: 'string', default: '{scdv}',
    description: "Bull key prefix; the braces are a Redis Cluster hash tag that keeps a queue's keys in one slot.",
  },
  attempts: { type: 'integer', minimum: 1, default: 3, description: 'Tries per job before it fails for good, backoffMs apart (doubling).' },
  backoffMs: { type: 'integer', minimum: 0, default: 1000, description: "Wait before a failed job's first retry, ms." },
  lockDurationMs: {
    type: 'integer', minimum: 1, default: 30_000,
    description: 'A job whose worker stops renewing its lock for this long is taken over by another worker, ms.',
  },
  stalledIntervalMs: { type: 'integer', minimum: 1, default: 15_000, description: 'How often workers look for jobs whose lock expired, ms.' },
  maxStalledCount: {
    type: 'integer', minimum: 0, default: 3,
    description: 'A job taken over this many times fails (a job that kills its worker does not loop).',
  },
  keepCompleted: keep('Completed', 86_400, 1000),
  keepFailed: keep('Failed', 30 * 86_400, 10_000),
});
