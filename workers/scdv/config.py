"""Training configuration: the ``--config`` JSON of ``python -m scdv.train``.

All keys are optional; unknown keys are rejected (a typo would otherwise be
ignored silently). Defaults::

    {
      "word2vec": {"vector_size": 200, "window": 10, "negative": 10, "sample": 1e-3,
                   "min_count": 5, "epochs": 10, "workers": 2, "seed": 1, "sg": 1,
                   "hs": 0, "compute_loss": true},
      "gmm":      {"n_components": null, "covariance_type": "tied", "max_iter": 100,
                   "tol": 1e-3, "reg_covar": 1e-6, "init_params": "kmeans", "seed": 1,
                   "max_fit_words": 200000, "dtype": "float32", "n_init": 1},
      "topics":   {"prob_threshold": 0.0, "keep_fraction": 0.03, "keep_count": null,
                   "chunk_words": 2000, "vector_norm": "l2", "idf_power": -2.0}
    }
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from typing import Any, Optional, get_type_hints

from .errors import InputError

__all__ = ["Word2VecConfig", "GmmConfig", "TopicsConfig", "Config", "parse_config", "clusters_for"]


@dataclass(frozen=True)
class Word2VecConfig:
    vector_size: int = 200
    window: int = 10
    negative: int = 10
    sample: float = 1e-3
    min_count: int = 5
    epochs: int = 10
    workers: int = 2
    seed: int = 1
    sg: int = 1
    hs: int = 0
    compute_loss: bool = True


# A corpus of N documents supports about √(N/2) topics (the rule pipeline/inspect/advice.js advises by); more
# clusters than that split topics into near-duplicates, which costs ad matching on short texts and search time
# (docs/matching.md § The cluster count). 60 stays the most: the count every figure above a few thousand documents
# was measured at.
AUTO_CLUSTERS_MIN = 2
AUTO_CLUSTERS_MAX = 60


def clusters_for(n_documents: int) -> int:
    """The cluster count of ``gmm.n_components: null``: √(N/2) rounded half up (as JavaScript's Math.round), between 2 and 60."""
    return max(AUTO_CLUSTERS_MIN, min(AUTO_CLUSTERS_MAX, math.floor(math.sqrt(max(n_documents, 0) / 2) + 0.5)))


@dataclass(frozen=True)
class GmmConfig:
    # None: clusters_for(the training documents)
    n_components: Optional[int] = None
    covariance_type: str = "tied"
    max_iter: int = 100
    tol: float = 1e-3
    reg_covar: float = 1e-6
    init_params: str = "kmeans"
    seed: int = 1
    max_fit_words: int = 200_000
    dtype: str = "float32"
    n_init: int = 1


@dataclass(frozen=True)
class TopicsConfig:
    prob_threshold: float = 0.0
    keep_fraction: Optional[float] = 0.03
    keep_count: Optional[int] = None
    chunk_words: int = 2000
    vector_norm: str = "l2"
    # 1 in the paper; -2 retrieved same-category news best (docs/relevance.md)
    idf_power: float = -2.0


@dataclass(frozen=True)
class Config:
    word2vec: Word2VecConfig = field(default_factory=Word2VecConfig)
    gmm: GmmConfig = field(default_factory=GmmConfig)
    topics: TopicsConfig = field(default_factory=TopicsConfig)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


_CHOICES: dict[str, tuple[str, ...]] = {
    "gmm.covariance_type": ("tied", "diag", "full"),
    "gmm.init_params": ("kmeans", "k-means++", "random", "random_from_data"),
    "gmm.dtype": ("float32", "float64"),
    "topics.vector_norm": ("l2", "raw"),
}
# floats that may be negative (every other float must be >= 0)
_SIGNED = {"topics.idf_power"}
_POSITIVE = {
    "word2vec.vector_size", "word2vec.window", "word2vec.min_count", "word2vec.epochs",
    "word2vec.workers", "gmm.n_components", "gmm.max_iter", "gmm.max_fit_words",
    "gmm.n_init", "topics.chunk_words", "topics.keep_count",
}


def _coerce(path: str, value: Any, hint: Any) -> Any:
    """Check one value against its annotation; ints are accepted for floats."""
    optional = hint == Optional[float] or hint == Optional[int]
    if value is None:
        if optional:
            return None
        raise InputError(f"config key {path} must not be null")
    base = {Optional[float]: float, Optional[int]: int}.get(hint, hint)
    ok: bool
    if base is bool:
        ok = isinstance(value, bool)
    elif base is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif base is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    else:
        ok = isinstance(value, str)
    if not ok:
        raise InputError(f"config key {path} must be {base.__name__}, got {json.dumps(value)}")
    if path in _CHOICES and value not in _CHOICES[path]:
        raise InputError(f"config key {path} must be one of {list(_CHOICES[path])}, got {value!r}")
    if path in _POSITIVE and value < 1:
        raise InputError(f"config key {path} must be >= 1, got {value}")
    if isinstance(value, float) and value < 0 and path not in _SIGNED:
        raise InputError(f"config key {path} must be >= 0, got {value}")
    return value


def _section(name: str, cls: type, raw: Any) -> Any:
    if raw is None:
        return cls()
    if not isinstance(raw, dict):
        raise InputError(f"config section {name} must be a JSON object")
    hints = get_type_hints(cls)
    unknown = sorted(set(raw) - set(hints))
    if unknown:
        raise InputError(f"unknown config key(s) {', '.join(name + '.' + k for k in unknown)}; valid keys: {', '.join(sorted(hints))}")
    values = {k: _coerce(f"{name}.{k}", v, hints[k]) for k, v in raw.items()}
    return cls(**values)


def parse_config(text: str | None) -> Config:
    """Parse the ``--config`` JSON string (None or "" gives all defaults)."""
    if text is None or not text.strip():
        return Config()
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"--config is not valid JSON ({exc.msg} at char {exc.pos})") from exc
    if not isinstance(raw, dict):
        raise InputError("--config must be a JSON object like {\"gmm\": {\"n_components\": 60}}")
    sections = {"word2vec": Word2VecConfig, "gmm": GmmConfig, "topics": TopicsConfig}
    unknown = sorted(set(raw) - set(sections))
    if unknown:
        raise InputError(f"unknown config section(s) {', '.join(unknown)}; valid: {', '.join(sections)}")
    cfg = Config(**{name: _section(name, cls, raw.get(name)) for name, cls in sections.items()})
    kf = cfg.topics.keep_fraction
    if kf is not None and not 0.0 < kf <= 1.0:
        raise InputError(f"config key topics.keep_fraction must be in (0, 1] or null, got {kf}")
    if cfg.topics.prob_threshold > 1.0:
        raise InputError("config key topics.prob_threshold must be in [0, 1]")
    return cfg
