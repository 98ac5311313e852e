"""The lexicon (lexicon.txt of a model) on a small corpus, worked by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from scdv.errors import InputError
from scdv.lexicon import build_lexicon, main, write_lexicon


def test_counts_order_min_count_and_idf(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    # a blank line is not a document; counts are of occurrences, idf of documents
    corpus.write_text("の 猫 の 犬\n\nの 犬 鳥\n犬 の 魚\n", encoding="utf-8")
    lex = build_lexicon(str(corpus), min_count=2)
    # most frequent first, ties by word; 鳥 and 魚 (seen once) left out
    assert lex.words == ["の", "犬"]
    assert lex.counts == [4, 3]
    assert lex.n_documents == 3
    # idf = ln((1 + N) / (1 + df)) + 1, N = 3, both words in every document
    assert lex.idf.tolist() == pytest.approx([math.log(4 / 4) + 1] * 2, abs=1e-12)
    lex1 = build_lexicon(str(corpus), min_count=1)
    assert lex1.words == ["の", "犬", "猫", "魚", "鳥"]
    assert lex1.idf[2] == pytest.approx(math.log(4 / 2) + 1, abs=1e-12)


def test_written_file_and_cli_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("a b a\nb c\n", encoding="utf-8")
    out = tmp_path / "lexicon.txt"
    assert main(["--corpus", str(corpus), "--min-count", "1", "--out", str(out)]) == 0
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r[:2] for r in rows] == [["a", "2"], ["b", "2"], ["c", "1"]]
    assert float(rows[1][2]) == pytest.approx(1.0, abs=1e-9)  # b in both documents
    assert float(rows[2][2]) == pytest.approx(math.log(3 / 2) + 1, abs=1e-8)
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["type"] == "result" and result["words"] == 3 and result["documents"] == 2


def test_bad_input_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_bytes("a b\n".encode() + b"\xff\xfe bad\n")
    with pytest.raises(InputError, match="line 2 is not UTF-8"):
        build_lexicon(str(corpus), min_count=1)
    assert main(["--corpus", str(corpus), "--min-count", "1", "--out", str(tmp_path / "x.txt")]) == 1
    err = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert err["type"] == "error" and err["kind"] == "input" and "line 2" in err["message"]
    with pytest.raises(InputError, match="min_count"):
        build_lexicon(str(corpus), min_count=0)
    with pytest.raises(InputError, match="not found"):
        build_lexicon(str(tmp_path / "absent.txt"), min_count=1)
    assert not (tmp_path / "x.txt").exists()


def test_write_lexicon_is_float32_exact(tmp_path: Path) -> None:
    import numpy as np

    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(f"w{i % 7} w{i % 3}" for i in range(50)) + "\n", encoding="utf-8")
    lex = build_lexicon(str(corpus), min_count=1)
    out = tmp_path / "lexicon.txt"
    write_lexicon(str(out), lex)
    back = [float(line.split("\t")[2]) for line in out.read_text(encoding="utf-8").splitlines()]
    assert np.array_equal(np.float32(back), np.float32(lex.idf))
