// scdv worker <stage>: run queue workers alone, so that more machines can join the same Redis.
import { parseArgs } from 'node:util';
import { errors } from '../errors.js';
import { redactUrl } from '../queue/redis.js';
import { configFromFlags, intFlag } from './common.js';

/** @param {string[]} argv */
export async function run(argv) {
  const { values, positionals } = parseArgs({
    args: argv, allowPositionals: true,
    options: { concurrency: { type: 'string' }, config: { type: 'string' }, 'config-json': { type: 'string' } },
  });
  const stage = positionals[0];
  if (stage !== 'tokenize' && stage !== 'train' && stage !== 'index' && stage !== 'precompute') {
    throw errors.USAGE(`scdv worker needs a stage: tokenize, train, index or precompute (got ${stage ?? 'nothing'})`);
  }
  const redisUrl = process.env.REDIS_URL;
  if (!redisUrl) throw errors.USAGE('scdv worker needs REDIS_URL: workers join the Redis of a running `scdv tokenize`');
  const config = configFromFlags(values);
  if (!values['config-json']) process.stderr.write(`worker ${process.pid}: ${stage} queue on ${redactUrl(redisUrl)}\n`);
  if (stage === 'index') {
    const { runIndexWorker } = await import('../../workers/index.js');
    await runIndexWorker({ redisUrl, config, concurrency: intFlag(values.concurrency, '--concurrency') ?? 1 });
  } else if (stage === 'precompute') {
    const { runPrecomputeWorker } = await import('../../workers/precompute.js');
    await runPrecomputeWorker({ redisUrl, config, concurrency: intFlag(values.concurrency, '--concurrency') ?? config.server.precompute.concurrency });
  } else if (stage === 'train') {
    const { runTrainWorker } = await import('../../workers/train.js');
    await runTrainWorker({ redisUrl, config });
  } else {
    const { runTokenizeWorker } = await import('../../workers/tokenize.js');
    await runTokenizeWorker({ redisUrl, config, concurrency: intFlag(values.concurrency, '--concurrency') ?? 1 });
  }
}
