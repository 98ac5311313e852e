"""topics.idf_power: wtv(w) = idf(w)^p * [P(k|w) v_w]_k; scaling a row never changes which entries are kept."""

from __future__ import annotations

import numpy as np
import pytest

from scdv.config import parse_config
from scdv.errors import InputError
from scdv.topics import WordTopicVectorizer


def test_idf_power_scales_each_row_by_idf_to_the_power() -> None:
    rng = np.random.default_rng(3)
    V = rng.normal(size=(4, 3)).astype(np.float32)
    P = rng.dirichlet(np.ones(2), size=4).astype(np.float32)
    idf = np.array([1.0, 2.0, 4.0, 8.0], np.float32)
    rows = {}
    for p in (1.0, 0.0, -1.0):
        ptr, cols, vals = WordTopicVectorizer(keep_count=4, vector_norm="raw", idf_power=p).transform(V, P, idf)
        rows[p] = (ptr, cols, vals)
    # the same entries are kept whatever the power
    assert np.array_equal(rows[1.0][1], rows[0.0][1]) and np.array_equal(rows[1.0][1], rows[-1.0][1])
    per_row = np.repeat(np.arange(4), np.diff(rows[1.0][0]))
    np.testing.assert_allclose(rows[0.0][2] * idf[per_row], rows[1.0][2], rtol=1e-6)
    np.testing.assert_allclose(rows[-1.0][2] * idf[per_row] ** 2, rows[1.0][2], rtol=1e-6)


def test_idf_power_is_the_only_float_that_may_be_negative() -> None:
    assert parse_config('{"topics": {"idf_power": -1}}').topics.idf_power == -1.0
    assert parse_config(None).topics.idf_power == -2.0
    with pytest.raises(InputError, match="prob_threshold must be >= 0"):
        parse_config('{"topics": {"prob_threshold": -0.5}}')
