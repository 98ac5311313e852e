// The tokenizer every stage uses, the folder's public face (tokenizer.js: normalise, then MeCab with part-of-speech,
// stop-word and noise filters applied in native code).
export { Tokenizer, createTokenizer } from './tokenizer.js';
/** @typedef {import('./tokenizer.js').TokenizerConfig} TokenizerConfig */
/** @typedef {import('./tokenizer.js').TaggedToken} TaggedToken */
/** @typedef {import('./tokenizer.js').TokenizerOptions} TokenizerOptions */
