// Schema of the sections train, embed and eval (conventions: ./section.js). The training parameters are checked
// again on the Python side (workers/scdv/config.py); tests/stages/train-config.test.js keeps both in step, and
// the CLI flags that set them (--dims, --clusters, …) are checked against these ranges (TRAIN_RANGES).
import { DAMPING, section } from './section.js';

const seed = { type: 'integer', minimum: 0, maximum: 2 ** 32 - 1, default: 1 };

export const train = section("The Python training stages' parameters (workers/scdv/config.py checks them again).", {
  word2vec: section('Word vectors (gensim Word2Vec parameters of the same names).', {
    vector_size: { type: 'integer', minimum: 1, maximum: 1000, default: 200, description: 'Dimensions of a word vector (--dims).', why: 'docs/relevance.md § Training-side defaults.' },
    window: { type: 'integer', minimum: 1, maximum: 100, default: 10, description: 'Context window, words each side.', why: 'docs/relevance.md § Training-side defaults.' },
    negative: { type: 'integer', minimum: 0, maximum: 100, default: 10, description: 'Negative samples per positive one (0: none).' },
    sample: { type: 'number', minimum: 0, maximum: 1, default: 1e-3, description: 'Down-sampling threshold of frequent words.' },
    min_count: { type: 'integer', minimum: 1, default: 5, description: 'Words seen fewer times are left out of the vocabulary.' },
    epochs: { type: 'integer', minimum: 1, maximum: 1000, default: 10, description: 'Passes over the corpus.', why: 'docs/relevance.md § Training-side defaults.' },
    workers: { type: 'integer', minimum: 1, maximum: 256, default: 2, description: 'Training threads.' },
    seed: { ...seed, description: 'Random seed (a fixed seed and one worker train the same vectors).' },
    sg: { type: 'integer', minimum: 0, maximum: 1, default: 1, description: '1: skip-gram, 0: CBOW.' },
    hs: { type: 'integer', minimum: 0, maximum: 1, default: 0, description: '1: hierarchical softmax, 0: negative sampling.' },
    compute_loss: { type: 'boolean', default: true, description: 'Record the training loss (shown in the training log).' },
  }),
  gmm: section('The Gaussian mixture that clusters the word vectors.', {
    n_components: {
      type: ['integer', 'null'], minimum: 1, maximum: 1000, default: null,
      note: 'null: √(N/2) for N training documents, rounded, from 2 to 60',
      description: 'Clusters K (--clusters; --clusters auto is null).',
      why: 'against 60 on 1,435 and 2,896 documents, ad matching +1.3 to +1.8 P@10 on titles as ads and +1.8 to +4.5 on the 108 sample ads, related lists the same (docs/matching.md § The cluster count).',
    },
    covariance_type: { type: 'string', enum: ['tied', 'diag', 'full'], default: 'tied', description: 'Covariance of the components.', why: 'docs/relevance.md § Training-side defaults.' },
    max_iter: { type: 'integer', minimum: 1, default: 100, description: 'EM iterations at most.' },
    tol: { type: 'number', exclusiveMinimum: 0, default: 1e-3, description: 'EM stops when the lower bound gains less than this.' },
    reg_covar: { type: 'number', minimum: 0, default: 1e-6, description: 'Added to the covariance diagonal.' },
    init_params: { type: 'string', enum: ['kmeans', 'k-means++', 'random', 'random_from_data'], default: 'kmeans', description: 'How the components start.' },
    seed: { ...seed, description: 'Random seed of the initialisation.' },
    max_fit_words: { type: 'integer', minimum: 1, default: 200_000, description: 'Words the mixture is fitted on at most (a sample of the vocabulary).' },
    dtype: { type: 'string', enum: ['float32', 'float64'], default: 'float32', description: 'Floating-point type of the fit.' },
    n_init: { type: 'integer', minimum: 1, maximum: 100, default: 1, description: 'Fits from different starts; the best is kept.' },
  }),
  topics: section('Word-topic vectors: each word vector spread over its clusters by P(k|w).', {
    prob_threshold: { type: 'number', minimum: 0, maximum: 1, default: 0.0, description: 'P(k|w) below this counts as 0.' },
    keep_fraction: {
      type: ['number', 'null'], exclusiveMinimum: 0, maximum: 1, default: 0.03,
      description: "Entries kept per word-topic vector, as a fraction of its width (keep_count wins when set).", why: 'docs/relevance.md § Training-side defaults.',
    },
    keep_count: { type: ['integer', 'null'], minimum: 1, default: null, description: 'Entries kept per word-topic vector (null: keep_fraction).' },
    chunk_words: { type: 'integer', minimum: 1, default: 2000, description: 'Words computed per chunk (bounds memory).' },
    vector_norm: { type: 'string', enum: ['l2', 'raw'], default: 'l2', description: 'Word vectors normalised to unit length first, or raw.', why: 'docs/relevance.md § Training-side defaults.' },
    idf_power: {
      type: 'number', minimum: -10, maximum: 10, default: -2,
      description: 'wtv(w) = idf(w)^idf_power · P(k|w)·v_w (1 in the SCDV paper).',
      why: 'rare names outweighed topical words at 1 (docs/relevance.md § Training-side defaults).',
    },
  }),
});

const damping = {
  type: 'string', enum: DAMPING,
  description: "Term repetition damping: 'binary' (each distinct word once), 'log' (1 + ln tf), 'raw' (tf), or 'saturate' (tf (k + 1) / (tf + k), k = embed.saturationK).",
};
const stopwords = {
  type: 'string', enum: ['keep', 'drop'],
  description: "'keep': the lexical block's words include the stop words (the model's lexicon.txt; 'drop' for a model without one).",
};

export const embed = section('Document vectors (pipeline/embed/): the same settings serve batch indexing and requests.', {
  damping: { ...damping, default: 'binary', why: 'beat log by 1.4 points of P@10 and saturate by 0.8: a brand repeated ten times must not become the whole vector (docs/relevance.md § The lexical block\'s weighting).' },
  saturationK: { type: 'number', exclusiveMinimum: 0, default: 1.2, description: "k of the 'saturate' damping." },
  keepFraction: {
    type: 'number', exclusiveMinimum: 0, maximum: 1, default: 0.02,
    description: 'Entries kept per document vector, by magnitude: keepCount when set, else this fraction of the width.',
    why: 'docs/relevance.md § Sparsity, BENCHMARKS.md § Sparsity.',
  },
  keepCount: { type: ['integer', 'null'], minimum: 1, default: null, description: 'Entries kept per document vector (null: keepFraction).' },
  hybrid: section('Hybrid layout: the SCDV block weighted α and a lexical TF-IDF block (damped tf, the model\'s IDF) weighted 1 − α in one sparse vector, so one dot product is α·cos(SCDV) + (1 − α)·cos(TF-IDF). alpha 1: pure SCDV (width K·d); below 1 the width grows by the vocabulary size.', {
    alpha: {
      type: 'number', minimum: 0, maximum: 1, default: 0.05, description: "The SCDV block's weight α.",
      why: 'SCDV cosines are compressed, so a small α already balances the blocks (docs/relevance.md § The lexical block\'s tokens and idf power).',
    },
    maxTerms: { type: ['integer', 'null'], minimum: 1, default: null, description: "Only the heaviest words of the lexical block are kept (null: all the document's known words)." },
    damping: { ...damping, description: "The lexical block's tf damping (as embed.damping).", default: 'binary', why: '+1.3 P@10 held out over log (docs/relevance.md § The lexical block\'s weighting).' },
    stopwords: { ...stopwords, default: 'keep', why: "with idfPower, +3.3 P@10 held out (docs/relevance.md § The lexical block's tokens and idf power)." },
    idfPower: {
      type: 'number', default: 0.25, description: "The lexical block's weight is damp(tf) · idf^idfPower.",
      why: "best with the stop words kept (docs/relevance.md § The lexical block's tokens and idf power).",
    },
  }),
});

export const adEmbed = section("Ad collections (short copy that /v1/match ranks for a page) get this α and keepFraction (keepCount null) over `embed` when first indexed or written, then keep their recorded layout; pages keep `embed`'s. A page–ad score weighs the SCDV cosine by √(α_page·α_ad).", {
  collections: {
    type: 'array', default: ['ads'], description: 'The collections that hold ads.',
    items: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,63}$', ruleText: 'a collection name (1-64 of a-z, 0-9, "_", "-")' },
  },
  alpha: {
    type: 'number', minimum: 0, exclusiveMaximum: 1, ruleText: 'a number from 0 up to, not including, 1', default: 0.5, note: 'pure SCDV pages (embed.hybrid.alpha 1) give pure SCDV ads',
    description: "The ads' SCDV block weight α in the hybrid layout (below 1: an ad of a hybrid page's width).",
    why: 'P@10 +3.2 on titles as ads, +7 on the 108 sample ads, held out (docs/matching.md § Ads\' own layout).',
  },
  keepFraction: {
    type: 'number', exclusiveMinimum: 0, maximum: 1, default: 0.1, description: "The ads' fraction of SCDV entries kept.",
    why: 'ranks as 1 does with half the entries (docs/matching.md § Ads\' own layout).',
  },
  expand: section("Each ad's stored vector is its own plus weight/neighbours × the sum of the vectors of its `neighbours` nearest pages of `from` (by dot product with its own vector, not renormalised): the ad borrows the words and topics of the pages it would be shown on. Its own vector is kept in a companion collection (`<ads>__own`), so the ads are expanded again when `from` is re-indexed (docs/matching.md § Ad expansion).", {
    from: {
      type: 'string', default: 'articles', pattern: '^[a-z0-9][a-z0-9_-]{0,63}$', ruleText: 'a collection name (1-64 of a-z, 0-9, "_", "-")',
      description: 'The page collection the ads borrow from.',
    },
    neighbours: {
      type: 'integer', minimum: 1, maximum: 100, default: 10, description: 'Pages borrowed from per ad.',
      why: '10 beats 5 and 20 at weight 1, held out (docs/matching.md § Ad expansion).',
    },
    weight: {
      type: ['number', 'null'], minimum: 0, maximum: 10, default: 1, note: '0 or null: ads are stored as embedded (no expansion)',
      description: "The borrowed pages' total weight against the ad's own vector.",
      why: 'P@10 +4.9 on titles as ads over the unexpanded ads, held out (docs/matching.md § Ad expansion).',
    },
  }),
});

export const evalSection = section('`scdv eval --classify`: the vectors of the linear classifier, not the served embed\'s.', {
  classify: section('Settings of the classifier\'s vectors (as embed.hybrid).', {
    alpha: { type: 'number', minimum: 0, maximum: 1, default: 0.1, description: "The SCDV block's weight α.", why: 'docs/relevance.md § Classifier goal.' },
    keepFraction: { type: 'number', exclusiveMinimum: 0, maximum: 1, default: 1, description: 'Entries kept per vector, as a fraction of the width.', why: 'docs/relevance.md § Classifier goal.' },
    damping: { ...damping, default: 'log', description: "The lexical block's tf damping (as embed.damping).", why: 'docs/relevance.md § Classifier goal.' },
    stopwords: { ...stopwords, default: 'drop', why: 'docs/relevance.md § Classifier goal.' },
    idfPower: { type: 'number', default: 1, description: "The lexical block's weight is damp(tf) · idf^idfPower.", why: 'docs/relevance.md § Classifier goal.' },
  }),
});
