// scdv dict compile: a user dictionary CSV -> .dic (then list it in tokenizer.userDictionaries).
import { errors } from '../errors.js';
import { compileUserDictionary } from '../tokenizer/user-dictionary.js';
import { opt } from './define.js';

/** @type {import('./define.js').CommandSpec} */
export const command = {
  description: 'User dictionaries: words the tokenizer should keep whole (README "Tokeniser").',
  subcommands: {
    compile: {
      summary: 'a user dictionary CSV -> a .dic file to list in tokenizer.userDictionaries',
      options: [
        opt('--csv <file>', 'the words, in MeCab user-dictionary CSV (required)'),
        opt('--out <file>', 'the compiled dictionary to write (required)'),
      ],
      examples: ['scdv dict compile --csv words.csv --out words.dic'],
      run: (values) => run(values, ['compile']),
    },
  },
  examples: ['scdv dict compile --csv words.csv --out words.dic'],
};

/**
 * @param {Record<string, any>} values
 * @param {string[]} positionals
 */
async function run(values, positionals) {
  if (positionals[0] !== 'compile' || !values.csv || !values.out) throw errors.USAGE('usage: scdv dict compile --csv words.csv --out words.dic');
  const { entries } = compileUserDictionary(values.csv, values.out);
  process.stderr.write(`compiled ${entries} entries into ${values.out}; add it to tokenizer.userDictionaries in your config\n`);
}
