// The rules between keys that JSON Schema cannot say, each with its message. They run once the config matches
// its schema (validate.js), so every key they read has its type and range. A rule returns its message when
// broken, null when kept.
import { validateModelName } from '../paths.js';

/** @typedef {import('./types.js').Config} Config */

/** @type {{name: string, check: (c: Config) => string | null}[]} */
export const RULES = [
  {
    name: 'the headers arrive within the request time',
    check: ({ server: s }) => (s.headersTimeoutMs > s.requestTimeoutMs
      ? `server.headersTimeoutMs (${s.headersTimeoutMs}) must not exceed server.requestTimeoutMs (${s.requestTimeoutMs})` : null),
  },
  {
    name: 'the default k is an allowed k',
    check: ({ server: s }) => (s.defaultK > s.maxK ? `server.defaultK (${s.defaultK}) must not exceed server.maxK (${s.maxK})` : null),
  },
  {
    name: 'the candidates bounds are in order',
    check: ({ store: { opensearch: { candidates: c } } }) => (c.max < c.min
      ? `store.opensearch.candidates.max (${c.max}) must not be below store.opensearch.candidates.min (${c.min})` : null),
  },
  {
    name: 'a user name comes with a password',
    check: ({ store: { opensearch: o } }) => (o.username !== null && o.password === null
      ? 'store.opensearch.username is set without a password (set SCDV_OPENSEARCH_PASSWORD)' : null),
  },
  {
    name: 'arm names are distinct',
    check: ({ experiments: x }) => {
      const i = x.arms.findIndex((a, j) => x.arms.findIndex((b) => b.name === a.name) < j);
      return i < 0 ? null : `experiments.arms[${i}].name "${x.arms[i].name}" is used twice`;
    },
  },
  {
    name: 'brand-safety collections are named once',
    check: ({ server: { brandSafety: b } }) => {
      const i = b.collections.findIndex((c, j) => b.collections.findIndex((d) => d.collection === c.collection) < j);
      return i < 0 ? null : `server.brandSafety.collections[${i}].collection names ${b.collections[i].collection} a second time`;
    },
  },
  {
    // A folder name under models/: validateModelName throws its own error (SCDV_MODEL_NAME_INVALID), as every
    // other place that takes a model name does.
    name: 'server.model is a model name',
    check: ({ server: s }) => { if (s.model !== null) validateModelName(s.model); return null; },
  },
];
