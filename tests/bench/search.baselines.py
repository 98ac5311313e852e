#!/usr/bin/env python3
"""Baselines for the search benchmark (tests/bench/search.bench.js runs this with the project's .venv).

    python search.baselines.py convert IN.npz OUT.csr        scipy.sparse .npz (save_npz) -> the bench's CSR file
    python search.baselines.py scipy   --data X.csr --queries Q.u32 --k 10 --out R.json
    python search.baselines.py seismic --data X.csr --queries Q.u32 --k 10 --out R.json
                                       [--n-postings N] [--query-cut 10] [--heap-factor 0.7] [--sweep QC:HF,...]
                                       [--duel]   then time blocks of queries on request (serve_duel)
    python search.baselines.py oracle  --data X.csr [--sample 30]    how far any partial term-at-a-time pass can go

The oracle reads, for sampled stored documents as queries, the postings of the query's dims in the best possible
order (decreasing |q_i * value|, posting by posting), and reports recall@10 (against exact) of the best R
partial scores after each share of the postings, as if those R were rescored exactly: the ceiling of any
budget/candidates setting of the store's 'fast' mode. It also reports the MaxScore bounds after each share
(what the unread postings can still add or take away) and how many documents they leave as possible top-10.

Q.u32: little-endian u32 row numbers of the query documents (each searched with its own vector, itself
excluded from its results). R.json: build time and size, per-query latencies (single-threaded), QPS at
several thread counts where the library has a parallel batch API, and the top-k row numbers of every query.

scipy is exact brute force (the dot products of the query with every document sharing a dimension, through
the transposed matrix), so its answers are the ground truth of the benchmark.
Seismic (pyseismic-lsr) is built from the same signed vectors; it was designed for non-negative learned
sparse vectors, and the benchmark reports whatever it returns.
"""
import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np

MAGIC = b"SCDVCSR1"


def read_csr(path):
    from scipy.sparse import csr_matrix

    with open(path, "rb") as f:
        head = f.read(64)
        if head[:8] != MAGIC:
            raise SystemExit(f"{path} is not a {MAGIC.decode()} file")
        width = int(np.frombuffer(head[12:16], "<u4")[0])
        rows = int(np.frombuffer(head[16:24], "<f8")[0])
        nnz = int(np.frombuffer(head[24:32], "<f8")[0])
        indptr = np.fromfile(f, "<u8", rows + 1).astype(np.int64)
        indices = np.fromfile(f, "<u4", nnz).astype(np.int32)
        data = np.fromfile(f, "<f4", nnz)
    return csr_matrix((data, indices, indptr), shape=(rows, width))


def write_csr(path, m):
    m = m.tocsr()
    m.sort_indices()
    with open(path, "wb") as f:
        head = bytearray(64)
        head[:8] = MAGIC
        head[8:12] = np.uint32(1).tobytes()
        head[12:16] = np.uint32(m.shape[1]).tobytes()
        head[16:24] = np.float64(m.shape[0]).tobytes()
        head[24:32] = np.float64(m.nnz).tobytes()
        f.write(head)
        f.write(m.indptr.astype("<u8").tobytes())
        f.write(m.indices.astype("<u4").tobytes())
        f.write(m.data.astype("<f4").tobytes())


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def run_scipy(args):
    t0 = time.perf_counter()
    X = read_csr(args.data)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    Xt = X.T.tocsr()  # dims x docs: row i = the postings of dim i
    build_s = time.perf_counter() - t0
    queries = np.fromfile(args.queries, "<u4").astype(np.int64)
    k = args.k
    lat, ids = [], []
    for q in queries:
        lo, hi = X.indptr[q], X.indptr[q + 1]
        qi, qv = X.indices[lo:hi], X.data[lo:hi].astype(np.float64)
        t = time.perf_counter()
        scores = Xt[qi].T.dot(qv)  # exact dot products (float64 accumulation of float32 values)
        scores[q] = -np.inf  # itself excluded
        top = np.argpartition(-scores, k)[:k]
        top = top[np.lexsort((top, -scores[top]))]
        lat.append((time.perf_counter() - t) * 1000)
        ids.append([int(x) for x in top])
    out = {
        "engine": "scipy brute force (exact)",
        "load_s": load_s,
        "build_s": build_s,
        "bytes": int(Xt.data.nbytes + Xt.indices.nbytes + Xt.indptr.nbytes),
        "p50_ms": pct(lat, 0.5),
        "p99_ms": pct(lat, 0.99),
        "mean_ms": float(np.mean(lat)),
        "qps": {"1": 1000.0 / float(np.mean(lat))},
        "ids": ids,
    }
    json.dump(out, open(args.out, "w"))


class CaptureStdout:
    """Rust's println! writes to fd 1: capture it (print_space_usage_byte)."""

    def __enter__(self):
        sys.stdout.flush()
        self.tmp = tempfile.TemporaryFile(mode="w+b")
        self.saved = os.dup(1)
        os.dup2(self.tmp.fileno(), 1)
        return self

    def __exit__(self, *exc):
        sys.stdout.flush()
        os.dup2(self.saved, 1)
        os.close(self.saved)
        self.tmp.seek(0)
        self.text = self.tmp.read().decode("utf8", "replace")


def run_seismic(args):
    import seismic

    X = read_csr(args.data)
    n, width = X.shape
    sstr = seismic.get_seismic_string()
    t0 = time.perf_counter()
    ds = seismic.SeismicDataset(dim=0)
    ds.add_documents_by_id([str(i) for i in range(n)], X.indices.astype(np.int64), X.data.astype(np.float32), X.indptr.astype(np.int64))
    n_postings = args.n_postings or 3500
    with CaptureStdout() as cap:
        index = seismic.SeismicIndex.build_from_dataset(ds, n_postings=n_postings, centroid_fraction=0.1, summary_energy=0.4, num_threads=args.threads)
    build_s = time.perf_counter() - t0
    with CaptureStdout() as cap:
        index.print_space_usage_byte()
    total = None
    for line in cap.text.splitlines():
        if line.strip().startswith("Total:"):
            total = int(line.split()[1])
    del ds
    queries = np.fromfile(args.queries, "<u4").astype(np.int64)
    k = args.k
    qcomp, qvals = [], []
    for q in queries:
        lo, hi = X.indptr[q], X.indptr[q + 1]
        qcomp.append(np.array([str(int(c)) for c in X.indices[lo:hi]], dtype=sstr))
        qvals.append(X.data[lo:hi].astype(np.float32))
    lat, ids = [], []
    for j, q in enumerate(queries):
        t = time.perf_counter()
        res = index.search(str(j), qcomp[j], qvals[j], k=k + 1, query_cut=args.query_cut, heap_factor=args.heap_factor)
        lat.append((time.perf_counter() - t) * 1000)
        ids.append([int(r[2]) for r in res if int(r[2]) != q][:k])
    # The sweep: the same index at other query_cut / heap_factor settings (single queries, one thread).
    sweep = []
    for item in (args.sweep.split(",") if args.sweep else []):
        qc, hf = item.split(":")
        slat, sids = [], []
        for j, q in enumerate(queries):
            t = time.perf_counter()
            res = index.search(str(j), qcomp[j], qvals[j], k=k + 1, query_cut=int(qc), heap_factor=float(hf))
            slat.append((time.perf_counter() - t) * 1000)
            sids.append([int(r[2]) for r in res if int(r[2]) != q][:k])
        sweep.append({"query_cut": int(qc), "heap_factor": float(hf), "p50_ms": pct(slat, 0.5), "p99_ms": pct(slat, 0.99), "ids": sids})
    qps = {}
    qids = np.array([str(j) for j in range(len(queries))], dtype=sstr)
    for threads in (1, 2, 4):
        t = time.perf_counter()
        index.batch_search(qids, qcomp, qvals, k=k + 1, query_cut=args.query_cut, heap_factor=args.heap_factor, num_threads=threads)
        qps[str(threads)] = len(queries) / (time.perf_counter() - t)
    out = {
        "engine": "pyseismic-lsr %s" % getattr(seismic, "__version__", ""),
        "settings": {"n_postings": n_postings, "centroid_fraction": 0.1, "summary_energy": 0.4, "query_cut": args.query_cut, "heap_factor": args.heap_factor},
        "build_s": build_s,
        "bytes": total,
        "p50_ms": pct(lat, 0.5),
        "p99_ms": pct(lat, 0.99),
        "mean_ms": float(np.mean(lat)),
        "qps": qps,
        "ids": ids,
        "sweep": sweep,
    }
    json.dump(out, open(args.out, "w"))
    if args.duel:
        serve_duel(index, qcomp, qvals, k)


def serve_duel(index, qcomp, qvals, k):
    """After the sweep, keep the index and answer the bench's blocks of queries, so that the store and Seismic
    run interleaved (block by block) on the same machine load: a line "query_cut heap_factor lo hi" on stdin
    runs queries lo..hi-1 (one thread, as timed above) and answers a JSON array of their milliseconds; "quit" or
    the end of stdin stops. The first line on stdout is "ready"."""
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for line in sys.stdin:
        parts = line.split()
        if not parts or parts[0] == "quit":
            break
        qc, hf, lo, hi = int(parts[0]), float(parts[1]), int(parts[2]), int(parts[3])
        ms = []
        for j in range(lo, hi):
            t = time.perf_counter()
            index.search(str(j), qcomp[j], qvals[j], k=k + 1, query_cut=qc, heap_factor=hf)
            ms.append((time.perf_counter() - t) * 1000)
        sys.stdout.write(json.dumps(ms) + "\n")
        sys.stdout.flush()


def run_oracle(args):
    X = read_csr(args.data)
    Xc = X.tocsc()
    n = X.shape[0]
    qs = np.random.RandomState(1).choice(n, args.sample, replace=False)
    fracs = [0.05, 0.1, 0.2, 0.3, 0.5, 0.7]
    Rs = [1000, 3000, 5000, 10000, 20000]
    rec = {(f, R): 0.0 for f in fracs for R in Rs}
    tot, tops, bounds = 0, [], []
    for q in qs:
        lo, hi = X.indptr[q], X.indptr[q + 1]
        qi, qv = X.indices[lo:hi], X.data[lo:hi].astype(np.float64)
        lens = [Xc.indptr[i + 1] - Xc.indptr[i] for i in qi]
        dimof = np.repeat(np.arange(len(qi)), lens)
        docs = np.concatenate([Xc.indices[Xc.indptr[i]:Xc.indptr[i + 1]] for i in qi])
        con = np.concatenate([Xc.data[Xc.indptr[i]:Xc.indptr[i + 1]] * v for i, v in zip(qi, qv)])
        tot += len(con)
        full = np.bincount(docs, weights=con, minlength=n)
        full[q] = -np.inf
        top = np.argpartition(-full, 10)[:10]
        tops.append(np.sort(full[top])[::-1])
        order = np.argsort(-np.abs(con))
        for f in fracs + [0.9]:
            k = int(f * len(con))
            sel, un = order[:k], order[k:]
            part = np.bincount(docs[sel], weights=con[sel], minlength=n)
            part[q] = -np.inf
            srt = np.sort(part)[::-1]
            if f in fracs:
                ranks = [np.searchsorted(-srt, -part[d], side="left") + 1 for d in top]
                for R in Rs:
                    rec[(f, R)] += sum(r <= R for r in ranks) / 10
            if f in (0.5, 0.7, 0.9):
                ub, lb = np.zeros(len(qi)), np.zeros(len(qi))
                np.maximum.at(ub, dimof[un], con[un])
                np.minimum.at(lb, dimof[un], con[un])
                th = srt[9] + lb.sum()
                bounds.append((f, ub.sum(), lb.sum(), int((part + ub.sum() >= th).sum())))
    m = len(qs)
    t = np.array(tops)
    print(f"{n} documents, {m} sampled queries, {tot / m:.0f} postings in the lists of a query (mean); "
          f"exact top-10 scores: 1st {np.median(t[:, 0]):.3f}, 10th {np.median(t[:, 9]):.3f} (medians)")
    print("recall@10 of the best R partial scores (rescored exactly), by share of postings read in impact order:")
    print("share  " + " ".join(f"R={R:<6}" for R in Rs))
    for f in fracs:
        print(f"{f:<6} " + " ".join(f"{rec[(f, R)] / m:<8.4f}" for R in Rs))
    print("MaxScore after a share (medians): UB_rest, LB_rest, documents that could still be top-10")
    for f in (0.5, 0.7, 0.9):
        b = np.array([x[1:] for x in bounds if x[0] == f])
        print(f"{f:<6} UB_rest {np.median(b[:, 0]):.3f}  LB_rest {np.median(b[:, 1]):.3f}  survivors {np.median(b[:, 2]):.0f} of {n}")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("convert")
    c.add_argument("src")
    c.add_argument("dst")
    for name in ("scipy", "seismic"):
        p = sub.add_parser(name)
        p.add_argument("--data", required=True)
        p.add_argument("--queries", required=True)
        p.add_argument("--k", type=int, default=10)
        p.add_argument("--out", required=True)
        p.add_argument("--threads", type=int, default=0)
        p.add_argument("--n-postings", type=int, default=0)
        p.add_argument("--query-cut", type=int, default=10)
        p.add_argument("--heap-factor", type=float, default=0.7)
        p.add_argument("--sweep", default="", help="seismic: more query_cut:heap_factor settings, comma-separated")
        p.add_argument("--duel", action="store_true", help="seismic: then answer blocks of queries on stdin (serve_duel)")
    o = sub.add_parser("oracle")
    o.add_argument("--data", required=True)
    o.add_argument("--sample", type=int, default=30)
    args = ap.parse_args()
    if args.cmd == "oracle":
        return run_oracle(args)
    if args.cmd == "convert":
        from scipy.sparse import load_npz

        write_csr(args.dst, load_npz(args.src))
    elif args.cmd == "scipy":
        run_scipy(args)
    else:
        run_seismic(args)


if __name__ == "__main__":
    main()
