"""A memory's text as returned to a reader: the note body, capped, and a one-line excerpt.

Recall hits, ``show --json`` and the MCP tools carry the body so an assistant gets what a memory
says, not only where it is. Long bodies are cut at a line or word boundary and end with a marker
that says how much was left out.
"""

from __future__ import annotations

import re

HIT_TEXT_CHARS = 2000
"""Longest body (characters) a recall hit carries before it is cut."""
SHOW_TEXT_CHARS = 20000
"""Longest body (characters) ``show`` carries before it is cut."""
EXCERPT_CHARS = 100
"""Width (characters) of the one-line excerpt ``recall`` prints under each hit."""

_SPACE = re.compile(r"\s+")
_MARKUP = re.compile(r"^\s{0,3}(?:#{1,6}\s+|[-*+]\s+(?:\[.\]\s+)?|>\s?|\d+[.)]\s+)")


def capped_text(body: str, limit: int = HIT_TEXT_CHARS) -> str:
    """``body`` without surrounding blank lines; past ``limit`` characters cut and marked.

    The cut falls on the last line break (else space) in the final fifth before ``limit``, and
    ``"… [N more characters]"`` follows on its own line (``N`` counts what was left out).
    """
    text = body.strip("\n").rstrip()
    if len(text) <= limit:
        return text
    cut = limit
    for sep in ("\n", " "):
        at = text.rfind(sep, limit * 4 // 5, limit)
        if at > 0:
            cut = at
            break
    head = text[:cut].rstrip()
    return f"{head}\n… [{len(text) - len(head)} more characters]"


def excerpt(body: str, width: int = EXCERPT_CHARS) -> str:
    """The body's first lines as one line of at most ``width`` characters (``…`` when cut).

    Headings, list bullets, quote marks and blank lines are dropped; runs of spaces become one.
    """
    parts: list[str] = []
    length = 0
    for line in body.splitlines():
        line = _SPACE.sub(" ", _MARKUP.sub("", line)).strip()
        if not line or line == "---":
            continue
        parts.append(line)
        length += len(line) + 1
        if length > width:
            break
    text = " ".join(parts)
    if len(text) <= width:
        return text
    head = text[: width - 1]
    space = head.rfind(" ")
    if space > width // 2:
        head = head[:space]
    return head.rstrip(" ,;:") + "…"


__all__ = ["EXCERPT_CHARS", "HIT_TEXT_CHARS", "SHOW_TEXT_CHARS", "capped_text", "excerpt"]
