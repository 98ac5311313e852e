// scdv precompute: the top-k documents of --target for every document of --collection, stored in Redis
// (keys in pipeline/match/ and README "Precomputed matches") for the match route and for ad servers.
import { CLI_DEFAULTS, inRange } from '../config.js';
import { errors } from '../errors.js';
import { describeThreshold } from '../match/threshold.js';
import { describeExpansion } from '../serving/ad-expansion.js';
import { parseHalfLife } from '../match/rerank.js';
import { connectOrStartRedis } from '../queue/redis.js';
import { ProgressBar } from '../progress.js';
import { configFromFlags, intFlag } from './common.js';
import { CONFIG_OPTION, opt } from './define.js';

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: 'The top-k documents of --target for every document of --collection, into Redis (REDIS_URL) for ' +
    'the match route and ad servers (README "Precomputed matches").',
  options: [
    opt('--target <collection>', 'the collection whose documents are matched, e.g. ads (required)'),
    opt('--collection <name>', 'the collection whose every document gets its matches', { default: CLI_DEFAULTS.collection }),
    opt('--k <k>', 'matches kept per document', { config: 'server.defaultK' }),
    opt('--ttl <seconds>', 'lifetime of the entries in Redis', { config: 'server.precompute.ttlSeconds' }),
    opt('--collapse <on|off>', 'drop near-duplicates (as the match route\'s `collapse`)', { config: 'server.rerank.collapseMatch' }),
    opt('--duplicate-threshold <t>', 'similarity above which a result is a near-duplicate, 0-1', { config: 'server.rerank.duplicateThreshold' }),
    opt('--recency-half-life <duration>', 'prefer fresh documents, e.g. 7d (as the route\'s `recency_half_life`; ages at the run)'),
    opt('--max-per-site <n>', 'at most n matches per site'),
    opt('--model <name>', 'the model (default: the one the server serves)'),
    opt('--quiet', 'no progress bar'),
    CONFIG_OPTION,
  ],
  examples: ['REDIS_URL=redis://127.0.0.1:6379 scdv precompute --collection articles --target ads --k 10'],
  run,
};

/** @param {Record<string, any>} values */
async function run(values) {
  if (!values.target) throw errors.USAGE('scdv precompute needs --target COLLECTION (e.g. ads) and --k K; --collection defaults to articles');
  const ttlSeconds = intFlag(values.ttl, '--ttl');
  const config = configFromFlags(values, ttlSeconds ? { server: { precompute: { ttlSeconds } } } : undefined);
  const k = intFlag(values.k, '--k') ?? config.server.defaultK;
  const rerank = rerankFlags(values, config);
  const { resolveModelName } = await import('../serving/index.js');
  const { runPrecompute } = await import('../stages/precompute.js');
  const { localPrecompute } = await import('../../workers/precompute.js');
  // The model the server serves (the active-model record) unless one is named.
  const model = await resolveModelName(values.model, config, { record: false });
  if (!process.env.REDIS_URL) {
    process.stderr.write('scdv precompute: REDIS_URL is not set: the entries go to a private Redis that stops with this command (useful only as a dry run)\n');
  }
  const redis = await connectOrStartRedis();
  const bar = values.quiet ? null : new ProgressBar('precompute', { unit: 'document' });
  try {
    const r = await runPrecompute({
      model, source: /** @type {string} */ (values.collection), target: values.target, k, rerank, redisUrl: redis.url, config, processor: localPrecompute,
      onProgress: (p) => bar?.update({ done: p.done, total: p.total }),
    });
    bar?.finish();
    process.stderr.write(`precomputed the top ${k} of ${values.target} for ${r.written} documents of ${values.collection} (model ${model}) ` +
      `in ${r.seconds.toFixed(1)} s, ${r.jobs} jobs, TTL ${config.server.precompute.ttlSeconds} s` +
      (r.missing ? `; ${r.missing} documents vanished meanwhile` : '') + '\n' +
      (r.reexpanded ? `${describeExpansion(values.target, r.reexpanded.record)} (again: stale)\n` : '') +
      (r.threshold ? `${describeThreshold(values.target, r.threshold)}${config.server.matchMinScore === null ? '' : `; not used: server.matchMinScore is ${config.server.matchMinScore}`}\n` : ''));
  } finally {
    await redis.stop();
  }
}

/**
 * The re-ranking options of the run, as the match route's request options (pipeline/match/rerank.js).
 * @param {Record<string, any>} values
 * @param {import('../config.js').Config} config
 * @returns {Omit<import('../match/rerank.js').RerankOptions, 'now'>}
 */
function rerankFlags(values, config) {
  const r = config.server.rerank;
  if (values.collapse !== undefined && !['on', 'off'].includes(values.collapse)) throw errors.USAGE(`--collapse must be on or off, got "${values.collapse}"`);
  const collapse = values.collapse === undefined ? r.collapseMatch : values.collapse === 'on';
  let threshold = r.duplicateThreshold;
  if (values['duplicate-threshold'] !== undefined) {
    threshold = String(values['duplicate-threshold']).trim() === '' ? NaN : Number(values['duplicate-threshold']);
    if (!inRange(threshold, { min: 0, max: 1 })) throw errors.USAGE(`--duplicate-threshold must be a number from 0 to 1, got "${values['duplicate-threshold']}"`);
  }
  let halfLifeMs = null;
  if (values['recency-half-life'] !== undefined) {
    halfLifeMs = parseHalfLife(values['recency-half-life']);
    if (Number.isNaN(halfLifeMs)) throw errors.USAGE(`--recency-half-life must be a whole number above 0 and a unit s, m, h, d or w, such as 7d, 12h, 90m, got "${values['recency-half-life']}"`);
  }
  return {
    duplicateThreshold: collapse ? threshold : null, halfLifeMs, recencyWeight: r.recencyWeight,
    maxPerSite: intFlag(values['max-per-site'], '--max-per-site', { min: 1, max: config.server.maxK }) ?? null,
  };
}
