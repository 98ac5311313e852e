"""SCDV (Mekala et al., EMNLP 2017) training workers: Word2Vec, IDF, GMM, word-topic vectors.

Run stages with ``python -m scdv.train STAGE --corpus FILE --out DIR --config JSON``
(``PYTHONPATH=workers``). Modules: progress (JSON lines for the Node parent),
config, corpus (input checks), word2vec, idf, gmm, topics, wtv_format, model_io,
train (CLI), bench_gmm (GMM speed check against scikit-learn), vectorizer (SCDVVectorizer: scikit-learn
fit/transform over the Node embedder, ``scdv embed``).
"""

from __future__ import annotations

__version__ = "0.1.0"
