// scdv embed: document vectors of texts read as JSON Lines on stdin, one JSON line per text on stdout. The same
// embedder, with the same settings, as `scdv index` and the server: for tools outside Node (the Python
// SCDVVectorizer, workers/scdv/vectorizer.py) that must not compute vectors a second way.
import readline from 'node:readline';
import { errors } from '../errors.js';
import { configFromFlags } from './common.js';
import { CONFIG_OPTION, opt } from './define.js';

/** Texts embedded per call (tokenised on the thread pool together). */
const BATCH = 64;

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: 'Embed texts: read JSON Lines on stdin, {"body": TEXT, "title"?: TEXT, "id"?: ID} per line, and ' +
    'write {"id"?, "indices": [...], "values": [...]} per line to stdout, in order (empty lists when the text has ' +
    'no word the model knows). The vectors are those `scdv index` stores and the server computes for a text: the ' +
    'embed settings are those the collection (--collection) or the model\'s collections were indexed with, else ' +
    'the config\'s. --header first writes {"model", "width", "embed"}.',
  options: [
    opt('--model <name>', 'the model (required)'),
    opt('--collection <name>', 'embed as for this collection: with the settings it was indexed with'),
    opt('--header', 'first write one line {"model", "width", "embed"} (the width of every vector)'),
    CONFIG_OPTION,
  ],
  examples: ['scdv embed --model news --header < texts.jsonl > vectors.jsonl', 'echo \'{"body":"ドコモから新しいスマートフォンが発表された。"}\' | scdv embed --model news'],
  run,
};

/** Texts without a known word remarked on one by one; beyond, a count at the end. */
const EMPTY_REMARKS = 10;

/** @param {Record<string, any>} values */
async function run(values) {
  if (!values.model) throw errors.USAGE('scdv embed needs --model NAME (texts as JSON Lines on stdin)');
  const config = configFromFlags(values);
  const { collectionEmbedConfig, servingEmbedConfig, checkModelFiles, readLayoutsOf } = await import('../serving/index.js');
  const { createEmbedder } = await import('../embed/index.js');
  await checkModelFiles(values.model, await readLayoutsOf(values.model, config));
  const embed = values.collection === undefined ? await servingEmbedConfig(values.model, config) : await collectionEmbedConfig(values.model, values.collection, config);
  const embedder = await createEmbedder(values.model, { ...config, embed }, { inMemory: true });
  try {
    if (values.header) process.stdout.write(`${JSON.stringify({ model: values.model, width: embedder.width, embed })}\n`);
    /** @type {{id?: unknown, title?: string, body: string}[]} */
    let batch = [];
    /** Input line of each text of the batch, and how many texts had no known word (each said on stderr). */
    let lines = /** @type {number[]} */ ([]);
    let empty = 0;
    const flush = async () => {
      const vectors = await embedder.embedDocuments(batch);
      vectors.forEach((v, i) => {
        if (v.indices.length) return;
        if (++empty <= EMPTY_REMARKS) {
          const id = batch[i].id === undefined ? '' : ` (id ${JSON.stringify(batch[i].id)})`;
          process.stderr.write(`scdv embed: line ${lines[i]}${id}: no word of the text is in model ${values.model}'s vocabulary: an empty vector, which matches nothing\n`);
        }
      });
      lines = [];
      const out = batch.map((d, i) => JSON.stringify({ ...(d.id === undefined ? {} : { id: d.id }), indices: Array.from(vectors[i].indices), values: Array.from(vectors[i].values) }));
      batch = [];
      if (out.length && !process.stdout.write(`${out.join('\n')}\n`)) await new Promise((resolve) => process.stdout.once('drain', () => resolve(undefined)));
    };
    let line = 0;
    for await (const text of readline.createInterface({ input: process.stdin, crlfDelay: Infinity })) {
      line++;
      if (text.trim() === '') continue;
      batch.push(parseInput(text, line, config.corpus.maxDocumentBytes));
      lines.push(line);
      if (batch.length >= BATCH) await flush();
    }
    await flush();
    if (empty > EMPTY_REMARKS) process.stderr.write(`scdv embed: ${empty} texts in all had no known word (empty vectors)\n`);
  } finally {
    embedder.model.wordTopics.close();
  }
}

/**
 * @param {string} text
 * @param {number} line
 * @param {number} maxBytes corpus.maxDocumentBytes
 */
function parseInput(text, line, maxBytes) {
  if (Buffer.byteLength(text) > maxBytes) throw errors.EMBED_INPUT_INVALID(line, `longer than corpus.maxDocumentBytes (${maxBytes} bytes)`);
  let v;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw errors.EMBED_INPUT_INVALID(line, `not JSON (${/** @type {Error} */ (err).message})`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw errors.EMBED_INPUT_INVALID(line, 'not a JSON object ({"body": TEXT, "title"?: TEXT, "id"?: ID})');
  if (typeof v.body !== 'string') throw errors.EMBED_INPUT_INVALID(line, `field body must be a string, got ${v.body === undefined ? 'none' : typeof v.body}`);
  if (v.title !== undefined && v.title !== null && typeof v.title !== 'string') throw errors.EMBED_INPUT_INVALID(line, `field title must be a string, got ${typeof v.title}`);
  return { id: v.id, title: v.title ?? undefined, body: v.body };
}
