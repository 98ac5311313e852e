// scdv dict compile: a user dictionary CSV -> .dic (then list it in tokenizer.userDictionaries).
import { parseArgs } from 'node:util';
import { errors } from '../errors.js';
import { compileUserDictionary } from '../tokenizer/user-dictionary.js';

/** @param {string[]} argv */
export async function run(argv) {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { csv: { type: 'string' }, out: { type: 'string' } } });
  if (positionals[0] !== 'compile' || !values.csv || !values.out) throw errors.USAGE('usage: scdv dict compile --csv words.csv --out words.dic');
  const { entries } = compileUserDictionary(values.csv, values.out);
  process.stderr.write(`compiled ${entries} entries into ${values.out}; add it to tokenizer.userDictionaries in your config\n`);
}
