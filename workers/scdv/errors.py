"""The one exception type for bad input that the user can fix."""

from __future__ import annotations

__all__ = ["InputError"]


class InputError(Exception):
    """Bad input (files, corpus, config). The message says what to change.

    The CLI reports it as a ``{"type": "error"}`` line without a traceback.
    """
