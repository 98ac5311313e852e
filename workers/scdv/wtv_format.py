"""Binary file of sparse word-topic vectors: ``word_topics.bin`` (format SCDVWT01, version 1).

Little-endian. Every section starts at an offset that is a multiple of 8.
Integers are unsigned. The file is one CSR matrix (one row per word, K*d
columns) plus the words and a hash table to find a word's row.

Header, 128 bytes::

    off  size type     field
      0     8 bytes    magic = b"SCDVWT01"
      8     4 u32      version = 1
     12     4 u32      n_words     rows, words; >= 1
     16     4 u32      n_clusters  K
     20     4 u32      dim         d (word-vector size); row width = K*d
     24     8 u64      nnz         stored entries
     32     4 u32      hash_slots  power of two
     36     4 u32      reserved = 0
     40     8 u64      off_row_ptr
     48     8 u64      off_cols
     56     8 u64      off_vals
     64     8 u64      off_word_offsets
     72     8 u64      off_word_bytes
     80     8 u64      off_hash
     88     8 u64      total_size  = file size in bytes
     96    32 bytes    zero

Sections, in this order, each at the offset named in the header (gaps are
zero padding up to the next multiple of 8)::

    row_ptr       u64[n_words + 1]   row i is entries row_ptr[i] .. row_ptr[i+1]-1; row_ptr[0] = 0,
                                     row_ptr[n_words] = nnz
    cols          u32[nnz]           feature index = k*dim + j (cluster k, dimension j),
                                     strictly increasing within a row
    vals          f32[nnz]           value of that feature
    word_offsets  u64[n_words + 1]   word i is word_bytes[word_offsets[i] .. word_offsets[i+1]-1]
    word_bytes    u8[...]            UTF-8 of all words concatenated, no separators
    hash          u32[hash_slots]    open addressing table: 0 = empty slot, otherwise word index + 1

Word lookup: h = FNV-1a 32-bit of the word's UTF-8 bytes (h = 0x811C9DC5; for
each byte b: h = ((h XOR b) * 0x01000193) mod 2^32); slot = h & (hash_slots - 1);
while hash[slot] != 0: if word (hash[slot] - 1) equals the word, found; else
slot = (slot + 1) & (hash_slots - 1). Reaching an empty slot means "not in the
vocabulary". hash_slots is the smallest power of two >= 2 * n_words, so the
table is at most half full. Row order = vocabulary order (most frequent first).

The writer streams rows (cols/vals go to spill files next to the output) and
writes ``<out>.tmp`` which is renamed over ``<out>`` at the end, so a reader
never sees a half-written file.
"""

from __future__ import annotations

import os
import shutil
import struct
from typing import Any, BinaryIO, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "MAGIC",
    "VERSION",
    "HEADER_SIZE",
    "fnv1a_32",
    "fnv1a_32_many",
    "hash_slots_for",
    "build_hash_table",
    "WordTopicWriter",
    "write_word_topics",
    "WordTopicFile",
]

MAGIC = b"SCDVWT01"
VERSION = 1
HEADER_SIZE = 128
_HEADER = struct.Struct("<8sIIIIQII7Q")  # up to total_size; 32 zero bytes follow
assert _HEADER.size == 96

FNV_OFFSET = 0x811C9DC5
FNV_PRIME = 0x01000193


def fnv1a_32(data: bytes) -> int:
    """FNV-1a 32-bit hash of ``data``."""
    h = FNV_OFFSET
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFF
    return h


def fnv1a_32_many(items: Sequence[bytes]) -> NDArray[np.uint32]:
    """FNV-1a 32-bit of many byte strings at once, shape (len(items),).

    Vectorised over strings: one numpy step per byte position, so the cost is
    O(max length) numpy operations instead of a Python loop over every byte.
    """
    n = len(items)
    h = np.full(n, FNV_OFFSET, dtype=np.uint32)
    if n == 0:
        return h
    lengths = np.fromiter((len(b) for b in items), dtype=np.int64, count=n)
    width = int(lengths.max())
    if width == 0:
        return h
    buf = np.zeros((n, width), dtype=np.uint8)
    flat = np.frombuffer(b"".join(items), dtype=np.uint8)
    rows = np.repeat(np.arange(n), lengths)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    cols = np.arange(flat.size) - np.repeat(starts, lengths)
    buf[rows, cols] = flat
    prime = np.uint32(FNV_PRIME)
    for p in range(width):
        live = lengths > p
        # uint32 multiplication wraps mod 2^32, as FNV requires
        h[live] = (h[live] ^ buf[live, p]) * prime
    return h


def hash_slots_for(n_words: int) -> int:
    """Smallest power of two >= 2 * n_words."""
    slots = 1
    while slots < 2 * n_words:
        slots *= 2
    return slots


def build_hash_table(encoded: Sequence[bytes]) -> NDArray[np.uint32]:
    """Linear-probing table: slot -> word index + 1 (0 = empty)."""
    slots = hash_slots_for(len(encoded))
    mask = slots - 1
    table = np.zeros(slots, dtype=np.uint32)
    hashes = fnv1a_32_many(encoded)
    tab = table.tolist()  # Python list: fast scalar probing
    for i, h in enumerate(hashes.tolist()):
        s = h & mask
        while tab[s]:
            if encoded[tab[s] - 1] == encoded[i]:
                raise ValueError(f"duplicate word {encoded[i].decode('utf-8')!r}")
            s = (s + 1) & mask
        tab[s] = i + 1
    return np.asarray(tab, dtype=np.uint32)


def _align8(x: int) -> int:
    return (x + 7) & ~7


def _pad(fh: BinaryIO) -> None:
    pos = fh.tell()
    fh.write(b"\0" * (_align8(pos) - pos))


class WordTopicWriter:
    """Streams CSR rows of word-topic vectors into ``path``.

    Usage::

        with WordTopicWriter(path, words, n_clusters, dim) as w:
            for chunk in chunks:
                w.add_rows(row_lengths, cols, vals)   # rows in vocabulary order

    Parameters
    ----------
    path : str
        Final file name; written as ``path + ".tmp"`` then renamed.
    words : sequence of str, length n_words (unique, no empty strings)
    n_clusters, dim : int
    """

    def __init__(self, path: str, words: Sequence[str], n_clusters: int, dim: int) -> None:
        if len(words) == 0:
            raise ValueError("need at least one word")
        if n_clusters * dim >= 2**32:
            raise ValueError("n_clusters * dim must fit in u32")
        self.path = path
        self.encoded = [w.encode("utf-8") for w in words]
        if any(len(b) == 0 for b in self.encoded):
            raise ValueError("empty word")
        self.n_clusters = n_clusters
        self.dim = dim
        self.row_lengths: list[NDArray[np.int64]] = []
        self.rows_written = 0
        self.nnz = 0
        self._cols_path = path + ".cols.tmp"
        self._vals_path = path + ".vals.tmp"
        self._cols: BinaryIO | None = open(self._cols_path, "wb")
        self._vals: BinaryIO | None = open(self._vals_path, "wb")

    def add_rows(self, row_lengths: ArrayLike, cols: ArrayLike, vals: ArrayLike) -> None:
        """Append rows.

        row_lengths : (m,) entries per row; cols : (sum,) u32 feature indices,
        increasing within each row; vals : (sum,) f32.
        """
        assert self._cols is not None and self._vals is not None, "writer is closed"
        lens = np.asarray(row_lengths, dtype=np.int64)
        c = np.ascontiguousarray(cols, dtype="<u4")
        v = np.ascontiguousarray(vals, dtype="<f4")
        if c.shape != v.shape or c.ndim != 1 or int(lens.sum()) != c.size:
            raise ValueError("row_lengths, cols and vals disagree")
        if self.rows_written + lens.size > len(self.encoded):
            raise ValueError("more rows than words")
        if c.size and int(c.max()) >= self.n_clusters * self.dim:
            raise ValueError("column index out of range")
        self._cols.write(c.tobytes())
        self._vals.write(v.tobytes())
        self.row_lengths.append(lens)
        self.rows_written += lens.size
        self.nnz += c.size

    def close(self) -> None:
        """Assemble the final file (all rows must have been added)."""
        if self._cols is None or self._vals is None:
            return
        self._cols.close()
        self._vals.close()
        self._cols = self._vals = None
        try:
            n = len(self.encoded)
            if self.rows_written != n:
                raise ValueError(f"{self.rows_written} rows written for {n} words")
            self._assemble()
        finally:
            for p in (self._cols_path, self._vals_path):
                if os.path.exists(p):
                    os.remove(p)

    def abort(self) -> None:
        """Drop everything written so far."""
        for fh in (self._cols, self._vals):
            if fh is not None:
                fh.close()
        self._cols = self._vals = None
        for p in (self._cols_path, self._vals_path, self.path + ".tmp"):
            if os.path.exists(p):
                os.remove(p)

    def __enter__(self) -> WordTopicWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def _assemble(self) -> None:
        n = len(self.encoded)
        lens = np.concatenate(self.row_lengths) if self.row_lengths else np.zeros(0, np.int64)
        row_ptr = np.zeros(n + 1, dtype="<u8")
        np.cumsum(lens, out=row_ptr[1:])
        word_offsets = np.zeros(n + 1, dtype="<u8")
        np.cumsum([len(b) for b in self.encoded], out=word_offsets[1:])
        table = build_hash_table(self.encoded).astype("<u4")

        tmp = self.path + ".tmp"
        with open(tmp, "wb") as fh:
            fh.write(b"\0" * HEADER_SIZE)
            off_row_ptr = fh.tell()
            fh.write(row_ptr.tobytes())
            _pad(fh)
            off_cols = fh.tell()
            with open(self._cols_path, "rb") as src:
                shutil.copyfileobj(src, fh, 1 << 22)
            _pad(fh)
            off_vals = fh.tell()
            with open(self._vals_path, "rb") as src:
                shutil.copyfileobj(src, fh, 1 << 22)
            _pad(fh)
            off_word_offsets = fh.tell()
            fh.write(word_offsets.tobytes())
            off_word_bytes = fh.tell()
            fh.write(b"".join(self.encoded))
            _pad(fh)
            off_hash = fh.tell()
            fh.write(table.tobytes())
            _pad(fh)
            total = fh.tell()
            fh.seek(0)
            fh.write(
                _HEADER.pack(
                    MAGIC, VERSION, n, self.n_clusters, self.dim, self.nnz, table.size, 0,
                    off_row_ptr, off_cols, off_vals, off_word_offsets, off_word_bytes, off_hash, total,
                )
            )
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)


def write_word_topics(
    path: str,
    words: Sequence[str],
    n_clusters: int,
    dim: int,
    row_ptr: ArrayLike,
    cols: ArrayLike,
    vals: ArrayLike,
) -> None:
    """Write an in-memory CSR matrix (row_ptr (n+1,), cols (nnz,), vals (nnz,))."""
    rp = np.asarray(row_ptr, dtype=np.int64)
    with WordTopicWriter(path, words, n_clusters, dim) as w:
        w.add_rows(np.diff(rp), cols, vals)


class WordTopicFile:
    """Memory-mapped reader of ``word_topics.bin`` (for tests and tools).

    Attributes: n_words, n_clusters, dim, nnz, row_ptr (u64, n_words+1),
    cols (u32, nnz), vals (f32, nnz), word_offsets, word_bytes, hash (u32).
    """

    def __init__(self, path: str) -> None:
        mm = np.memmap(path, dtype=np.uint8, mode="r")
        if mm.size < HEADER_SIZE:
            raise ValueError(f"{path}: too short for a word-topic file")
        fields = _HEADER.unpack(mm[: _HEADER.size].tobytes())
        (magic, version, n, k, d, nnz, slots, _reserved,
         o_rp, o_cols, o_vals, o_wo, o_wb, o_hash, total) = fields
        if magic != MAGIC or version != VERSION:
            raise ValueError(f"{path}: not a {MAGIC.decode()} v{VERSION} file")
        if total != mm.size:
            raise ValueError(f"{path}: header says {total} bytes, file has {mm.size}")
        self.path = path
        self.n_words, self.n_clusters, self.dim, self.nnz, self.hash_slots = n, k, d, nnz, slots
        self.offsets = {"row_ptr": o_rp, "cols": o_cols, "vals": o_vals,
                        "word_offsets": o_wo, "word_bytes": o_wb, "hash": o_hash, "total_size": total}
        self._mm = mm
        self.row_ptr = mm[o_rp : o_rp + 8 * (n + 1)].view("<u8")
        self.cols = mm[o_cols : o_cols + 4 * nnz].view("<u4")
        self.vals = mm[o_vals : o_vals + 4 * nnz].view("<f4")
        self.word_offsets = mm[o_wo : o_wo + 8 * (n + 1)].view("<u8")
        self.word_bytes = mm[o_wb : o_wb + int(self.word_offsets[-1])]
        self.hash = mm[o_hash : o_hash + 4 * slots].view("<u4")

    def word(self, i: int) -> str:
        a, b = int(self.word_offsets[i]), int(self.word_offsets[i + 1])
        return self.word_bytes[a:b].tobytes().decode("utf-8")

    def words(self) -> list[str]:
        return [self.word(i) for i in range(self.n_words)]

    def lookup(self, word: str) -> int:
        """Row index of ``word`` via the hash table, or -1."""
        key = word.encode("utf-8")
        mask = self.hash_slots - 1
        s = fnv1a_32(key) & mask
        while True:
            entry = int(self.hash[s])
            if entry == 0:
                return -1
            i = entry - 1
            a, b = int(self.word_offsets[i]), int(self.word_offsets[i + 1])
            if self.word_bytes[a:b].tobytes() == key:
                return i
            s = (s + 1) & mask

    def row(self, i: int) -> tuple[NDArray[np.uint32], NDArray[np.float32]]:
        """(cols, vals) of row i."""
        a, b = int(self.row_ptr[i]), int(self.row_ptr[i + 1])
        return np.asarray(self.cols[a:b]), np.asarray(self.vals[a:b])

    def dense_row(self, i: int) -> NDArray[np.float32]:
        """Row i as a dense (n_clusters * dim,) float32 vector."""
        out = np.zeros(self.n_clusters * self.dim, dtype=np.float32)
        c, v = self.row(i)
        out[c.astype(np.int64)] = v
        return out

    def to_csr(self) -> Any:
        """The whole matrix as scipy.sparse.csr_matrix (n_words, K*d)."""
        from scipy.sparse import csr_matrix

        return csr_matrix(
            (np.asarray(self.vals), np.asarray(self.cols).astype(np.int64), np.asarray(self.row_ptr).astype(np.int64)),
            shape=(self.n_words, self.n_clusters * self.dim),
        )
