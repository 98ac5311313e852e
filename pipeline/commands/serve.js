// scdv serve: the REST server (server/), one process or a cluster of --workers processes on one port.
import { parseArgs } from 'node:util';
import { configFromFlags, intFlag } from './common.js';

/** @param {string[]} argv */
export async function run(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      model: { type: 'string' }, host: { type: 'string' }, port: { type: 'string' }, workers: { type: 'string' },
      'index-workers': { type: 'string' }, config: { type: 'string' },
    },
  });
  const port = intFlag(values.port, '--port');
  const workers = intFlag(values.workers, '--workers');
  const indexWorkers = intFlag(values['index-workers'], '--index-workers');
  const config = configFromFlags(values, {
    server: {
      ...(values.host ? { host: values.host } : {}), ...(port !== undefined ? { port } : {}),
      ...(workers ? { workers } : {}), ...(indexWorkers !== undefined ? { indexWorkers } : {}),
    },
  });
  const { runServe } = await import('../../server/start.js');
  await runServe({ config, model: values.model });
}
