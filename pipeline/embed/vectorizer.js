// SCDV document vectors: the one implementation, used by batch indexing and by requests alike.
//   v(doc) = sparsify_k( Σ_{distinct words w of doc} damp(tf_w) · wtv(w) ), then L2-normalised,
// where wtv(w) = idf(w) · concat_k P(k|w)·v_w is the word's (already sparse) word-topic vector from the model.
//
// Hybrid layout (embed.hybrid.alpha < 1): the SCDV block above, scaled by √α, followed by a lexical TF-IDF block
// scaled by √(1−α): dimension K·d + r holds damp(tf_w) · idf(w) of the vocabulary word w of row r (the model's
// own IDF raised to embed.hybrid.idfPower; damp() with embed.hybrid.damping, binary by default; the vocabulary is
// the model's lexicon.txt, stop words included, with embed.hybrid.stopwords 'keep'), the block L2-normalised (optionally cut to its
// `maxTerms` heaviest words first). The whole vector has norm 1 and the dot product of two hybrid vectors is
// α·cos(SCDV) + (1−α)·cos(TF-IDF): the store needs no change.

/** @typedef {import('../model/word-topics.js').SparseRow} SparseVector */
/** @typedef {import('../config.js').Config['embed']} EmbedConfig */

/**
 * @typedef {object} Embedding
 * @property {Uint32Array} indices increasing
 * @property {Float32Array} values L2 norm 1 (empty when no word was known)
 * @property {number} knownWords distinct words found in the model
 * @property {number} unknownWords distinct words not in the model
 */

/**
 * Term-frequency damping.
 * @param {number} tf occurrences in the document (>= 1)
 * @param {EmbedConfig} cfg
 */
export function damp(tf, cfg) {
  switch (cfg.damping) {
    case 'binary': return 1;
    case 'log': return 1 + Math.log(tf);
    case 'raw': return tf;
    case 'saturate': return (tf * (cfg.saturationK + 1)) / (tf + cfg.saturationK);
    default: throw new Error(`unknown damping ${cfg.damping}`);
  }
}

/**
 * @typedef {object} Lexicon the model's vocabulary for the lexical block of the hybrid layout
 * @property {(word: string) => number} indexOf row of a word (-1: unknown), the row of its word-topic vector
 * @property {Float32Array} idf idf of every row
 */

export class DocumentVectorizer {
  /**
   * @param {{width: number, lookup: (word: string) => SparseVector | null}} wordTopics
   * @param {EmbedConfig} cfg
   * @param {Lexicon} [lexicon] the vocabulary for the hybrid layout (cfg.hybrid.alpha < 1); without it the
   *   vectorizer computes the SCDV block alone, as with alpha 1 (Embedder always passes it when the layout is hybrid)
   */
  constructor(wordTopics, cfg, lexicon) {
    this.wordTopics = wordTopics;
    this.cfg = cfg;
    /** Width of the SCDV block (K x d). */
    this.scdvWidth = wordTopics.width;
    this.alpha = lexicon ? cfg.hybrid?.alpha ?? 1 : 1;
    this.lexicon = this.alpha < 1 ? /** @type {Lexicon} */ (lexicon) : null;
    // A layout recorded before embed.hybrid.damping existed was built with 1 + ln tf: its collections keep it.
    this.lexicalDamping = { ...cfg, damping: cfg.hybrid?.damping ?? 'log' };
    // The lexical block's weights damp(tf) · idf^p; p 1 for a layout recorded before embed.hybrid.idfPower existed.
    const p = cfg.hybrid?.idfPower ?? 1;
    this.lexicalIdf = this.lexicon ? (p === 1 ? this.lexicon.idf : this.lexicon.idf.map((x) => x ** p)) : new Float32Array(0);
    /** Width of the whole vector: the SCDV block, then one dimension per vocabulary word in the hybrid layout. */
    this.width = this.scdvWidth + (this.lexicon ? this.lexicon.idf.length : 0);
    this.keep = Math.max(1, cfg.keepCount ?? Math.ceil(cfg.keepFraction * this.scdvWidth));
    // Reused between calls (all zeros between them): a dense accumulator and the list of its non-zero dims; the
    // lexical block's weights by vocabulary row and the rows a document has.
    this.acc = new Float64Array(this.width);
    this.touched = new Uint32Array(this.width);
    this.lexWeight = new Float64Array(this.lexicon ? this.lexicon.idf.length : 0);
    this.lexRows = new Uint32Array(0);
  }

  /**
   * @param {string[]} tokens the document's kept tokens, in any order
   * @returns {Embedding}
   */
  embed(tokens) {
    /** @type {Map<string, number>} */
    const tf = new Map();
    for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
    const { acc, touched } = this;
    let knownWords = 0;
    for (const [word, count] of tf) {
      const row = this.wordTopics.lookup(word);
      if (!row) continue;
      knownWords++;
      const w = damp(count, this.cfg);
      const { indices, values } = row;
      for (let i = 0; i < indices.length; i++) acc[indices[i]] += w * values[i];
    }
    // The dims whose sums are not 0, found by one scan of the block (cheaper than marking each dim on first touch,
    // a branch per product): only they can be kept, in any order (sparsify sorts what it keeps).
    let nTouched = 0;
    for (let d = 0; d < this.scdvWidth; d++) if (acc[d] !== 0) touched[nTouched++] = d;
    const scdv = this.sparsify(nTouched);
    for (let i = 0; i < nTouched; i++) acc[touched[i]] = 0;
    const result = this.lexicon && scdv.indices.length ? this.hybrid(scdv, tf) : scdv;
    return { ...result, knownWords, unknownWords: tf.size - knownWords };
  }

  /**
   * √α · the SCDV block ++ √(1−α) · the L2-normalised TF-IDF block of the known words (dims above the SCDV block).
   * @param {{indices: Uint32Array, values: Float32Array}} scdv
   * @param {Map<string, number>} tf
   */
  hybrid(scdv, tf) {
    const lex = /** @type {Lexicon} */ (this.lexicon);
    // Each known word's weight at its row (a word has one row), the rows listed, then sorted as numbers.
    if (this.lexRows.length < tf.size) this.lexRows = new Uint32Array(2 * tf.size);
    const weight = this.lexWeight;
    let m = 0;
    for (const [word, count] of tf) {
      const r = lex.indexOf(word);
      if (r >= 0) { weight[r] = damp(count, this.lexicalDamping) * this.lexicalIdf[r]; this.lexRows[m++] = r; }
    }
    let rows = this.lexRows.subarray(0, m);
    const maxTerms = this.cfg.hybrid?.maxTerms ?? null;
    if (maxTerms !== null && m > maxTerms) {
      // The heaviest maxTerms (ties: the lower row first).
      const heaviest = Array.from(rows).sort((x, y) => weight[y] - weight[x] || x - y).slice(0, maxTerms);
      const kept = new Set(heaviest);
      for (const r of rows) if (!kept.has(r)) weight[r] = 0;
      rows.set(heaviest);
      rows = rows.subarray(0, maxTerms);
      m = maxTerms;
    }
    rows.sort();
    let norm = 0;
    for (let j = 0; j < m; j++) norm += weight[rows[j]] * weight[rows[j]];
    norm = Math.sqrt(norm);
    const a = Math.sqrt(this.alpha);
    const b = norm > 0 ? Math.sqrt(1 - this.alpha) / norm : 0;
    const n = this.alpha > 0 ? scdv.indices.length : 0; // alpha 0: the lexical block alone
    const indices = new Uint32Array(n + m);
    const values = new Float32Array(n + m);
    for (let i = 0; i < n; i++) { indices[i] = scdv.indices[i]; values[i] = a * scdv.values[i]; }
    for (let j = 0; j < m; j++) {
      const r = rows[j];
      indices[n + j] = this.scdvWidth + r;
      values[n + j] = b * weight[r];
      weight[r] = 0;
    }
    return { indices, values };
  }

  /**
   * Keep the `keep` largest-magnitude entries of the accumulator (ties: lower index first), in index order,
   * L2-normalised. Selection is linear (quickselect of the threshold), not a sort of every touched dim.
   * @param {number} nTouched
   */
  sparsify(nTouched) {
    const { acc, touched } = this;
    /** @type {number[]} */
    let dims = [];
    if (nTouched <= this.keep) {
      for (let i = 0; i < nTouched; i++) if (acc[touched[i]] !== 0) dims.push(touched[i]);
    } else {
      const mags = new Float64Array(nTouched);
      for (let i = 0; i < nTouched; i++) mags[i] = Math.abs(acc[touched[i]]);
      const threshold = kthLargest(mags, this.keep);
      /** @type {number[]} */
      const ties = [];
      for (let i = 0; i < nTouched; i++) {
        const d = touched[i];
        const m = Math.abs(acc[d]);
        if (m > threshold) dims.push(d); else if (m === threshold && m > 0) ties.push(d);
      }
      ties.sort((a, b) => a - b);
      dims = dims.concat(ties.slice(0, this.keep - dims.length));
    }
    dims.sort((a, b) => a - b);
    let norm = 0;
    for (const d of dims) norm += acc[d] * acc[d];
    norm = Math.sqrt(norm);
    const indices = Uint32Array.from(dims);
    const values = new Float32Array(dims.length);
    for (let i = 0; i < dims.length; i++) values[i] = acc[dims[i]] / norm;
    return { indices, values };
  }
}

/**
 * The k-th largest value of `a` (1-based), by quickselect; `a` is reordered.
 * @param {Float64Array} a
 * @param {number} k
 */
export function kthLargest(a, k) {
  let lo = 0;
  let hi = a.length - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >>> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] > pivot) i++;
      while (a[j] < pivot) j--;
      if (i <= j) { const t = a[i]; a[i] = a[j]; a[j] = t; i++; j--; }
    }
    if (target <= j) hi = j; else if (target >= i) lo = i; else return a[target];
  }
  return a[target];
}

/**
 * Dot product of two sparse vectors with increasing indices (typed arrays or plain arrays alike).
 * @param {{indices: ArrayLike<number>, values: ArrayLike<number>}} a
 * @param {{indices: ArrayLike<number>, values: ArrayLike<number>}} b
 */
export function sparseDot(a, b) {
  let i = 0;
  let j = 0;
  let s = 0;
  while (i < a.indices.length && j < b.indices.length) {
    const x = a.indices[i];
    const y = b.indices[j];
    if (x === y) { s += a.values[i++] * b.values[j++]; } else if (x < y) i++; else j++;
  }
  return s;
}

/**
 * expandQuery's scratch (grown on demand; acc and bits all zero between calls): a dense row of sums, a bitmap of the
 * touched indices, and the merged entries.
 */
let acc = new Float64Array(0);
let bits = new Int32Array(0);
let outIdx = new Uint32Array(0);
let outVal = new Float64Array(0);
let magnitudes = new Float64Array(0);

/**
 * One sparse vector spread over a dense scratch array, to dot it with many others without a merge's branches (the
 * near-duplicate collapse compares each candidate with every kept result). dot(b) equals sparseDot(a, b) bit for
 * bit: the same products summed in the same (increasing index) order, plus exact zeros.
 */
export class DenseScratch {
  constructor() {
    this.dense = new Float32Array(0);
    /** @type {SparseVector | null} */
    this.held = null;
  }

  /** Hold a (its values; every other entry 0). @param {SparseVector} a */
  hold(a) {
    this.release();
    const n = a.indices.length;
    if (n && a.indices[n - 1] >= this.dense.length) this.dense = new Float32Array(Math.max(a.indices[n - 1] + 1, this.dense.length * 2));
    for (let i = 0; i < n; i++) this.dense[a.indices[i]] = a.values[i];
    this.held = a;
  }

  /** The held vector's dot product with b (sorted indices). @param {SparseVector} b */
  dot(b) {
    const d = this.dense;
    const bi = b.indices;
    const bv = b.values;
    let s = 0;
    for (let j = 0; j < bi.length; j++) {
      const x = bi[j];
      if (x < d.length) s += d[x] * bv[j];
    }
    return s;
  }

  /** Back to all zeros. */
  release() {
    if (!this.held) return;
    for (let i = 0; i < this.held.indices.length; i++) this.dense[this.held.indices[i]] = 0;
    this.held = null;
  }
}

/**
 * Rocchio's expanded query: q + weight · (the mean of `others`), cut to its `maxNnz` largest-magnitude entries
 * (ties: lower index first) and L2-normalised, with increasing indices (pseudo-relevance feedback,
 * pipeline/match/rerank.js). Accumulated in a dense row: it runs once per related list.
 * @param {SparseVector} q
 * @param {SparseVector[]} others
 * @param {number} weight
 * @param {number} maxNnz
 * @returns {{indices: Uint32Array, values: Float32Array}}
 */
export function expandQuery(q, others, weight, maxNnz) {
  // Summed in a dense row in the order q, others[0], others[1], … (each entry's terms in that order), the touched
  // indices marked in a bitmap whose scan yields them increasing: no branches per term and no sort (a quarter of
  // the cost of collecting and sorting the touched indices, which a sorted merge's mispredicted branches match).
  let span = 0;
  let total = 0;
  for (const v of [q, ...others]) {
    const k = v.indices.length;
    if (k) span = Math.max(span, v.indices[k - 1] + 1);
    total += k;
  }
  if (acc.length < span) { acc = new Float64Array(span); bits = new Int32Array((span + 31) >>> 5); }
  if (outIdx.length < total) { outIdx = new Uint32Array(total); outVal = new Float64Array(total); magnitudes = new Float64Array(total); }
  const w = weight / others.length;
  for (let t = -1; t < others.length; t++) {
    const v = t < 0 ? q : others[t];
    const f = t < 0 ? 1 : w;
    const vi = v.indices;
    const vv = v.values;
    for (let j = 0; j < vi.length; j++) {
      const d = vi[j];
      acc[d] += f * vv[j];
      bits[d >>> 5] |= 1 << (d & 31);
    }
  }
  // The touched indices in increasing order, the row and the bitmap cleared behind; entries that summed to exactly
  // 0 are not part of the vector.
  const ai = outIdx;
  const av = outVal;
  const mags = magnitudes;
  let n = 0;
  for (let wd = 0; wd < (span + 31) >>> 5; wd++) {
    let word = bits[wd];
    if (word === 0) continue;
    bits[wd] = 0;
    while (word !== 0) {
      const d = (wd << 5) | (31 - Math.clz32(word & -word));
      word &= word - 1;
      const x = acc[d];
      acc[d] = 0;
      if (x !== 0) { ai[n] = d; av[n] = x; mags[n++] = Math.abs(x); }
    }
  }
  let norm = 0;
  if (n > maxNnz) {
    // The maxNnz largest magnitudes; of those equal to the cut-off, the first in index order (the lower indices).
    // Quickselect leaves the maxNnz largest first: the ones above the cut-off are among them.
    const threshold = kthLargest(mags.subarray(0, n), maxNnz);
    let ties = maxNnz;
    for (let i = 0; i < maxNnz; i++) if (mags[i] > threshold) ties--;
    let kept = 0;
    for (let i = 0; i < n; i++) {
      const x = av[i];
      const m = Math.abs(x);
      if (m > threshold || (m === threshold && ties-- > 0)) { ai[kept] = ai[i]; av[kept++] = x; norm += x * x; }
    }
    n = kept;
  } else {
    for (let i = 0; i < n; i++) norm += av[i] * av[i];
  }
  norm = Math.sqrt(norm);
  const values = new Float32Array(n);
  for (let i = 0; i < n; i++) values[i] = av[i] / norm;
  return { indices: ai.slice(0, n), values };
}

/**
 * The dot products of many sparse vectors with one query (the query held once in a DenseScratch, so each equals
 * sparseDot's bit for bit); a null vector scores NaN.
 * @param {SparseVector} query
 * @param {(SparseVector | null)[]} vectors
 * @returns {Float64Array}
 */
export function dotsWith(query, vectors) {
  const out = new Float64Array(vectors.length);
  dotsScratch.hold(query);
  try {
    for (let j = 0; j < vectors.length; j++) {
      const v = vectors[j];
      out[j] = v ? dotsScratch.dot(v) : NaN;
    }
  } finally {
    dotsScratch.release();
  }
  return out;
}

/** dotsWith's scratch (one per thread: the function is synchronous). */
const dotsScratch = new DenseScratch();
