"""Content hashes of memory text: normalised for dedup, exact for embedding keys.

Pure, no I/O.

- :func:`content_hash` — the index's hash of a note file: SHA-256 (hex) of its exact bytes.
- :func:`normalised_content_hash` — the dedup key (``docs/user-guide.md``, "Consolidation";
  Engram's content-hash dedup): SHA-256 (hex) of the text lower-cased (``casefold``), with
  punctuation stripped and whitespace collapsed, so ``"Allergic to  peanuts."`` and
  ``"allergic to peanuts"`` are the same memory.
- :func:`content_key` — the key ``import`` tells memories apart by (lower-cased, punctuation
  removed, whitespace collapsed).
- :func:`embedding_key` — the key a vector is stored under in the sidecar: SHA-256 of the model
  name and the exact text embedded, so an unchanged note is never embedded twice and a change of
  model never reuses another model's vectors.
"""

from __future__ import annotations

import re
import unicodedata

# hashlib is imported where a hash is made: loading it (OpenSSL) takes ~2 ms, and a recall on an
# index in step with the vault hashes nothing


def content_hash(data: bytes) -> str:
    """SHA-256 hex digest of a note's bytes (the index's content hash)."""
    import hashlib

    return hashlib.sha256(data).hexdigest()


_SPACE = re.compile(r"\s+")


def normalised_text(text: str) -> str:
    """``text`` case-folded, punctuation and symbols removed, whitespace runs made one space.

    Punctuation = every character of Unicode category P* or S* (``.,;:!?'"()[]*#…``); letters,
    digits and marks stay, so ``"café"`` and ``"cafe"`` stay different.
    """
    folded = unicodedata.normalize("NFC", text).casefold()
    kept = "".join(" " if unicodedata.category(c)[0] in "PS" else c for c in folded)
    return _SPACE.sub(" ", kept).strip()


def normalised_content_hash(text: str) -> str:
    """SHA-256 hex digest (64 chars) of :func:`normalised_text` of ``text`` (UTF-8)."""
    import hashlib

    return hashlib.sha256(normalised_text(text).encode("utf-8")).hexdigest()


def embedding_key(model: str, text: str) -> str:
    """SHA-256 hex digest of ``model``, a NUL byte and ``text`` (UTF-8): one vector's key."""
    import hashlib

    return hashlib.sha256(model.encode("utf-8") + b"\0" + text.encode("utf-8")).hexdigest()


_PUNCTUATION = re.compile(r"[^\w\s]|_")
_ASCII_PUNCTUATION = {c: " " for c in range(128) if _PUNCTUATION.match(chr(c))}
"""What :data:`_PUNCTUATION` replaces among ASCII characters, as a ``str.translate`` table."""


def content_key(content: str) -> str:
    """The normalised content hash that identifies an imported memory without an ``id``.

    Lower-cased, punctuation removed, whitespace collapsed, then SHA-256 (hex): the same words
    give the same key whatever their case, punctuation or line breaks. ASCII text takes a
    translation table instead of the expression (the same characters, a tenth of the time).
    """
    import hashlib

    text = unicodedata.normalize("NFC", content).lower()
    ascii_only = text.isascii()
    text = text.translate(_ASCII_PUNCTUATION) if ascii_only else _PUNCTUATION.sub(" ", text)
    text = " ".join(text.split())  # (``split`` and ``\s`` know the same white space)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
