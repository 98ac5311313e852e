"""Smoothed inverse document frequencies of the vocabulary words.

    idf(w) = ln((1 + N) / (1 + df(w))) + 1

N is the number of documents (non-blank lines of the corpus file), df(w) the
number of documents that contain w at least once. This is scikit-learn's
``TfidfVectorizer(smooth_idf=True)`` formula, which the SCDV reference code
uses: as if one extra document contained every word once, so no idf is
infinite and a word in every document still gets idf 1. Blank lines (documents
that lost all tokens in tokenising) are not counted in N.

The file is streamed line by line, so memory is O(vocabulary).
"""

from __future__ import annotations

import os
import time
from typing import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from .errors import InputError

__all__ = ["IdfCounter", "smoothed_idf"]

# (bytes read, total bytes, documents so far)
ProgressCallback = Callable[[int, int, int], None]


def smoothed_idf(df: NDArray[np.int64], n_documents: int) -> NDArray[np.float64]:
    """ln((1 + N) / (1 + df)) + 1, elementwise; df shape (n_words,)."""
    return np.log((1.0 + n_documents) / (1.0 + np.asarray(df, dtype=np.float64))) + 1.0


class IdfCounter:
    """Counts document frequencies of a fixed vocabulary over a corpus file.

    Parameters
    ----------
    vocabulary : sequence of str, length n_words
    on_progress : callable(bytes_read, total_bytes, documents) or None
        Called about once per ``progress_interval_s`` seconds.

    Attributes (after fit)
    ----------------------
    df_ : ndarray (n_words,) int64
    n_documents_ : int
    idf_ : ndarray (n_words,) float64
    """

    def __init__(
        self,
        vocabulary: Sequence[str],
        *,
        on_progress: ProgressCallback | None = None,
        progress_interval_s: float = 1.0,
    ) -> None:
        self.vocabulary = vocabulary
        self.on_progress = on_progress
        self.progress_interval_s = progress_interval_s

    def fit(self, corpus_file: str) -> IdfCounter:
        """Stream ``corpus_file`` (one document per line) and compute df and idf."""
        index = {w: i for i, w in enumerate(self.vocabulary)}
        df = np.zeros(len(index), dtype=np.int64)
        total = os.path.getsize(corpus_file)
        n_docs = 0
        done = 0
        last = time.perf_counter()
        with open(corpus_file, "rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                done += len(raw)
                try:
                    toks = raw.decode("utf-8").split()
                except UnicodeDecodeError as exc:
                    raise InputError(f"{corpus_file} line {lineno} is not UTF-8: re-encode the corpus as UTF-8") from exc
                if not toks:
                    continue
                n_docs += 1
                for w in set(toks):
                    i = index.get(w)
                    if i is not None:
                        df[i] += 1
                if self.on_progress is not None and time.perf_counter() - last >= self.progress_interval_s:
                    last = time.perf_counter()
                    self.on_progress(done, total, n_docs)
        self.df_ = df
        self.n_documents_ = n_docs
        self.idf_ = smoothed_idf(df, n_docs)
        return self
