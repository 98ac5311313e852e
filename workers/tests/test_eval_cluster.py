"""JMTEB's clustering protocol (scdv.eval_cluster): the split, the choice on validation, the score on test."""

from __future__ import annotations

import json
import os
import re
from collections import Counter

import numpy as np
import pytest

from scdv import eval_cluster as ec
from scdv.errors import InputError

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures", "english", "sample.jsonl")


def _english():
    """The English fixture (48 articles, 4 topics) as lower-case word tokens, and its labels."""
    docs, labels = [], []
    with open(FIXTURE, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            docs.append(" ".join(re.findall(r"[a-z]+", f"{d['title']} {d['body']}".lower())))
            labels.append(d["category"])
    return docs, labels


def _write_folder(path, docs, labels, vectors=None):
    os.makedirs(path)
    with open(os.path.join(path, "tokens.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(docs) + "\n")
    width = vectors.shape[1] if vectors is not None else 0
    with open(os.path.join(path, "meta.json"), "w", encoding="utf-8") as f:
        json.dump({"n": len(docs), "labels": labels, "width": width}, f)
    if vectors is not None:
        from scipy import sparse

        m = sparse.csr_matrix(np.asarray(vectors, dtype=np.float32))
        m.indptr.astype("<u8").tofile(os.path.join(path, "scdv.indptr"))
        m.indices.astype("<u4").tofile(os.path.join(path, "scdv.indices"))
        m.data.astype("<f4").tofile(os.path.join(path, "scdv.values"))
    return path


def test_stratified_halves_split_every_label_in_two_and_depend_on_the_seed():
    labels = ["a"] * 10 + ["b"] * 7 + ["c"] * 4
    val, test = ec.stratified_halves(labels, seed=1)
    assert sorted(np.concatenate([val, test]).tolist()) == list(range(len(labels)))
    assert not set(val.tolist()) & set(test.tolist())
    assert Counter(labels[i] for i in val) == {"a": 5, "b": 3, "c": 2}
    assert Counter(labels[i] for i in test) == {"a": 5, "b": 4, "c": 2}
    again_val, _ = ec.stratified_halves(labels, seed=1)
    other_val, _ = ec.stratified_halves(labels, seed=2)
    assert again_val.tolist() == val.tolist()
    assert other_val.tolist() != val.tolist()


def test_jmteb_clusterers_are_the_four_with_k_clusters():
    models = ec.make_clusterers(9, seed=3)
    assert list(models) == list(ec.CLUSTERERS)
    assert all(m.n_clusters == 9 for m in models.values())
    assert models["MiniBatchKMeans"].n_init == "auto" and models["MiniBatchKMeans"].random_state == 3
    assert models["AgglomerativeClustering"].linkage == "ward"


from sklearn.base import BaseEstimator, ClusterMixin  # noqa: E402


class _ColumnKMeans(ClusterMixin, BaseEstimator):
    """A real k-means, on one column of the data only: a clusterer whose quality depends on the rows it gets."""

    def __init__(self, column=0, n_clusters=2):
        self.column = column
        self.n_clusters = n_clusters

    def fit(self, X):
        from sklearn.cluster import KMeans

        self.labels_ = KMeans(self.n_clusters, n_init=10, random_state=0).fit(X[:, [self.column]]).labels_
        return self


def test_the_clusterer_is_chosen_on_validation_and_scored_on_test():
    # Validation rows carry the labels in column 0 (column 1 is noise); test rows the other way round. The protocol
    # must pick the column-0 clusterer (best on validation) and report its poor test score; choosing on the test
    # split would pick column 1 and report a perfect score.
    rng = np.random.default_rng(0)
    labels = ["a", "b", "c"] * 20
    val, test = ec.stratified_halves(labels, seed=1)
    code = np.array([{"a": 0.0, "b": 5.0, "c": 10.0}[y] for y in labels])
    X = rng.uniform(0, 10, (len(labels), 2))
    X[val, 0] = code[val] + rng.normal(0, 0.1, val.size)
    X[test, 1] = code[test] + rng.normal(0, 0.1, test.size)
    factory = lambda k, seed: {"by_column_0": _ColumnKMeans(0, k), "by_column_1": _ColumnKMeans(1, k)}  # noqa: E731
    r = ec.jmteb_protocol(X, labels, val, test, seed=1, clusterers=factory)
    assert r["validation"]["by_column_0"]["v_measure"] == pytest.approx(1.0)
    assert r["validation"]["by_column_1"]["v_measure"] < 0.5
    assert r["chosen"] == "by_column_0"
    assert r["test"]["v_measure"] < 0.5
    assert r["k"] == 3 and r["validation_documents"] == 30 and r["test_documents"] == 30


def test_ties_on_validation_go_to_the_first_clusterer_in_jmteb_order():
    labels = ["a", "b"] * 6
    X = np.array([[0.0, 0.0] if y == "a" else [9.0, 9.0] for y in labels])
    val, test = ec.stratified_halves(labels, seed=1)
    factory = lambda k, seed: {"second": _ColumnKMeans(1, k), "first": _ColumnKMeans(0, k)}  # noqa: E731
    assert ec.jmteb_protocol(X, labels, val, test, seed=1, clusterers=factory)["chosen"] == "second"


def test_the_four_real_clusterers_on_the_english_fixture(tmp_path, capsys):
    docs, labels = _english()
    from scdv.eval_baselines import tfidf_vectorizer

    X = tfidf_vectorizer().fit_transform(docs).toarray()
    folder = _write_folder(str(tmp_path / "v"), docs, labels, X)
    assert ec.main(["--vectors", f"tf={folder}", "--tfidf", folder, "--seeds", "3"]) == 0
    res = json.loads(capsys.readouterr().out.strip().split("\n")[-1])
    assert res["type"] == "result" and res["documents"] == 48 and res["labels"] == 4 and res["seeds"] == [1, 2, 3]
    for name in ("tf", "tfidf"):
        m = res["methods"][name]
        assert len(m["seeds"]) == 3 and sum(m["chosen"].values()) == 3
        for s in m["seeds"]:
            assert set(s["validation"]) == set(ec.CLUSTERERS)
            best = max(s["validation"].values(), key=lambda v: v["v_measure"])["v_measure"]
            assert s["validation"][s["chosen"]]["v_measure"] == best
            assert 0 <= s["test"]["v_measure"] <= 1 and s["k"] == 4
        v = [s["test"]["v_measure"] for s in m["seeds"]]
        assert m["v_measure"] == pytest.approx(np.mean(v)) and m["v_measure_std"] == pytest.approx(np.std(v, ddof=1))
        assert m["v_measure"] > 0.5  # four clearly separated topics
    # the same vectors given as a folder and computed as TF-IDF give the same figures (same splits, same seeds)
    assert res["methods"]["tf"]["v_measure"] == pytest.approx(res["methods"]["tfidf"]["v_measure"], abs=1e-6)


def test_bad_input_is_an_input_error_that_names_the_problem(tmp_path, capsys):
    docs, labels = _english()
    a = _write_folder(str(tmp_path / "a"), docs, labels, np.eye(48))
    b = _write_folder(str(tmp_path / "b"), docs, labels[::-1], np.eye(48))
    with pytest.raises(InputError, match="other documents or labels"):
        ec.run({"a": a, "b": b}, None, seeds=1)
    lone = _write_folder(str(tmp_path / "c"), ["x y", "z w", "v u"], ["p", "p", "q"], np.eye(3))
    with pytest.raises(InputError, match="at least 2 labels with 2 documents each"):
        ec.run({"c": lone}, None, seeds=1)
    with pytest.raises(InputError, match="--seeds must be at least 1"):
        ec.run({"a": a}, None, seeds=0)
    assert ec.main(["--vectors", "no-equals-sign"]) == 1
    err = json.loads(capsys.readouterr().out.strip().split("\n")[-1])
    assert err["type"] == "error" and err["kind"] == "input" and "NAME=FOLDER" in err["message"]


def test_the_clusterers_see_the_same_geometry_as_the_raw_vectors():
    # wide sparse vectors (more dims than rows) are clustered as an isometric embedding: same distances, same clusters
    docs, labels = _english()
    from scipy.spatial.distance import pdist
    from sklearn.metrics import v_measure_score

    from scdv.eval_baselines import tfidf_vectorizer

    X = tfidf_vectorizer().fit_transform(docs)
    rows = np.arange(0, 48, 2)
    assert X.shape[1] > rows.size
    Y = ec._points(X, rows)
    assert Y.shape[1] <= rows.size
    raw = X[rows].toarray().astype(np.float64)
    assert pdist(Y) == pytest.approx(pdist(raw), abs=1e-6)
    assert np.linalg.norm(Y, axis=1) == pytest.approx(np.linalg.norm(raw, axis=1), abs=1e-6)
    # the same through the sparse Gram product (below 1 % non-zeros: here padded with empty columns)
    from scipy import sparse

    wide = sparse.hstack([X, sparse.csr_matrix((48, 20000), dtype=X.dtype)]).tocsr()
    assert wide.nnz < 0.01 * wide.shape[0] * wide.shape[1]
    assert pdist(ec._points(wide, rows)) == pytest.approx(pdist(raw), abs=1e-6)
    for name, model in ec.make_clusterers(4, seed=1).items():
        from sklearn.base import clone

        a, b = clone(model).fit(Y).labels_, clone(model).fit(raw).labels_
        assert v_measure_score(a, b) == pytest.approx(1.0), name
