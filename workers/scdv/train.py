"""CLI: ``python -m scdv.train STAGE --corpus TOKENS_FILE --out DIR [--config JSON]``.

Stages (each reads what earlier stages wrote into DIR; ``all`` runs them in order):

    word2vec  corpus -> word_vectors.npy, vocab.txt (word, count)
    idf       corpus + vocab.txt -> vocab.txt (word, count, idf)
    gmm       word_vectors.npy -> gmm.npz, posteriors.npy, clusters.tsv
              (fit on the L2-normalised vectors, on a random sample of at most
              gmm.max_fit_words words; posteriors for every word)
    topics    vocab.txt + word_vectors.npy + posteriors.npy -> word_topics.bin
    all       the four above

stdout carries JSON lines only (see scdv.progress): progress lines, then one
``result`` line ``{"type":"result","stage":STAGE,"seconds":S,"stages":{name: {...}}}``
or one ``error`` line, and the exit code is 0 or 1. Logs go to stderr.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
import traceback
import warnings
from typing import Any, Callable, Sequence


def _exit_with_parent() -> None:
    """Linux: die (SIGTERM) when the Node worker that spawned us dies, even by SIGKILL, so that an orphaned
    stage never keeps training beside the retry that replaces it. Elsewhere a no-op."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent died before prctl took effect
        os._exit(1)


if __name__ == "__main__":  # before the heavy imports below, which take seconds
    _exit_with_parent()

import numpy as np  # noqa: E402

from . import model_io
from .config import Config, clusters_for, parse_config
from .corpus import check_corpus, count_documents
from .errors import InputError
from .idf import IdfCounter
from .progress import EtaClock, emit, emit_error, emit_result, log
from .topics import WordTopicVectorizer, l2_normalize

# gensim (word2vec) and scikit-learn (gmm) are imported by the stage that uses them: each stage runs in a process of
# its own, and either takes about a second to import that the other stages need not spend.

__all__ = ["main", "run_stage", "STAGES", "blas_info"]

STAGES = ("word2vec", "idf", "gmm", "topics")
MIN_WORDS_PER_CLUSTER = 2
PREDICT_CHUNK = 65536


class _StageTracker:
    """Remembers the running stage so an error line can name it."""

    current = "setup"


def blas_info() -> list[dict[str, Any]]:
    """The BLAS/OpenMP libraries numpy & co. loaded, with their thread counts."""
    from threadpoolctl import threadpool_info

    return [
        {k: info.get(k) for k in ("internal_api", "version", "num_threads", "architecture", "filepath")}
        for info in threadpool_info()
    ]


def with_cluster_count(cfg: Config, corpus: str) -> Config:
    """``cfg`` with gmm.n_components set: as configured, or (null) clusters_for(the corpus's documents)."""
    if cfg.gmm.n_components is not None:
        return cfg
    k = clusters_for(count_documents(corpus))
    return dataclasses.replace(cfg, gmm=dataclasses.replace(cfg.gmm, n_components=k))


def check_vocab_size(n_words: int, cfg: Config) -> None:
    k = cfg.gmm.n_components
    assert k is not None, "with_cluster_count(cfg, corpus) first"
    if n_words < MIN_WORDS_PER_CLUSTER * k:
        raise InputError(
            f"vocabulary of {n_words} words is too small for {k} clusters: lower gmm.n_components or "
            f"word2vec.min_count (now {cfg.word2vec.min_count}), or give a larger corpus "
            f"(need at least {MIN_WORDS_PER_CLUSTER * k} words)"
        )


# ---------------------------------------------------------------- stages


def stage_word2vec(corpus: str, out: str, cfg: Config) -> dict[str, Any]:
    from .word2vec import Word2VecTrainer

    sample = check_corpus(corpus)
    cfg = with_cluster_count(cfg, corpus)
    if sample.japanese_token_share < 0.2:
        log(f"warning: only {sample.japanese_token_share:.0%} of sampled tokens contain Japanese characters")
    c = cfg.word2vec
    emit("word2vec", phase="vocab")

    def on_epoch(epoch: int, epochs: int, loss: float | None, elapsed: float, eta: float) -> None:
        # loss: the mean per word pair on a fixed sample (scdv.word2vec.PairLossSample), beside its untrained value
        emit("word2vec", epoch=epoch, of=epochs, loss=loss, initial_loss=getattr(trainer, "initial_pair_loss_", None),
             elapsed_s=round(elapsed, 2), eta_s=round(eta, 2))

    trainer = Word2VecTrainer(
        vector_size=c.vector_size, window=c.window, negative=c.negative, sample=c.sample,
        min_count=c.min_count, epochs=c.epochs, workers=c.workers, seed=c.seed, sg=c.sg, hs=c.hs,
        compute_loss=c.compute_loss, on_epoch=on_epoch,
        check_vocab=lambda n: check_vocab_size(n, cfg),
    )
    trainer.fit(corpus)
    model_io.save_word_vectors(out, trainer.vectors_)
    model_io.save_vocab(out, trainer.words_, trainer.counts_)
    return {
        "n_words": len(trainer.words_),
        "vector_size": c.vector_size,
        "n_documents": trainer.corpus_documents_,
        "n_tokens": trainer.corpus_tokens_,
        "epoch_losses": trainer.epoch_losses_,
        "epoch_pair_losses": trainer.epoch_pair_losses_,
        "initial_pair_loss": trainer.initial_pair_loss_,
        "loss_sample_pairs": trainer.loss_sample_pairs_,
        "japanese_token_share": sample.japanese_token_share,
    }


def stage_idf(corpus: str, out: str, cfg: Config) -> dict[str, Any]:
    check_corpus(corpus)
    vocab = model_io.load_vocab(out)

    def on_progress(done: int, total: int, docs: int) -> None:
        emit("idf", bytes_done=done, of=total, documents=docs)

    counter = IdfCounter(vocab.words, on_progress=on_progress).fit(corpus)
    model_io.save_vocab(out, vocab.words, vocab.counts, counter.idf_)
    missing = int(np.sum(counter.df_ == 0))
    if missing:
        log(f"warning: {missing} vocabulary words never occur in {corpus}: was the vocabulary trained on another corpus?")
    return {
        "n_words": len(vocab.words),
        "n_documents": counter.n_documents_,
        "idf_min": float(counter.idf_.min()),
        "idf_max": float(counter.idf_.max()),
        "words_without_documents": missing,
    }


def stage_gmm(corpus: str, out: str, cfg: Config) -> dict[str, Any]:
    from sklearn.exceptions import ConvergenceWarning

    from .gmm import FastGaussianMixture

    cfg = with_cluster_count(cfg, corpus)
    g = cfg.gmm
    vectors = model_io.load_word_vectors(out)
    n_words = vectors.shape[0]
    check_vocab_size(n_words, cfg)
    unit = l2_normalize(vectors)
    rng = np.random.default_rng(g.seed)
    if n_words > g.max_fit_words:
        # sorted sample keeps memory access sequential; the model does not care about order
        fit_idx = np.sort(rng.choice(n_words, size=g.max_fit_words, replace=False))
        fit_data = unit[fit_idx]
    else:
        fit_data = unit
    emit("gmm", phase="init", n_fit_words=int(fit_data.shape[0]), n_components=g.n_components)

    clock: dict[str, float] = {}
    prev: list[float] = []

    def on_iter(it: int, loglik: float) -> None:
        now = time.perf_counter()
        if it == 1:
            clock["first_iter_end"] = now  # k-means init + one iteration
        per_iter = (now - clock["first_iter_end"]) / (it - 1) if it > 1 else None
        clock["per_iter"] = per_iter or 0.0
        # an upper bound: EM usually converges before max_iter
        eta = None if per_iter is None else round(per_iter * (g.max_iter - it), 2)
        delta = loglik - prev[-1] if prev else None
        prev.append(loglik)
        emit("gmm", iteration=it, of=g.max_iter, loglik=round(loglik, 6),
             delta=None if delta is None else round(delta, 6), eta_s=eta)

    gm = FastGaussianMixture(
        n_components=g.n_components, covariance_type=g.covariance_type, tol=g.tol,
        reg_covar=g.reg_covar, max_iter=g.max_iter, n_init=g.n_init, init_params=g.init_params,
        random_state=g.seed, dtype=np.float32 if g.dtype == "float32" else np.float64,
        verbose_callback=on_iter,
    )
    clock["t0"] = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # reported as "converged": false
            gm.fit(fit_data)
    except ValueError as exc:
        if "ill-defined empirical covariance" in str(exc):
            raise InputError(f"GMM failed: {exc} (config keys gmm.n_components, gmm.reg_covar)") from exc
        raise
    fit_s = time.perf_counter() - clock["t0"]

    emit("gmm", phase="predict", words_done=0, of=n_words)
    with model_io.save_posteriors_writer(out, n_words, g.n_components) as post:
        for s in range(0, n_words, PREDICT_CHUNK):
            post[s : s + PREDICT_CHUNK] = gm.predict_proba(unit[s : s + PREDICT_CHUNK])
            emit("gmm", phase="predict", words_done=min(s + PREDICT_CHUNK, n_words), of=n_words)
        labels = np.argmax(post, axis=1)
        model_io.save_gmm(out, gm)
        vocab_words = model_io.load_vocab(out).words
        model_io.save_clusters(out, vocab_words, post, gm.weights_)
    sizes = np.bincount(labels, minlength=g.n_components)
    iter_s = clock.get("per_iter", 0.0)
    init_s = clock.get("first_iter_end", clock["t0"]) - clock["t0"] - iter_s
    return {
        "n_words": n_words,
        "n_fit_words": int(fit_data.shape[0]),
        "n_components": g.n_components,
        "covariance_type": g.covariance_type,
        "n_iter": gm.n_iter_,
        "converged": bool(gm.converged_),
        "loglik": gm.lower_bound_,
        "init_seconds": round(init_s, 3),
        "fit_seconds": round(fit_s, 3),
        "seconds_per_iteration": round(iter_s, 4),
        "empty_clusters": int(np.sum(sizes == 0)),
        "largest_cluster_words": int(sizes.max()),
        "blas": [{"api": b["internal_api"], "version": b["version"], "threads": b["num_threads"]} for b in blas_info()],
    }


def stage_topics(corpus: str, out: str, cfg: Config) -> dict[str, Any]:
    t = cfg.topics
    vocab = model_io.load_vocab(out)
    if vocab.idf is None:
        raise InputError(f"{os.path.join(out, model_io.VOCAB_FILE)} has no idf column: run the idf stage first")
    vectors = model_io.load_word_vectors(out, mmap=True)
    post = model_io.load_posteriors(out, mmap=True)
    if not (len(vocab.words) == vectors.shape[0] == post.shape[0]):
        raise InputError(
            f"model files disagree: {len(vocab.words)} words, {vectors.shape[0]} vectors, "
            f"{post.shape[0]} posterior rows: rerun the stages from word2vec"
        )
    vec = WordTopicVectorizer(
        prob_threshold=t.prob_threshold, keep_fraction=t.keep_fraction, keep_count=t.keep_count,
        chunk_words=t.chunk_words, vector_norm=t.vector_norm, idf_power=t.idf_power,
    )
    clock = EtaClock(len(vocab.words))

    def on_chunk(done: int, total: int) -> None:
        emit("topics", words_done=done, of=total, eta_s=clock.eta(done))

    stats = vec.write(os.path.join(out, model_io.TOPICS_FILE), vocab.words, vectors, post, vocab.idf, on_chunk)
    stats["keep_per_word"] = vec.n_keep(int(stats["n_clusters"]) * int(stats["dim"]))
    stats["file_bytes"] = os.path.getsize(os.path.join(out, model_io.TOPICS_FILE))
    return stats


_STAGE_FUNCS: dict[str, Callable[[str, str, Config], dict[str, Any]]] = {
    "word2vec": stage_word2vec,
    "idf": stage_idf,
    "gmm": stage_gmm,
    "topics": stage_topics,
}


def _injected_crash(stage: str) -> None:
    """Fault injection for the reliability tests: ``SCDV_FAULT_TRAIN_EXIT=STAGE[:CODE]`` makes the process die
    abruptly (no error line, like a crash in native code) when STAGE starts, with exit code CODE (default 3)."""
    spec = os.environ.get("SCDV_FAULT_TRAIN_EXIT", "")
    if not spec or spec.split(":")[0] != stage:
        return
    code = int(spec.split(":")[1]) if ":" in spec else 3
    sys.stderr.write(f"fault injection: stage {stage} crashed (exit code {code})\n")
    sys.stderr.flush()
    os._exit(code)


def run_stage(stage: str, corpus: str, out: str, cfg: Config) -> dict[str, Any]:
    """Run one stage or ``all``; returns {stage name: summary with "seconds"}."""
    names = STAGES if stage == "all" else (stage,)
    os.makedirs(out, exist_ok=True)
    summaries: dict[str, Any] = {}
    for name in names:
        _StageTracker.current = name
        log(f"stage {name} ...")
        _injected_crash(name)
        t0 = time.perf_counter()
        summary = _STAGE_FUNCS[name](corpus, out, cfg)
        summary["seconds"] = round(time.perf_counter() - t0, 3)
        summaries[name] = summary
        emit(name, phase="done", seconds=summary["seconds"])
        log(f"stage {name} done in {summary['seconds']:.1f} s")
    return summaries


class _ArgumentError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """Raises instead of exiting, so bad arguments become an error line too."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise _ArgumentError(message)


def _parser() -> _Parser:
    p = _Parser(prog="python -m scdv.train", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("stage", choices=(*STAGES, "all"))
    p.add_argument("--corpus", required=True, help="tokenised corpus: one document per line, tokens separated by spaces")
    p.add_argument("--out", required=True, help="model directory")
    p.add_argument("--config", default="", help="JSON object, see scdv.config")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    _StageTracker.current = "setup"
    parser = _parser()
    try:
        args = parser.parse_args(argv)
        _StageTracker.current = args.stage
        cfg = parse_config(args.config)
        t0 = time.perf_counter()
        summaries = run_stage(args.stage, args.corpus, args.out, cfg)
        emit_result(args.stage, seconds=round(time.perf_counter() - t0, 3), out=os.path.abspath(args.out), stages=summaries, config=cfg.to_dict())
        return 0
    except _ArgumentError as exc:
        emit_error(_StageTracker.current, f"bad arguments: {exc} (usage: {parser.format_usage().strip()})", kind="input")
    except InputError as exc:
        emit_error(_StageTracker.current, str(exc), kind="input")
    except MemoryError:
        emit_error(_StageTracker.current, "out of memory: lower gmm.max_fit_words or topics.chunk_words, or use a smaller vocabulary (word2vec.min_count)")
    except Exception as exc:  # anything else is a bug or an environment problem: keep the traceback
        traceback.print_exc(file=sys.stderr)
        emit_error(_StageTracker.current, f"{type(exc).__name__}: {exc}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
