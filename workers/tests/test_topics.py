"""Word-topic vectors: the SCDV formula on a hand-worked example, and sparsification."""

from __future__ import annotations

import numpy as np
import pytest

from scdv.topics import WordTopicVectorizer as _Vectorizer


def WordTopicVectorizer(**kw: object) -> _Vectorizer:
    """The paper's formula (idf^1), which the hand-worked examples below follow; the configured idf_power (-2) has
    its own tests (test_topics_idf_power.py)."""
    return _Vectorizer(**{"idf_power": 1.0, **kw})  # type: ignore[arg-type]


def dense_rows(row_ptr: np.ndarray, cols: np.ndarray, vals: np.ndarray, width: int) -> np.ndarray:
    out = np.zeros((len(row_ptr) - 1, width), dtype=np.float64)
    for i in range(len(row_ptr) - 1):
        a, b = row_ptr[i], row_ptr[i + 1]
        out[i, cols[a:b]] = vals[a:b]
    return out


# Two words, two clusters, three dimensions.
# v1 = [1, 2, 2] (norm 3), P(.|w1) = [0.25, 0.75], idf 2
# v2 = [0, -3, 4] (norm 5), P(.|w2) = [1, 0],      idf 1.5
VECTORS = np.array([[1.0, 2.0, 2.0], [0.0, -3.0, 4.0]])
POSTERIORS = np.array([[0.25, 0.75], [1.0, 0.0]])
IDF = np.array([2.0, 1.5])


def test_formula_raw_vectors_by_hand() -> None:
    vec = WordTopicVectorizer(keep_fraction=None, vector_norm="raw")
    row_ptr, cols, vals = vec.transform(VECTORS, POSTERIORS, IDF)
    # w1: 2 * [0.25*[1,2,2], 0.75*[1,2,2]] = [0.5, 1, 1, 1.5, 3, 3]
    # w2: 1.5 * [1*[0,-3,4], 0*[...]] = [0, -4.5, 6, 0, 0, 0]
    expected = np.array([[0.5, 1.0, 1.0, 1.5, 3.0, 3.0], [0.0, -4.5, 6.0, 0.0, 0.0, 0.0]])
    np.testing.assert_allclose(dense_rows(row_ptr, cols, vals, 6), expected, rtol=1e-6)
    # zeros are not stored: w2 keeps only features 1 and 2
    assert list(row_ptr) == [0, 6, 8]
    assert list(cols[6:]) == [1, 2]


def test_formula_l2_vectors_by_hand() -> None:
    vec = WordTopicVectorizer(keep_fraction=None, vector_norm="l2")
    row_ptr, cols, vals = vec.transform(VECTORS, POSTERIORS, IDF)
    # unit vectors: [1/3, 2/3, 2/3] and [0, -0.6, 0.8]
    expected = np.array([
        [2 * 0.25 / 3, 2 * 0.25 * 2 / 3, 2 * 0.25 * 2 / 3, 2 * 0.75 / 3, 2 * 0.75 * 2 / 3, 2 * 0.75 * 2 / 3],
        [0.0, 1.5 * -0.6, 1.5 * 0.8, 0.0, 0.0, 0.0],
    ])
    np.testing.assert_allclose(dense_rows(row_ptr, cols, vals, 6), expected, rtol=1e-6)


def test_prob_threshold_drops_blocks() -> None:
    vec = WordTopicVectorizer(prob_threshold=0.3, keep_fraction=None, vector_norm="raw")
    row_ptr, cols, vals = vec.transform(VECTORS, POSTERIORS, IDF)
    # w1's cluster-0 block (P=0.25 < 0.3) is gone, cluster 1 stays: cols 3, 4, 5
    assert list(cols[row_ptr[0] : row_ptr[1]]) == [3, 4, 5]
    np.testing.assert_allclose(vals[row_ptr[0] : row_ptr[1]], [1.5, 3.0, 3.0])
    # row sum of w1 = idf * P(1|w1) * sum(v1) = 2 * 0.75 * 5
    assert vals[row_ptr[0] : row_ptr[1]].sum() == pytest.approx(7.5)


def test_keep_count_and_tie_break() -> None:
    vec = WordTopicVectorizer(keep_fraction=None, keep_count=2, vector_norm="raw")
    row_ptr, cols, vals = vec.transform(VECTORS, POSTERIORS, IDF)
    assert list(cols[row_ptr[0] : row_ptr[1]]) == [4, 5]  # the two 3.0s
    assert list(cols[row_ptr[1] : row_ptr[2]]) == [1, 2]  # |-4.5| and 6
    one = WordTopicVectorizer(keep_fraction=None, keep_count=1, vector_norm="raw")
    rp, c, v = one.transform(VECTORS, POSTERIORS, IDF)
    # tie between features 4 and 5 (both 3.0): the lower index wins
    assert list(c) == [4, 2]
    np.testing.assert_allclose(v, [3.0, 6.0])


def test_keep_fraction_rounds_up() -> None:
    vec = WordTopicVectorizer(keep_fraction=0.4, vector_norm="raw")  # ceil(0.4 * 6) = 3
    assert vec.n_keep(6) == 3
    row_ptr, cols, vals = vec.transform(VECTORS, POSTERIORS, IDF)
    assert np.diff(row_ptr).tolist() == [3, 2]  # w2 has only 2 non-zeros
    assert set(cols[:3].tolist()) == {3, 4, 5}  # 1.5, 3, 3 beat 0.5, 1, 1


def test_both_limits_take_the_smaller() -> None:
    vec = WordTopicVectorizer(keep_fraction=0.5, keep_count=2)
    assert vec.n_keep(6) == 2
    vec = WordTopicVectorizer(keep_fraction=0.2, keep_count=5)
    assert vec.n_keep(6) == 2


@pytest.mark.parametrize("threshold,keep", [(0.0, 17), (0.05, 9), (0.2, 1000)])
def test_random_rows_keep_the_largest(threshold: float, keep: int) -> None:
    rng = np.random.default_rng(3)
    n, k, d = 37, 5, 8
    V = rng.standard_normal((n, d))
    P = rng.dirichlet(np.ones(k) * 0.5, size=n)
    idf = rng.uniform(1, 5, size=n)
    vec = WordTopicVectorizer(prob_threshold=threshold, keep_fraction=None, keep_count=keep, chunk_words=4, vector_norm="raw")
    row_ptr, cols, vals = vec.transform(V, P, idf)
    Pt = np.where(P >= threshold, P, 0)
    full = (idf[:, None, None] * Pt[:, :, None] * V[:, None, :]).reshape(n, k * d)
    for i in range(n):
        c = cols[row_ptr[i] : row_ptr[i + 1]].astype(int)
        v = vals[row_ptr[i] : row_ptr[i + 1]]
        assert np.all(np.diff(c) > 0), "columns must increase within a row"
        assert len(c) == min(keep, np.count_nonzero(full[i]))
        np.testing.assert_allclose(v, full[i, c], rtol=1e-5)
        dropped = np.setdiff1d(np.flatnonzero(full[i]), c)
        if dropped.size:
            assert np.abs(full[i, dropped]).max() <= np.abs(v).min() + 1e-6
        # dropped blocks contribute nothing
        assert np.all(Pt[i, c // d] > 0)


def test_chunking_does_not_change_result() -> None:
    rng = np.random.default_rng(0)
    V, P, idf = rng.standard_normal((50, 6)), rng.dirichlet(np.ones(4), size=50), rng.uniform(1, 3, 50)
    a = WordTopicVectorizer(keep_fraction=0.1, chunk_words=7).transform(V, P, idf)
    b = WordTopicVectorizer(keep_fraction=0.1, chunk_words=1000).transform(V, P, idf)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
