// scdv demo (`npm start`): the pipeline as far as it exists, on the bundled livedoor sample.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { REPO_ROOT, SAMPLE_CORPUS } from '../paths.js';
import { loadConfig } from '../config.js';
import { createTokenizer } from '../tokenizer/index.js';
import { connectOrStartRedis } from '../queue/redis.js';
import { runTokenize } from '../stages/tokenize.js';
import { runTrain } from '../stages/train.js';
import { runIndex, storeDirFor } from '../stages/embed.js';
import { openStore } from '../store/index.js';
import { printIndexSummary } from './index.js';
import { MODELS_DIR } from '../paths.js';
import { printSummary } from './tokenize.js';
import { printTrainSummary } from './train.js';

export const DEMO_DIR = path.join(REPO_ROOT, '.scdv', 'demo');
/** The model `npm start` trains on the sample (once; later runs reuse it). */
export const DEMO_MODEL = 'livedoor-sample';
const EXAMPLE = 'きゃりーぱみゅぱみゅが新宿駅で東京スカイツリーを見た。ＡＭＡＺＯＮの送料無料キャンペーンは期間中のみ！';

/** @param {string[]} _argv */
export async function run(_argv) {
  const config = loadConfig();
  const tokenizer = await createTokenizer(config.tokenizer);
  const d = tokenizer.describe();
  const say = (/** @type {string} */ s) => process.stdout.write(`${s}\n`);
  say(`scdv demo: dictionary ${d.dictionary.name} (${d.dictionary.dicdir}), ${d.stopwordCount} stop-words in ${d.stopwordFamilies.length} families`);
  if (tokenizer.dictionary.warning) say(`WARNING: ${tokenizer.dictionary.warning}`);
  say(`\nExample: ${EXAMPLE}\n  tokens: ${tokenizer.tokenize(EXAMPLE).join(' ')}\n`);

  const redis = await connectOrStartRedis();
  say(`Redis: ${redis.private ? 'private redis-server (REDIS_URL unset)' : 'REDIS_URL'}`);
  try {
    // Small shards, so that the two workers share the sample.
    const demoConfig = { ...config, tokenize: { ...config.tokenize, shardSize: 50 } };
    const summary = await runTokenize({
      corpus: SAMPLE_CORPUS, outDir: path.join(DEMO_DIR, 'tokens'), config: demoConfig, redisUrl: redis.url, workers: 2,
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

    const modelDir = path.join(MODELS_DIR, DEMO_MODEL);
    if (fs.existsSync(path.join(modelDir, 'manifest.json'))) {
      say(`\nModel: ${modelDir} exists (delete it to train again).`);
      printTrainSummary(modelDir, JSON.parse(fs.readFileSync(path.join(modelDir, 'manifest.json'), 'utf8')));
    } else {
      say(`\nTraining model "${DEMO_MODEL}" on the sample (word2vec, IDF, GMM, word-topic vectors):`);
      const trained = await runTrain({ corpus: SAMPLE_CORPUS, name: DEMO_MODEL, config: demoConfig, redisUrl: redis.url });
      printTrainSummary(trained.modelDir, trained.manifest);
    }

    say(`\nIndexing the sample into collection "articles" of model ${DEMO_MODEL}:`);
    const indexed = await runIndex({ corpus: SAMPLE_CORPUS, model: DEMO_MODEL, collection: 'articles', config: demoConfig, redisUrl: redis.url, workers: 2 });
    printIndexSummary(indexed);
    showRelated(say);
  } finally {
    await redis.stop();
  }
  say('\nNext stage (the REST server) is not built yet; see README.md.');
}

/** Example ids: one article of three categories of the sample. */
const EXAMPLES = ['sports-watch-4597641', 'it-life-hack-6292880', 'movie-enter-5840081'];

/**
 * Related articles for a few documents, straight from the store.
 * @param {(s: string) => void} say
 */
function showRelated(say) {
  const store = openStore(storeDirFor(DEMO_MODEL));
  try {
    const articles = store.collection('articles');
    for (const id of EXAMPLES) {
      const doc = articles.get(id);
      if (!doc) continue;
      say(`\nRelated to ${id} 「${doc.meta.title}」:`);
      for (const r of articles.search(doc.vector, { k: 5, excludeIds: [id] })) {
        say(`  ${r.score.toFixed(3)}  ${r.id}  ${String(r.meta.title).slice(0, 50)}`);
      }
    }
  } finally {
    store.close();
  }
}
