// Schema of the native store engine's options (pipeline/store/engine-state.js DEFAULT_ENGINE_OPTIONS): not config
// keys but options of openStore() and store.collection() (checked there, STORE_OPTION_INVALID); their defaults
// live here with the config's (conventions: ./section.js). docs/configuration.md lists them.
import { section } from './section.js';

export const engine = section('Options of the native store engine (openStore(dir, options), store.collection(name, options)).', {
  flushDocs: { type: 'integer', minimum: 1, default: 5000, description: 'Flush when the WAL holds this many operations.' },
  flushAgeMs: { type: 'integer', minimum: 0, default: 3000, description: '… or when its oldest operation is this old, ms.' },
  refreshMs: { type: 'integer', minimum: 0, default: 100, description: 'Readers look at CURRENT and the WAL at most this often (on use), ms.' },
  maintenanceMs: { type: 'integer', minimum: 0, default: 1000, note: '0: off', description: 'Period of the background check (refresh, age-based flush), ms.' },
  autoFlush: { type: 'boolean', default: true, description: 'Flush in the background by flushDocs and flushAgeMs.' },
  autoMerge: { type: 'boolean', default: true, description: 'Merge segments in the background by maxSegments.' },
  maxSegments: { type: 'integer', minimum: 0, default: 8, description: 'More segments than this trigger a background merge.' },
  mergeFactor: { type: 'integer', minimum: 2, default: 8, description: 'Segments merged at once by the background policy (the smallest ones).' },
  tiers: {
    type: 'array', minItems: 1, maxItems: 8, items: { type: 'number', exclusiveMinimum: 0, maximum: 1 }, default: [0.05, 0.15, 0.35, 1],
    description: 'Posting-list tiers of new segments (cumulative shares by |value|, increasing, ending with 1).',
  },
  minTierList: { type: 'integer', minimum: 0, default: 256, description: 'Posting lists shorter than this are not split into tiers.' },
  budget: {
    type: 'number', exclusiveMinimum: 0, maximum: 1, default: 0.45,
    description: "Default 'fast' search budget: share of the query's contribution mass read (its lists by impact).",
    why: 'recall@10 1.000 on the hybrid layout at 100k and 1M documents for ~0.75x the CPU of 0.5 (BENCHMARKS.md § Search: budget, candidates, rescoring).',
  },
  candidates: { type: 'integer', minimum: 1, default: 1000, description: "Default 'fast' candidates rescored exactly per segment (at least 3k are)." },
  minPostings: { type: 'integer', minimum: 0, default: 100000, description: "Default 'fast' floor: postings read per segment whatever the budget." },
  onBackgroundError: {
    type: 'null', default: null, tsType: '((err: Error) => void) | null',
    description: 'Called with background flush/merge failures (null: a process warning).',
  },
});
