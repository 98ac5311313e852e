"""SCDVVectorizer: scikit-learn's fit/transform over an SCDV model, for data scientists.

The vectors come from the product itself: ``fit`` runs ``scdv train`` (or loads a trained model) and
``transform`` runs ``scdv embed``, the Node embedder that ``scdv index`` and the server use, so a text gets
exactly the vector it would get in the store. Nothing here computes a vector a second way.

    from scdv.vectorizer import SCDVVectorizer          # PYTHONPATH=workers, the project's .venv
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC

    clf = make_pipeline(SCDVVectorizer(model="news", fit_mode="train", clusters=20), LinearSVC())
    clf.fit(train_texts, train_labels)
    clf.predict(["ドコモから新しいスマートフォンが発表された。"])

Needs Node.js 20+ and the project set up (``npm run setup``); training also needs Redis (``REDIS_URL``, or
``redis-server`` on PATH: the CLI starts a private one).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

__all__ = ["SCDVVectorizer", "REPO_ROOT"]

#: The repository holding this package (workers/scdv/ -> ../..): where pipeline/cli.js is.
REPO_ROOT = Path(__file__).resolve().parents[2]

FIT_MODES = ("auto", "load", "train")


class SCDVVectorizer(TransformerMixin, BaseEstimator):
    """Texts -> sparse SCDV document vectors (a ``scipy.sparse.csr_matrix`` of float32, one row per text).

    Parameters (scikit-learn style: stored as given, checked in ``fit``)
    ----------
    model : str
        The model's name: the folder ``models_dir/model``.
    models_dir : str or None
        Where models live (default: the repository's ``models/``, or ``$SCDV_MODELS_DIR``).
    fit_mode : {"auto", "load", "train"}
        What ``fit`` does. "load": use the trained model, ignoring the texts given to ``fit``; "train": train
        the model on the texts given to ``fit``, replacing a model of that name; "auto" (default): load when the
        model exists, else train.
    collection : str or None
        Embed as for this collection of the model's store (with the settings it was indexed with), so that
        vectors equal the stored ones; default: the settings the server uses for the model.
    clusters, dims, epochs, min_count, seed : int or None
        Training parameters (``scdv train --clusters`` …); None: the defaults of the config schema (``pipeline/config/schema/train.js``).
    config : str or None
        A JSON config file for ``scdv train`` and ``scdv embed`` (``--config``).
    node : str
        The Node.js executable.

    Attributes after ``fit``: ``width_`` (columns of the output), ``embed_`` (the embed settings used),
    ``trained_`` (whether ``fit`` trained the model).

    A text with no word the model knows gets an all-zero row (as CountVectorizer does for unknown words).
    Texts are strings, or dicts ``{"body": ..., "title": ...}``.
    """

    def __init__(self, model: str = "default", models_dir: str | None = None, fit_mode: str = "auto",
                 collection: str | None = None, clusters: int | None = None, dims: int | None = None,
                 epochs: int | None = None, min_count: int | None = None, seed: int | None = None,
                 config: str | None = None, node: str = "node"):
        self.model = model
        self.models_dir = models_dir
        self.fit_mode = fit_mode
        self.collection = collection
        self.clusters = clusters
        self.dims = dims
        self.epochs = epochs
        self.min_count = min_count
        self.seed = seed
        self.config = config
        self.node = node

    # ---- scikit-learn API ----

    def fit(self, raw_documents: Iterable[Any], y: Any = None) -> "SCDVVectorizer":
        """Train the model on ``raw_documents`` or load it (``fit_mode``); returns self."""
        if self.fit_mode not in FIT_MODES:
            raise ValueError(f"fit_mode must be one of {', '.join(FIT_MODES)}, got {self.fit_mode!r}")
        exists = (self._models_dir() / self.model / "manifest.json").is_file()
        train = self.fit_mode == "train" or (self.fit_mode == "auto" and not exists)
        if self.fit_mode == "load" and not exists:
            raise ValueError(f"model {self.model!r} not found in {self._models_dir()} (fit_mode='load'): "
                             "train it with scdv train, or use fit_mode='train'")
        if train:
            self._train(_documents(raw_documents))
        header = self._embed([], header=True)[0]
        self.width_ = int(header["width"])
        self.embed_ = header["embed"]
        self.trained_ = train
        return self

    def transform(self, raw_documents: Iterable[Any]) -> sp.csr_matrix:
        """The document vectors of ``raw_documents``: a CSR matrix (n_documents, width_) of float32."""
        check_is_fitted(self, "width_")
        docs = _documents(raw_documents)
        rows = self._embed(docs, header=True)[1:]
        if len(rows) != len(docs):
            raise RuntimeError(f"scdv embed returned {len(rows)} vectors for {len(docs)} texts")
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        indptr[1:] = np.cumsum([len(r["indices"]) for r in rows])
        indices = np.fromiter((i for r in rows for i in r["indices"]), dtype=np.int32, count=int(indptr[-1]))
        data = np.fromiter((v for r in rows for v in r["values"]), dtype=np.float32, count=int(indptr[-1]))
        return sp.csr_matrix((data, indices, indptr), shape=(len(rows), self.width_))

    # ---- the product's CLI ----

    def _models_dir(self) -> Path:
        if self.models_dir is not None:
            return Path(self.models_dir)
        return Path(os.environ.get("SCDV_MODELS_DIR") or REPO_ROOT / "models")

    def _run(self, args: list[str], stdin: str = "") -> str:
        node = shutil.which(self.node) or self.node
        env = dict(os.environ)
        if self.models_dir is not None:
            env["SCDV_MODELS_DIR"] = str(Path(self.models_dir).resolve())
        config = ["--config", str(self.config)] if self.config else []
        try:
            r = subprocess.run([node, str(REPO_ROOT / "pipeline" / "cli.js"), *args, *config], input=stdin,
                               capture_output=True, text=True, encoding="utf-8", env=env, check=False)
        except FileNotFoundError as err:
            raise RuntimeError(f"Node.js not found as {self.node!r} (SCDVVectorizer(node=...)): {err}") from err
        if r.returncode != 0:
            raise RuntimeError(f"scdv {args[0]} failed (exit {r.returncode}): {r.stderr.strip()}")
        return r.stdout

    def _train(self, docs: list[dict[str, str]]) -> None:
        if not docs:
            raise ValueError("fit needs at least one text to train on")
        flags = {"--clusters": self.clusters, "--dims": self.dims, "--epochs": self.epochs,
                 "--min-count": self.min_count, "--seed": self.seed}
        extra = [str(x) for k, v in flags.items() if v is not None for x in (k, v)]
        with tempfile.TemporaryDirectory(prefix="scdv-vectorizer-") as tmp:
            corpus = Path(tmp) / "corpus.jsonl"
            with corpus.open("w", encoding="utf-8") as fh:
                for i, d in enumerate(docs):
                    fh.write(json.dumps({"id": f"doc-{i}", **d}, ensure_ascii=False) + "\n")
            self._run(["train", "--corpus", str(corpus), "--name", self.model, "--force", *extra])

    def _embed(self, docs: list[dict[str, str]], header: bool) -> list[dict[str, Any]]:
        args = ["embed", "--model", self.model, *(["--header"] if header else []),
                *(["--collection", self.collection] if self.collection else [])]
        stdin = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs)
        return [json.loads(line) for line in self._run(args, stdin).splitlines() if line]


def _documents(raw_documents: Iterable[Any]) -> list[dict[str, str]]:
    """Texts as scdv embed's input lines; a lone string is refused as scikit-learn's text vectorizers do."""
    if isinstance(raw_documents, (str, bytes)):
        raise ValueError("Iterable over raw text documents expected, string object received.")
    out = []
    for i, d in enumerate(raw_documents):
        if isinstance(d, str):
            out.append({"body": d})
        elif isinstance(d, dict) and isinstance(d.get("body"), str):
            out.append({"body": d["body"], **({"title": d["title"]} if isinstance(d.get("title"), str) else {})})
        else:
            raise ValueError(f"document {i} must be a string or a dict with a string 'body', got {type(d).__name__}")
    return out
