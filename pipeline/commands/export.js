// scdv export: a model's word vectors for other tools, in word2vec's text or binary format
// (gensim: KeyedVectors.load_word2vec_format(FILE, binary=...)).
import path from 'node:path';
import { errors } from '../errors.js';
import { modelsDir, validateModelName } from '../paths.js';
import { opt } from './define.js';

const FORMATS = ['word2vec'];

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: "Write a model's word vectors (the word2vec stage's, one per vocabulary word, most frequent first) " +
    'in word2vec format: text by default, --binary for the binary one. gensim reads either with ' +
    'KeyedVectors.load_word2vec_format(FILE, binary=False|True).',
  options: [
    opt('--model <name>', 'the model (models/NAME/) (required)'),
    opt('--format <format>', 'the file format', { choices: FORMATS, default: 'word2vec' }),
    opt('--binary', "word2vec's binary format (float32; smaller and faster to load)"),
    opt('--out <file>', 'the file to write (required); written through a temporary file'),
  ],
  examples: ['scdv export --model news --format word2vec --out news.vec', 'scdv export --model news --format word2vec --binary --out news.bin'],
  run,
};

/** @param {Record<string, any>} values */
async function run(values) {
  if (!values.model || !values.out) throw errors.USAGE('scdv export needs --model NAME and --out FILE');
  if (!FORMATS.includes(values.format)) throw errors.USAGE(`--format must be one of ${FORMATS.join(', ')}, got "${values.format}"`);
  const { loadModel } = await import('../model/load.js');
  const { readWordVectors, writeWord2vec } = await import('../model/word-vectors.js');
  const model = loadModel(validateModelName(values.model)); // MODEL_NOT_FOUND naming the folder, format checked
  model.wordTopics.close();
  const wv = readWordVectors(path.join(modelsDir(), values.model));
  await writeWord2vec(wv, values.out, { binary: Boolean(values.binary) });
  process.stderr.write(`wrote ${wv.words.length} word vectors of ${wv.dim} dimensions (${values.binary ? 'binary' : 'text'} word2vec format) to ${values.out}\n`);
}
