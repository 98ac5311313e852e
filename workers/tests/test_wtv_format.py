"""word_topics.bin: writer/reader round trip and the FNV-1a hash lookup."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from scdv.wtv_format import (
    HEADER_SIZE,
    MAGIC,
    WordTopicFile,
    WordTopicWriter,
    fnv1a_32,
    fnv1a_32_many,
    hash_slots_for,
    write_word_topics,
)


def test_fnv1a_published_vectors() -> None:
    # test vectors from the FNV reference (isthe.com/chongo/tech/comp/fnv)
    assert fnv1a_32(b"") == 0x811C9DC5
    assert fnv1a_32(b"a") == 0xE40C292C
    assert fnv1a_32(b"foobar") == 0xBF9CF968


def test_vectorised_hash_equals_scalar() -> None:
    words = ["", "a", "foobar", "東京", "ｶﾀｶﾅ", "x" * 70, "café"]
    enc = [w.encode("utf-8") for w in words]
    assert fnv1a_32_many(enc).tolist() == [fnv1a_32(b) for b in enc]


def test_hash_slots() -> None:
    assert [hash_slots_for(n) for n in (1, 2, 3, 5, 8, 9)] == [2, 4, 8, 16, 16, 32]


def make_rows(rng: np.random.Generator, n: int, width: int, max_nnz: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lengths = rng.integers(0, max_nnz + 1, size=n)
    lengths[1] = 0  # an empty row
    cols = np.concatenate([np.sort(rng.choice(width, size=m, replace=False)) for m in lengths]).astype(np.uint32)
    vals = rng.standard_normal(cols.size).astype(np.float32)
    return lengths, cols, vals


def test_round_trip_and_lookup(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    words = ["猫", "犬", "東京タワー", "café", "a", "ニュース", "b"] + [f"w{i}" for i in range(300)]
    k, d = 4, 5
    lengths, cols, vals = make_rows(rng, len(words), k * d, 6)
    path = str(tmp_path / "word_topics.bin")
    with WordTopicWriter(path, words, k, d) as w:
        # streamed in two pieces
        cut = 100
        w.add_rows(lengths[:cut], cols[: lengths[:cut].sum()], vals[: lengths[:cut].sum()])
        w.add_rows(lengths[cut:], cols[lengths[:cut].sum() :], vals[lengths[:cut].sum() :])
    assert not (tmp_path / "word_topics.bin.tmp").exists()
    assert not (tmp_path / "word_topics.bin.cols.tmp").exists()

    f = WordTopicFile(path)
    assert (f.n_words, f.n_clusters, f.dim, f.nnz) == (len(words), k, d, cols.size)
    assert f.words() == words
    np.testing.assert_array_equal(f.cols, cols)
    np.testing.assert_array_equal(f.vals, vals)
    np.testing.assert_array_equal(np.diff(f.row_ptr.astype(np.int64)), lengths)
    for i, word in enumerate(words):
        assert f.lookup(word) == i
    assert f.lookup("象") == -1
    assert f.lookup("w3000") == -1
    # the table holds every word exactly once
    assert sorted(int(x) - 1 for x in f.hash if x) == list(range(len(words)))
    assert f.hash_slots == hash_slots_for(len(words))

    dense = f.dense_row(2)
    a, b = lengths[:2].sum(), lengths[:3].sum()
    np.testing.assert_array_equal(np.flatnonzero(dense), np.sort(cols[a:b][vals[a:b] != 0]))
    assert f.to_csr().shape == (len(words), k * d)


def test_header_layout_is_as_documented(tmp_path: Path) -> None:
    path = str(tmp_path / "t.bin")
    write_word_topics(path, ["猫", "犬", "鳥"], 2, 3, [0, 2, 2, 3], [0, 5, 1], [1.0, 2.0, 3.0])
    raw = open(path, "rb").read()
    assert raw[:8] == MAGIC
    version, n, k, d = struct.unpack_from("<4I", raw, 8)
    (nnz,) = struct.unpack_from("<Q", raw, 24)
    slots, reserved = struct.unpack_from("<2I", raw, 32)
    offs = struct.unpack_from("<7Q", raw, 40)
    assert (version, n, k, d, nnz, slots, reserved) == (1, 3, 2, 3, 3, 8, 0)
    o_rp, o_cols, o_vals, o_wo, o_wb, o_hash, total = offs
    assert raw[96:HEADER_SIZE] == b"\0" * 32
    assert o_rp == HEADER_SIZE and total == len(raw)
    assert all(o % 8 == 0 for o in offs)
    assert o_rp < o_cols < o_vals < o_wo < o_wb < o_hash < total
    assert np.frombuffer(raw, "<u8", 4, o_rp).tolist() == [0, 2, 2, 3]
    assert np.frombuffer(raw, "<u4", 3, o_cols).tolist() == [0, 5, 1]
    assert np.frombuffer(raw, "<f4", 3, o_vals).tolist() == [1.0, 2.0, 3.0]
    word_offsets = np.frombuffer(raw, "<u8", 4, o_wo).tolist()
    assert raw[o_wb : o_wb + word_offsets[-1]].decode("utf-8") == "猫犬鳥"
    # hash slot of 猫 under linear probing holds index 0 + 1
    table = np.frombuffer(raw, "<u4", slots, o_hash)
    s = fnv1a_32("猫".encode()) & (slots - 1)
    while table[s] != 1:
        assert table[s] != 0
        s = (s + 1) & (slots - 1)


def test_writer_rejects_bad_rows(tmp_path: Path) -> None:
    path = str(tmp_path / "bad.bin")
    with pytest.raises(ValueError):
        with WordTopicWriter(path, ["a", "b"], 2, 2) as w:
            w.add_rows([1], [7], [1.0])  # column 7 >= 2*2
    assert not (tmp_path / "bad.bin").exists()
    with pytest.raises(ValueError, match="duplicate"):
        write_word_topics(path, ["a", "a"], 1, 1, [0, 0, 0], [], [])
