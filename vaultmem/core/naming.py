"""Titles, file names and ids of new notes (spec section 2).

File name = title + ``.md``. Titles come from ``--title`` or the first words of the content with
the characters Obsidian forbids or that break links removed. Ids are ULIDs: sortable by creation
time, unique without coordination, never changed by moves or renames.
"""

from __future__ import annotations

import re
import unicodedata

FORBIDDEN_CHARS = '*"\\/<>:|?#^[]'
"""Characters Obsidian forbids in file names or that break ``[[links]]``."""

MAX_TITLE_CHARS = 80
_FORBIDDEN = re.compile(r"%%|[" + re.escape(FORBIDDEN_CHARS) + r"]|[\x00-\x1f\x7f]")
_SPACES = re.compile(r"\s+")


def new_id() -> str:
    """A new ULID string (26 Crockford base-32 characters), e.g. ``01JDGZ6Q4V7C2M9R0S8T5W3XYZ``."""
    from ulid import ULID  # imported on first use: commands that never create a note start faster

    return str(ULID())


def safe_title(text: str, *, max_chars: int = MAX_TITLE_CHARS) -> str:
    """``text`` as a title that is a safe file name and link target.

    Removes ``* " \\ / < > : | ? # ^ [ ] %%`` and control characters, collapses whitespace,
    strips leading dots (hidden files) and trailing dots/spaces, NFC-normalises and cuts at
    ``max_chars`` on a word boundary. Returns ``""`` when nothing is left; callers fall back.
    """
    cleaned = _FORBIDDEN.sub(" ", unicodedata.normalize("NFC", text))
    cleaned = _SPACES.sub(" ", cleaned).strip().lstrip(".").strip()
    if len(cleaned) > max_chars:
        cut = cleaned[:max_chars]
        if " " in cut[max_chars // 2 :]:
            cut = cut[: cut.rfind(" ")]
        cleaned = cut
    return cleaned.rstrip(". ")


def title_from_content(content: str, *, max_words: int = 8) -> str:
    """A title from the first words of the first non-empty line of ``content``."""
    for line in content.splitlines():
        words = safe_title(line.lstrip("#>-*+ \t")).split()
        if words:
            return safe_title(" ".join(words[:max_words]))
    return ""


def numbered(title: str, n: int) -> str:
    """``title`` with a counter for the n-th clash: ``Foo`` → ``Foo 2``."""
    return title if n <= 1 else f"{title} {n}"
