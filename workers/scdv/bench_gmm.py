"""Speed and agreement of FastGaussianMixture against scikit-learn's GaussianMixture.

    python -m scdv.bench_gmm [--vectors PATH.npy | --corpus TOKENS_FILE] [--n 50000]
                             [--dim 200] [--k 60] [--iters 20] [--repeats 3]

Datasets:
  (a) word vectors: ``--vectors`` (raw word_vectors.npy, L2-normalised here as the
      gmm stage does), else Word2Vec trained quickly on ``--corpus`` (tokens, one
      document per line), else on the livedoor dev split with a crude tokeniser
      (runs of kanji / katakana / Latin letters);
  (b) synthetic: n x dim drawn from a random k-component mixture with a shared
      covariance (fixed seed).

Both models get the same data (float64) and the same initial parameters (the
weights, means and precisions of one scikit-learn k-means initialisation), a
fixed ``--iters`` and tol=0, so both run exactly ``--iters`` EM iterations.
Timings are medians over ``--repeats``. "final avg loglik" is each model's
``score(X)`` after fitting.

stdout: a table, then as the last line a JSON object whose last six keys are
sklearn_s, ours_s, speedup, loglik_sklearn, loglik_ours (tied, synthetic data)
and diag_speedup (diag, synthetic data); keys for the word-vector dataset and
details come before them. Logs go to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import GaussianMixture

from .gmm import FastGaussianMixture
from .topics import l2_normalize

__all__ = ["main", "BenchRow", "bench_pair", "synthetic_mixture"]

LIVEDOOR_DEV = "/work/shared/corpora/livedoor/dev.jsonl"
_TOKEN_RX = re.compile(r"[\u4e00-\u9fff]{2,}|[\u30a0-\u30ff]{2,}|[A-Za-z]{2,}")


@dataclass
class BenchRow:
    dataset: str
    covariance_type: str
    model: str
    n: int
    seconds: float  # median per fit
    seconds_per_iter: float
    loglik: float


def _log(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def synthetic_mixture(n: int, dim: int, k: int, seed: int = 0) -> NDArray[np.float64]:
    """(n, dim) float64 from a k-component mixture with one random covariance."""
    rng = np.random.default_rng(seed)
    weights = rng.dirichlet(np.full(k, 5.0))
    means = rng.normal(0.0, 1.0, (k, dim))
    mix = rng.normal(0.0, 1.0 / np.sqrt(dim), (dim, dim)) + 0.5 * np.eye(dim)
    labels = rng.choice(k, size=n, p=weights)
    return means[labels] + rng.standard_normal((n, dim)) @ mix


def _livedoor_tokens(path: str) -> str:
    """Write a crude token file from the livedoor JSONL (no MeCab needed)."""
    fd, out = tempfile.mkstemp(prefix="bench_gmm_tokens_", suffix=".txt")
    with open(path, encoding="utf-8") as src, os.fdopen(fd, "w", encoding="utf-8") as dst:
        for line in src:
            doc = json.loads(line)
            dst.write(" ".join(_TOKEN_RX.findall(doc.get("title", "") + "\n" + doc.get("body", ""))) + "\n")
    return out


def word_vector_data(vectors: str | None, corpus: str | None, dim: int) -> tuple[NDArray[np.float64], str]:
    """L2-normalised word vectors (n_words, dim) and a label for the table."""
    if vectors:
        raw = np.load(vectors)
        return l2_normalize(raw).astype(np.float64), f"wv:{os.path.basename(vectors)}"
    from .word2vec import Word2VecTrainer

    tmp = None
    if corpus is None:
        if not os.path.exists(LIVEDOOR_DEV):
            raise SystemExit(f"no --vectors/--corpus given and {LIVEDOOR_DEV} is missing")
        corpus = tmp = _livedoor_tokens(LIVEDOOR_DEV)
    try:
        _log(f"training a quick Word2Vec on {corpus} ...")
        t = Word2VecTrainer(vector_size=dim, window=5, negative=5, epochs=3, min_count=5, workers=2, seed=1,
                            compute_loss=False).fit(corpus)
    finally:
        if tmp:
            os.remove(tmp)
    return l2_normalize(t.vectors_).astype(np.float64), "wv:livedoor-dev" if tmp else f"wv:{os.path.basename(corpus)}"


def _initial_params(X: NDArray[np.float64], k: int, covariance_type: str, seed: int) -> dict[str, Any]:
    """One scikit-learn k-means initialisation, as explicit init parameters."""
    init = GaussianMixture(k, covariance_type=covariance_type, max_iter=0, random_state=seed).fit(X)
    return {"weights_init": init.weights_, "means_init": init.means_, "precisions_init": init.precisions_}


def bench_pair(
    X: NDArray[np.float64], dataset: str, k: int, covariance_type: str, iters: int, repeats: int, seed: int = 0
) -> list[BenchRow]:
    """Fit sklearn and ours ``repeats`` times from the same start; median timings."""
    t0 = time.perf_counter()
    init = _initial_params(X, k, covariance_type, seed)
    _log(f"[{dataset} {covariance_type}] k-means init {time.perf_counter() - t0:.1f} s; X {X.shape}")
    rows = []
    for name in ("sklearn", "ours"):
        times = []
        loglik = float("nan")
        for r in range(repeats):
            kw: dict[str, Any] = dict(n_components=k, covariance_type=covariance_type, tol=0.0, max_iter=iters, **init)
            model: Any = GaussianMixture(**kw) if name == "sklearn" else FastGaussianMixture(**kw)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                t = time.perf_counter()
                model.fit(X)
                times.append(time.perf_counter() - t)
            assert model.n_iter_ == iters
            loglik = float(model.score(X))
            _log(f"  {name} repeat {r + 1}/{repeats}: {times[-1]:.3f} s, loglik {loglik:.6f}")
        med = statistics.median(times)
        rows.append(BenchRow(dataset, covariance_type, name, X.shape[0], med, med / iters, loglik))
    return rows


def _table(rows: Sequence[BenchRow]) -> str:
    head = f"{'dataset':<22} {'cov':<5} {'model':<8} {'n':>7} {'s/fit':>9} {'s/iter':>9} {'final avg loglik':>18}"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r.dataset:<22} {r.covariance_type:<5} {r.model:<8} {r.n:>7} {r.seconds:>9.3f} {r.seconds_per_iter:>9.4f} {r.loglik:>18.6f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m scdv.bench_gmm", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--vectors", help="word_vectors.npy (raw Word2Vec vectors)")
    p.add_argument("--corpus", help="token file to train quick word vectors on when --vectors is absent")
    p.add_argument("--n", type=int, default=50_000, help="synthetic samples")
    p.add_argument("--dim", type=int, default=200)
    p.add_argument("--k", type=int, default=60)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)

    from threadpoolctl import threadpool_info

    blas = [f"{i['internal_api']} {i.get('version')} threads={i['num_threads']} ({os.path.basename(i['filepath'])})" for i in threadpool_info()]
    print("thread pools: " + "; ".join(blas))

    wv, wv_name = word_vector_data(args.vectors, args.corpus, args.dim)
    syn = synthetic_mixture(args.n, args.dim, args.k, seed=0)
    syn_name = f"synthetic {args.n}x{args.dim}"
    wv_rows = bench_pair(wv, wv_name, args.k, "tied", args.iters, args.repeats)
    tied_rows = bench_pair(syn, syn_name, args.k, "tied", args.iters, args.repeats)
    diag_rows = bench_pair(syn, syn_name, args.k, "diag", args.iters, args.repeats)
    print(_table(wv_rows + tied_rows + diag_rows))

    def rel(a: float, b: float) -> float:
        return abs(a - b) / abs(a)

    wsk, wours = wv_rows
    tsk, tours = tied_rows
    dsk, dours = diag_rows
    summary = {
        "wv_dataset": wv_name, "wv_n": wsk.n, "wv_sklearn_s": round(wsk.seconds, 4), "wv_ours_s": round(wours.seconds, 4),
        "wv_speedup": round(wsk.seconds / wours.seconds, 2), "wv_loglik_sklearn": wsk.loglik, "wv_loglik_ours": wours.loglik,
        "wv_loglik_rel_diff": rel(wsk.loglik, wours.loglik),
        "n": args.n, "dim": args.dim, "k": args.k, "iters": args.iters, "repeats": args.repeats,
        "diag_sklearn_s": round(dsk.seconds, 4), "diag_ours_s": round(dours.seconds, 4),
        "diag_loglik_sklearn": dsk.loglik, "diag_loglik_ours": dours.loglik, "loglik_rel_diff": rel(tsk.loglik, tours.loglik),
        "sklearn_s": round(tsk.seconds, 4), "ours_s": round(tours.seconds, 4), "speedup": round(tsk.seconds / tours.seconds, 2),
        "loglik_sklearn": tsk.loglik, "loglik_ours": tours.loglik,
        "diag_speedup": round(dsk.seconds / dours.seconds, 2),
    }
    print(json.dumps(summary, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
