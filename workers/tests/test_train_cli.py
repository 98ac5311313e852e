"""The training CLI end to end, and its error lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import combinations
from typing import Any, Iterable
from pathlib import Path

import numpy as np
import pytest

from corpus_factory import ANIMALS, VEHICLES, two_group_corpus
from scdv import model_io, train
from scdv.wtv_format import WordTopicFile

WORKERS_DIR = Path(__file__).resolve().parents[1]
SMALL = {
    "word2vec": {"vector_size": 20, "window": 5, "negative": 5, "sample": 0, "min_count": 1,
                 "epochs": 20, "workers": 1, "seed": 3},
    "gmm": {"n_components": 2, "seed": 0},
    "topics": {"keep_fraction": 0.25},
}


def run_cli(*args: str) -> tuple[int, list[dict[str, Any]], str]:
    env = dict(os.environ, PYTHONPATH=str(WORKERS_DIR))
    proc = subprocess.run([sys.executable, "-m", "scdv.train", *args], capture_output=True, text=True, env=env, timeout=120)
    lines = [json.loads(line) for line in proc.stdout.splitlines()]  # stdout must be JSON lines only
    return proc.returncode, lines, proc.stderr


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, Any]]]:
    code = train.main(list(args))
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return code, lines


def test_all_stages_end_to_end(tmp_path: Path) -> None:
    corpus = two_group_corpus(tmp_path / "tokens.txt", lines=300)
    out = tmp_path / "model"
    code, lines, stderr = run_cli("all", "--corpus", str(corpus), "--out", str(out), "--config", json.dumps(SMALL))
    assert code == 0, stderr
    assert lines[-1]["type"] == "result" and [x["type"] for x in lines[:-1]] == ["progress"] * (len(lines) - 1)
    result = lines[-1]
    assert list(result["stages"]) == ["word2vec", "idf", "gmm", "topics"]
    epochs = [x for x in lines if x["stage"] == "word2vec" and "epoch" in x]
    assert [x["epoch"] for x in epochs] == list(range(1, 21)) and all("eta_s" in x for x in epochs)
    assert any(x["stage"] == "gmm" and "iteration" in x and "loglik" in x for x in lines)

    for name in ("vocab.txt", "word_vectors.npy", "gmm.npz", "posteriors.npy", "word_topics.bin", "clusters.tsv"):
        assert (out / name).is_file(), name
    assert not list(out.glob("*.tmp"))

    vocab = model_io.load_vocab(str(out))
    assert sorted(vocab.words) == sorted(ANIMALS + VEHICLES)
    assert vocab.idf is not None and np.all(vocab.idf >= 1.0)
    post = model_io.load_posteriors(str(out), mmap=False)
    assert post.shape == (40, 2)
    label = dict(zip(vocab.words, np.argmax(post, axis=1)))

    def agreement(pairs: Iterable[tuple[str, str]]) -> float:
        pairs = list(pairs)
        return np.mean([label[a] == label[b] for a, b in pairs])

    same = np.mean([agreement(combinations(ANIMALS, 2)), agreement(combinations(VEHICLES, 2))])
    cross = agreement((a, v) for a in ANIMALS for v in VEHICLES)
    print("same-group agreement", same, "cross-group", cross)
    assert same > cross, (same, cross)

    wt = WordTopicFile(str(out / "word_topics.bin"))
    assert (wt.n_words, wt.n_clusters, wt.dim) == (40, 2, 20)
    assert wt.lookup("キリン") == vocab.words.index("キリン")
    assert np.all(np.diff(wt.row_ptr.astype(np.int64)) <= 10)  # 25 % of 2*20


def test_single_stage_needs_earlier_stage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = two_group_corpus(tmp_path / "tokens.txt", lines=20)
    code, lines = run_main(capsys, "idf", "--corpus", str(corpus), "--out", str(tmp_path / "m"))
    assert code == 1 and lines[-1]["type"] == "error" and lines[-1]["stage"] == "idf"
    assert "run the word2vec stage first" in lines[-1]["message"]


def test_empty_corpus_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "empty.txt"
    corpus.write_text("", encoding="utf-8")
    code, lines = run_main(capsys, "all", "--corpus", str(corpus), "--out", str(tmp_path / "m"))
    assert code == 1
    assert lines[-1] == {"type": "error", "stage": "word2vec", "message": lines[-1]["message"], "kind": "input"}
    assert "is empty" in lines[-1]["message"]
    corpus.write_text("\n\n  \n", encoding="utf-8")
    code, lines = run_main(capsys, "word2vec", "--corpus", str(corpus), "--out", str(tmp_path / "m"))
    assert code == 1 and "no tokens" in lines[-1]["message"]


def test_too_small_vocabulary_stops_before_training(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "small.txt"
    corpus.write_text("猫 犬 鳥\n犬 猫\n", encoding="utf-8")
    cfg = json.dumps({"word2vec": {"min_count": 1, "workers": 1}, "gmm": {"n_components": 4}})
    code, lines = run_main(capsys, "all", "--corpus", str(corpus), "--out", str(tmp_path / "m"), "--config", cfg)
    assert code == 1
    msg = lines[-1]["message"]
    assert msg.startswith("vocabulary of 3 words is too small for 4 clusters: lower gmm.n_components or")
    assert "min_count" in msg and "larger corpus" in msg
    assert not any("epoch" in x for x in lines), "must stop before the first epoch"
    assert not (tmp_path / "m" / "word_vectors.npy").exists()


@pytest.mark.parametrize(
    "content,needle",
    [
        ('{"id": 1, "body": "本文です"}\n{"id": 2, "body": "本文"}\n', "JSON lines"),
        ("12 34 56 7.8\n90 12 %\n", "does not look like words"),
        ("今日はとても良い天気ですね散歩に行きましょう明日も晴れるといいなと思いますがどうでしょうか\n", "untokenised"),
    ],
)
def test_corpus_that_is_not_tokens(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, needle: str) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text(content, encoding="utf-8")
    code, lines = run_main(capsys, "word2vec", "--corpus", str(corpus), "--out", str(tmp_path / "m"))
    assert code == 1 and needle in lines[-1]["message"]


def test_missing_corpus_and_bad_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = run_main(capsys, "all", "--corpus", str(tmp_path / "nope.txt"), "--out", str(tmp_path / "m"))
    assert code == 1 and "does not exist" in lines[-1]["message"]
    corpus = two_group_corpus(tmp_path / "t.txt", lines=10)
    code, lines = run_main(capsys, "all", "--corpus", str(corpus), "--out", str(tmp_path / "m"),
                           "--config", '{"gmm": {"n_component": 3}}')
    assert code == 1 and "unknown config key(s) gmm.n_component" in lines[-1]["message"]
    code, lines = run_main(capsys, "bogus", "--corpus", str(corpus), "--out", str(tmp_path / "m"))
    assert code == 1 and lines[-1]["type"] == "error" and "bad arguments" in lines[-1]["message"]


def test_cluster_count_follows_the_corpus_when_null() -> None:
    from scdv.config import clusters_for

    # √(N/2) rounded half up, from 2 to 60
    assert [clusters_for(n) for n in (0, 1, 8, 306, 1435, 2896, 7200, 100_000)] == [2, 2, 2, 12, 27, 38, 60, 60]
    assert clusters_for(2 * 12.5**2) == 13  # a half rounds up, as Math.round does in pipeline/inspect/advice.js


def test_null_cluster_count_is_resolved_from_the_documents(tmp_path: Path) -> None:
    corpus = two_group_corpus(tmp_path / "tokens.txt", lines=300)
    (tmp_path / "tokens.txt").open("a", encoding="utf-8").write("\n\n")  # blank lines are no documents
    out = tmp_path / "model"
    cfg = {**SMALL, "gmm": {"n_components": None, "seed": 0}}
    code, lines, stderr = run_cli("all", "--corpus", str(corpus), "--out", str(out), "--config", json.dumps(cfg))
    assert code == 0, stderr
    gmm = lines[-1]["stages"]["gmm"]
    assert gmm["n_components"] == 12  # round(√(300/2)) = 12
    assert np.load(out / "posteriors.npy").shape[1] == 12
    assert any(x["stage"] == "gmm" and x.get("n_components") == 12 for x in lines)
