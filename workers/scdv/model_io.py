"""Files of a model directory, each written atomically (temp name + os.replace).

    vocab.txt          one line per word, vocabulary order (most frequent first):
                       ``word<TAB>count<TAB>idf`` (idf has 9 significant digits);
                       before the idf stage the idf column is absent: ``word<TAB>count``
    word_vectors.npy   float32 (n_words, dim), raw Word2Vec vectors, vocabulary order
    gmm.npz            weights (K,), means (K, d), covariances, precisions_cholesky,
                       covariance_type (str), loglik_history (n_iter,), n_iter, converged
    posteriors.npy     float32 (n_words, K), P(k|w) in vocabulary order
    word_topics.bin    see scdv.wtv_format
    clusters.tsv       cluster<TAB>weight<TAB>n_words<TAB>top words (space separated),
                       a human check of the topics
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import InputError

if TYPE_CHECKING:  # imported where a GMM is loaded: it brings scikit-learn, a second of start-up the other stages skip
    from .gmm import FastGaussianMixture

__all__ = [
    "VOCAB_FILE", "VECTORS_FILE", "GMM_FILE", "POSTERIORS_FILE", "TOPICS_FILE", "CLUSTERS_FILE",
    "Vocab", "atomic_path", "save_vocab", "load_vocab", "save_word_vectors", "load_word_vectors",
    "save_gmm", "load_gmm", "save_posteriors_writer", "load_posteriors", "save_clusters",
]

VOCAB_FILE = "vocab.txt"
VECTORS_FILE = "word_vectors.npy"
GMM_FILE = "gmm.npz"
POSTERIORS_FILE = "posteriors.npy"
TOPICS_FILE = "word_topics.bin"
CLUSTERS_FILE = "clusters.tsv"


@dataclass(frozen=True)
class Vocab:
    words: list[str]
    counts: NDArray[np.int64]
    idf: NDArray[np.float64] | None


@contextlib.contextmanager
def atomic_path(path: str) -> Iterator[str]:
    """Yield a temp path next to ``path``; rename it over ``path`` on success."""
    tmp = path + ".tmp"
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _require(path: str, stage: str) -> None:
    if not os.path.exists(path):
        raise InputError(f"{path} not found: run the {stage} stage first (or the 'all' stage)")


def save_vocab(model_dir: str, words: Sequence[str], counts: ArrayLike, idf: ArrayLike | None = None) -> None:
    """Write vocab.txt (words must not contain tabs or newlines)."""
    counts_a = np.asarray(counts)
    idf_a = None if idf is None else np.asarray(idf, dtype=np.float64)
    with atomic_path(os.path.join(model_dir, VOCAB_FILE)) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        for i, w in enumerate(words):
            if "\t" in w or "\n" in w:
                raise ValueError(f"word {w!r} contains a tab or newline")
            if idf_a is None:
                fh.write(f"{w}\t{int(counts_a[i])}\n")
            else:
                fh.write(f"{w}\t{int(counts_a[i])}\t{idf_a[i]:.9g}\n")


def load_vocab(model_dir: str) -> Vocab:
    path = os.path.join(model_dir, VOCAB_FILE)
    _require(path, "word2vec")
    words: list[str] = []
    counts: list[int] = []
    idf: list[float] = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            words.append(parts[0])
            counts.append(int(parts[1]))
            if len(parts) > 2:
                idf.append(float(parts[2]))
    has_idf = len(idf) == len(words) and len(words) > 0
    return Vocab(words, np.asarray(counts, dtype=np.int64), np.asarray(idf) if has_idf else None)


def save_word_vectors(model_dir: str, vectors: ArrayLike) -> None:
    with atomic_path(os.path.join(model_dir, VECTORS_FILE)) as tmp, open(tmp, "wb") as fh:
        np.save(fh, np.asarray(vectors, dtype=np.float32))


def load_word_vectors(model_dir: str, mmap: bool = False) -> NDArray[np.float32]:
    path = os.path.join(model_dir, VECTORS_FILE)
    _require(path, "word2vec")
    return np.load(path, mmap_mode="r" if mmap else None)


def save_gmm(model_dir: str, gmm: FastGaussianMixture) -> None:
    with atomic_path(os.path.join(model_dir, GMM_FILE)) as tmp, open(tmp, "wb") as fh:
        np.savez(
            fh,
            weights=gmm.weights_,
            means=gmm.means_,
            covariances=gmm.covariances_,
            precisions_cholesky=gmm.precisions_cholesky_,
            covariance_type=np.array(gmm.covariance_type),
            loglik_history=np.asarray(gmm.loglik_history_, dtype=np.float64),
            n_iter=np.array(gmm.n_iter_),
            converged=np.array(gmm.converged_),
        )


def load_gmm(model_dir: str, **kwargs: Any) -> FastGaussianMixture:
    """Rebuild the fitted FastGaussianMixture (kwargs go to its constructor)."""
    from .gmm import FastGaussianMixture
    path = os.path.join(model_dir, GMM_FILE)
    _require(path, "gmm")
    with np.load(path) as z:
        gm = FastGaussianMixture.from_params(
            z["weights"], z["means"], z["covariances"], str(z["covariance_type"]), **kwargs
        )
        gm.loglik_history_ = z["loglik_history"].tolist()
        gm.n_iter_ = int(z["n_iter"])
        gm.converged_ = bool(z["converged"])
    return gm


@contextlib.contextmanager
def save_posteriors_writer(model_dir: str, n_words: int, n_components: int) -> Iterator[NDArray[np.float32]]:
    """Yield a writable (n_words, K) float32 memmap that becomes posteriors.npy."""
    with atomic_path(os.path.join(model_dir, POSTERIORS_FILE)) as tmp:
        mm = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(n_words, n_components))
        yield mm
        mm.flush()
        del mm


def load_posteriors(model_dir: str, mmap: bool = True) -> NDArray[np.float32]:
    path = os.path.join(model_dir, POSTERIORS_FILE)
    _require(path, "gmm")
    return np.load(path, mmap_mode="r" if mmap else None)


def save_clusters(model_dir: str, words: Sequence[str], posteriors: NDArray[np.floating], weights: ArrayLike, top: int = 20) -> None:
    """clusters.tsv: for each cluster its most frequent words among those assigned to it."""
    labels = np.argmax(np.asarray(posteriors), axis=1)
    w = np.asarray(weights)
    with atomic_path(os.path.join(model_dir, CLUSTERS_FILE)) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write("cluster\tweight\tn_words\ttop_words\n")
        for k in range(w.size):
            members = np.flatnonzero(labels == k)  # vocabulary order = frequency order
            fh.write(f"{k}\t{w[k]:.6f}\t{members.size}\t{' '.join(words[i] for i in members[:top])}\n")
