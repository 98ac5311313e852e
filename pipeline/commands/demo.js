// scdv demo (`npm start`): the whole product on the bundled livedoor sample: tokenise, train a model if there
// is none, index the articles and a few ads, precompute ad matches, then serve the REST API until stopped.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { dataDir, REPO_ROOT, SAMPLE_CORPUS } from '../paths.js';
import { configFromFlags } from './common.js';
import { CONFIG_OPTION } from './define.js';
import { createTokenizer } from '../tokenizer/index.js';
import { connectOrStartRedis } from '../queue/redis.js';
import { runTokenize } from '../stages/tokenize.js';
import { runTrain } from '../stages/train.js';
import { runIndex } from '../stages/indexing.js';
import { runPrecompute } from '../stages/precompute.js';
import { storeDirFor, modelsDir } from '../paths.js';
import { loadModel } from '../model/load.js';
import { modelLayout } from '../embed/index.js';
import { newCollectionEmbed } from '../embed/layout.js';
import { activeRecords, dropModelCollection, indexedLayoutDifference, listModels } from '../serving/index.js';
import { mayHaveModelStore, openModelStore } from '../store/index.js';
import { keyDigest } from '../api-keys.js';
import { printIndexSummary } from './indexing.js';
import { describeThreshold } from '../match/threshold.js';
import { startServer } from '../../server/start.js';
import { localPrecompute } from '../../workers/precompute.js';
import { printSummary } from './tokenize.js';
import { printTrainSummary } from './train.js';

/** Working files of the demo (its tokenised sample). */
export const demoDir = () => path.join(dataDir(), 'demo');
/** The model `npm start` trains on the sample (once; later runs reuse it). */
export const DEMO_MODEL = 'livedoor-sample';
/** A few hand-written ads (our own text), so that the ad-matching routes have something to match. */
const SAMPLE_ADS = path.join(REPO_ROOT, 'tests', 'fixtures', 'ads', 'sample.jsonl');
/** The demo's key for write routes; a real deployment configures its own (server.apiKeyHashes). */
export const DEMO_API_KEY = 'demo-key';
const EXAMPLE = 'きゃりーぱみゅぱみゅが新宿駅で東京スカイツリーを見た。ＡＭＡＺＯＮの送料無料キャンペーンは期間中のみ！';

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: 'The whole product on the bundled livedoor sample: tokenise, train a model if there is none, index ' +
    'the articles and a few ads, precompute ad matches, then serve the REST API until Ctrl-C (what `npm start` runs).',
  options: [CONFIG_OPTION],
  examples: ['scdv demo', 'scdv demo --config my-settings.json'],
  run,
};

/** @param {Record<string, any>} values `--config FILE` only (the demo runs on embedded defaults otherwise) */
async function run(values) {
  const config = configFromFlags(values);
  const tokenizer = await createTokenizer(config.tokenizer);
  const d = tokenizer.describe();
  const say = (/** @type {string} */ s) => process.stdout.write(`${s}\n`);
  say(`scdv demo: dictionary ${d.dictionary.name} (${d.dictionary.dicdir}), ${d.stopwordCount} stop-words in ${d.stopwordFamilies.length} families`);
  if (tokenizer.dictionary.warning) say(`WARNING: ${tokenizer.dictionary.warning}`);
  say(`\nExample: ${EXAMPLE}\n  tokens: ${tokenizer.tokenize(EXAMPLE).join(' ')}\n`);

  const redis = await connectOrStartRedis();
  say(`Redis: ${redis.private ? 'private redis-server (REDIS_URL unset)' : 'REDIS_URL'}`);
  /** @type {import('../../server/start.js').RunningServer | undefined} */
  let server;
  try {
    // Small shards, so that the two workers share the sample.
    const demoConfig = { ...config, tokenize: { ...config.tokenize, shardSize: 50 } };
    const summary = await runTokenize({
      corpus: SAMPLE_CORPUS, outDir: path.join(demoDir(), 'tokens'), config: demoConfig, redisUrl: redis.url, workers: 2,
    });
    printSummary(summary);
    say('\nFirst documents of the sample, as tokens:');
    const rl = readline.createInterface({ input: fs.createReadStream(summary.tokensFile) });
    let n = 0;
    for await (const row of rl) {
      const [id, toks] = row.split('\t');
      say(`  ${id}: ${toks.split(' ').slice(0, 14).join(' ')} …`);
      if (++n === 3) break;
    }
    rl.close();

    const modelDir = path.join(modelsDir(), DEMO_MODEL);
    if (fs.existsSync(path.join(modelDir, 'manifest.json'))) {
      say(`\nModel: ${modelDir} exists (delete it to train again).`);
      printTrainSummary(modelDir, JSON.parse(fs.readFileSync(path.join(modelDir, 'manifest.json'), 'utf8')), { reused: true });
    } else {
      say(`\nTraining model "${DEMO_MODEL}" on the sample (word2vec, IDF, GMM, word-topic vectors):`);
      // The sample tokenised above, with the same settings: training reuses it instead of tokenising it again.
      const trained = await runTrain({ corpus: SAMPLE_CORPUS, name: DEMO_MODEL, config: demoConfig, redisUrl: redis.url, tokensDir: summary.outDir });
      printTrainSummary(trained.modelDir, trained.manifest);
    }

    await dropStaleDemoCollections(demoConfig, say);
    say(`\nIndexing the sample into collection "articles" of model ${DEMO_MODEL}:`);
    printIndexSummary(await runIndex({ corpus: SAMPLE_CORPUS, model: DEMO_MODEL, collection: 'articles', config: demoConfig, redisUrl: redis.url, workers: 2 }));
    say(`\nIndexing ${SAMPLE_ADS} into collection "ads":`);
    printIndexSummary(await runIndex({ corpus: SAMPLE_ADS, model: DEMO_MODEL, collection: 'ads', config: demoConfig, redisUrl: redis.url, workers: 1 }));
    say('\nPrecomputing the best 3 ads for every article (what an ad server reads from Redis):');
    const pre = await runPrecompute({ model: DEMO_MODEL, source: 'articles', target: 'ads', k: 3, redisUrl: redis.url, config, processor: localPrecompute });
    say(`  ${pre.written} articles, ${pre.jobs} jobs, ${pre.seconds.toFixed(1)} s`);
    if (pre.threshold) say(`  ${describeThreshold('ads', pre.threshold)}`);

    const serverConfig = { ...config, server: { ...config.server, apiKeyHashes: [keyDigest(DEMO_API_KEY)] } };
    const served = await demoServedModel(config, { redisUrl: redis.url, privateRedis: redis.private });
    server = await listen(serverConfig, redis.url, say, served.model);
    if (served.note) say(`\n${served.note.replaceAll('URL', server.url)}`);
    try {
      await showExamples(server.url, say);
    } catch (err) {
      // The examples ask for the sample's articles, which another model's collections may not hold.
      if (served.model === DEMO_MODEL) throw err;
      say(`\n(examples not shown: model "${served.model}" does not answer them: ${/** @type {Error} */ (err).message.slice(0, 200)})`);
    }
    say(`\nWrite routes take the demo key: -H 'Authorization: Bearer ${DEMO_API_KEY}' (set server.apiKeyHashes for your own).`);
    say(`API documentation: ${server.url}/docs   queues: ${server.url}/admin/queues   metrics: ${server.url}/metrics`);
    // Listening for Ctrl-C before saying so: a signal sent on reading "Serving on" must find the handler in place.
    const stopped = untilSignal();
    say(`\nServing on ${server.url}${served.model === DEMO_MODEL ? '' : ` (model "${served.model}", the active one)`}`);
    say('(Ctrl-C to stop)');
    await stopped;
    say('\nstopping: finishing requests in flight');
  } finally {
    await server?.close();
    await redis.stop();
  }
}

/**
 * The model the demo serves: the active one when the user activated another model (`scdv activate`) that still
 * exists, so that `npm start` never undoes an activation; else the demo's own. The demo indexes its own model
 * either way, and `note` says loudly when it serves another (URL in it stands for the server's address).
 * @param {import('../config.js').Config} config
 * @param {{redisUrl?: string, privateRedis?: boolean}} where the demo's Redis (for a record kept in Redis)
 * @returns {Promise<{model: string, note: string | null}>}
 */
export async function demoServedModel(config, where) {
  let records;
  try {
    records = activeRecords(config, where);
  } catch {
    return { model: DEMO_MODEL, note: null }; // a record only a shared Redis could hold: the demo's private one has none
  }
  try {
    const record = await records.read();
    if (!record || record.model === DEMO_MODEL) return { model: DEMO_MODEL, note: null };
    if (!listModels().some((m) => m.name === record.model)) {
      return { model: DEMO_MODEL, note: `NOTE: the active model "${record.model}" (${records.where}) is not in ${modelsDir()}: serving the demo's model "${DEMO_MODEL}" instead.` };
    }
    return {
      model: record.model,
      note: `NOTE: serving model "${record.model}", the one activated on ${record.activated_at} (${records.where}), not the demo's ` +
        `"${DEMO_MODEL}" (indexed above). To serve the demo's model: npx scdv activate --model ${DEMO_MODEL} --server URL`,
    };
  } finally {
    await records.close();
  }
}

/**
 * The server on the configured port, or on any free port when that one is taken (say, by another demo).
 * @param {import('../config.js').Config} config
 * @param {string} redisUrl
 * @param {(s: string) => void} say
 * @param {string} model
 */
async function listen(config, redisUrl, say, model) {
  const opts = { config, model, redisUrl, indexWorkers: 1, logger: false };
  try {
    return await startServer(opts);
  } catch (err) {
    if (/** @type {any} */ (err)?.code !== 'EADDRINUSE') throw err;
    say(`\nport ${config.server.port} is in use; serving on a free port instead`);
    return startServer({ ...opts, port: 0 });
  }
}

/** Resolves on the first SIGINT or SIGTERM. */
function untilSignal() {
  return new Promise((resolve) => {
    const done = () => { process.off('SIGINT', done); process.off('SIGTERM', done); resolve(undefined); };
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}

/**
 * A few requests to the running server, printed as the curl command and the answer's gist.
 * @param {string} base
 * @param {(s: string) => void} say
 */
async function showExamples(base, say) {
  const get = async (/** @type {string} */ p) => {
    const res = await fetch(base + p);
    if (!res.ok) throw new Error(`GET ${p}: ${res.status} ${await res.text()}`);
    return /** @type {any} */ (await res.json());
  };
  const post = async (/** @type {string} */ p, /** @type {object} */ body) => {
    const res = await fetch(base + p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`POST ${p}: ${res.status} ${await res.text()}`);
    return /** @type {any} */ (await res.json());
  };
  const line = (/** @type {any} */ r) => `  ${r.score.toFixed(3)}  ${r.id}  ${String(r.title ?? '').slice(0, 48)}`;
  for (const id of EXAMPLES) {
    const path = `/v1/collections/articles/documents/${id}/related?k=5`;
    const doc = await get(`/v1/collections/articles/documents/${id}`);
    say(`\n$ curl '${base}${path}'\n  related to 「${doc.title}」:`);
    for (const r of (await get(path)).results) say(line(r));
  }
  const text = 'スマートフォンの新機種が発表された。Android搭載で、カメラとバッテリーの性能が向上している。';
  say(`\n$ curl -X POST ${base}/v1/collections/articles/related -H 'content-type: application/json' -d '{"text":"${text}","k":3}'`);
  for (const r of (await post('/v1/collections/articles/related', { text, k: 3 })).results) say(line(r));
  // The first example article that gets ads above the collection's threshold (the threshold is the model's, so
  // which articles clear it is too); the first one, with what the threshold cut, when none does.
  const [forId, m] = await firstWithResults(EXAMPLES, (id) => get(`/v1/match?collection=ads&for=${id}&k=3`));
  say(`\n$ curl '${base}/v1/match?collection=ads&for=${forId}&k=3'   (ads for an article; served from ${m.served_from})`);
  for (const r of m.results) say(line(r));
  say(cutLine(m));
  // The same for a page's text.
  const [page, t] = await firstWithResults(PAGE_TEXTS, (text) => post('/v1/match', { collection: 'ads', text, k: 3 }));
  say(`\n$ curl -X POST ${base}/v1/match -H 'content-type: application/json' -d '{"collection":"ads","text":"${page}","k":3}'   (ads for a page's text)`);
  for (const r of t.results) say(line(r));
  say(cutLine(t));
}

/**
 * The first candidate whose answer has results, with that answer; the first candidate and its answer when none has.
 * @template C
 * @param {C[]} candidates at least one
 * @param {(c: C) => Promise<{results: unknown[]}>} ask
 * @returns {Promise<[C, any]>}
 */
async function firstWithResults(candidates, ask) {
  const first = await ask(candidates[0]);
  if (first.results.length) return [candidates[0], first];
  for (const c of candidates.slice(1)) {
    const answer = await ask(c);
    if (answer.results.length) return [c, answer];
  }
  return [candidates[0], first];
}

/** Example page texts for POST /v1/match: a football report, a film premiere. */
const PAGE_TEXTS = [
  'サッカー日本代表はワールドカップ予選で勝利し、監督は選手たちの粘り強さを称えた。次の試合ではスタジアムに多くのサポーターが集まる予定だ。',
  '話題の映画が今週末に公開される。主演俳優が舞台挨拶に登場し、監督と撮影の裏話を語った。',
];

/**
 * What the answer's min_score and known-word rule did: an empty list is their doing, not a failure.
 * @param {{min_score: number, min_score_from: string, below_min_score: number, results: unknown[], blocked?: {rule: string},
 *   known_share?: number | null, min_known_share?: number}} m
 */
function cutLine(m) {
  const words = m.known_share === undefined || m.known_share === null ? '' : `; the model knows ${m.known_share.toFixed(3)} of its words, min ${m.min_known_share}`;
  if (m.blocked) return `  (no ad: blocked by ${m.blocked.rule}${words}; docs/matching.md)`;
  const from = { derived: 'the collection\'s derived threshold', fallback: 'the fallback: no threshold derived yet', config: 'server.matchMinScore', request: 'the request' }[m.min_score_from];
  const cut = m.below_min_score ? `${m.below_min_score} of the best ${m.results.length + m.below_min_score} scored below it` : 'none scored below it';
  return `  (${m.results.length ? '' : 'no ad: '}min_score ${m.min_score}, ${from}; ${cut}${words}; docs/matching.md)`;
}

/** Example ids: one article of three categories of the sample. */
const EXAMPLES = ['sports-watch-4597641', 'it-life-hack-6292880', 'movie-enter-5840081'];

/**
 * The demo's collections are derived from the bundled files: one indexed with another vector layout (an `embed.*`
 * setting or default changed, e.g. the hybrid layout) would refuse the new vectors, so it is re-created.
 * @param {import('../config.js').Config} config
 * @param {(s: string) => void} say
 */
async function dropStaleDemoCollections(config, say) {
  const model = loadModel(DEMO_MODEL);
  // Each collection's layout as `scdv index` makes it (the ads': adEmbed).
  const layouts = new Map(['articles', 'ads'].map((c) => [c, modelLayout(model, newCollectionEmbed(config.embed, config.adEmbed, c))]));
  model.wordTopics.close();
  if (!mayHaveModelStore(DEMO_MODEL, config)) return; // nothing indexed yet (and nothing is created by looking)
  const store = await openModelStore(DEMO_MODEL, config);
  try {
    for (const c of (await store.listCollections()).filter((x) => layouts.has(x.name))) {
      const layout = /** @type {import('../embed/layout.js').VectorLayout} */ (layouts.get(c.name));
      const diff = await indexedLayoutDifference(DEMO_MODEL, c.name, layout, config);
      if (c.width === layout.width && !diff) continue;
      say(`\nCollection "${c.name}" was indexed with another vector layout (${diff || `width ${c.width}, now ${layout.width}`}): re-creating it.`);
      await dropModelCollection(store, DEMO_MODEL, c.name);
    }
  } finally {
    await store.close();
  }
}
