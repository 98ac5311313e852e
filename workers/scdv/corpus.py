"""Checks of the tokenised corpus file before any training starts.

The corpus is UTF-8 text, one document per line, tokens separated by spaces
(the Node tokeniser's output). The checks read at most ``sample_lines``
non-blank lines, so they are fast on any corpus size, and raise
:class:`~scdv.errors.InputError` with a message that says what to change.
"""

from __future__ import annotations

import json
import os
import unicodedata
from dataclasses import dataclass

from .errors import InputError

__all__ = ["CorpusSample", "check_corpus", "count_documents", "is_japanese_char"]

FORMAT_HINT = "expected UTF-8 text, one document per line, tokens separated by spaces"


@dataclass(frozen=True)
class CorpusSample:
    """What the first lines of the corpus look like."""

    path: str
    size_bytes: int
    sampled_lines: int
    sampled_tokens: int
    letter_token_share: float  # tokens with at least one letter (any script)
    japanese_token_share: float  # tokens with at least one kana/kanji


def is_japanese_char(ch: str) -> bool:
    """Hiragana, katakana (incl. half-width) or CJK ideograph."""
    o = ord(ch)
    return (
        0x3040 <= o <= 0x30FF  # hiragana, katakana
        or 0x31F0 <= o <= 0x31FF  # katakana phonetic extensions
        or 0x3400 <= o <= 0x4DBF  # CJK extension A
        or 0x4E00 <= o <= 0x9FFF  # CJK unified ideographs
        or 0xF900 <= o <= 0xFAFF  # CJK compatibility ideographs
        or 0xFF66 <= o <= 0xFF9F  # half-width katakana
    )


def _has_letter(token: str) -> bool:
    return any(unicodedata.category(c).startswith("L") for c in token)


def check_corpus(path: str, sample_lines: int = 2000) -> CorpusSample:
    """Validate the corpus file and describe its first lines.

    Raises
    ------
    InputError
        Missing file, empty corpus, not UTF-8, JSON instead of tokens,
        untokenised text, or tokens that are not words (numbers, symbols).
    """
    if not os.path.exists(path):
        raise InputError(f"corpus file {path} does not exist: pass --corpus with the tokenised corpus ({FORMAT_HINT})")
    if not os.path.isfile(path):
        raise InputError(f"corpus path {path} is not a regular file: pass the tokenised corpus file ({FORMAT_HINT})")
    size = os.path.getsize(path)
    if size == 0:
        raise InputError(f"corpus file {path} is empty: tokenise some documents into it first ({FORMAT_HINT})")

    lines = tokens = letter_tokens = ja_tokens = json_lines = 0
    token_chars = 0
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"corpus file {path} is not UTF-8 (bad byte at line {lineno}, byte {exc.start}): "
                    f"re-encode it as UTF-8 ({FORMAT_HINT})"
                ) from exc
            toks = line.split()
            if not toks:
                continue
            lines += 1
            stripped = line.strip()
            if stripped[:1] in "{[" and _looks_like_json(stripped):
                json_lines += 1
            tokens += len(toks)
            for t in toks:
                token_chars += len(t)
                if _has_letter(t):
                    letter_tokens += 1
                if any(is_japanese_char(c) for c in t):
                    ja_tokens += 1
            if lines >= sample_lines:
                break

    if tokens == 0:
        raise InputError(f"corpus file {path} has no tokens (only blank lines): tokenise some documents into it first ({FORMAT_HINT})")
    if json_lines * 2 > lines:
        raise InputError(
            f"corpus file {path} looks like JSON lines, not tokens: run the tokeniser and pass its output "
            f"({FORMAT_HINT})"
        )
    mean_len = token_chars / tokens
    if mean_len > 16:  # MeCab tokens of Japanese text average 2-3 characters
        raise InputError(
            f"corpus file {path} looks untokenised (tokens average {mean_len:.0f} characters): "
            f"split documents into words with the tokeniser first ({FORMAT_HINT})"
        )
    letter_share = letter_tokens / tokens
    if letter_share < 0.5:
        raise InputError(
            f"corpus file {path} does not look like words: only {letter_share:.0%} of the first {tokens} tokens "
            f"contain a letter (numbers or symbols?): pass the tokeniser's word output ({FORMAT_HINT})"
        )
    return CorpusSample(
        path=path,
        size_bytes=size,
        sampled_lines=lines,
        sampled_tokens=tokens,
        letter_token_share=round(letter_share, 4),
        japanese_token_share=round(ja_tokens / tokens, 4),
    )


def count_documents(path: str) -> int:
    """Non-blank lines of the corpus file: its documents (one pass over the bytes, about 1 s a GB)."""
    n = 0
    with open(path, "rb") as fh:
        for raw in fh:
            if raw.strip():
                n += 1
    return n


def _looks_like_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
