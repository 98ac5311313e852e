// scdv collection list|delete: the collections of a model's store. Deleting is safe while servers and
// workers have the collection open (see pipeline/store/README.md "Deleting a collection").
import fs from 'node:fs';
import { errors } from '../errors.js';
import { configFromFlags } from './common.js';
import { CONFIG_OPTION, opt } from './define.js';

const USAGE = 'scdv collection list [--model NAME] [--json] | scdv collection delete NAME [--model NAME]';
const MODEL_OPTION = opt('--model <name>', "the model whose store is meant (default: the model the server serves)");

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: "The collections of a model's store. Deleting is safe while servers and workers have the collection open.",
  subcommands: {
    list: {
      summary: "the collections of the model's store, with their document counts",
      options: [MODEL_OPTION, opt('--json', 'as JSON: {"model", "collections": [{"name", "count", "width"}]}'), CONFIG_OPTION],
      examples: ['scdv collection list --model news'],
      run: (values, positionals) => run(values, ['list', ...positionals]),
    },
    delete: {
      summary: 'delete a collection: its documents, its files and its entry in models/NAME/indexed.json',
      arguments: [['[name]', 'the collection']],
      options: [MODEL_OPTION, CONFIG_OPTION],
      examples: ['scdv collection delete ads --model news'],
      run: (values, positionals) => run(values, ['delete', ...positionals]),
    },
  },
  examples: ['scdv collection list', 'scdv collection delete ads --model news'],
};

/**
 * @param {Record<string, any>} values
 * @param {string[]} positionals action, then the collection's name
 */
async function run(values, positionals) {
  const [action, name, ...extra] = positionals;
  if (action !== 'list' && action !== 'delete') throw errors.USAGE(`${USAGE}; got "${action ?? ''}"`);
  if (action === 'delete' && !name) throw errors.USAGE(`scdv collection delete needs the collection's name (${USAGE})`);
  if (extra.length || (action === 'list' && name)) throw errors.USAGE(`unexpected argument "${action === 'list' ? name : extra[0]}" (${USAGE})`);
  const config = configFromFlags(values);
  const { dropModelCollection, resolveModelName } = await import('../serving/index.js');
  const { mayHaveModelStore, openModelStore, validateCollectionName } = await import('../store/index.js');
  const model = await resolveModelName(values.model, config, { record: false });
  if (action === 'delete') validateCollectionName(name);
  if (!mayHaveModelStore(model, config)) {
    // No store yet: nothing to list, nothing to delete (and nothing is created by looking).
    if (action === 'delete') throw errors.COLLECTION_NOT_FOUND(name, model);
    process.stdout.write(values.json ? `${JSON.stringify({ model, collections: [] })}\n` : `model ${model}: no collections\n`);
    return;
  }
  const store = await openModelStore(model, config);
  try {
    if (action === 'list') {
      const collections = await store.listCollections();
      if (values.json) process.stdout.write(`${JSON.stringify({ model, collections })}\n`);
      else if (!collections.length) process.stdout.write(`model ${model}: no collections\n`);
      else {
        // Which model was listed, and why that one (the rows stay tab-separated on stdout).
        process.stderr.write(`collections of model ${model}${values.model ? '' : ' (the active one; --model NAME lists another)'}:\n`);
        for (const c of collections) process.stdout.write(`${c.name}\t${c.count} documents\twidth ${c.width}\n`);
      }
      return;
    }
    await store.collection(name); // SCDV_COLLECTION_NOT_FOUND when absent: a bulk job about to create it goes on
    // The server's bulk jobs writing to it would create it again: they end failed (waiting shards fail as they start).
    const { cancelCollectionBulkJobs } = await import('../queue/bulk-jobs.js');
    cancelCollectionBulkJobs(model, name, `collection "${name}" of model ${model} was deleted (scdv collection delete) while the job ran`);
    await dropModelCollection(store, model, name);
    await invalidatePrecomputed(model, name, config);
    process.stderr.write(`deleted collection "${name}" of model ${model}\n`);
  } finally {
    await store.close();
  }
}

/**
 * With REDIS_URL set (the server's Redis), precomputed match entries involving the collection stop being served.
 * @param {string} model
 * @param {string} collection
 * @param {import('../config.js').Config} config
 */
async function invalidatePrecomputed(model, collection, config) {
  const url = process.env.REDIS_URL;
  if (!url) return;
  const { Redis } = await import('ioredis');
  const { redisOptions } = await import('../queue/redis.js');
  const { invalidateCollection } = await import('../match/index.js');
  const redis = new Redis({ ...redisOptions(url), lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  redis.on('error', () => {});
  try {
    await redis.connect();
    if (!(await invalidateCollection(redis, config.queue.prefix, model, collection))) throw new Error('not ready');
  } catch {
    process.stderr.write(`scdv collection delete: could not reach Redis at REDIS_URL: precomputed matches of "${collection}" expire by their TTL (${config.server.precompute.ttlSeconds} s)\n`);
  } finally {
    redis.disconnect();
  }
}
