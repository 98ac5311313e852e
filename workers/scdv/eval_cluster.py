"""JMTEB's clustering protocol for ``scdv eval --cluster`` (pipeline/eval/cluster.js).

CLI (stdout speaks the scdv.progress protocol: progress lines, then one result line)::

    python -m scdv.eval_cluster --vectors NAME=FOLDER [--vectors NAME=FOLDER ...] [--tfidf FOLDER]
                                [--seeds 5] [--first-seed 1]

Every FOLDER is an exchange folder of pipeline/eval/exchange.js (tokens.txt, meta.json, scdv.* CSR vectors); all
of them hold the same documents in the same order. ``--tfidf FOLDER`` adds TF-IDF on that folder's tokens
(scikit-learn's TfidfVectorizer as in scdv.eval_baselines: sublinear tf, smoothed idf, L2 rows, idf fitted on
the whole corpus).

The protocol is the clustering evaluator of the JMTEB leaderboard (sbintuitions/JMTEB,
``src/jmteb/evaluators/clustering/evaluator.py``), whose livedoor_news column the issue compares against:

1. the documents are split into a validation and a test part — here stratified halves, drawn again for every
   seed (JMTEB ships one fixed split of its own);
2. four scikit-learn clusterers with k = the number of labels in the test part and otherwise their defaults —
   ``MiniBatchKMeans(n_init="auto")``, ``AgglomerativeClustering()`` (Ward), ``BisectingKMeans()``, ``Birch()`` —
   are each fitted on the validation vectors and scored by v-measure against the validation labels;
3. the best of them on validation (ties: the first in that order) is fitted afresh on the test vectors, and its
   v-measure there is the score. The test labels play no part in the choice.

The vectors are clustered as given, without further normalisation (JMTEB's embedders do not normalise unless a
model asks for it; ours come L2-normalised from pipeline/embed/), as points of an isometric embedding of the
split's rows (same distances, far fewer dims: see _points). Differences from JMTEB: the randomised
clusterers get ``random_state`` = the seed (JMTEB leaves it unset, so its figures vary from run to run), and the
score is reported over several seeds (mean, sample standard deviation, range), since one split of ~1,450
documents moves v-measure by several points.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections import Counter
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from .errors import InputError
from .eval_baselines import read_folder, tfidf_vectorizer
from .progress import emit, emit_error, emit_result, log

__all__ = ["CLUSTERERS", "stratified_halves", "make_clusterers", "score_clustering", "jmteb_protocol", "run", "main"]

# JMTEB's four clusterers, in its order (the order also breaks ties on validation)
CLUSTERERS = ("MiniBatchKMeans", "AgglomerativeClustering", "BisectingKMeans", "Birch")


def stratified_halves(labels: Sequence[str], seed: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(validation rows, test rows): each label's documents shuffled with `seed`, the first half to validation.

    A label with an odd count gives its extra document to the test half; a label with one document goes to test.
    """
    rng = np.random.default_rng(seed)
    y = np.asarray(labels)
    val: list[NDArray[np.int64]] = []
    test: list[NDArray[np.int64]] = []
    for label in sorted(set(y.tolist())):
        rows = np.flatnonzero(y == label)
        rows = rows[rng.permutation(rows.size)]
        half = rows.size // 2
        val.append(rows[:half])
        test.append(rows[half:])
    return np.sort(np.concatenate(val)), np.sort(np.concatenate(test))


def make_clusterers(k: int, seed: int) -> dict[str, Any]:
    """JMTEB's clusterers for k clusters (its parameters; random_state added for the randomised ones)."""
    from sklearn.cluster import AgglomerativeClustering, Birch, BisectingKMeans, MiniBatchKMeans

    return {
        "MiniBatchKMeans": MiniBatchKMeans(n_clusters=k, n_init="auto", random_state=seed),
        "AgglomerativeClustering": AgglomerativeClustering(n_clusters=k),
        "BisectingKMeans": BisectingKMeans(n_clusters=k, random_state=seed),
        "Birch": Birch(n_clusters=k),
    }


def _points(X: Any, rows: NDArray[np.int64]) -> NDArray[np.float64]:
    """The rows as dense points with the same pairwise distances and norms as the vectors themselves.

    When the vectors are wider than there are rows (always, for ours: ~27k dims, ~1.5k documents), the points are
    an isometric embedding in at most n dims: from the Gram matrix G = X Xᵀ = Q Λ Qᵀ, Y = Q Λ^½ has Y Yᵀ = G. The
    four clusterers only see Euclidean geometry (k-means and its bisecting variant, Ward linkage, Birch's
    clustering features), so they give the same clusters on Y as on X, at a small fraction of the cost.
    """
    sub = X[rows]
    if sub.shape[1] <= sub.shape[0]:
        return np.asarray(sub.toarray() if sparse.issparse(sub) else sub, dtype=np.float64)
    if sparse.issparse(sub) and sub.nnz > 0.01 * sub.shape[0] * sub.shape[1]:
        sub = sub.toarray()  # dense vectors (doc keep 100 %): BLAS, not a sparse product, for the Gram matrix
    G = sub @ sub.T
    G = np.asarray(G.toarray() if sparse.issparse(G) else G, dtype=np.float64)
    w, Q = np.linalg.eigh(G)
    keep = w > max(float(w.max()), 0.0) * 1e-12
    return Q[:, keep] * np.sqrt(w[keep])


def score_clustering(clusterer: Any, X: NDArray[np.float64], y: Sequence[str]) -> dict[str, float]:
    """Fit a fresh copy of the clusterer on X; v-measure, homogeneity and completeness of its clusters against y."""
    from sklearn.base import clone
    from sklearn.metrics import homogeneity_completeness_v_measure

    model = clone(clusterer)
    model.fit(X)
    h, c, v = homogeneity_completeness_v_measure(np.asarray(y), model.labels_)
    return {"v_measure": float(v), "homogeneity": float(h), "completeness": float(c)}


def jmteb_protocol(X: Any, labels: Sequence[str], val: NDArray[np.int64], test: NDArray[np.int64], seed: int,
                   clusterers: Callable[[int, int], dict[str, Any]] = make_clusterers) -> dict[str, Any]:
    """One seed: every clusterer scored on the validation rows, the best one's v-measure on the test rows."""
    y = np.asarray(labels)
    k = len(set(y[test].tolist()))
    models = clusterers(k, seed)
    Xv = _points(X, val)
    val_scores = {name: score_clustering(m, Xv, y[val]) for name, m in models.items()}
    best = max(val_scores, key=lambda name: (val_scores[name]["v_measure"], -list(models).index(name)))
    test_score = score_clustering(models[best], _points(X, test), y[test])
    return {"seed": seed, "k": k, "validation": val_scores, "chosen": best, "test": test_score,
            "validation_documents": int(val.size), "test_documents": int(test.size)}


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    v = np.array([r["test"]["v_measure"] for r in runs])
    return {
        "v_measure": float(v.mean()),
        "v_measure_std": float(v.std(ddof=1)) if v.size > 1 else 0.0,
        "v_measure_min": float(v.min()), "v_measure_max": float(v.max()),
        "chosen": dict(Counter(r["chosen"] for r in runs)),
        "seeds": runs,
    }


def run(vectors: dict[str, str], tfidf: str | None, seeds: int, first_seed: int = 1) -> dict[str, Any]:
    """The protocol over `seeds` seeds for every vector folder (and TF-IDF); the same splits for every method."""
    if seeds < 1:
        raise InputError(f"--seeds must be at least 1, got {seeds}")
    matrices: dict[str, Any] = {}
    labels: list[str] | None = None
    for name, folder in vectors.items():
        _, ys, X = read_folder(folder)
        if X is None:
            raise InputError(f"eval folder {folder} ({name}) has no vectors (scdv.*)")
        if labels is not None and ys != labels:
            raise InputError(f"eval folder {folder} ({name}) holds other documents or labels than the first folder")
        labels, matrices[name] = ys, X
    if tfidf is not None:
        docs, ys, _ = read_folder(tfidf, need_vectors=False)
        if labels is not None and ys != labels:
            raise InputError(f"eval folder {tfidf} (tfidf) holds other documents or labels than the vector folders")
        labels, matrices["tfidf"] = ys, tfidf_vectorizer().fit_transform(docs)
    if not matrices or labels is None:
        raise InputError("nothing to cluster: give --vectors NAME=FOLDER or --tfidf FOLDER")
    counts = Counter(labels)
    if len(counts) < 2 or min(counts.values()) < 2:
        raise InputError(f"the clustering protocol needs at least 2 labels with 2 documents each (to split every label "
                         f"between validation and test); got {dict(counts)}")
    out: dict[str, Any] = {"protocol": "jmteb-clustering", "clusterers": list(CLUSTERERS), "documents": len(labels),
                           "labels": len(counts), "split": "stratified halves, reshuffled per seed",
                           "seeds": list(range(first_seed, first_seed + seeds)), "methods": {}}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in matrices}
    for seed in out["seeds"]:
        val, test = stratified_halves(labels, seed)
        for name, X in matrices.items():
            emit("cluster", phase=name, seed=seed)
            t0 = time.perf_counter()
            r = jmteb_protocol(X, labels, val, test, seed)
            r["seconds"] = round(time.perf_counter() - t0, 3)
            runs[name].append(r)
            log(f"cluster {name} seed {seed}: {r['chosen']} v-measure {r['test']['v_measure']:.4f} ({r['seconds']} s)")
    out["methods"] = {name: _summary(rs) for name, rs in runs.items()}
    return out


class _ArgumentError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _ArgumentError(message)


def _named(items: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, sep, folder = item.partition("=")
        if not sep or not name or not folder:
            raise _ArgumentError(f"--vectors takes NAME=FOLDER, got {item!r}")
        if name in out or name == "tfidf":
            raise _ArgumentError(f"--vectors name {name!r} is given twice or reserved")
        out[name] = folder
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = _Parser(prog="python -m scdv.eval_cluster", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--vectors", action="append", default=[])
    p.add_argument("--tfidf")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--first-seed", type=int, default=1)
    try:
        args = p.parse_args(argv)
        t0 = time.perf_counter()
        res = run(_named(args.vectors), args.tfidf, args.seeds, args.first_seed)
        emit_result("cluster", seconds=round(time.perf_counter() - t0, 3), **res)
        return 0
    except _ArgumentError as exc:
        emit_error("cluster", f"bad arguments: {exc}", kind="input")
    except InputError as exc:
        emit_error("cluster", str(exc), kind="input")
    except Exception as exc:  # a bug or the environment: keep the traceback
        traceback.print_exc(file=sys.stderr)
        emit_error("cluster", f"{type(exc).__name__}: {exc}")
    log("eval_cluster failed")
    return 1


if __name__ == "__main__":
    sys.exit(main())
