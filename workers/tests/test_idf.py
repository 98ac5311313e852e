"""IDF on a 3-document corpus, worked by hand."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from scdv.idf import IdfCounter, smoothed_idf


def test_three_documents_by_hand(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    # a blank line is not a document; repeats inside a document count once
    corpus.write_text("猫 犬 猫\n\n犬 鳥\n鳥 魚 鳥 鳥\n", encoding="utf-8")
    counter = IdfCounter(["猫", "犬", "鳥", "魚", "象"]).fit(str(corpus))
    assert counter.n_documents_ == 3
    assert counter.df_.tolist() == [1, 2, 2, 1, 0]
    # idf = ln((1 + N) / (1 + df)) + 1 with N = 3
    expected = [
        math.log(4 / 2) + 1,  # 猫: df 1 -> 1.6931
        math.log(4 / 3) + 1,  # 犬: df 2 -> 1.2877
        math.log(4 / 3) + 1,  # 鳥
        math.log(4 / 2) + 1,  # 魚
        math.log(4 / 1) + 1,  # 象: never seen -> 2.3863
    ]
    np.testing.assert_allclose(counter.idf_, expected, rtol=1e-12)
    assert counter.idf_[0] == pytest.approx(1.693147, abs=1e-6)


def test_matches_scikit_learn_smooth_idf() -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer

    docs = ["a b c a", "b c", "c d e", "e e f", "a f"]
    tf = TfidfVectorizer(smooth_idf=True, token_pattern=r"\S+").fit(docs)
    vocab = list(tf.get_feature_names_out())
    df = np.array([sum(w in d.split() for d in docs) for w in vocab])
    np.testing.assert_allclose(smoothed_idf(df, len(docs)), tf.idf_, rtol=1e-12)
