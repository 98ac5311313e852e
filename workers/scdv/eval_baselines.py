"""Lexical baselines and linear classifiers for ``scdv eval`` (pipeline/eval/).

CLI (stdout speaks the scdv.progress protocol: progress lines, then one result or error line)::

    python -m scdv.eval_baselines rank --dir D [--k 10] [--folds 5] [--seed 1]
    python -m scdv.eval_baselines classify --train D1 --test D2 [--seed 1]
    python -m scdv.eval_baselines match --dir D [--k 10]

An input folder, written by pipeline/eval/exchange.js, holds one document per row:

    tokens.txt       row i: the document's kept tokens, space-separated (the very tokens SCDV saw)
    meta.json        {"labels": [...], "n": N, "width": W}
    scdv.indptr      <u8 x (N+1)   the SCDV (or hybrid) document vectors as CSR, from pipeline/embed/
    scdv.indices     <u4 x nnz
    scdv.values      <f4 x nnz

``rank`` writes ``D/baselines.json``: for ``tfidf`` and ``mlt`` the top-k neighbour rows of every row (itself
excluded, documents with score 0 never returned) and the per-query latency in ms; and, with --folds > 1,
``classify``: k-fold accuracy of a linear classifier on the SCDV vectors and on TF-IDF. Metrics are computed by
the caller (pipeline/eval/relevance-metrics.js), one implementation for SCDV and baselines alike.

``match`` reads a folder whose first Q rows are pages and the others short texts (ads): ``match.json`` holds
``{"queries": Q}``. It writes ``D/baselines.json`` with, for ``tfidf`` and ``mlt``, the top-k ad rows (0 = the
first ad) of every page: TF-IDF fit on every row (pages and ads), the cosine of each page with each ad; and
more_like_this with the ads as the index and each page's tokens as the ``like`` text (its interesting terms are
picked by the ads' document frequencies, as the engine picks them from the index it searches).

Baselines, on the same tokens:

* ``tfidf``: scikit-learn's TfidfVectorizer (sublinear tf = 1 + ln tf, smoothed idf, L2 rows), cosine similarity.
* ``mlt``: Elasticsearch's more_like_this with its defaults, on one text field: interesting terms are those with
  tf >= min_term_freq (2) in the query document and df >= min_doc_freq (5), ranked by tf * idf with Lucene's
  ClassicSimilarity idf = 1 + ln((N + 1) / (df + 1)); the top max_query_terms (25) become SHOULD clauses, at least
  minimum_should_match (30 %, rounded down) of them must match, and documents are scored by BM25 (k1 1.2,
  b 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5)), exact field lengths where Lucene stores them lossily);
  boost_terms 0, include false (the query document is not returned).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from .errors import InputError
from .progress import emit, emit_error, emit_result, log

__all__ = [
    "MltParams", "read_folder", "tfidf_vectorizer", "tfidf_neighbours", "mlt_neighbours", "mlt_terms", "mlt_match", "tfidf_match",
    "classify_cv", "classify_train_test", "main",
]


# ---------------------------------------------------------------- input


def read_folder(folder: str, need_vectors: bool = True) -> tuple[list[str], list[str], sparse.csr_matrix | None]:
    """(token strings, labels, SCDV matrix or None) of an exchange folder."""
    try:
        with open(os.path.join(folder, "meta.json"), encoding="utf-8") as f:
            meta = json.load(f)
        with open(os.path.join(folder, "tokens.txt"), encoding="utf-8") as f:
            docs = f.read().split("\n")
    except FileNotFoundError as exc:
        raise InputError(f"eval folder {folder} is incomplete: {exc.filename} is missing") from exc
    n = int(meta["n"])
    if docs and docs[-1] == "" and len(docs) == n + 1:
        docs.pop()
    labels = [str(x) for x in meta["labels"]]
    if len(docs) != n or len(labels) != n:
        raise InputError(f"eval folder {folder}: {len(docs)} token rows and {len(labels)} labels for n = {n}")
    X = None
    if need_vectors and os.path.exists(os.path.join(folder, "scdv.indptr")):
        indptr = np.fromfile(os.path.join(folder, "scdv.indptr"), "<u8").astype(np.int64)
        indices = np.fromfile(os.path.join(folder, "scdv.indices"), "<u4").astype(np.int32)
        values = np.fromfile(os.path.join(folder, "scdv.values"), "<f4")
        if indptr.size != n + 1 or indptr[-1] != indices.size or indices.size != values.size:
            raise InputError(f"eval folder {folder}: the CSR files disagree with n = {n}")
        X = sparse.csr_matrix((values, indices, indptr), shape=(n, int(meta["width"])))
    return docs, labels, X


# ---------------------------------------------------------------- tf-idf


def _split(doc: str) -> list[str]:
    return doc.split()


def tfidf_vectorizer():
    """scikit-learn TF-IDF over pre-tokenised text: sublinear tf, smoothed idf, L2-normalised rows."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(analyzer=_split, sublinear_tf=True, norm="l2", smooth_idf=True, lowercase=False, dtype=np.float32)


def _top_k(scores: NDArray[np.floating], k: int, exclude: int | None) -> list[int]:
    """Rows of the k best positive scores, best first, ties by row; `exclude` (a row, or None) never returned."""
    scores = scores.copy()
    if exclude is not None:
        scores[exclude] = 0.0
    pos = np.flatnonzero(scores > 0)
    if pos.size > k:
        # candidates: every row whose score reaches the k-th best (keeps ties for the index order)
        kth = np.partition(scores[pos], pos.size - k)[pos.size - k]
        pos = pos[scores[pos] >= kth]
    order = np.lexsort((pos, -scores[pos]))
    return [int(x) for x in pos[order][:k]]


def tfidf_neighbours(X: sparse.csr_matrix, k: int = 10) -> tuple[list[list[int]], list[float]]:
    """Top-k cosine neighbours of every row of an L2-normalised matrix, and the per-query time (ms)."""
    XT = X.T.tocsr()
    out: list[list[int]] = []
    lat: list[float] = []
    for i in range(X.shape[0]):
        t0 = time.perf_counter()
        scores = np.asarray((X[i] @ XT).todense()).ravel()
        out.append(_top_k(scores, k, i))
        lat.append((time.perf_counter() - t0) * 1000)
    return out, lat


# ---------------------------------------------------------------- more_like_this


@dataclass(frozen=True)
class MltParams:
    """Elasticsearch more_like_this defaults (and BM25's, the default similarity)."""

    max_query_terms: int = 25
    min_term_freq: int = 2
    min_doc_freq: int = 5
    max_doc_freq: int | None = None
    minimum_should_match: float = 0.30
    k1: float = 1.2
    b: float = 0.75


class _MltIndex:
    def __init__(self, docs: Sequence[str], p: MltParams) -> None:
        from sklearn.feature_extraction.text import CountVectorizer

        self.p = p
        cv = CountVectorizer(analyzer=_split, lowercase=False, dtype=np.float64)
        C = cv.fit_transform(docs).tocsr() if any(d.strip() for d in docs) else sparse.csr_matrix((len(docs), 0))
        self.terms = cv.get_feature_names_out() if C.shape[1] else np.array([], dtype=object)
        self.column = {str(t): j for j, t in enumerate(self.terms)}
        self.C = C
        n = C.shape[0]
        self.df = np.asarray((C > 0).sum(axis=0)).ravel()
        # Lucene ClassicSimilarity idf, used by MoreLikeThis to pick the interesting terms
        self.classic_idf = 1.0 + np.log((n + 1) / (self.df + 1))
        bm25_idf = np.log(1.0 + (n - self.df + 0.5) / (self.df + 0.5))
        dl = np.asarray(C.sum(axis=1)).ravel()
        avgdl = dl.mean() if n and dl.mean() > 0 else 1.0
        coo = C.tocoo()
        tf = coo.data
        norm = p.k1 * (1.0 - p.b + p.b * dl[coo.row] / avgdl)
        w = bm25_idf[coo.col] * tf / (tf + norm)
        self.W = sparse.csc_matrix((w, (coo.row, coo.col)), shape=C.shape)
        self.present = sparse.csc_matrix((np.ones_like(w), (coo.row, coo.col)), shape=C.shape)

    def terms_of(self, i: int) -> NDArray[np.int64]:
        """Columns of the query's interesting terms, best first."""
        row = self.C.getrow(i)
        return self._interesting(row.indices, row.data)

    def terms_of_text(self, doc: str) -> NDArray[np.int64]:
        """The interesting terms of a text outside the index (a ``like`` text): its words the index has."""
        counts = Counter(t for t in _split(doc) if t in self.column)
        cols = np.fromiter((self.column[t] for t in counts), dtype=np.int64, count=len(counts))
        tf = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
        return self._interesting(cols, tf)

    def _interesting(self, cols: NDArray[Any], tf: NDArray[Any]) -> NDArray[np.int64]:
        p = self.p
        df = self.df[cols]
        ok = (tf >= p.min_term_freq) & (df >= p.min_doc_freq)
        if p.max_doc_freq is not None:
            ok &= df <= p.max_doc_freq
        cols, tf = cols[ok], tf[ok]
        score = tf * self.classic_idf[cols]
        order = np.lexsort((cols, -score))[: p.max_query_terms]
        return cols[order].astype(np.int64)

    def search(self, i: int, k: int) -> list[int]:
        return self.search_terms(self.terms_of(i), k, i)

    def search_terms(self, sel: NDArray[np.int64], k: int, exclude: int | None) -> list[int]:
        if sel.size == 0:
            return []
        msm = max(1, int(math.floor(sel.size * self.p.minimum_should_match + 1e-9)))
        scores = np.asarray(self.W[:, sel].sum(axis=1)).ravel()
        matched = np.asarray(self.present[:, sel].sum(axis=1)).ravel()
        scores[matched < msm] = 0.0
        return _top_k(scores, k, exclude)


def mlt_terms(docs: Sequence[str], i: int, params: MltParams = MltParams()) -> list[str]:
    """The interesting terms more_like_this would query with for document i (for tests and inspection)."""
    idx = _MltIndex(docs, params)
    return [str(idx.terms[c]) for c in idx.terms_of(i)]


def mlt_neighbours(docs: Sequence[str], k: int = 10, params: MltParams = MltParams()) -> tuple[list[list[int]], list[float], int]:
    """Top-k more_like_this neighbours of every document, per-query times (ms), and how many queries had no term."""
    idx = _MltIndex(docs, params)
    out: list[list[int]] = []
    lat: list[float] = []
    no_terms = 0
    for i in range(len(docs)):
        t0 = time.perf_counter()
        hits = idx.search(i, k)
        lat.append((time.perf_counter() - t0) * 1000)
        if idx.terms_of(i).size == 0:
            no_terms += 1
        out.append(hits)
    return out, lat, no_terms


def mlt_match(pages: Sequence[str], ads: Sequence[str], k: int = 10,
              params: MltParams = MltParams()) -> tuple[list[list[int]], list[float], int]:
    """Top-k more_like_this ads of every page (the ads are the index, the page the ``like`` text), per-query
    times (ms), and how many pages had no interesting term."""
    idx = _MltIndex(ads, params)
    out: list[list[int]] = []
    lat: list[float] = []
    no_terms = 0
    for doc in pages:
        t0 = time.perf_counter()
        sel = idx.terms_of_text(doc)
        out.append(idx.search_terms(sel, k, None))
        lat.append((time.perf_counter() - t0) * 1000)
        no_terms += int(sel.size == 0)
    return out, lat, no_terms


def tfidf_match(pages: Sequence[str], ads: Sequence[str], k: int = 10) -> tuple[list[list[int]], list[float], int]:
    """Top-k TF-IDF cosine ads of every page (the vectorizer fit on pages and ads), per-query times (ms), features."""
    T = tfidf_vectorizer().fit_transform(list(pages) + list(ads))
    Q, A = T[: len(pages)], T[len(pages):].T.tocsr()
    out: list[list[int]] = []
    lat: list[float] = []
    for i in range(Q.shape[0]):
        t0 = time.perf_counter()
        scores = np.asarray((Q[i] @ A).todense()).ravel()
        out.append(_top_k(scores, k, None))
        lat.append((time.perf_counter() - t0) * 1000)
    return out, lat, int(T.shape[1])


# ---------------------------------------------------------------- classifiers


def _linear_svc(C: float, seed: int):
    from sklearn.svm import LinearSVC

    return LinearSVC(C=C, random_state=seed, max_iter=5000)


def classify_cv(X: Any, labels: Sequence[str], folds: int = 5, seed: int = 1, C: float = 1.0) -> dict[str, Any]:
    """Stratified k-fold accuracy of LinearSVC(C) on the rows of X."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    y = np.asarray(labels)
    smallest = int(min(np.unique(y, return_counts=True)[1]))
    if smallest < folds:
        raise InputError(f"a label has only {smallest} document(s): {folds}-fold classification needs at least {folds} per label")
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        acc = cross_val_score(_linear_svc(C, seed), X, y, cv=StratifiedKFold(folds, shuffle=True, random_state=seed))
    return {"accuracy": float(acc.mean()), "accuracy_std": float(acc.std()), "folds": folds, "C": C,
            "seconds": round(time.perf_counter() - t0, 3)}


C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0)


def classify_train_test(Xtr: Any, ytr: Sequence[str], Xte: Any, yte: Sequence[str], seed: int = 1,
                        grid: Sequence[float] = C_GRID, folds: int = 5) -> dict[str, Any]:
    """LinearSVC with C chosen by stratified k-fold cross-validation on the train rows; test accuracy, and
    ``correct``: 1 or 0 per test row (the caller's bootstrap over test documents, pipeline/eval/classify.js)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    t0 = time.perf_counter()
    cv_folds = max(2, min(folds, int(min(np.unique(np.asarray(ytr), return_counts=True)[1]))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        search = GridSearchCV(_linear_svc(1.0, seed), {"C": list(grid)},
                              cv=StratifiedKFold(cv_folds, shuffle=True, random_state=seed), n_jobs=1)
        search.fit(Xtr, np.asarray(ytr))
        correct = (search.predict(Xte) == np.asarray(yte)).astype(int)
    return {"accuracy": float(correct.mean()), "C": float(search.best_params_["C"]), "cv_accuracy": float(search.best_score_),
            "cv_folds": cv_folds, "seconds": round(time.perf_counter() - t0, 3), "correct": correct.tolist()}


# ---------------------------------------------------------------- commands


def run_rank(folder: str, k: int, folds: int, seed: int) -> dict[str, Any]:
    docs, labels, X = read_folder(folder)
    emit("baselines", phase="tfidf", documents=len(docs))
    T = tfidf_vectorizer().fit_transform(docs)
    tf_nb, tf_lat = tfidf_neighbours(T, k)
    emit("baselines", phase="mlt", documents=len(docs))
    mlt_nb, mlt_lat, no_terms = mlt_neighbours(docs, k)
    out: dict[str, Any] = {
        "tfidf": {"neighbours": tf_nb, "latency_ms": tf_lat, "features": int(T.shape[1])},
        "mlt": {"neighbours": mlt_nb, "latency_ms": mlt_lat, "queries_without_terms": no_terms,
                "params": MltParams().__dict__},
    }
    smallest = min(Counter(labels).values())
    if folds > 1 and smallest < folds:
        out["classify_skipped"] = f"a label has only {smallest} document(s): {folds}-fold classification needs {folds} per label"
        log(f"classifier skipped: {out['classify_skipped']}")
    elif folds > 1:
        emit("baselines", phase="classify", folds=folds)
        out["classify"] = {"tfidf": classify_cv(T, labels, folds, seed)}
        if X is not None:
            out["classify"]["scdv"] = classify_cv(X, labels, folds, seed)
    with open(os.path.join(folder, "baselines.json"), "w", encoding="utf-8") as f:
        json.dump(out, f)
    return {"file": os.path.join(folder, "baselines.json")}


def run_classify(train: str, test: str, seed: int) -> dict[str, Any]:
    dtr, ytr, Xtr = read_folder(train)
    dte, yte, Xte = read_folder(test)
    if Xtr is None or Xte is None:
        raise InputError("classify needs the SCDV vectors (scdv.*) in both folders")
    emit("classify", phase="tfidf")
    vec = tfidf_vectorizer()
    Ttr = vec.fit_transform(dtr)
    Tte = vec.transform(dte)
    tfidf = classify_train_test(Ttr, ytr, Tte, yte, seed)
    emit("classify", phase="scdv")
    scdv = classify_train_test(Xtr, ytr, Xte, yte, seed)
    unseen = sorted(set(yte) - set(ytr))
    return {"scdv": scdv, "tfidf": tfidf, "train_documents": len(dtr), "test_documents": len(dte),
            "test_labels_unseen_in_train": unseen}


def run_match(folder: str, k: int) -> dict[str, Any]:
    docs, _labels, _X = read_folder(folder, need_vectors=False)
    try:
        with open(os.path.join(folder, "match.json"), encoding="utf-8") as f:
            q = int(json.load(f)["queries"])
    except FileNotFoundError as exc:
        raise InputError(f"eval folder {folder} is incomplete: {exc.filename} is missing") from exc
    if not 0 < q < len(docs):
        raise InputError(f"eval folder {folder}: {q} pages of {len(docs)} rows leave no page or no ad")
    pages, ads = docs[:q], docs[q:]
    emit("baselines", phase="tfidf", documents=len(docs))
    tf_nb, tf_lat, features = tfidf_match(pages, ads, k)
    emit("baselines", phase="mlt", documents=len(docs))
    mlt_nb, mlt_lat, no_terms = mlt_match(pages, ads, k)
    out = {
        "tfidf": {"neighbours": tf_nb, "latency_ms": tf_lat, "features": features},
        "mlt": {"neighbours": mlt_nb, "latency_ms": mlt_lat, "queries_without_terms": no_terms, "params": MltParams().__dict__},
    }
    with open(os.path.join(folder, "baselines.json"), "w", encoding="utf-8") as f:
        json.dump(out, f)
    return {"file": os.path.join(folder, "baselines.json")}


class _ArgumentError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _ArgumentError(message)


def main(argv: Sequence[str] | None = None) -> int:
    p = _Parser(prog="python -m scdv.eval_baselines", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("rank")
    r.add_argument("--dir", required=True)
    r.add_argument("--k", type=int, default=10)
    r.add_argument("--folds", type=int, default=5)
    r.add_argument("--seed", type=int, default=1)
    c = sub.add_parser("classify")
    c.add_argument("--train", required=True)
    c.add_argument("--test", required=True)
    c.add_argument("--seed", type=int, default=1)
    m = sub.add_parser("match")
    m.add_argument("--dir", required=True)
    m.add_argument("--k", type=int, default=10)
    stage = "eval"
    try:
        args = p.parse_args(argv)
        stage = args.command
        t0 = time.perf_counter()
        if args.command == "rank":
            res = run_rank(args.dir, args.k, args.folds, args.seed)
        elif args.command == "match":
            res = run_match(args.dir, args.k)
        else:
            res = run_classify(args.train, args.test, args.seed)
        emit_result(stage, seconds=round(time.perf_counter() - t0, 3), **res)
        return 0
    except _ArgumentError as exc:
        emit_error(stage, f"bad arguments: {exc}", kind="input")
    except InputError as exc:
        emit_error(stage, str(exc), kind="input")
    except Exception as exc:  # a bug or the environment: keep the traceback
        traceback.print_exc(file=sys.stderr)
        emit_error(stage, f"{type(exc).__name__}: {exc}")
    log("eval_baselines failed")
    return 1


if __name__ == "__main__":
    sys.exit(main())
