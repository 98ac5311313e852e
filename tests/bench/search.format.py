#!/usr/bin/env python3
"""Where a segment's bytes could shrink (bytes per non-zero); measurements for choosing a format change.

    .venv/bin/python tests/bench/search.format.py gaps  --seg SEG.seg
    .venv/bin/python tests/bench/search.format.py quant --data X.csr [--queries 200] [--bits 12,11,10]

gaps: the posting blocks of a format-2 segment by gap width (segment.h), the gap bytes per posting, and what a
u8 coding with an escape (255, then the gap as u16) would take instead.
quant: forward values quantised linearly to b bits with a per-document scale (max|value| / (2^(b-1) - 1))
against the store's float16 values (segment format 2): for stored documents as queries (themselves excluded),
the largest score error over their exact top 1,000, and recall@10 of ranking those 1,000 by the quantised scores.
"""
import argparse
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from importlib.machinery import SourceFileLoader  # noqa: E402

baselines = SourceFileLoader("baselines", os.path.join(os.path.dirname(os.path.abspath(__file__)), "search.baselines.py")).load_module()

S_DIMLISTS, S_LISTS, S_BLOCKS, S_PDATA, S_COUNT = 17, 18, 19, 20, 23
LIST = np.dtype([("dim", "<u4"), ("tier", "<u4"), ("count", "<u4"), ("nblocks", "<u4"), ("scale", "<f4"), ("maxv", "<f4"),
                 ("minv", "<f4"), ("energy", "<f4"), ("block0", "<u8"), ("dataOff", "<u8")])
BLOCK = np.dtype([("first", "<u4"), ("last", "<u4"), ("dataRel", "<u4"), ("qmax", "i1"), ("qmin", "i1"), ("bits", "u1"), ("cntm1", "u1")])


def gaps(args):
    b = np.memmap(args.seg, dtype=np.uint8, mode="r")
    hdr = bytes(b[:104 + S_COUNT * 16])
    if hdr[:8] != b"SCDVSEG1" or struct.unpack_from("<I", hdr, 8)[0] != 2:
        sys.exit(f"{args.seg}: not a format-2 segment")
    nnz = struct.unpack_from("<Q", hdr, 24)[0]
    off = struct.unpack_from(f"<{S_COUNT}Q", hdr, 104)
    ln = struct.unpack_from(f"<{S_COUNT}Q", hdr, 104 + S_COUNT * 8)
    lists = np.frombuffer(b[off[S_LISTS]:off[S_LISTS] + ln[S_LISTS]], dtype=LIST)
    blocks = np.frombuffer(b[off[S_BLOCKS]:off[S_BLOCKS] + ln[S_BLOCKS]], dtype=BLOCK)
    list_of = np.repeat(np.arange(len(lists)), lists["nblocks"])
    cnt = blocks["cntm1"].astype(np.int64) + 1
    width = blocks["bits"].astype(np.int64) // 8
    print(f"non-zeros {nnz}, blocks {len(blocks)} ({cnt.mean():.1f} postings each); per posting: block data "
          f"{ln[S_PDATA] / nnz:.3f}, block table {ln[S_BLOCKS] / nnz:.3f}, lists {(ln[S_LISTS] + ln[S_DIMLISTS]) / nnz:.3f} bytes")
    for bits in (0, 8, 16, 32):
        m = blocks["bits"] == bits
        print(f"  {bits:2d}-bit gaps: {m.sum()} blocks, {cnt[m].sum()} postings")
    wide = 0
    n16 = 0
    for i in np.nonzero(blocks["bits"] == 16)[0]:
        start = off[S_PDATA] + int(lists["dataOff"][list_of[i]]) + int(blocks["dataRel"][i]) + int(cnt[i])
        g = np.frombuffer(b[start:start + 2 * (int(cnt[i]) - 1)], dtype="<u2")
        wide += int((g >= 255).sum())
        n16 += len(g)
    now = ((cnt - 1) * width).sum()
    escaped = ((cnt - 1) * np.minimum(width, 1)).sum() + 2 * wide + ((cnt - 1) * 2 * (blocks["bits"] == 32)).sum()
    print(f"gaps in 16-bit blocks that need more than 8 bits: {wide} of {n16} ({wide / max(1, n16):.3f})")
    print(f"gap bytes per non-zero: {now / nnz:.3f} now, {escaped / nnz:.3f} as u8 + escapes (saves {(now - escaped) / nnz:.3f})")


def quant(args):
    import scipy.sparse as sp
    m = baselines.read_csr(args.data).tocsr().astype(np.float32)
    n = m.shape[0]
    rows = np.repeat(np.arange(n), np.diff(m.indptr))
    mx = np.maximum.reduceat(np.abs(m.data), m.indptr[:-1])
    p2 = np.exp2(np.ceil(np.log2(mx))).astype(np.float32)  # format 2: float16 of value / power-of-two scale
    ref = sp.csr_matrix(((m.data / p2[rows]).astype(np.float16).astype(np.float32) * p2[rows], m.indices, m.indptr), shape=m.shape)
    qs = [int((i * 2654435761) % n) for i in range(args.queries)]
    for bits in (int(x) for x in args.bits.split(",")):
        sc = (mx / (2 ** (bits - 1) - 1)).astype(np.float32)
        qm = sp.csr_matrix(((np.round(m.data / sc[rows]) * sc[rows]).astype(np.float32), m.indices, m.indptr), shape=m.shape)
        errs, rec = [], 0.0
        for q in qs:
            v = ref[q].toarray().ravel().astype(np.float64)
            e, a = ref @ v, qm @ v
            e[q] = a[q] = -np.inf
            top = np.argpartition(-e, 1000)[:1000]
            errs.append(np.max(np.abs(e[top] - a[top])))
            rec += len(set(top[np.argsort(-e[top])[:10]]) & set(top[np.argsort(-a[top])[:10]])) / 10
        print(f"{bits}-bit values ({bits / 8:.3f} bytes): score error over the top 1,000: median {np.median(errs):.2e}, "
              f"max {np.max(errs):.2e}; recall@10 {rec / len(qs):.4f} ({len(qs)} queries)")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gaps")
    g.add_argument("--seg", required=True)
    q = sub.add_parser("quant")
    q.add_argument("--data", required=True)
    q.add_argument("--queries", type=int, default=200)
    q.add_argument("--bits", default="12,11,10")
    args = ap.parse_args()
    gaps(args) if args.cmd == "gaps" else quant(args)


if __name__ == "__main__":
    main()
