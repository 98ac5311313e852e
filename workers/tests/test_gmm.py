"""FastGaussianMixture against scikit-learn's GaussianMixture from the same initialisation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sklearn.mixture import GaussianMixture

from scdv.gmm import FastGaussianMixture


def mixture_data(seed: int = 0, k: int = 4, d: int = 6, n_per: int = 150, offset: float = 5.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 3, (k, d))
    scales = rng.uniform(0.5, 1.5, (k, d))
    X = np.concatenate([rng.normal(c, s, (n_per, d)) for c, s in zip(centers, scales)])
    return X + offset  # off-centre data exercises the internal centring


def fit_both(X: np.ndarray, covariance_type: str, dtype: Any, **kw: Any) -> tuple[GaussianMixture, FastGaussianMixture]:
    common = dict(n_components=4, covariance_type=covariance_type, random_state=7, **kw)
    ref = GaussianMixture(**common).fit(X)
    ours = FastGaussianMixture(dtype=dtype, **common).fit(X)
    return ref, ours


@pytest.mark.parametrize("covariance_type", ["tied", "diag", "full"])
@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-7), (np.float32, 2e-3)])
def test_same_as_sklearn_with_kmeans_init(covariance_type: str, dtype: Any, rtol: float) -> None:
    X = mixture_data()
    ref, ours = fit_both(X, covariance_type, dtype, tol=1e-3, max_iter=200)
    assert ours.n_iter_ == ref.n_iter_
    assert ours.converged_ == ref.converged_
    np.testing.assert_allclose(ours.weights_, ref.weights_, rtol=rtol, atol=rtol * 1e-2)
    np.testing.assert_allclose(ours.means_, ref.means_, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(ours.covariances_, ref.covariances_, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(ours.precisions_cholesky_, ref.precisions_cholesky_, rtol=rtol * 10, atol=rtol)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=rtol * 10)
    np.testing.assert_allclose(ours.score_samples(X), ref.score_samples(X), rtol=rtol, atol=rtol)
    assert ours.score(X) == pytest.approx(ref.score(X), rel=rtol)
    assert ours.lower_bound_ == pytest.approx(ref.lower_bound_, rel=rtol)
    np.testing.assert_allclose(ours.loglik_history_, ref.lower_bounds_, rtol=rtol)


@pytest.mark.parametrize("covariance_type", ["tied", "diag"])
def test_same_as_sklearn_with_explicit_init(covariance_type: str) -> None:
    X = mixture_data(seed=1)
    rng = np.random.default_rng(2)
    d = X.shape[1]
    weights = np.full(4, 0.25)
    means = X[rng.choice(len(X), 4, replace=False)]
    prec = np.eye(d) * 0.5 if covariance_type == "tied" else np.full((4, d), 0.5)
    kw = dict(weights_init=weights, means_init=means, precisions_init=prec, tol=0.0, max_iter=12)
    ref, ours = fit_both(X, covariance_type, np.float64, **kw)
    assert ours.n_iter_ == ref.n_iter_ == 12
    np.testing.assert_allclose(ours.means_, ref.means_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(ours.covariances_, ref.covariances_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(ours.loglik_history_, ref.lower_bounds_, rtol=1e-9)


def test_em_log_likelihood_never_decreases_and_callback_sees_it() -> None:
    X = mixture_data(seed=3).astype(np.float32)
    seen = []
    gm = FastGaussianMixture(4, covariance_type="tied", tol=1e-6, max_iter=100, random_state=0,
                             verbose_callback=lambda it, ll: seen.append((it, ll))).fit(X)
    hist = np.array(gm.loglik_history_)
    assert len(hist) == gm.n_iter_ and [i for i, _ in seen] == list(range(1, gm.n_iter_ + 1))
    np.testing.assert_allclose([ll for _, ll in seen], hist)
    assert np.all(np.diff(hist) > -1e-4)  # EM is monotone up to float32 rounding
    assert gm.predict_proba(X).shape == (len(X), 4)
    np.testing.assert_allclose(gm.predict_proba(X).sum(axis=1), 1.0, rtol=1e-5)


def test_from_params_reproduces_predictions() -> None:
    X = mixture_data(seed=4)
    gm = FastGaussianMixture(4, covariance_type="diag", random_state=0, dtype=np.float64).fit(X)
    again = FastGaussianMixture.from_params(gm.weights_, gm.means_, gm.covariances_, "diag", dtype=np.float64)
    np.testing.assert_allclose(again.predict_proba(X), gm.predict_proba(X), atol=1e-10)
    np.testing.assert_allclose(again.score_samples(X), gm.score_samples(X), rtol=1e-10)


def test_rejects_too_few_samples_and_bad_params() -> None:
    with pytest.raises(ValueError, match="n_samples >= n_components"):
        FastGaussianMixture(10).fit(np.random.default_rng(0).standard_normal((5, 2)))
    with pytest.raises(ValueError, match="covariance_type"):
        FastGaussianMixture(2, covariance_type="spherical").fit(np.zeros((5, 2)))
