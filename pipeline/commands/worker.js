// scdv worker <stage>: run queue workers alone, so that more machines can join the same Redis.
import fs from 'node:fs';
import path from 'node:path';
import { errors } from '../errors.js';
import { redactUrl } from '../queue/redis.js';
import { configFromFlags, intFlag } from './common.js';
import { CONFIG_OPTION, opt } from './define.js';

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: 'Queue workers of one stage alone, so that more machines join the Redis (REDIS_URL, required) of a ' +
    'running scdv tokenize, train, index, serve or precompute.',
  arguments: [['[stage]', 'the queue whose jobs to run', ['tokenize', 'train', 'index', 'precompute']]],
  options: [
    opt('--concurrency <n>', 'jobs at a time (tokenize and index: 1; precompute: config server.precompute.concurrency)'),
    CONFIG_OPTION,
    opt('--allow-paths <paths>', `files or folders outside the data folder whose paths jobs may name, "${path.delimiter}"-separated ` +
      '(corpora also from server.bulkFileRoots; a job naming any other path is refused)'),
    opt('--config-json <json>', 'the whole config as JSON', { hidden: true }),
    opt('--config-stdin', 'the whole config as JSON on stdin (from the process that starts local workers)', { hidden: true }),
  ],
  examples: ['REDIS_URL=redis://10.0.0.5:6379 scdv worker index --concurrency 2'],
  run,
};

/**
 * @param {Record<string, any>} values
 * @param {string[]} positionals
 */
async function run(values, positionals) {
  const stage = positionals[0];
  if (stage !== 'tokenize' && stage !== 'train' && stage !== 'index' && stage !== 'precompute') {
    throw errors.USAGE(`scdv worker needs a stage: tokenize, train, index or precompute (got ${stage ?? 'nothing'})`);
  }
  const redisUrl = process.env.REDIS_URL;
  if (!redisUrl) throw errors.USAGE('scdv worker needs REDIS_URL: workers join the Redis of a running `scdv tokenize`');
  // Local workers get the config on stdin (pipeline/queue/worker-pool.js), out of `ps`.
  if (values['config-stdin']) values = { ...values, 'config-json': fs.readFileSync(0, 'utf8') };
  const config = configFromFlags(values);
  const allowPaths = typeof values['allow-paths'] === 'string' ? values['allow-paths'].split(path.delimiter).filter(Boolean).map((p) => path.resolve(p)) : [];
  if (!values['config-json']) process.stderr.write(`worker ${process.pid}: ${stage} queue on ${redactUrl(redisUrl)}\n`);
  if (stage === 'index') {
    const { runIndexWorker } = await import('../../workers/indexing.js');
    await runIndexWorker({ redisUrl, config, allowPaths, concurrency: intFlag(values.concurrency, '--concurrency') ?? 1 });
  } else if (stage === 'precompute') {
    const { runPrecomputeWorker } = await import('../../workers/precompute.js');
    await runPrecomputeWorker({ redisUrl, config, allowPaths, concurrency: intFlag(values.concurrency, '--concurrency') ?? config.server.precompute.concurrency });
  } else if (stage === 'train') {
    const { runTrainWorker } = await import('../../workers/train.js');
    await runTrainWorker({ redisUrl, config, allowPaths });
  } else {
    const { runTokenizeWorker } = await import('../../workers/tokenize.js');
    await runTokenizeWorker({ redisUrl, config, allowPaths, concurrency: intFlag(values.concurrency, '--concurrency') ?? 1 });
  }
}
