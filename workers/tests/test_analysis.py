"""scdv.analysis: NPMI coherence on a toy corpus with known answers, top words across chunks, and the
analysis of a small trained model end to end."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from corpus_factory import ANIMALS, VEHICLES, two_group_corpus
from scdv import analysis, train
from scdv.config import parse_config


def test_npmi_known_answers() -> None:
    docs = [["a", "b", "e"], ["a", "b", "e"], ["c", "d", "e"], ["c", "d", "e"]]
    r = analysis.npmi_coherence(docs, [["a", "b"], ["a", "c"], ["a", "e"], ["a", "b", "c"]])
    assert r["documents"] == 4
    # a and b always together: p_ab = p_a = p_b = 1/2 -> pmi = ln 2, -ln p_ab = ln 2 -> 1
    assert r["coherence"][0] == pytest.approx(1.0)
    # never together -> -1
    assert r["coherence"][1] == pytest.approx(-1.0)
    # e is in every document: independent of a -> 0
    assert r["coherence"][2] == pytest.approx(0.0)
    # mean of (a,b)=1, (a,c)=-1, (b,c)=-1
    assert r["coherence"][3] == pytest.approx(-1 / 3)
    assert r["pairs"] == [1, 1, 1, 3]
    assert r["df"]["e"] == 4


def test_npmi_partial_overlap_and_absent_words() -> None:
    # a in 2 of 4 docs, b in 3, together in 1: npmi = ln((1/4)/((2/4)(3/4))) / -ln(1/4)
    docs = [["a", "b"], ["a"], ["b"], ["b", "x"]]
    r = analysis.npmi_coherence(docs, [["a", "b"], ["a", "zzz"], ["zzz"]])
    assert r["coherence"][0] == pytest.approx(math.log((1 / 4) / (0.5 * 0.75)) / -math.log(1 / 4))
    assert r["coherence"][1] is None  # the only pair has a word absent from the corpus: not scored
    assert r["pairs"][1] == 0
    assert r["coherence"][2] is None  # one word: no pair


def test_cluster_summary_top_words_across_chunks() -> None:
    rng = np.random.default_rng(0)
    n, k, top = 50, 4, 5
    P = rng.dirichlet(np.ones(k), size=n).astype(np.float32)
    idf = rng.uniform(1, 5, size=n)
    chunks = [(s, P[s : s + 7]) for s in range(0, n, 7)]  # chunks smaller and not multiples of top
    s = analysis.cluster_summary(chunks, idf, top)
    score = P.astype(np.float64) * idf[:, None]
    for c in range(k):
        want = np.argsort(-score[:, c], kind="stable")[:top]
        assert list(s["top_idx"][c]) == list(want)
    assert s["sizes"].sum() == n
    assert np.array_equal(s["labels"], np.argmax(P, axis=1))
    assert s["soft_sizes"].sum() == pytest.approx(n, rel=1e-5)


def test_analyse_a_trained_model(tmp_path: Path) -> None:
    corpus = two_group_corpus(tmp_path / "tokens.txt", lines=200)
    out = tmp_path / "model"
    cfg = parse_config(json.dumps({
        "word2vec": {"vector_size": 16, "window": 5, "negative": 5, "sample": 0, "min_count": 1, "epochs": 20, "workers": 1, "seed": 3},
        "gmm": {"n_components": 2, "seed": 0},
        "topics": {"keep_fraction": 0.25},
    }))
    train.run_stage("all", str(corpus), str(out), cfg)
    assert analysis.main(["--model", str(out), "--corpus", str(corpus), "--top", "8", "--map-words", "30"]) == 0
    a = json.loads((out / "analysis.json").read_text(encoding="utf-8"))
    assert a["format"] == analysis.FORMAT
    assert a["n_clusters"] == 2 and a["n_words"] == 40 and a["corpus"]["documents"] == 200
    groups = [{w["word"] for w in c["top_words"]} for c in a["clusters"]]
    # each cluster's top words come from one group, and they co-occur: high coherence
    assert sorted(g <= set(ANIMALS) or g <= set(VEHICLES) for g in groups) == [True, True]
    assert all(c["coherence"] > 0 for c in a["clusters"])
    assert sum(c["size"] for c in a["clusters"]) == 40
    assert len(a["gmm"]["loglik_history"]) == a["gmm"]["n_iter"] >= 1
    m = a["map"]
    assert len(m["words"]) == len(m["x"]) == len(m["y"]) == len(m["cluster"]) == 30 and m["sampled"]
    assert sum(a["vocab"]["idf_histogram"]["counts"]) == 40
    assert sum(a["vocab"]["count_histogram"]["counts"]) == 40
    # the yardstick: random sets of the same sizes mix the groups, so they score well below the clusters
    rnd = a["coherence"]["random"]
    assert rnd["sets"] == 2 * analysis.RANDOM_SETS_PER_CLUSTER
    assert rnd["p05"] <= rnd["p50"] <= rnd["p95"]
    assert rnd["mean"] < min(c["coherence"] for c in a["clusters"])


def test_random_word_sets_match_sizes_and_counts() -> None:
    counts = np.array([1000 - 7 * i for i in range(100)])  # count rank = index
    top = [[0, 1, 2], [50, 51, 52, 53], [99, 98]]
    sets = analysis.random_word_sets(top, counts, 5, seed=4)
    assert len(sets) == 15
    half = max(2, int(analysis.RANDOM_RANK_WINDOW * 100))
    for i, chosen in enumerate(sets):
        orig = top[i // 5]
        assert len(chosen) == len(orig) and len(set(chosen)) == len(chosen)
        for w, o in zip(chosen, orig):
            assert abs(w - o) <= half  # a word of about the same count
    assert sets == analysis.random_word_sets(top, counts, 5, seed=4)
    assert sets != analysis.random_word_sets(top, counts, 5, seed=5)


def test_missing_model_is_an_input_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert analysis.main(["--model", str(tmp_path / "missing")]) == 1
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["type"] == "error" and line["kind"] == "input" and "vocab.txt" in line["message"]
