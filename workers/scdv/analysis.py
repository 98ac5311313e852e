"""What the GMM learned: the figures behind ``scdv inspect clusters`` and ``scdv report``.

CLI: ``python -m scdv.analysis --model DIR [--corpus TOKENS] [--out FILE] [--top N]
[--map-words M] [--max-docs D] [--seed S]``; writes ``DIR/analysis.json`` (or FILE)
atomically and prints one ``result`` line (or one ``error`` line, see scdv.progress).

Everything is computed from the model folder (vocab.txt, word_vectors.npy, gmm.npz)
plus, for coherence only, a tokenised corpus (one document per line, tokens separated
by spaces; ``id<TAB>tokens`` lines of tokens.tsv are accepted too). Nothing here
changes the model.

* P(k|w) is recomputed from gmm.npz on the L2-normalised word vectors, chunk by
  chunk, exactly as the gmm stage predicts it (the (n_words, K) matrix is never
  held whole).
* Clusters: hard size (words whose most probable cluster is k), soft size
  (sum_w P(k|w)), mixture weight, mean P(k|w) of its hard members, and the top
  words by P(k|w) * idf(w) -- the words that weigh most in cluster k's block of the
  word-topic vectors.
* Coherence: NPMI of every pair of a cluster's top words over the corpus documents
  (document co-occurrence, Bouma 2009 / Roeder et al. 2015 "C_NPMI" with boolean
  documents): npmi = ln(p_ij / (p_i p_j)) / -ln p_ij, -1 for a pair that never
  co-occurs, +1 when p_ij = 1; pairs with a word absent from the corpus are skipped.
  The cluster's coherence is the mean over its pairs, in [-1, 1].
* Coherence's yardstick: the same NPMI of random word sets of the same sizes, each
  word drawn among the words of about the same corpus count as the top word it
  stands for (rare words rarely meet, so a uniform draw would flatter or shame the
  clusters by frequency alone). ``RANDOM_SETS_PER_CLUSTER`` sets per cluster,
  seeded; scored in the same pass over the corpus.
* Map: the words projected on the first two principal components of the unit word
  vectors (the space the GMM was fitted in). PCA rather than t-SNE/UMAP: it is
  linear, deterministic and fast, distances along the axes mean the same everywhere
  on the map, and it needs no new dependency (the production team found t-SNE plots
  of their clusters unreadable). Fisher's discriminant plane of the mixture was tried
  too and is worse: one or two outlying clusters take both axes. At most ``map_words`` words are drawn: the top
  three words of every cluster (so each colour has a labelled point) plus a seeded
  random sample of the rest.
* Histograms of word counts (log-spaced bins) and of idf; the GMM's average
  log-likelihood per EM iteration (recorded by training in gmm.npz).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from datetime import datetime, timezone
from typing import Any, Iterable, Iterator, Sequence

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from . import model_io
from .errors import InputError
from .progress import _write, emit_result, run_main
from .topics import l2_normalize

__all__ = ["FORMAT", "npmi_coherence", "random_word_sets", "cluster_summary", "pca_2d", "analyse", "main"]

FORMAT = "scdv-analysis/1"
CHUNK = 65536
PCA_FIT_WORDS = 20000
LABELLED_PER_CLUSTER = 3
RANDOM_SETS_PER_CLUSTER = 10
"""Random word sets drawn per cluster for coherence's yardstick."""
RANDOM_RANK_WINDOW = 0.02
"""A top word's stand-ins are drawn among the words within this share of the vocabulary of its count rank."""


# ------------------------------------------------------------ coherence


def iter_documents(path: str, max_docs: int | None = None) -> Iterator[list[str]]:
    """Token lists of a tokenised corpus file (corpus.txt or tokens.tsv lines)."""
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if max_docs is not None and i >= max_docs:
                return
            line = line.rstrip("\n")
            if "\t" in line:
                line = line.split("\t", 1)[1]
            yield line.split()


def npmi_coherence(docs: Iterable[Sequence[str]], topics: Sequence[Sequence[str]]) -> dict[str, Any]:
    """Mean NPMI of the word pairs of each topic over boolean documents.

    Returns {"coherence": [float|None per topic], "pairs": [pairs scored per topic],
    "documents": N, "df": {word: documents containing it}}.
    """
    index: dict[str, int] = {}
    for words in topics:
        for w in words:
            index.setdefault(w, len(index))
    indptr = [0]
    cols: list[int] = []
    n_docs = 0
    for tokens in docs:
        n_docs += 1
        present = {index[t] for t in tokens if t in index}
        cols.extend(sorted(present))
        indptr.append(len(cols))
    X = sparse.csr_matrix(
        (np.ones(len(cols), dtype=np.float64), np.asarray(cols, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
        shape=(n_docs, max(1, len(index))),
    ).tocsc()
    df = np.asarray(X.sum(axis=0)).ravel()
    scores: list[float | None] = []
    pairs: list[int] = []
    for words in topics:
        ids = [index[w] for w in words]
        if n_docs == 0 or len(ids) < 2:
            scores.append(None)
            pairs.append(0)
            continue
        sub = X[:, ids]
        co = np.asarray((sub.T @ sub).todense())
        vals: list[float] = []
        for a in range(len(ids)):
            for b in range(a + 1, len(ids)):
                da, db = df[ids[a]], df[ids[b]]
                if da == 0 or db == 0 or ids[a] == ids[b]:
                    continue
                p_ab = co[a, b] / n_docs
                if p_ab == 0:
                    vals.append(-1.0)
                elif p_ab >= 1.0:
                    vals.append(1.0)
                else:
                    pmi = math.log(p_ab / ((da / n_docs) * (db / n_docs)))
                    vals.append(pmi / -math.log(p_ab))
        scores.append(float(np.mean(vals)) if vals else None)
        pairs.append(len(vals))
    return {
        "coherence": scores,
        "pairs": pairs,
        "documents": n_docs,
        "df": {w: int(df[i]) for w, i in index.items()},
    }


def random_word_sets(
    top_idx: Sequence[Sequence[int]], counts: NDArray[np.integer], per_topic: int, seed: int
) -> list[list[int]]:
    """Word sets like the given ones: same sizes, each word replaced by a random word of about its count.

    A word of count rank r is replaced by a word drawn uniformly among ranks r +- max(2, RANDOM_RANK_WINDOW * n),
    distinct within a set. Deterministic for a seed.
    """
    n = len(counts)
    if n < 2:
        return []
    order = np.argsort(-np.asarray(counts), kind="stable")
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    half = max(2, int(RANDOM_RANK_WINDOW * n))
    rng = np.random.default_rng(seed)
    sets: list[list[int]] = []
    for ids in top_idx:
        for _ in range(per_topic):
            chosen: list[int] = []
            for w in ids:
                r = int(rank[int(w)])
                lo, hi = max(0, r - half), min(n, r + half + 1)
                for _attempt in range(8):
                    cand = int(order[rng.integers(lo, hi)])
                    if cand not in chosen:
                        break
                chosen.append(cand)
            sets.append(chosen)
    return sets


def _random_summary(scores: Sequence[float | None], sets: int) -> dict[str, Any] | None:
    vals = np.asarray([v for v in scores if v is not None], dtype=np.float64)
    if vals.size == 0:
        return None
    return {
        "method": "npmi of random word sets of the same sizes, each word drawn among words of about its corpus count",
        "sets": sets,
        "mean": float(vals.mean()),
        "p05": float(np.percentile(vals, 5)),
        "p50": float(np.percentile(vals, 50)),
        "p95": float(np.percentile(vals, 95)),
    }


# ------------------------------------------------------------- clusters


def iter_posteriors(model_dir: str) -> Iterator[tuple[int, NDArray[np.floating]]]:
    """(first row, P(k|w) of a chunk of words), over the whole vocabulary."""
    gm = model_io.load_gmm(model_dir)
    vectors = model_io.load_word_vectors(model_dir, mmap=True)
    for s in range(0, vectors.shape[0], CHUNK):
        yield s, gm.predict_proba(l2_normalize(vectors[s : s + CHUNK]))


def cluster_summary(
    chunks: Iterable[tuple[int, NDArray[np.floating]]], idf: NDArray[np.floating], top: int
) -> dict[str, Any]:
    """Sizes, confidence, labels and top words (by P(k|w) * idf) of every cluster, in one pass."""
    n = idf.shape[0]
    labels = np.empty(n, dtype=np.int64)
    maxp = np.empty(n, dtype=np.float32)
    best_idx: NDArray[np.int64] | None = None
    best_val: NDArray[np.float64] | None = None
    soft: NDArray[np.float64] | None = None
    for s, P in chunks:
        P = np.asarray(P, dtype=np.float64)
        m, k = P.shape
        if soft is None:
            soft = np.zeros(k)
            best_idx = np.zeros((0, k), dtype=np.int64)
            best_val = np.zeros((0, k))
        assert best_idx is not None and best_val is not None
        labels[s : s + m] = np.argmax(P, axis=1)
        maxp[s : s + m] = P.max(axis=1)
        soft += P.sum(axis=0)
        score = P * idf[s : s + m, None]
        cand_val = np.concatenate([best_val, score], axis=0)
        cand_idx = np.concatenate([best_idx, np.broadcast_to(np.arange(s, s + m)[:, None], (m, k))], axis=0)
        if cand_val.shape[0] > top:
            part = np.argpartition(-cand_val, top - 1, axis=0)[:top]
            cand_val = np.take_along_axis(cand_val, part, axis=0)
            cand_idx = np.take_along_axis(cand_idx, part, axis=0)
        best_val, best_idx = cand_val, cand_idx
    assert soft is not None and best_idx is not None and best_val is not None
    k = soft.shape[0]
    order = np.argsort(-best_val, axis=0, kind="stable")
    best_idx = np.take_along_axis(best_idx, order, axis=0)
    best_val = np.take_along_axis(best_val, order, axis=0)
    sizes = np.bincount(labels, minlength=k)
    conf = np.bincount(labels, weights=maxp, minlength=k) / np.maximum(sizes, 1)
    return {
        "labels": labels,
        "max_posterior": maxp,
        "sizes": sizes,
        "soft_sizes": soft,
        "mean_member_posterior": np.where(sizes > 0, conf, np.nan),
        "top_idx": best_idx.T,  # (K, top)
        "top_score": best_val.T,
    }


# ------------------------------------------------------------------ map


def pca_2d(unit: NDArray[np.floating], fit_rows: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(mean (d,), components (2, d), explained variance ratio (2,)) of PCA fitted on ``unit[fit_rows]``."""
    A = np.asarray(unit[fit_rows], dtype=np.float64)
    mean = A.mean(axis=0)
    A -= mean
    _, s, vt = np.linalg.svd(A, full_matrices=False)
    var = s**2
    total = var.sum()
    ratio = var[:2] / total if total > 0 else np.zeros(2)
    comps = vt[:2]
    # a fixed sign per axis (largest loading positive), so reruns draw the same picture
    signs = np.sign(comps[np.arange(comps.shape[0]), np.argmax(np.abs(comps), axis=1)])
    comps = comps * np.where(signs == 0, 1, signs)[:, None]
    if comps.shape[0] < 2:
        comps = np.vstack([comps, np.zeros((2 - comps.shape[0], A.shape[1]))])
        ratio = np.concatenate([ratio, np.zeros(2 - ratio.shape[0])])
    return mean, comps, ratio


def word_map(model_dir: str, summary: dict[str, Any], words: list[str], map_words: int, seed: int) -> dict[str, Any]:
    vectors = model_io.load_word_vectors(model_dir, mmap=True)
    n = vectors.shape[0]
    rng = np.random.default_rng(seed)
    labelled = np.unique(summary["top_idx"][:, :LABELLED_PER_CLUSTER].ravel())
    chosen = set(int(i) for i in labelled[:map_words])
    if n <= map_words:
        chosen = set(range(n))
    else:
        rest = np.setdiff1d(np.arange(n), np.fromiter(chosen, dtype=np.int64, count=len(chosen)))
        extra = rng.choice(rest, size=max(0, min(rest.size, map_words - len(chosen))), replace=False)
        chosen.update(int(i) for i in extra)
    rows = np.asarray(sorted(chosen), dtype=np.int64)
    labelled_set = set(int(i) for i in labelled)
    fit_rows = np.arange(n) if n <= PCA_FIT_WORDS else np.sort(rng.choice(n, size=PCA_FIT_WORDS, replace=False))
    unit_fit = l2_normalize(vectors[fit_rows])
    mean, comps, ratio = pca_2d(unit_fit, np.arange(unit_fit.shape[0]))
    xy = (l2_normalize(vectors[rows]).astype(np.float64) - mean) @ comps.T
    return {
        "method": "pca",
        "explained_variance_ratio": [round(float(r), 4) for r in ratio],
        "sampled": bool(n > map_words),
        "words": [words[i] for i in rows],
        "x": [round(float(v), 4) for v in xy[:, 0]],
        "y": [round(float(v), 4) for v in xy[:, 1]],
        "cluster": [int(summary["labels"][i]) for i in rows],
        "p": [round(float(summary["max_posterior"][i]), 3) for i in rows],
        "labelled": [int(i) in labelled_set for i in rows],
    }


# ------------------------------------------------------------ histograms


def histogram(values: NDArray[np.floating], bins: int, log: bool = False) -> dict[str, Any]:
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return {"edges": [], "counts": [], "log": log}
    if log:
        lo, hi = math.log10(max(v.min(), 1.0)), math.log10(max(v.max(), 1.0))
        edges = np.logspace(lo, hi + 1e-9, bins + 1) if hi > lo else np.array([v.min(), v.min() + 1])
        # counts are integers: bins narrower than one count would always be empty
        edges = np.unique(np.concatenate([np.ceil(edges[:-1]), [edges[-1]]]))
    else:
        lo, hi = float(v.min()), float(v.max())
        edges = np.linspace(lo, hi + 1e-9, bins + 1) if hi > lo else np.array([lo, lo + 1])
    counts, _ = np.histogram(v, bins=edges)
    return {"edges": [float(f"{e:.6g}") for e in edges], "counts": counts.tolist(), "log": log}


# --------------------------------------------------------------- analyse


def analyse(
    model_dir: str,
    corpus: str | None = None,
    *,
    top: int = 10,
    map_words: int = 2000,
    max_docs: int | None = 200_000,
    seed: int = 1,
) -> dict[str, Any]:
    """The analysis of a model folder as a JSON-able dict (see the module docstring)."""
    t0 = time.perf_counter()
    vocab = model_io.load_vocab(model_dir)
    if vocab.idf is None:
        raise InputError(f"{os.path.join(model_dir, model_io.VOCAB_FILE)} has no idf column: the model is incomplete")
    words = vocab.words
    top = max(2, min(top, len(words)))
    summary = cluster_summary(iter_posteriors(model_dir), vocab.idf, top)
    k = summary["sizes"].shape[0]
    with np.load(os.path.join(model_dir, model_io.GMM_FILE)) as z:
        gmm = {
            "covariance_type": str(z["covariance_type"]),
            "loglik_history": [float(x) for x in z["loglik_history"]],
            "n_iter": int(z["n_iter"]),
            "converged": bool(z["converged"]),
            "weights": np.asarray(z["weights"], dtype=np.float64),
        }
    topics = [[words[i] for i in summary["top_idx"][c]] for c in range(k)]
    t_clusters = time.perf_counter()
    coherence: dict[str, Any] | None = None
    random_coherence: dict[str, Any] | None = None
    if corpus:
        if not os.path.exists(corpus):
            raise InputError(f"tokenised corpus {corpus} not found")
        random_sets = [[words[i] for i in ids] for ids in random_word_sets(summary["top_idx"], vocab.counts, RANDOM_SETS_PER_CLUSTER, seed)]
        # one pass over the corpus scores the clusters and their random stand-ins
        both = npmi_coherence(iter_documents(corpus, max_docs), topics + random_sets)
        coherence = {**both, "coherence": both["coherence"][:k], "pairs": both["pairs"][:k]}
        random_coherence = _random_summary(both["coherence"][k:], len(random_sets))
    t_coh = time.perf_counter()
    clusters = []
    for c in range(k):
        idx = summary["top_idx"][c]
        clusters.append({
            "cluster": c,
            "weight": float(gmm["weights"][c]),
            "size": int(summary["sizes"][c]),
            "soft_size": float(summary["soft_sizes"][c]),
            "mean_member_posterior": float(summary["mean_member_posterior"][c]),
            "coherence": None if coherence is None else coherence["coherence"][c],
            "coherence_pairs": None if coherence is None else coherence["pairs"][c],
            "top_words": [
                {
                    "word": words[i],
                    "score": round(float(summary["top_score"][c][j]), 5),
                    "p": round(float(summary["top_score"][c][j] / vocab.idf[i]), 5) if vocab.idf[i] else 0.0,
                    "idf": round(float(vocab.idf[i]), 5),
                    "count": int(vocab.counts[i]),
                    **({} if coherence is None else {"df": coherence["df"].get(words[i], 0)}),
                }
                for j, i in enumerate(idx)
            ],
        })
    wmap = word_map(model_dir, summary, words, map_words, seed)
    gmm_out = {key: v for key, v in gmm.items() if key != "weights"}
    return {
        "format": FORMAT,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "n_words": len(words),
        "n_clusters": k,
        "dim": int(model_io.load_word_vectors(model_dir, mmap=True).shape[1]),
        "top": top,
        "corpus": None if coherence is None else {
            "path": os.path.abspath(corpus) if corpus else None,
            "documents": coherence["documents"],
            "max_docs": max_docs,
        },
        "coherence": {
            "method": "npmi, document co-occurrence of each cluster's top words, mean over pairs",
            "mean": None if coherence is None else _mean([c for c in coherence["coherence"] if c is not None]),
            "random": random_coherence,
        },
        "gmm": gmm_out,
        "vocab": {
            "count_histogram": histogram(vocab.counts, 24, log=True),
            "idf_histogram": histogram(vocab.idf, 24),
        },
        "clusters": clusters,
        "map": wmap,
        "seconds": {
            "clusters": round(t_clusters - t0, 3),
            "coherence": round(t_coh - t_clusters, 3),
            "total": round(time.perf_counter() - t0, 3),
        },
    }


def _mean(xs: list[float]) -> float | None:
    return float(np.mean(xs)) if xs else None


def write_analysis(path: str, result: dict[str, Any]) -> None:
    with model_io.atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        _write(result, fh)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m scdv.analysis", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="model folder")
    p.add_argument("--corpus", default="", help="tokenised corpus for coherence (omit: no coherence)")
    p.add_argument("--out", default="", help="output file (default: MODEL/analysis.json)")
    p.add_argument("--top", type=int, default=10)
    p.add_argument("--map-words", type=int, default=2000)
    p.add_argument("--max-docs", type=int, default=200_000)
    p.add_argument("--seed", type=int, default=1)

    def body() -> None:
        args = p.parse_args(argv)
        out = args.out or os.path.join(args.model, "analysis.json")
        result = analyse(args.model, args.corpus or None, top=args.top, map_words=args.map_words,
                         max_docs=args.max_docs or None, seed=args.seed)
        write_analysis(out, result)
        emit_result("analysis", out=os.path.abspath(out), seconds=result["seconds"]["total"],
                    clusters=result["n_clusters"], coherence=result["coherence"]["mean"])

    return run_main("analysis", body)

if __name__ == "__main__":
    sys.exit(main())
