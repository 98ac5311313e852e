"""Progress JSON lines and config parsing."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scdv.config import Config, parse_config
from scdv.errors import InputError
from scdv.progress import emit, emit_error, emit_result


def test_one_json_object_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    emit("gmm", iteration=np.int64(3), of=50, loglik=np.float32(-1.5), eta_s=float("nan"))
    emit_result("all", seconds=1.0, stages={"gmm": {"n": 1}})
    emit_error("idf", "日本語のメッセージ")
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert len(lines) == 3 and err == ""
    assert json.loads(lines[0]) == {"type": "progress", "stage": "gmm", "iteration": 3, "of": 50, "loglik": -1.5, "eta_s": None}
    assert json.loads(lines[1])["type"] == "result"
    assert json.loads(lines[2]) == {"type": "error", "stage": "idf", "message": "日本語のメッセージ", "kind": "internal"}


def test_config_defaults_and_overrides() -> None:
    assert parse_config("") == Config()
    cfg = parse_config('{"gmm": {"n_components": 8, "tol": 1}, "topics": {"keep_fraction": null, "keep_count": 50}}')
    assert cfg.gmm.n_components == 8 and cfg.gmm.tol == 1.0 and cfg.gmm.covariance_type == "tied"
    assert cfg.topics.keep_fraction is None and cfg.topics.keep_count == 50
    assert cfg.word2vec.vector_size == 200 and cfg.word2vec.window == 10 and cfg.word2vec.negative == 10


@pytest.mark.parametrize(
    "text,needle",
    [
        ("{", "not valid JSON"),
        ('{"gmm": {"n_components": "8"}}', "gmm.n_components must be int"),
        ('{"gmm": {"covariance_type": "spherical"}}', "must be one of"),
        ('{"w2v": {}}', "unknown config section"),
        ('{"topics": {"keep_fraction": 1.5}}', "keep_fraction"),
        ('{"word2vec": {"epochs": 0}}', ">= 1"),
    ],
)
def test_config_errors_say_what_is_wrong(text: str, needle: str) -> None:
    with pytest.raises(InputError, match=needle):
        parse_config(text)
