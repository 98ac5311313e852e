"""Sparse word-topic vectors (SCDV, Mekala et al. 2017, section 3).

For word w with vector v_w (d,), cluster posteriors P(k|w) (K,) and idf(w)::

    wtv(w) = idf(w)^idf_power * [P(1|w) v_w, P(2|w) v_w, ..., P(K|w) v_w]      shape (K*d,)

``idf_power`` is 1 in the paper. On livedoor news (docs/relevance.md) lower powers retrieved same-category
articles better: IDF lets rare words (names, brands) outweigh the topical vocabulary an article shares with
its neighbours. Scaling a row does not change which of its entries the sparsification keeps.

feature index of (cluster k, dimension j) = k*d + j.

Which v_w: the reference implementation (github.com/dheeraj7596/SCDV,
Word2Vec.py) calls ``model.init_sims(replace=True)`` before saving, which
overwrites the word vectors with their L2-normalised versions; SCDV.py then fits
the GMM on and builds word-topic vectors from those same unit vectors. We follow
it: ``vector_norm="l2"`` (default) uses v_w / ||v_w||, the vectors the GMM was
fitted on. ``vector_norm="raw"`` uses the raw Word2Vec vectors instead (their
norm grows with frequency, so frequent words would weigh more).

Sparsification, per word, in this order:

1. ``prob_threshold``: cluster blocks with P(k|w) < prob_threshold are dropped
   (set to zero). 0 keeps every block.
2. top-n by magnitude: keep the n largest |values| of the row, where
   n = min(ceil(keep_fraction * K * d), keep_count), either limit may be None
   (no limit). Ties at the cut are broken towards the lower feature index, so
   a row never keeps more than n entries. Zeros are never stored.

Kept values are not rescaled. Words are processed in chunks, so memory is
O(chunk * K * d), never O(n_words * K * d).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterator

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .config import TopicsConfig
from .wtv_format import WordTopicWriter

__all__ = ["WordTopicVectorizer", "VECTOR_NORMS"]

VECTOR_NORMS = ("l2", "raw")
# Peak memory per chunk is about 14 bytes per dense value (values, |values|,
# partition copy, masks); 8M values keeps a chunk near 110 MB.
_MAX_CHUNK_VALUES = 8_000_000

ChunkCallback = Callable[[int, int], None]  # (words done, total words)
Csr = tuple[NDArray[np.int64], NDArray[np.uint32], NDArray[np.float32]]
# Defaults are the configured ones (pipeline/config/schema/train.js, mirrored by scdv.config): tests/stages/train-config.test.js
# fails when a constructor default here differs.
_DEFAULTS = TopicsConfig()


def l2_normalize(vectors: NDArray[np.floating]) -> NDArray[np.float32]:
    """Rows scaled to unit L2 norm (zero rows stay zero), float32 (n, d)."""
    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return v / norms


class WordTopicVectorizer:
    """Builds sparse SCDV word-topic vectors.

    Parameters
    ----------
    prob_threshold : float in [0, 1]
        Cluster blocks with P(k|w) below it are dropped.
    keep_fraction : float in (0, 1] or None
        Keep at most ceil(keep_fraction * K * d) entries per word.
    keep_count : int or None
        Keep at most this many entries per word.
    chunk_words : int
        Words per chunk (lowered automatically so that a chunk holds at most
        8M dense values).
    vector_norm : {"l2", "raw"}
        Word vectors used in the product; see the module docstring.
    idf_power : float
        Exponent of idf(w) in the product (1: the paper; 0: no idf weighting; the configured default is -2).

    Every default is the configured one (scdv.config.TopicsConfig).
    """

    def __init__(
        self,
        *,
        prob_threshold: float = _DEFAULTS.prob_threshold,
        keep_fraction: float | None = _DEFAULTS.keep_fraction,
        keep_count: int | None = _DEFAULTS.keep_count,
        chunk_words: int = _DEFAULTS.chunk_words,
        vector_norm: str = _DEFAULTS.vector_norm,
        idf_power: float = _DEFAULTS.idf_power,
    ) -> None:
        self.prob_threshold = prob_threshold
        self.keep_fraction = keep_fraction
        self.keep_count = keep_count
        self.chunk_words = chunk_words
        self.vector_norm = vector_norm
        self.idf_power = idf_power

    def n_keep(self, n_features: int) -> int:
        """Entries kept per word for rows of ``n_features`` = K*d values."""
        limit = n_features
        if self.keep_fraction is not None:
            limit = min(limit, max(1, math.ceil(self.keep_fraction * n_features)))
        if self.keep_count is not None:
            limit = min(limit, int(self.keep_count))
        return limit

    def _check(self, vectors: ArrayLike, posteriors: ArrayLike, idf: ArrayLike) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32]]:
        if self.vector_norm not in VECTOR_NORMS:
            raise ValueError(f"vector_norm must be one of {VECTOR_NORMS}")
        V = np.asarray(vectors, dtype=np.float32)
        P = np.asarray(posteriors, dtype=np.float32)
        w = np.asarray(idf, dtype=np.float32)
        if V.ndim != 2 or P.ndim != 2 or w.ndim != 1 or not (V.shape[0] == P.shape[0] == w.shape[0]):
            raise ValueError(f"shapes disagree: vectors {V.shape}, posteriors {P.shape}, idf {w.shape}")
        return V, P, w

    def transform_chunk(self, vectors: ArrayLike, posteriors: ArrayLike, idf: ArrayLike) -> Csr:
        """Sparse word-topic rows of a chunk of words.

        Parameters
        ----------
        vectors : (m, d) word vectors (raw; normalised here if vector_norm="l2")
        posteriors : (m, K) P(k|w)
        idf : (m,)

        Returns
        -------
        (row_lengths (m,) int64, cols (nnz,) uint32, vals (nnz,) float32), cols
        increasing within each row.
        """
        V, P, w = self._check(vectors, posteriors, idf)
        if self.idf_power != 1.0:
            w = np.power(w, np.float32(self.idf_power), dtype=np.float32)
        if self.vector_norm == "l2":
            V = l2_normalize(V)
        m, d = V.shape
        k = P.shape[1]
        if self.prob_threshold > 0:
            P = np.where(P >= self.prob_threshold, P, np.float32(0))
        dense = ((w[:, None] * P)[:, :, None] * V[:, None, :]).reshape(m, k * d)
        keep = self._keep_mask(dense, self.n_keep(k * d))
        rows, cols = np.nonzero(keep)  # row-major, so cols ascend within a row
        lengths = np.bincount(rows, minlength=m).astype(np.int64)
        return lengths, cols.astype(np.uint32), dense[rows, cols].astype(np.float32)

    @staticmethod
    def _keep_mask(dense: NDArray[np.float32], n_keep: int) -> NDArray[np.bool_]:
        """True for the n_keep largest non-zero |values| of each row."""
        mag = np.abs(dense)
        nonzero = mag > 0
        if n_keep >= dense.shape[1]:
            return nonzero
        # kth largest magnitude per row; the partition works on a copy
        kth = -np.partition(-mag, n_keep - 1, axis=1)[:, n_keep - 1 : n_keep]
        above = mag > kth
        tie = (mag == kth) & nonzero
        room = n_keep - above.sum(axis=1, keepdims=True)
        # keep ties left to right until the row has n_keep entries
        return above | (tie & (np.cumsum(tie, axis=1) <= room))

    def iter_chunks(
        self,
        vectors: ArrayLike,
        posteriors: ArrayLike,
        idf: ArrayLike,
    ) -> Iterator[tuple[int, Csr]]:
        """Yield (first word index, transform_chunk result) over all words."""
        V, P, w = self._check(vectors, posteriors, idf)
        n, d = V.shape
        k = P.shape[1]
        step = max(1, min(self.chunk_words, _MAX_CHUNK_VALUES // max(1, k * d)))
        for s in range(0, n, step):
            yield s, self.transform_chunk(V[s : s + step], P[s : s + step], w[s : s + step])

    def transform(self, vectors: ArrayLike, posteriors: ArrayLike, idf: ArrayLike) -> Csr:
        """All rows in memory as (row_ptr (n+1,), cols, vals); for small inputs and tests."""
        lens, cols, vals = [], [], []
        for _, (ln, c, v) in self.iter_chunks(vectors, posteriors, idf):
            lens.append(ln)
            cols.append(c)
            vals.append(v)
        row_ptr = np.concatenate([[0], np.cumsum(np.concatenate(lens))]).astype(np.int64)
        return row_ptr, np.concatenate(cols), np.concatenate(vals)

    def write(
        self,
        path: str,
        words: list[str],
        vectors: ArrayLike,
        posteriors: ArrayLike,
        idf: ArrayLike,
        on_chunk: ChunkCallback | None = None,
    ) -> dict[str, Any]:
        """Stream all word-topic rows into ``path`` (word_topics.bin format).

        Returns counts: n_words, n_clusters, dim, nnz, mean_nnz_per_word, density.
        """
        V = np.asarray(vectors)
        P = np.asarray(posteriors)
        n, d = V.shape
        k = P.shape[1]
        if len(words) != n:
            raise ValueError(f"{len(words)} words for {n} vectors")
        with WordTopicWriter(path, words, k, d) as writer:
            for start, (lens, cols, vals) in self.iter_chunks(V, P, idf):
                writer.add_rows(lens, cols, vals)
                if on_chunk is not None:
                    on_chunk(start + lens.size, n)
            nnz = writer.nnz
        return {
            "n_words": n,
            "n_clusters": k,
            "dim": d,
            "nnz": nnz,
            "mean_nnz_per_word": nnz / n,
            "density": nnz / (n * k * d),
        }
