"""Baselines of scdv eval on a toy corpus: TF-IDF cosine and more_like_this, worked by hand where it matters."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from scdv import eval_baselines as eb
from scdv.errors import InputError

# Six documents, three topics. "common" is everywhere, so it must not drive neighbours.
TOY = [
    "cat cat dog pet common",
    "cat dog dog pet common",
    "stock market market price common",
    "stock price price trade common",
    "rain cloud cloud sun common",
    "rain sun sun wind common",
]


def test_tfidf_matches_the_definition_sublinear_tf_smoothed_idf_l2():
    X = eb.tfidf_vectorizer().fit_transform(TOY)
    vocab = sorted({t for d in TOY for t in d.split()})
    n = len(TOY)
    df = {t: sum(t in d.split() for d in TOY) for t in vocab}
    # document 0 by hand: tf cat 2 -> 1 + ln 2
    w = {t: (1 + math.log(d0)) * (math.log((1 + n) / (1 + df[t])) + 1)
         for t, d0 in {"cat": 2, "dog": 1, "pet": 1, "common": 1}.items()}
    norm = math.sqrt(sum(v * v for v in w.values()))
    row = X[0].toarray().ravel()
    feats = {t: i for i, t in enumerate(eb.tfidf_vectorizer().fit(TOY).get_feature_names_out())}
    for t, v in w.items():
        assert row[feats[t]] == pytest.approx(v / norm, rel=1e-5)


def test_tfidf_neighbours_rank_the_same_topic_first_and_exclude_the_query():
    X = eb.tfidf_vectorizer().fit_transform(TOY)
    nb, lat = eb.tfidf_neighbours(X, k=3)
    assert [r[0] for r in nb] == [1, 0, 3, 2, 5, 4]
    assert all(i not in r for i, r in enumerate(nb))
    assert len(lat) == len(TOY) and all(t >= 0 for t in lat)


def test_top_k_breaks_ties_by_row_and_drops_zero_scores():
    scores = np.array([0.5, 0.9, 0.5, 0.0, 0.5, 0.9])
    assert eb._top_k(scores, 3, exclude=5) == [1, 0, 2]
    assert eb._top_k(scores, 10, exclude=1) == [5, 0, 2, 4]


def _corpus_for_mlt():
    # term "alpha" in 6 docs (>= min_doc_freq 5), "beta" in 2 docs (below it), "gamma" in 5 docs
    docs = ["alpha alpha beta beta gamma gamma"]
    docs += ["alpha gamma filler"] * 4
    docs += ["alpha beta other"]
    docs += ["unrelated words only"] * 3
    return docs


def test_mlt_picks_terms_with_tf_at_least_2_and_df_at_least_5():
    docs = _corpus_for_mlt()
    assert set(eb.mlt_terms(docs, 0)) == {"alpha", "gamma"}
    # a document without any repeated term has no interesting term, hence no neighbours
    assert eb.mlt_terms(docs, 1) == []
    nb, _, no_terms = eb.mlt_neighbours(docs, k=10)
    assert nb[1] == [] and no_terms == len(docs) - 1
    # query 0 finds the four alpha+gamma documents first (two matched terms), then the alpha-only one; never itself
    assert nb[0][:4] == [1, 2, 3, 4] and nb[0][4] == 5 and 0 not in nb[0]


def test_mlt_keeps_the_top_max_query_terms_by_tf_idf_and_applies_minimum_should_match():
    # 30 terms in the query (t00-t06 three times, the rest twice) and in 5 filler documents; A holds t00-t06,
    # B t00-t05. N = 8, classic idf 1 + ln(9 / (df + 1)): t00-t05 (df 8) 3 x 1.0, t06 (df 7) 3 x 1.118,
    # the rest (df 6) 2 x 1.251 -> the 25 terms are t00-t06 and t07-t24 (ties by term order).
    terms = [f"t{i:02d}" for i in range(30)]
    query = " ".join(t for i, t in enumerate(terms) for _ in range(3 if i < 7 else 2))
    docs = [query] + [" ".join(terms)] * 5 + [" ".join(terms[:7]), " ".join(terms[:6])]
    picked = eb.mlt_terms(docs, 0)
    assert len(picked) == 25
    assert set(picked) == set(terms[:25])
    # at least floor(0.3 x 25) = 7 clauses must match: A (7) qualifies, B (6) does not
    nb, _, _ = eb.mlt_neighbours(docs, k=10)
    assert 6 in nb[0] and 7 not in nb[0] and sorted(nb[0]) == [1, 2, 3, 4, 5, 6]


def _write_folder(tmp_path, docs, labels, vectors=None):
    d = tmp_path / "x"
    d.mkdir()
    (d / "tokens.txt").write_text("\n".join(docs) + "\n", encoding="utf-8")
    width = vectors.shape[1] if vectors is not None else 0
    (d / "meta.json").write_text(json.dumps({"n": len(docs), "labels": labels, "width": width}), encoding="utf-8")
    if vectors is not None:
        from scipy import sparse

        m = sparse.csr_matrix(vectors.astype(np.float32))
        m.indptr.astype("<u8").tofile(d / "scdv.indptr")
        m.indices.astype("<u4").tofile(d / "scdv.indices")
        m.data.astype("<f4").tofile(d / "scdv.values")
    return str(d)


def test_rank_command_writes_neighbours_and_classifier_accuracies(tmp_path, capsys):
    docs = TOY * 2
    labels = ["pets", "pets", "money", "money", "weather", "weather"] * 2
    vecs = np.eye(3)[[0, 0, 1, 1, 2, 2] * 2]
    d = _write_folder(tmp_path, docs, labels, vecs)
    assert eb.main(["rank", "--dir", d, "--k", "3", "--folds", "2"]) == 0
    last = json.loads(capsys.readouterr().out.strip().split("\n")[-1])
    assert last["type"] == "result"
    out = json.load(open(os.path.join(d, "baselines.json")))
    assert len(out["tfidf"]["neighbours"]) == 12 and len(out["mlt"]["neighbours"]) == 12
    assert out["classify"]["scdv"]["accuracy"] == 1.0
    assert 0 <= out["classify"]["tfidf"]["accuracy"] <= 1


def test_classify_train_test_chooses_c_by_cross_validation(tmp_path):
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 1, (20, 5)) + 3 * np.eye(5)[0], rng.normal(0, 1, (20, 5)) - 3 * np.eye(5)[0]])
    y = ["a"] * 20 + ["b"] * 20
    r = eb.classify_train_test(X[::2], y[::2], X[1::2], y[1::2])
    assert r["accuracy"] >= 0.9 and r["C"] in eb.C_GRID and r["cv_folds"] == 5
    # one 1/0 per test row, for the caller's bootstrap over test documents
    assert len(r["correct"]) == 20 and set(r["correct"]) <= {0, 1} and sum(r["correct"]) / 20 == r["accuracy"]


def test_bad_folders_are_input_errors(tmp_path, capsys):
    d = _write_folder(tmp_path, ["a b", "c d"], ["x"])  # 2 rows, 1 label
    with pytest.raises(InputError, match="2 token rows and 1 labels"):
        eb.read_folder(d)
    assert eb.main(["rank", "--dir", str(tmp_path / "missing")]) == 1
    err = json.loads(capsys.readouterr().out.strip().split("\n")[-1])
    assert err["type"] == "error" and err["kind"] == "input" and "meta.json" in err["message"]
    with pytest.raises(InputError, match="needs at least 5 per label"):
        eb.classify_cv(np.eye(4), ["a", "a", "b", "b"], folds=5)


def test_match_baselines_rank_ads_for_pages_with_the_ads_as_the_index(tmp_path, capsys):
    pages = ["cat cat dog pet common", "stock stock market price common"]
    ads = ["dog pet", "market price", "rain sun"]
    nb, lat, features = eb.tfidf_match(pages, ads, k=3)
    # ad rows, best first; an ad sharing no word with the page is never returned
    assert nb == [[0], [1]] and len(lat) == 2 and features == len({t for d in pages + ads for t in d.split()})
    # more_like_this: the page's repeated words, counted in the ads' index (df >= 5), find the ads holding them
    ad_index = ["alpha x"] * 5 + ["beta y"] * 5 + ["gamma"]
    nb, _, no_terms = eb.mlt_match(["alpha alpha gamma gamma", "beta beta", "gamma gamma"], ad_index, k=3)
    assert nb[0] == [0, 1, 2] and nb[1] == [5, 6, 7]
    # gamma is in one ad only (df 1 < min_doc_freq 5): no interesting term, no answer
    assert nb[2] == [] and no_terms == 1
    # the command: first `queries` rows are pages, the rest ads
    d = tmp_path / "m"
    d.mkdir()
    (d / "tokens.txt").write_text("\n".join(pages + ads) + "\n", encoding="utf-8")
    (d / "meta.json").write_text(json.dumps({"n": 5, "labels": ["a", "b", "a", "b", "c"], "width": 0}), encoding="utf-8")
    (d / "match.json").write_text(json.dumps({"queries": 2}), encoding="utf-8")
    assert eb.main(["match", "--dir", str(d), "--k", "2"]) == 0
    out = json.loads((d / "baselines.json").read_text(encoding="utf-8"))
    assert out["tfidf"]["neighbours"] == [[0], [1]] and len(out["mlt"]["neighbours"]) == 2
    (d / "match.json").write_text(json.dumps({"queries": 5}), encoding="utf-8")
    assert eb.main(["match", "--dir", str(d)]) == 1
    assert "leave no page or no ad" in capsys.readouterr().out
