// scdv serve: the REST server (server/), one process or a cluster of --workers processes on one port.
import { configFromFlags, intFlag } from './common.js';
import { CONFIG_OPTION, opt } from './define.js';

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: "The REST API over the active model's store: one process, or --workers processes on one port. " +
    'API documentation at /docs once running.',
  options: [
    opt('--model <name>', 'the model to serve until another is activated (default: the active model, else the newest with collections)'),
    opt('--host <host>', 'address to listen on', { config: 'server.host' }),
    opt('--port <port>', 'port to listen on (0: any free port)', { config: 'server.port' }),
    opt('--workers <n>', 'server processes sharing the port', { config: 'server.workers' }),
    opt('--index-workers <n>', 'local index worker processes for bulk jobs (0: rely on scdv worker index)', { config: 'server.indexWorkers' }),
    CONFIG_OPTION,
  ],
  examples: ['scdv serve --model news --port 8080', 'scdv serve --workers 2 --config prod.json'],
  run,
};

/** @param {Record<string, any>} values */
async function run(values) {
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
