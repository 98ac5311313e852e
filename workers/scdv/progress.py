"""Structured progress lines for the Node.js parent process.

Protocol (stdout, UTF-8, one JSON object per line, nothing else on stdout)::

    {"type": "progress", "stage": "gmm", "iteration": 3, "of": 50, "loglik": -123.4, "eta_s": 12.5}
    {"type": "result", "stage": "all", "seconds": 81.2, "stages": {...}}
    {"type": "error", "stage": "word2vec", "message": "corpus file ... is empty: ..."}

* ``progress`` lines: any number; fields depend on the stage (see scdv.train).
* ``result``: exactly one, last, on success (exit code 0).
* ``error``: exactly one, last, on failure (exit code 1); ``message`` says what to change.

Human-readable logs go to stderr (:func:`log`). Every line is flushed at once so
the parent sees it while the stage is still running.
"""

from __future__ import annotations

import json
import math
import sys
import time
import traceback
from typing import Any, Callable, TextIO

from .errors import InputError

__all__ = ["emit", "emit_result", "emit_error", "log", "run_main", "EtaClock"]


def _clean(value: Any) -> Any:
    """JSON has no NaN/Infinity; numpy scalars are not JSON either."""
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        try:
            value = value.item()
        except (TypeError, ValueError):
            pass
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _write(obj: dict[str, Any], stream: TextIO | None = None) -> None:
    out = stream if stream is not None else sys.stdout
    out.write(json.dumps(_clean(obj), ensure_ascii=False, separators=(",", ":")) + "\n")
    out.flush()


def emit(stage: str, **fields: Any) -> None:
    """Write one ``{"type": "progress", "stage": stage, **fields}`` line to stdout."""
    _write({"type": "progress", "stage": stage, **fields})


def emit_result(stage: str, **fields: Any) -> None:
    """Write the final ``{"type": "result", "stage": stage, **fields}`` line to stdout."""
    _write({"type": "result", "stage": stage, **fields})


def emit_error(stage: str, message: str, kind: str = "internal") -> None:
    """Write ``{"type": "error", "stage": stage, "message": message, "kind": kind}`` to stdout.

    ``kind`` is ``"input"`` when the user must change something (retrying cannot help) and
    ``"internal"`` otherwise (a crash, memory, the environment: a retry may succeed).
    """
    _write({"type": "error", "stage": stage, "message": message, "kind": kind})


def run_main(stage: str, body: Callable[[], None]) -> int:
    """Run a one-shot module's ``body`` (which emits its own result line) and turn a failure into one error line:
    ``kind`` input for InputError and bad arguments (argparse exits), internal otherwise (traceback on stderr).
    Returns the process exit code."""
    try:
        body()
        return 0
    except InputError as exc:
        emit_error(stage, str(exc), kind="input")
    except SystemExit as exc:  # argparse
        emit_error(stage, f"bad arguments (exit {exc.code})", kind="input")
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        emit_error(stage, f"{type(exc).__name__}: {exc}")
    return 1


def log(message: str) -> None:
    """A human-readable log line on stderr."""
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()


class EtaClock:
    """Estimates seconds left from the mean time per completed step."""

    def __init__(self, total_steps: int) -> None:
        self.total_steps = total_steps
        self.start = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def eta(self, done_steps: int) -> float:
        """Seconds left after ``done_steps`` of ``total_steps`` (0 when done)."""
        if done_steps <= 0:
            return float("nan")
        left = max(self.total_steps - done_steps, 0)
        return round(self.elapsed() / done_steps * left, 2)
