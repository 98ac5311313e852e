// `tokenizer.lang: 'en'`: a plain regex tokeniser for English text, so that training and `scdv eval` can be
// checked against published English benchmarks. NFKC, lower case, words of letters (with inner apostrophes,
// which are dropped: don't -> dont), digits-only tokens and an English stop list dropped, and the tokenizer
// config's singleChar / maxTokenBytes / stopwords.extra rules applied. No stemming (the SCDV paper uses none).
// Same interface as the MeCab Tokenizer (pipeline/tokenizer/tokenizer.js).

/** A common English stop list (function words, auxiliaries, pronouns, frequent adverbs). */
export const ENGLISH_STOPWORDS = Object.freeze(`
a about above after again against all also am an and any are aren arent as at be because been before being below
between both but by can cannot could couldn couldnt did didn didnt do does doesn doesnt doing don dont down during
each either else ever every few for from further get gets got had hadn hadnt has hasn hasnt have haven havent
having he hed hell her here heres hers herself hes him himself his how hows however i id if ill im in into is isn
isnt it its itself ive just least less let lets like made make many may me might more most much must mustn mustnt
my myself neither no nor not now of off often on once one only or other others otherwise ought our ours ourselves
out over own per perhaps put rather said same say says shall shan shant she shed shell shes should shouldn shouldnt
since so some such than that thats the their theirs them themselves then there therefore theres these they theyd
theyll theyre theyve this those though through thus to too toward towards under until up upon us very via was
wasn wasnt we wed well were weren werent weve what whats when whens where wheres whether which while who whom whos
whose why whys will with within without won wont would wouldn wouldnt yet you youd youll your youre yours yourself
yourselves youve
`.split(/\s+/).filter(Boolean));

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu;

export class EnglishTokenizer {
  /** @param {import('../config.js').Config['tokenizer']} config */
  constructor(config) {
    this.config = config;
    this.dictionary = { name: 'english-regex', dicdir: '', warning: /** @type {string|null} */ (null) };
    const extra = (config.stopwords?.extra ?? []).map((w) => w.normalize('NFKC').toLowerCase());
    this.stop = new Set([...ENGLISH_STOPWORDS, ...extra]);
    this.stopwordFamilies = ['english'];
    this.stopwordCount = this.stop.size;
  }

  /**
   * @param {string} text
   * @returns {string[]}
   */
  tokenize(text) {
    const c = this.config;
    /** @type {string[]} */
    const out = [];
    for (const m of text.normalize('NFKC').toLowerCase().matchAll(WORD)) {
      const t = m[0].replace(/['’]/g, '');
      if (this.stop.has(t)) continue;
      if (c.dropDigitsOnly !== false && /^\p{N}+$/u.test(t)) continue;
      if ((c.singleChar === 'non-kanji' || c.singleChar === 'all' || c.singleChar === 'hiragana') && [...t].length === 1) continue;
      if (Buffer.byteLength(t) > (c.maxTokenBytes ?? 100)) continue;
      out.push(t);
    }
    return out;
  }

  /** @param {string} text */
  tokenizeToString(text) {
    return this.tokenize(text).join(' ');
  }

  /**
   * @param {string} text
   * @returns {{token: string, pos: string}[]}
   */
  tokenizeWithPos(text) {
    return this.tokenize(text).map((token) => ({ token, pos: 'word' }));
  }

  /**
   * @param {string[]} texts
   * @returns {Promise<string[]>}
   */
  async tokenizeBatch(texts) {
    return texts.map((t) => this.tokenizeToString(t));
  }

  describe() {
    return {
      dictionary: { name: this.dictionary.name, dicdir: '', size: 0 },
      stopwordFamilies: this.stopwordFamilies,
      stopwordCount: this.stopwordCount,
      configHash: '',
    };
  }
}
