"""Word2Vec wrapper: vocabulary order/counts and single-worker reproducibility."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from corpus_factory import two_group_corpus
from scdv.word2vec import Word2VecTrainer


def small(**kw: Any) -> Word2VecTrainer:
    base: dict[str, Any] = dict(vector_size=12, window=3, negative=3, sample=0, min_count=1, epochs=3, workers=1, seed=5)
    base.update(kw)
    return Word2VecTrainer(**base)


def test_vocab_counts_and_order(tmp_path: Path) -> None:
    path = two_group_corpus(tmp_path / "c.txt", lines=60)
    counts = Counter(open(path, encoding="utf-8").read().split())
    epochs: list[tuple[int, int, float | None]] = []
    t = small(on_epoch=lambda e, n, loss, el, eta: epochs.append((e, n, loss))).fit(str(path))
    assert sorted(t.words_) == sorted(counts)
    assert [counts[w] for w in t.words_] == t.counts_.tolist()
    assert np.all(np.diff(t.counts_) <= 0), "most frequent first"
    assert t.vectors_.dtype == np.float32 and t.vectors_.shape == (len(counts), 12)
    assert [e for e, _, _ in epochs] == [1, 2, 3] and all(loss is not None for _, _, loss in epochs)
    assert t.corpus_documents_ == 60


def test_single_worker_same_seed_is_reproducible(tmp_path: Path) -> None:
    path = str(two_group_corpus(tmp_path / "c.txt", lines=80))
    a = small().fit(path)
    b = small().fit(path)
    c = small(seed=6).fit(path)
    assert a.words_ == b.words_
    np.testing.assert_array_equal(a.vectors_, b.vectors_)
    assert not np.array_equal(a.vectors_, c.vectors_)


def test_min_count_and_vocab_check(tmp_path: Path) -> None:
    path = tmp_path / "c.txt"
    path.write_text("猫 猫 犬\n猫 鳥\n", encoding="utf-8")
    sizes: list[int] = []
    t = small(min_count=2, check_vocab=sizes.append).fit(str(path))
    assert t.words_ == ["猫"] and sizes == [1]


def test_epoch_loss_is_that_epochs_own(tmp_path: Path) -> None:
    """Each reported loss is its epoch's alone, as if that epoch were trained by itself.

    gensim sums the loss of a whole train() call in one float32; differences of that running total between epochs
    lose the small per-pair losses once the total is large, so they drift (the last epochs even rose). The reference
    trains the same model one epoch per train() call (gensim counts each call from zero) with the same learning-rate
    schedule, which gives the same training and the exact per-epoch sums.
    """
    from gensim.models import Word2Vec

    path = str(two_group_corpus(tmp_path / "c.txt", lines=6000))
    kw: dict[str, Any] = dict(vector_size=20, window=5, negative=5, sample=0, min_count=1, workers=1, seed=3, sg=1, hs=0)
    epochs = 8
    trainer = Word2VecTrainer(epochs=epochs, compute_loss=True, **kw).fit(path)
    model = Word2Vec(epochs=epochs, compute_loss=True, **kw)
    model.build_vocab(corpus_file=path)
    a0, a1 = model.alpha, model.min_alpha
    reference = []
    for e in range(epochs):
        model.train(corpus_file=path, total_words=model.corpus_total_words, total_examples=model.corpus_count, epochs=1,
                    compute_loss=True, start_alpha=a0 - (a0 - a1) * e / epochs, end_alpha=a0 - (a0 - a1) * (e + 1) / epochs)
        reference.append(model.get_latest_training_loss())
    np.testing.assert_allclose(trainer.epoch_losses_, reference, rtol=1e-3)


def test_reported_loss_is_a_mean_per_pair_that_falls(tmp_path: Path) -> None:
    """The figure reported per epoch is the mean loss of one word pair on a fixed sample, not gensim's float32 sum.

    Untrained (input vectors small, output vectors zero) every pair scores (1 + negative)·ln 2; training lowers it,
    and the figure does not grow with the corpus as gensim's sum does.
    """
    path = str(two_group_corpus(tmp_path / "c.txt", lines=3000))
    reported: list[float | None] = []
    t = small(negative=5, epochs=4, compute_loss=True, on_epoch=lambda e, n, loss, el, eta: reported.append(loss)).fit(path)
    assert t.initial_pair_loss_ is not None and abs(t.initial_pair_loss_ - 6 * np.log(2)) < 0.01
    assert reported == t.epoch_pair_losses_ and len(reported) == 4
    assert 0 < t.loss_sample_pairs_ <= 10_000
    assert all(loss is not None and loss < t.initial_pair_loss_ for loss in reported)
    assert reported[-1] < reported[0], reported
    # gensim's figure is a sum of the epoch's pairs: thousands of times the mean, and not what is reported
    assert t.epoch_losses_[0] > 100 * reported[0]
    bigger = small(negative=5, epochs=4, compute_loss=True).fit(str(two_group_corpus(tmp_path / "d.txt", lines=6000)))
    assert abs(bigger.epoch_pair_losses_[-1] - reported[-1]) < 0.5 * reported[-1], "a mean: about the same on twice the corpus"
