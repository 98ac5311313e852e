"""Fast EM for Gaussian mixtures, numerically the model of scikit-learn's GaussianMixture.

Same model, same initialisation (including the use of ``random_state``), same
``reg_covar`` handling and the same convergence rule (the change of the average
log-likelihood, sklearn's "lower bound", is below ``tol``) as
:class:`sklearn.mixture.GaussianMixture`. What differs is how an EM iteration is
computed:

* the data are centred once (a GMM is translation invariant) and kept in
  ``dtype`` (float32 by default) so that the large products run as float32 GEMMs;
* E-step and M-step are fused in one pass over row chunks, so the
  (n_samples, n_components) responsibilities never exist in full;
* ``tied``: log N(x | mu_k, S) = x.(P mu_k) - 0.5 mu_k' P mu_k - 0.5 x' P x + const
  with P = S^-1. The term x' P x is the same for every component, so it cancels in
  the responsibilities and its mean over the data is trace(P X'X) / n, with X'X
  computed once. One iteration is then two GEMMs: X @ (P M') and R' @ X.
  scikit-learn instead whitens all points once per component.
* ``diag``: the same with [X, X*X] @ [(mu/s2)', -0.5 (1/s2)'], one GEMM, and
  R' @ [X, X*X] for the M-step; X*X is computed once.
* ``full``: one whitening GEMM per component (no shortcut exists), in ``dtype``.

Small matrices (covariances, Cholesky factors, sufficient statistics) are always
float64, so float32 only touches the big products.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator
from sklearn.cluster import KMeans, kmeans_plusplus
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from .config import GmmConfig

# Defaults are the configured ones (pipeline/config/schema/train.js, mirrored by scdv.config): tests/stages/train-config.test.js
# fails when a constructor default here differs.
_DEFAULTS = GmmConfig()

__all__ = ["FastGaussianMixture", "COVARIANCE_TYPES"]

COVARIANCE_TYPES = ("tied", "diag", "full")
INIT_PARAMS = ("kmeans", "k-means++", "random", "random_from_data")

# Copied wording from scikit-learn so users get the same advice.
_ILL_DEFINED = (
    "Fitting the mixture model failed because some components have "
    "ill-defined empirical covariance (for instance caused by singleton "
    "or collapsed samples). Try to decrease the number of components, "
    "increase reg_covar, or scale the input data."
)

IterationCallback = Callable[[int, float], None]


class _Stats:
    """Sufficient statistics accumulated over one pass (all float64)."""

    def __init__(self, n_components: int, n_features: int, covariance_type: str) -> None:
        k, d = n_components, n_features
        self.nk = np.zeros(k)
        self.sx = np.zeros((k, d))  # sum_i r_ik x_i
        self.sxx: NDArray[np.float64] | None = None
        if covariance_type == "diag":
            self.sxx = np.zeros((k, d))  # sum_i r_ik x_i^2
        elif covariance_type == "full":
            self.sxx = np.zeros((k, d, d))  # sum_i r_ik x_i x_i'
        self.loglik_sum = 0.0


class FastGaussianMixture(BaseEstimator):
    """Gaussian mixture fitted by EM, a faster drop-in for sklearn's GaussianMixture.

    Parameters
    ----------
    n_components : int
        Number of mixture components K.
    covariance_type : {"tied", "diag", "full"}
        "tied": one shared (d, d) covariance; "diag": a (d,) variance vector per
        component; "full": a (d, d) covariance per component.
    tol : float
        EM stops when the average log-likelihood changes by less than ``tol``.
    reg_covar : float
        Added to the covariance diagonal (as in scikit-learn).
    max_iter : int
        Maximum EM iterations per initialisation.
    n_init : int
        Number of initialisations; the one with the best final lower bound wins.
    init_params : {"kmeans", "k-means++", "random", "random_from_data"}
        How initial responsibilities are drawn; identical to scikit-learn.
    weights_init, means_init, precisions_init : array-like or None
        Explicit initial parameters, shapes (K,), (K, d) and (d, d) tied /
        (K, d) diag / (K, d, d) full. When all three are given no
        responsibilities are drawn (as in scikit-learn).
    random_state : int, RandomState or None
        Used exactly as scikit-learn uses it, so both start from the same point (the default is the configured
        gmm.seed, not scikit-learn's None). Every default is the configured one (scdv.config.GmmConfig).
    dtype : np.float32 or np.float64
        Precision of the large matrix products.
    chunk_size : int
        Rows per fused E/M pass block; bounds the temporary (chunk, K) arrays.
    verbose_callback : callable(iteration, avg_loglik) or None
        Called after every EM iteration.

    Attributes
    ----------
    weights_ : ndarray (K,)
    means_ : ndarray (K, d)
    covariances_ : ndarray, (d, d) tied / (K, d) diag / (K, d, d) full
    precisions_cholesky_ : ndarray, same shape as covariances_
        Upper-triangular U with precision = U U' (scikit-learn's convention).
    precisions_ : ndarray, same shape as covariances_
    converged_ : bool
    n_iter_ : int
    lower_bound_ : float
        Average log-likelihood at the last E-step of the best initialisation.
    lower_bounds_, loglik_history_ : list[float]
        Average log-likelihood per iteration of the best initialisation.
    n_features_in_ : int
    """

    def __init__(
        self,
        n_components: int,
        *,
        covariance_type: str = _DEFAULTS.covariance_type,
        tol: float = _DEFAULTS.tol,
        reg_covar: float = _DEFAULTS.reg_covar,
        max_iter: int = _DEFAULTS.max_iter,
        n_init: int = _DEFAULTS.n_init,
        init_params: str = _DEFAULTS.init_params,
        weights_init: ArrayLike | None = None,
        means_init: ArrayLike | None = None,
        precisions_init: ArrayLike | None = None,
        random_state: int | np.random.RandomState | None = _DEFAULTS.seed,
        dtype: Any = np.dtype(_DEFAULTS.dtype).type,
        chunk_size: int = 16384,
        verbose_callback: IterationCallback | None = None,
    ) -> None:
        self.n_components = n_components
        self.covariance_type = covariance_type
        self.tol = tol
        self.reg_covar = reg_covar
        self.max_iter = max_iter
        self.n_init = n_init
        self.init_params = init_params
        self.weights_init = weights_init
        self.means_init = means_init
        self.precisions_init = precisions_init
        self.random_state = random_state
        self.dtype = dtype
        self.chunk_size = chunk_size
        self.verbose_callback = verbose_callback

    # ------------------------------------------------------------------ fit

    def fit(self, X: ArrayLike, y: None = None) -> FastGaussianMixture:
        """Estimate the parameters with EM.

        Parameters
        ----------
        X : array-like (n_samples, n_features)

        Returns
        -------
        self
        """
        self._check_params()
        # sklearn validates to float64 unless the input is float32; k-means
        # initialisation sees that array so that labels match sklearn's.
        X_in = np.asarray(X)
        if X_in.dtype != np.float32:
            X_in = X_in.astype(np.float64)
        if X_in.ndim != 2 or X_in.shape[0] < 2:
            raise ValueError(f"X must be 2-D with at least 2 rows, got shape {X_in.shape}")
        if not np.all(np.isfinite(X_in)):
            raise ValueError("X contains NaN or infinity")
        n, d = X_in.shape
        if n < self.n_components:
            raise ValueError(
                f"Expected n_samples >= n_components but got n_components = "
                f"{self.n_components}, n_samples = {n}"
            )
        self.n_features_in_ = d
        self._resp_eps = 10 * np.finfo(X_in.dtype).eps
        cdt = np.dtype(self.dtype)

        center = X_in.mean(axis=0, dtype=np.float64)
        Xc = (X_in - center).astype(cdt, copy=False)
        data = self._prepare_data(Xc)

        random_state = check_random_state(self.random_state)
        best: tuple[Any, ...] | None = None
        best_lb = -np.inf
        for _ in range(self.n_init):
            params = self._initial_params(X_in, center, data, random_state)
            lb = -np.inf
            history: list[float] = []
            converged = False
            n_iter = 0
            for n_iter in range(1, self.max_iter + 1):
                prev = lb
                stats = self._pass(data, params)
                lb = stats.loglik_sum / n + self._mean_loglik_offset(params, data)
                params = self._m_step(stats, data)
                history.append(lb)
                if self.verbose_callback is not None:
                    self.verbose_callback(n_iter, lb)
                if abs(lb - prev) < self.tol:
                    converged = True
                    break
            if best is None or lb > best_lb:
                best_lb = lb
                best = (params, n_iter, history, converged)

        assert best is not None
        params, n_iter, history, converged = best
        self._set_params(params, center)
        self.converged_ = converged
        self.n_iter_ = n_iter
        self.lower_bound_ = float(best_lb)
        self.lower_bounds_ = list(history)
        self.loglik_history_ = list(history)
        if not converged and self.max_iter > 0:
            warnings.warn(
                "Best performing initialization did not converge. Try different init "
                "parameters, or increase max_iter, tol, or check for degenerate data.",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def _check_params(self) -> None:
        if self.covariance_type not in COVARIANCE_TYPES:
            raise ValueError(f"covariance_type must be one of {COVARIANCE_TYPES}, got {self.covariance_type!r}")
        if self.init_params not in INIT_PARAMS:
            raise ValueError(f"init_params must be one of {INIT_PARAMS}, got {self.init_params!r}")
        if np.dtype(self.dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise ValueError(f"dtype must be float32 or float64, got {self.dtype!r}")
        if int(self.n_components) < 1 or int(self.n_init) < 1 or int(self.max_iter) < 0:
            raise ValueError("n_components and n_init must be >= 1 and max_iter >= 0")
        if self.tol < 0 or self.reg_covar < 0:
            raise ValueError("tol and reg_covar must be >= 0")

    def _prepare_data(self, Xc: NDArray[Any]) -> dict[str, Any]:
        """Per-fit constants: the centred data and the products that never change."""
        n, d = Xc.shape
        data: dict[str, Any] = {"X": Xc, "n": n, "d": d}
        if self.covariance_type == "diag":
            # [X, X*X] lets one GEMM give both terms of the diagonal log-density.
            data["Z"] = np.concatenate([Xc, Xc * Xc], axis=1)
        elif self.covariance_type == "tied":
            gram = np.zeros((d, d))
            for s in range(0, n, self.chunk_size):
                blk = Xc[s : s + self.chunk_size].astype(np.float64)
                gram += blk.T @ blk
            data["gram"] = gram  # X'X of the centred data, float64, computed once
        return data

    # ------------------------------------------------------- initialisation

    def _initial_params(
        self,
        X_in: NDArray[Any],
        center: NDArray[np.float64],
        data: dict[str, Any],
        random_state: np.random.RandomState,
    ) -> dict[str, Any]:
        n, d = X_in.shape
        k = self.n_components
        given_all = self.weights_init is not None and self.means_init is not None and self.precisions_init is not None
        params: dict[str, Any] = {}
        if not given_all:
            resp = self._initial_resp(X_in, random_state)
            stats = _Stats(k, d, self.covariance_type)
            for s in range(0, n, self.chunk_size):
                self._accumulate(stats, data, slice(s, s + self.chunk_size), resp[s : s + self.chunk_size])
            params = self._m_step(stats, data)
            # sklearn divides the initial nk by n_samples (not by their sum).
            params["weights"] = (stats.nk + self._resp_eps) / n
        if self.weights_init is not None:
            w = np.asarray(self.weights_init, dtype=np.float64)
            if w.shape != (k,) or np.any(w < 0) or not np.isclose(w.sum(), 1.0, atol=1e-6):
                raise ValueError(f"weights_init must be ({k},) non-negative and sum to 1")
            params["weights"] = w.copy()
        if self.means_init is not None:
            m = np.asarray(self.means_init, dtype=np.float64)
            if m.shape != (k, d):
                raise ValueError(f"means_init must have shape {(k, d)}, got {m.shape}")
            params["means"] = m - center
        if self.precisions_init is not None:
            params["prec_chol"] = _prec_chol_from_precisions(
                np.asarray(self.precisions_init, dtype=np.float64), self.covariance_type, k, d
            )
            params["cov"] = _cov_from_prec_chol(params["prec_chol"], self.covariance_type)
        return self._finish(params)

    def _initial_resp(self, X: NDArray[Any], random_state: np.random.RandomState) -> NDArray[Any]:
        """Initial responsibilities, drawn exactly as scikit-learn draws them."""
        n = X.shape[0]
        k = self.n_components
        if self.init_params == "kmeans":
            resp = np.zeros((n, k), dtype=X.dtype)
            label = KMeans(n_clusters=k, n_init=1, random_state=random_state).fit(X).labels_
            resp[np.arange(n), label] = 1
        elif self.init_params == "random":
            resp = random_state.uniform(size=(n, k)).astype(X.dtype)
            resp /= resp.sum(axis=1)[:, np.newaxis]
        elif self.init_params == "random_from_data":
            resp = np.zeros((n, k), dtype=X.dtype)
            idx = random_state.choice(n, size=k, replace=False)
            resp[idx, np.arange(k)] = 1
        else:  # k-means++
            resp = np.zeros((n, k), dtype=X.dtype)
            _, idx = kmeans_plusplus(X, k, random_state=random_state)
            resp[idx, np.arange(k)] = 1
        return resp

    # ------------------------------------------------------------- E and M

    def _pass(self, data: dict[str, Any], params: dict[str, Any]) -> _Stats:
        """One fused E-step + M-step statistics over all rows, chunk by chunk."""
        stats = _Stats(self.n_components, data["d"], self.covariance_type)
        for s in range(0, data["n"], self.chunk_size):
            rows = slice(s, s + self.chunk_size)
            resp, lse = self._resp_chunk(data, rows, params)
            stats.loglik_sum += float(lse.sum(dtype=np.float64))
            self._accumulate(stats, data, rows, resp)
        return stats

    def _resp_chunk(
        self, data: dict[str, Any], rows: slice, params: dict[str, Any]
    ) -> tuple[NDArray[Any], NDArray[Any]]:
        """Responsibilities (m, K) and the partial log-normaliser (m,) of a chunk.

        The partial log-normaliser omits the per-sample terms common to all
        components (tied: -0.5 x'Px + const), see ``_mean_loglik_offset``.
        """
        cdt = np.dtype(self.dtype)
        ct = self.covariance_type
        if ct == "tied":
            A = data["X"][rows] @ params["lin"].astype(cdt)
        elif ct == "diag":
            A = data["Z"][rows] @ params["lin"].astype(cdt)
        else:
            A = self._full_log_prob(data["X"][rows], params)
        A += params["const"].astype(cdt)
        amax = A.max(axis=1, keepdims=True)
        A -= amax
        np.exp(A, out=A)
        ssum = A.sum(axis=1, keepdims=True)
        A /= ssum
        lse = amax[:, 0].astype(np.float64) + np.log(ssum[:, 0].astype(np.float64))
        return A, lse

    def _full_log_prob(self, Xc: NDArray[Any], params: dict[str, Any]) -> NDArray[Any]:
        """-0.5 * Mahalanobis distances (m, K) for full covariances."""
        cdt = np.dtype(self.dtype)
        out = np.empty((Xc.shape[0], self.n_components), dtype=cdt)
        for k in range(self.n_components):
            U = params["prec_chol"][k]
            y = Xc @ U.astype(cdt)
            y -= (params["means"][k] @ U).astype(cdt)
            out[:, k] = -0.5 * np.einsum("ij,ij->i", y, y)
        return out

    def _accumulate(self, stats: _Stats, data: dict[str, Any], rows: slice, resp: NDArray[Any]) -> None:
        resp = resp.astype(np.dtype(self.dtype), copy=False)
        stats.nk += resp.sum(axis=0, dtype=np.float64)
        if self.covariance_type == "diag":
            d = data["d"]
            sz = resp.T @ data["Z"][rows]
            stats.sx += sz[:, :d]
            assert stats.sxx is not None
            stats.sxx += sz[:, d:]
        else:
            Xr = data["X"][rows]
            stats.sx += resp.T @ Xr
            if self.covariance_type == "full":
                assert stats.sxx is not None
                for k in range(self.n_components):
                    stats.sxx[k] += (Xr * resp[:, k : k + 1]).T @ Xr

    def _m_step(self, stats: _Stats, data: dict[str, Any]) -> dict[str, Any]:
        """Parameters (float64, centred coordinates) from sufficient statistics."""
        nk = stats.nk + self._resp_eps
        means = stats.sx / nk[:, None]
        reg = self.reg_covar
        ct = self.covariance_type
        if ct == "tied":
            cov = data["gram"] - (means.T * nk) @ means
            cov /= nk.sum()
            cov.flat[:: cov.shape[0] + 1] += reg
        elif ct == "diag":
            assert stats.sxx is not None
            cov = stats.sxx / nk[:, None] - means**2 + reg
        else:
            assert stats.sxx is not None
            cov = stats.sxx / nk[:, None, None] - np.einsum("ki,kj->kij", means, means)
            idx = np.arange(cov.shape[1])
            cov[:, idx, idx] += reg
        prec_chol = _prec_chol_from_cov(cov, ct, self.dtype)
        params = {"weights": nk / nk.sum(), "means": means, "cov": cov, "prec_chol": prec_chol}
        return self._finish(params)

    def _finish(self, params: dict[str, Any]) -> dict[str, Any]:
        """Add the E-step matrices ("lin", "const") derived from the parameters."""
        w, means, U = params["weights"], params["means"], params["prec_chol"]
        d = means.shape[1]
        ct = self.covariance_type
        with np.errstate(divide="ignore"):
            logw = np.log(w)
        if ct == "tied":
            P = U @ U.T
            PM = means @ P  # (K, d): rows are P mu_k
            params["lin"] = PM.T
            params["const"] = logw - 0.5 * np.einsum("kd,kd->k", PM, means)
            params["P"] = P
        elif ct == "diag":
            prec = U**2
            params["lin"] = np.concatenate([(means * prec).T, -0.5 * prec.T], axis=0)
            log_det = np.log(U).sum(axis=1)
            params["const"] = logw - 0.5 * (means**2 * prec).sum(axis=1) + log_det - 0.5 * d * math.log(2 * math.pi)
        else:
            log_det = np.log(np.diagonal(U, axis1=1, axis2=2)).sum(axis=1)
            params["const"] = logw + log_det - 0.5 * d * math.log(2 * math.pi)
        return params

    def _mean_loglik_offset(self, params: dict[str, Any], data: dict[str, Any]) -> float:
        """Mean of the per-sample terms left out of ``_resp_chunk``'s normaliser."""
        if self.covariance_type != "tied":
            return 0.0
        d = data["d"]
        log_det = float(np.log(np.diag(params["prec_chol"])).sum())
        # mean_i x_i' P x_i = trace(P X'X) / n, X'X precomputed
        quad = float(np.einsum("ij,ij->", params["P"], data["gram"])) / data["n"]
        return -0.5 * quad - 0.5 * d * math.log(2 * math.pi) + log_det

    # ------------------------------------------------------ public results

    def _set_params(self, params: dict[str, Any], center: NDArray[np.float64]) -> None:
        self.weights_ = params["weights"]
        self.means_ = params["means"] + center
        self.covariances_ = params["cov"]
        self.precisions_cholesky_ = params["prec_chol"]
        if self.covariance_type == "tied":
            self.precisions_ = self.precisions_cholesky_ @ self.precisions_cholesky_.T
        elif self.covariance_type == "diag":
            self.precisions_ = self.precisions_cholesky_**2
        else:
            self.precisions_ = np.einsum("kij,klj->kil", self.precisions_cholesky_, self.precisions_cholesky_)

    @classmethod
    def from_params(
        cls,
        weights: ArrayLike,
        means: ArrayLike,
        covariances: ArrayLike,
        covariance_type: str,
        **kwargs: Any,
    ) -> FastGaussianMixture:
        """Rebuild a fitted model from saved parameters (shapes as the attributes)."""
        gm = cls(n_components=len(np.asarray(weights)), covariance_type=covariance_type, **kwargs)
        gm._check_params()
        cov = np.asarray(covariances, dtype=np.float64)
        params = {
            "weights": np.asarray(weights, dtype=np.float64),
            "means": np.asarray(means, dtype=np.float64),
            "cov": cov,
            "prec_chol": _prec_chol_from_cov(cov, covariance_type, np.float64),
        }
        gm._set_params(params, np.zeros(params["means"].shape[1]))
        gm.n_features_in_ = params["means"].shape[1]
        return gm

    def _predict_params(self) -> tuple[dict[str, Any], NDArray[np.float64]]:
        if not hasattr(self, "means_"):
            raise AttributeError("this FastGaussianMixture is not fitted yet; call fit first")
        # Centre on the mixture mean: at an EM fixed point it is the data mean.
        center = self.weights_ @ self.means_
        params = {
            "weights": self.weights_,
            "means": self.means_ - center,
            "prec_chol": self.precisions_cholesky_,
        }
        return self._finish(params), center

    def _predict_chunks(self, X: ArrayLike) -> tuple[NDArray[Any], NDArray[np.float64]]:
        params, center = self._predict_params()
        Xa = np.asarray(X)
        if Xa.ndim != 2 or Xa.shape[1] != self.n_features_in_:
            raise ValueError(f"X must have shape (n, {self.n_features_in_}), got {Xa.shape}")
        cdt = np.dtype(self.dtype)
        n = Xa.shape[0]
        resp = np.empty((n, self.n_components), dtype=cdt)
        logp = np.empty(n)
        for s in range(0, n, self.chunk_size):
            rows = slice(s, s + self.chunk_size)
            Xc = (Xa[rows] - center).astype(cdt)
            data: dict[str, Any] = {"X": Xc, "d": Xc.shape[1]}
            if self.covariance_type == "diag":
                data["Z"] = np.concatenate([Xc, Xc * Xc], axis=1)
            r, lse = self._resp_chunk(data, slice(None), params)
            if self.covariance_type == "tied":
                y = Xc @ self.precisions_cholesky_.astype(cdt)
                quad = np.einsum("ij,ij->i", y, y).astype(np.float64)
                log_det = float(np.log(np.diag(self.precisions_cholesky_)).sum())
                lse = lse - 0.5 * quad - 0.5 * Xc.shape[1] * math.log(2 * math.pi) + log_det
            resp[rows] = r
            logp[rows] = lse
        return resp, logp

    def predict_proba(self, X: ArrayLike) -> NDArray[Any]:
        """Posterior P(k | x).

        Parameters
        ----------
        X : array-like (n_samples, n_features)

        Returns
        -------
        ndarray (n_samples, n_components), dtype ``self.dtype``; rows sum to 1.
        """
        return self._predict_chunks(X)[0]

    def predict(self, X: ArrayLike) -> NDArray[np.intp]:
        """Most probable component, shape (n_samples,)."""
        return np.argmax(self.predict_proba(X), axis=1)

    def score_samples(self, X: ArrayLike) -> NDArray[np.float64]:
        """Log-likelihood log p(x) of each sample, shape (n_samples,), float64."""
        return self._predict_chunks(X)[1]

    def score(self, X: ArrayLike, y: None = None) -> float:
        """Average log-likelihood of X (a float)."""
        return float(np.mean(self.score_samples(X)))


# ---------------------------------------------------------------- helpers


def _prec_chol_from_cov(cov: NDArray[np.float64], covariance_type: str, dtype: Any) -> NDArray[np.float64]:
    """Upper-triangular U with U U' = cov^-1, as sklearn's _compute_precision_cholesky."""
    msg = _ILL_DEFINED
    if np.dtype(dtype) == np.float32:
        msg += " The numerical accuracy can also be improved with dtype=np.float64."
    try:
        if covariance_type == "tied":
            return _inv_chol_T(cov)
        if covariance_type == "full":
            return np.stack([_inv_chol_T(c) for c in cov])
    except np.linalg.LinAlgError as exc:
        raise ValueError(msg) from exc
    if np.any(cov <= 0.0):
        raise ValueError(msg)
    return 1.0 / np.sqrt(cov)


def _inv_chol_T(cov: NDArray[np.float64]) -> NDArray[np.float64]:
    # numpy's LAPACK, not scipy's: scipy ships a second OpenBLAS whose threads
    # spin against numpy's and made a 200x200 Cholesky take ~15 ms instead of 0.5.
    lower = np.linalg.cholesky(cov)
    return np.triu(np.linalg.inv(lower).T)


def _prec_chol_from_precisions(prec: NDArray[np.float64], covariance_type: str, k: int, d: int) -> NDArray[np.float64]:
    """sklearn's _compute_precision_cholesky_from_precisions (flip, Cholesky, flip)."""
    shapes = {"tied": (d, d), "diag": (k, d), "full": (k, d, d)}
    if prec.shape != shapes[covariance_type]:
        raise ValueError(f"precisions_init must have shape {shapes[covariance_type]}, got {prec.shape}")
    if covariance_type == "diag":
        if np.any(prec <= 0):
            raise ValueError("'diag precision' should be positive")
        return np.sqrt(prec)

    def one(p: NDArray[np.float64]) -> NDArray[np.float64]:
        flipped = np.linalg.cholesky(p[::-1, ::-1])
        return np.ascontiguousarray(flipped[::-1, ::-1])

    try:
        if covariance_type == "tied":
            return one(prec)
        return np.stack([one(p) for p in prec])
    except np.linalg.LinAlgError as exc:
        raise ValueError(f"'{covariance_type} precision' should be symmetric, positive-definite") from exc


def _cov_from_prec_chol(prec_chol: NDArray[np.float64], covariance_type: str) -> NDArray[np.float64]:
    if covariance_type == "diag":
        return np.asarray(1.0 / prec_chol**2, dtype=np.float64)
    if covariance_type == "tied":
        return np.asarray(np.linalg.inv(prec_chol @ prec_chol.T), dtype=np.float64)
    return np.stack([np.linalg.inv(u @ u.T) for u in prec_chol])
