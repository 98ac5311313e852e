"""The hybrid layout's own lexical vocabulary: ``lexicon.txt`` of a model.

CLI: ``python -m scdv.lexicon --corpus TOKENS --min-count N --out FILE``; prints one
``result`` line (``words``, ``documents``, ``seconds``) or one ``error`` line (see
scdv.progress).

The corpus is the training corpus tokenised without the stop lists (one document per
line, tokens separated by spaces: what ``scdv train`` writes from its second tokenise
run). The lexicon keeps every word seen at least ``min_count`` times, most frequent
first (ties by word), one line each: ``word<TAB>count<TAB>idf``, the format of
vocab.txt, with the idf of :mod:`scdv.idf` (the one implementation of the smoothed
formula) over the documents that kept a token.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from typing import Sequence

import numpy as np
from numpy.typing import NDArray

from . import model_io
from .errors import InputError
from .idf import IdfCounter
from .progress import emit_result, run_main

__all__ = ["Lexicon", "build_lexicon", "write_lexicon"]


class Lexicon:
    """Words, their corpus counts and idf, most frequent first.

    Attributes
    ----------
    words : list of str, length n_words
    counts : list of int, length n_words
    idf : ndarray (n_words,) float64
    n_documents : int
    """

    def __init__(self, words: list[str], counts: list[int], idf: NDArray[np.float64], n_documents: int) -> None:
        self.words = words
        self.counts = counts
        self.idf = idf
        self.n_documents = n_documents


def build_lexicon(corpus_file: str, min_count: int) -> Lexicon:
    """Count the corpus's words, keep those seen ``min_count`` times or more, and give them their idf."""
    if min_count < 1:
        raise InputError(f"min_count must be >= 1, got {min_count}")
    if not os.path.isfile(corpus_file):
        raise InputError(f"tokenised corpus {corpus_file} not found")
    counts: Counter[str] = Counter()
    with open(corpus_file, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                counts.update(raw.decode("utf-8").split())
            except UnicodeDecodeError as exc:
                raise InputError(f"{corpus_file} line {lineno} is not UTF-8: re-encode the corpus as UTF-8") from exc
    kept = sorted(((w, c) for w, c in counts.items() if c >= min_count), key=lambda wc: (-wc[1], wc[0]))
    words = [w for w, _ in kept]
    idf = IdfCounter(words).fit(corpus_file)
    return Lexicon(words, [c for _, c in kept], idf.idf_, idf.n_documents_)


def write_lexicon(path: str, lexicon: Lexicon) -> None:
    """Write ``word<TAB>count<TAB>idf`` lines atomically (idf to 9 significant digits: float32 exact)."""
    with model_io.atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for w, c, v in zip(lexicon.words, lexicon.counts, lexicon.idf):
            fh.write(f"{w}\t{c}\t{float(v):.9g}\n")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m scdv.lexicon", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True, help="tokenised corpus without the stop lists, one document per line")
    p.add_argument("--min-count", type=int, required=True)
    p.add_argument("--out", required=True, help="lexicon.txt to write")

    def body() -> None:
        args = p.parse_args(argv)
        t0 = time.perf_counter()
        lexicon = build_lexicon(args.corpus, args.min_count)
        write_lexicon(args.out, lexicon)
        emit_result("lexicon", out=os.path.abspath(args.out), words=len(lexicon.words),
                    documents=lexicon.n_documents, seconds=round(time.perf_counter() - t0, 3))

    return run_main("lexicon", body)

if __name__ == "__main__":
    sys.exit(main())
