"""Skip-gram Word2Vec on the tokenised corpus file (gensim, ``corpus_file`` mode).

``corpus_file`` mode reads the file itself, one line = one document, so context
windows never cross document boundaries (gensim cuts lines longer than 10,000
tokens into pieces; windows never cross those cuts either). It also runs the
workers without the Python job queue, which is much faster.

Reproducibility: with ``workers=1`` and the same ``seed`` two runs give
identical vectors. With several workers the file is split by byte offsets and
the threads update shared weights in a racy order, so results differ slightly
run to run; that is gensim's own limitation.
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np
from gensim.models import Word2Vec
from gensim.models.callbacks import CallbackAny2Vec
from numpy.typing import NDArray

from .config import Word2VecConfig

# Defaults are the configured ones (pipeline/config/schema/train.js, mirrored by scdv.config): tests/stages/train-config.test.js
# fails when a constructor default here differs.
_DEFAULTS = Word2VecConfig()

__all__ = ["Word2VecTrainer", "EpochCallback", "VocabCheck"]

# (epoch 1-based, epochs, mean loss per word pair on the fixed sample (PairLossSample) or None, elapsed s, eta s)
EpochCallback = Callable[[int, int, "float | None", float, float], None]
# Called with the vocabulary size after the vocabulary scan, before training;
# raise to stop early.
VocabCheck = Callable[[int], None]


# Word pairs of the loss sample: enough for a mean steady to about 0.01, small enough to cost milliseconds.
LOSS_SAMPLE_PAIRS = 10_000


class PairLossSample:
    """The figure shown per epoch: the mean skip-gram negative-sampling loss of one (word, context) pair,
    -log σ(v_c·u_w) - Σ_k log σ(-v_c·u_nk), over a fixed sample of the corpus's pairs with fixed negatives,
    computed in float64 from the current weights at each epoch's end.

    gensim's own figure (get_latest_training_loss) is no such thing: a float32 running sum over the training pairs
    (at 10^7, its step is 1, so the per-pair terms of about 1-4 are rounded away, and the sums of later epochs can
    rise while the model improves), of the thread that finished last when several train, and of a size that grows
    with the corpus. This one is a mean: an untrained model scores (1 + negative)·ln 2 (4.16 with 5 negatives), and
    it falls as the vectors learn, comparable between epochs and between runs of the same settings.
    """

    def __init__(self, model: Word2Vec, corpus_file: str, window: int, negative: int, seed: int,
                 pairs: int = LOSS_SAMPLE_PAIRS) -> None:
        rng = np.random.default_rng(seed)
        index = model.wv.key_to_index
        # Keep each pair with a probability that yields about 2 × pairs over the corpus (at most 2·window per word).
        keep = min(1.0, 2 * pairs / max(1, 2 * window * int(model.corpus_total_words)))
        inputs: list[int] = []
        outputs: list[int] = []
        with open(corpus_file, encoding="utf-8") as f:
            for line in f:
                ids = [index[t] for t in line.split() if t in index]
                for i, w in enumerate(ids):
                    for j in range(max(0, i - window), min(len(ids), i + window + 1)):
                        if j != i and rng.random() < keep:
                            inputs.append(ids[j])
                            outputs.append(w)
        chosen = rng.permutation(len(inputs))[:pairs]
        self.inputs = np.asarray(inputs, dtype=np.int64)[chosen]
        self.outputs = np.asarray(outputs, dtype=np.int64)[chosen]
        cum = np.asarray(model.cum_table, dtype=np.int64)
        draws = rng.integers(0, int(cum[-1]), size=(len(self.inputs), negative)) if len(cum) else np.zeros((0, negative))
        self.negatives = np.searchsorted(cum, draws, side="right").astype(np.int64)
        self.pairs = len(self.inputs)

    def mean_loss(self, model: Word2Vec) -> float | None:
        if self.pairs == 0:
            return None
        total = 0.0
        for lo in range(0, self.pairs, 1000):
            v = model.wv.vectors[self.inputs[lo:lo + 1000]].astype(np.float64)
            pos = np.einsum("ij,ij->i", v, model.syn1neg[self.outputs[lo:lo + 1000]].astype(np.float64))
            neg = np.einsum("ij,ikj->ik", v, model.syn1neg[self.negatives[lo:lo + 1000]].astype(np.float64))
            total += float(np.logaddexp(0.0, -pos).sum() + np.logaddexp(0.0, neg).sum())  # -log σ(x) = log(1 + e^-x)
        return total / self.pairs


class _EpochReporter(CallbackAny2Vec):  # type: ignore[misc]
    def __init__(self, epochs: int, compute_loss: bool, on_epoch: EpochCallback | None,
                 sample: PairLossSample | None = None) -> None:
        self.epochs = epochs
        self.compute_loss = compute_loss
        self.on_epoch = on_epoch
        self.sample = sample
        self.epoch = 0
        self.start = time.perf_counter()
        self.losses: list[float] = []
        self.pair_losses: list[float] = []

    def on_epoch_begin(self, model: Word2Vec) -> None:
        # gensim sums the loss of the whole train() call in one float32: once that total is large, the small
        # per-pair losses lose their low bits, so differences of it between epochs drift (and can even rise).
        # Counting from zero every epoch keeps the sum one epoch's size.
        if self.compute_loss:
            model.running_training_loss = 0.0

    def on_epoch_end(self, model: Word2Vec) -> None:
        self.epoch += 1
        loss: float | None = None
        if self.compute_loss:
            # gensim's sum, kept in epoch_losses_ (in corpus_file mode the share of the thread that finished last);
            # the figure reported is the sample's mean (PairLossSample says why).
            self.losses.append(float(model.get_latest_training_loss()))
            if self.sample is not None:
                loss = self.sample.mean_loss(model)
                if loss is not None:
                    self.pair_losses.append(loss)
        elapsed = time.perf_counter() - self.start
        eta = elapsed / self.epoch * (self.epochs - self.epoch)
        if self.on_epoch is not None:
            self.on_epoch(self.epoch, self.epochs, loss, elapsed, eta)


class Word2VecTrainer:
    """Trains skip-gram word vectors from a corpus file.

    Parameters
    ----------
    vector_size, window, negative, sample, min_count, epochs, workers, seed, sg, hs
        gensim Word2Vec parameters (sg=1 skip-gram, hs=0 negative sampling only).
    compute_loss : bool
        Track gensim's training loss (reported per epoch).
    on_epoch : EpochCallback or None
        Progress hook called after each epoch.
    check_vocab : VocabCheck or None
        Called with the vocabulary size before training starts.

    Every default is the configured one (scdv.config.Word2VecConfig).

    Attributes (after fit)
    ----------------------
    words_ : list[str], length n_words, most frequent first
    counts_ : ndarray (n_words,) int64, corpus frequency of each word
    vectors_ : ndarray (n_words, vector_size) float32, raw (not normalised)
    corpus_documents_ : int, documents (lines) seen
    corpus_tokens_ : int, tokens seen (before min_count)
    epoch_losses_ : list[float], gensim's per-epoch loss sum when compute_loss (float32; see PairLossSample)
    epoch_pair_losses_ : list[float], mean loss per word pair on the fixed sample after each epoch (compute_loss)
    initial_pair_loss_ : float or None, the same before training ((1 + negative)·ln 2)
    loss_sample_pairs_ : int, pairs in the sample
    """

    def __init__(
        self,
        *,
        vector_size: int = _DEFAULTS.vector_size,
        window: int = _DEFAULTS.window,
        negative: int = _DEFAULTS.negative,
        sample: float = _DEFAULTS.sample,
        min_count: int = _DEFAULTS.min_count,
        epochs: int = _DEFAULTS.epochs,
        workers: int = _DEFAULTS.workers,
        seed: int = _DEFAULTS.seed,
        sg: int = _DEFAULTS.sg,
        hs: int = _DEFAULTS.hs,
        compute_loss: bool = _DEFAULTS.compute_loss,
        on_epoch: EpochCallback | None = None,
        check_vocab: VocabCheck | None = None,
    ) -> None:
        self.vector_size = vector_size
        self.window = window
        self.negative = negative
        self.sample = sample
        self.min_count = min_count
        self.epochs = epochs
        self.workers = workers
        self.seed = seed
        self.sg = sg
        self.hs = hs
        self.compute_loss = compute_loss
        self.on_epoch = on_epoch
        self.check_vocab = check_vocab

    def fit(self, corpus_file: str) -> Word2VecTrainer:
        """Build the vocabulary, check it, train.

        Parameters
        ----------
        corpus_file : str
            UTF-8, one document per line, tokens separated by spaces.
        """
        model = Word2Vec(
            vector_size=self.vector_size,
            window=self.window,
            negative=self.negative,
            sample=self.sample,
            min_count=self.min_count,
            workers=self.workers,
            seed=self.seed,
            sg=self.sg,
            hs=self.hs,
            epochs=self.epochs,
            compute_loss=self.compute_loss,
        )
        model.build_vocab(corpus_file=corpus_file)
        n_words = len(model.wv)
        if self.check_vocab is not None:
            self.check_vocab(n_words)
        if n_words == 0:
            raise ValueError(f"no word occurs min_count={self.min_count} times in {corpus_file}")
        sample = PairLossSample(model, corpus_file, self.window, self.negative, self.seed) if self.compute_loss and self.negative > 0 else None
        self.initial_pair_loss_ = sample.mean_loss(model) if sample is not None else None
        self.loss_sample_pairs_ = sample.pairs if sample is not None else 0
        reporter = _EpochReporter(self.epochs, self.compute_loss, self.on_epoch, sample)
        model.train(
            corpus_file=corpus_file,
            total_words=model.corpus_total_words,
            total_examples=model.corpus_count,
            epochs=self.epochs,
            compute_loss=self.compute_loss,
            callbacks=[reporter],
        )
        wv = model.wv
        self.words_: list[str] = list(wv.index_to_key)
        self.counts_: NDArray[np.int64] = np.array([wv.get_vecattr(w, "count") for w in self.words_], dtype=np.int64)
        self.vectors_: NDArray[np.float32] = np.ascontiguousarray(wv.vectors, dtype=np.float32)
        self.corpus_documents_ = int(model.corpus_count)
        self.corpus_tokens_ = int(model.corpus_total_words)
        self.epoch_losses_ = reporter.losses
        self.epoch_pair_losses_ = reporter.pair_losses
        return self
