"""The text of a note outside code, line by line, whatever its lists, quotes and HTML blocks.

:func:`text_outside_code_by_line` answers for bodies whose code spans each open and close on one
line, the common shape of notes with lists, block quotes, callouts, tables and HTML: then no
block structure decides where a code span is (a code span never crosses a line, so each line's
spans are those of the paragraph the line belongs to). What block structure still decides, it
checks, and answers ``None`` ("not sure") where it cannot:

- fenced code at column 0 (outside any list item or quote) is left out; any other fence
  marker, a reference definition, or a link on a line that could be indented code
  (:func:`~vaultmem.core.indented_code.links_may_sit_in_indented_code`) answers ``None``;
- a line that may open an HTML block (a ``<`` after nothing but indentation and container
  markers; CommonMark 4.6): kept as text, as markdown-it keeps an HTML block, when no backtick,
  ``~~~`` or fence stands between it and the next blank line (where such a block ends at the
  latest); an HTML block that a blank line does not end (``<pre``, ``<script``, ``<style``,
  ``<textarea``, ``<!``, ``<?``) and an HTML comment answer ``None``;
- raw HTML and autolinks inside a paragraph are read with its code spans, left to right: a
  ``<`` that may open one holding a backtick answers ``None``
  (:func:`~vaultmem.core.code_spans.html_may_take_backticks`), as does a link destination that
  may hold one.

Where it answers, it answers as markdown-it does; the tests check this with hypothesis and
over both real vaults and a generated vault shaped like obsidian-hub's plugin notes. Pure; a
few microseconds per note.
"""

from __future__ import annotations

import re

from vaultmem.core.code_spans import (
    closes_fence,
    code_spans,
    cut_code,
    fence_opening,
    html_may_take_backticks,
    may_take_backticks,
)
from vaultmem.core.indented_code import links_may_sit_in_indented_code, may_hold_code
from vaultmem.core.lazy_patterns import lazy_pattern

__all__ = ["text_outside_code_by_line"]

_REFERENCE_ANY_RE = lazy_pattern(
    globals(), "_REFERENCE_ANY_RE", r"^[ \t>*+\-0-9.)]*\[[^\n]*\]:", re.MULTILINE
)
# A "<" after nothing but indentation and container markers: the line may open an HTML block.
_HTML_LINE_RE = lazy_pattern(globals(), "_HTML_LINE_RE", r"[ \t>*+\-0-9.)]*<")
# HTML blocks of kinds 1-5, which run past blank lines to their end marker (CommonMark 4.6).
_HTML_UNTIL_MARKER_RE = lazy_pattern(
    globals(),
    "_HTML_UNTIL_MARKER_RE",
    r"<(?:[!?]|(?:script|pre|style|textarea)(?:[ \t>]|$))",
    re.IGNORECASE,
)
_OPENS_NO_BLOCK_FIRSTS = frozenset(" \t#-+*_=0123456789>")  # complement: opens no block
_FENCE_PLACE = "***"  # a fenced block, as a thematic break: it ends a paragraph as a fence does


def text_outside_code_by_line(body: str) -> tuple[str, list[str]] | None:
    """``(text, code)`` as :func:`~vaultmem.core.code_spans.text_outside_code` gives it (each
    code span replaced by ``"\\0<n>\\0"``, its source in ``code[n]``), or ``None`` when not
    sure (see the module text). ``body`` has ``\\n`` line ends and no NUL.
    """
    kept: list[str] = []  # the body with each fenced block as a thematic break
    fences: list[int] = []  # where in kept those stand
    outside: list[str] = []  # the lines outside fenced blocks
    fence: tuple[str, int] | None = None
    for line in body.split("\n"):
        if fence is not None:
            if closes_fence(line, fence):
                fence = None
        elif line.startswith(("```", "~~~")) and (opened := fence_opening(line)) is not None:
            fence = opened  # at column 0 no list item or quote can hold it
            fences.append(len(kept))
            kept.append(_FENCE_PLACE)
        else:
            kept.append(line)
            outside.append(line)
    text = "\n".join(kept)
    if "```" in text or "~~~" in text or _REFERENCE_ANY_RE.search(text):
        return None
    html_at_top_level = False
    if "<" in text:
        if not _html_keeps_code_spans(kept, fences):
            return None
        html_at_top_level = _html_at_top_level(kept)
    # each backtick as a letter: a line of code spans alone stays a line of text (as blank it
    # would end the paragraph, and a setext underline below it would not close a heading)
    if may_hold_code(
        text.replace("`", "x"), html_at_top_level=html_at_top_level
    ) and links_may_sit_in_indented_code(text):
        return None
    pieces: list[str] = []
    code: list[str] = []
    for line in outside:
        if "`" in line:
            if may_take_backticks(line):
                return None
            spans = code_spans(line, paired=True)
            if spans is None:
                return None
            line = cut_code(line, spans, code)
        pieces.append(line)
    return "\n".join(pieces), code


def _html_keeps_code_spans(kept: list[str], fences: list[int]) -> bool:
    """True when no HTML block or inline HTML of ``kept`` (lines, fenced blocks as
    :data:`_FENCE_PLACE` at the indexes ``fences``) changes what the line-by-line reading
    takes for code; ``False`` when not sure (see the module text)."""
    if "<!--" in "\n".join(kept):
        return False
    fenced = set(fences)
    start = 0  # first line of the current run of lines between blank lines and fences
    for index in range(len(kept) + 1):
        if index < len(kept) and index not in fenced and kept[index].strip(" \t"):
            continue
        run = kept[start:index]
        start = index + 1
        if not any("<" in line for line in run):
            continue
        joined = "\n".join(run)
        if "`" in joined and html_may_take_backticks(joined):
            return False  # raw HTML or an autolink may hold a backtick
        for offset, line in enumerate(run):
            opened = _HTML_LINE_RE.match(line)
            if opened is None:
                continue
            if _HTML_UNTIL_MARKER_RE.match(line, opened.end() - 1):
                return False  # such a block runs past blank lines: not followed here
            rest = run[offset:]  # the block ends at the next blank line at the latest ...
            if index in fenced or any("`" in part or "~~~" in part for part in rest):
                return False  # ... and holds a fence marker or backtick that is no code
            break
    return True


def _html_at_top_level(kept: list[str]) -> bool:
    """True when every line that may open an HTML block starts with ``<`` at column 0, is the
    first line or follows a blank one, and the lines after it up to the next blank line start
    with a character that opens no block (no indentation, list marker, quote, heading, break).

    Such a line ends every list item and quote (it is not indented, and a blank line came
    before it, so it is no lazy continuation), and up to the next blank line nothing nests: the
    walk of :func:`vaultmem.core.indented_code.may_hold_code`, which reads it as a paragraph,
    then leaves those lines with markdown-it's containers, as an HTML block does.
    """
    in_html = False
    previous_blank = True
    for line in kept:
        blank = not line.strip(" \t")
        if blank:
            in_html = False
        elif in_html:
            if line[0] in _OPENS_NO_BLOCK_FIRSTS:
                return False
        elif _HTML_LINE_RE.match(line):
            if not (previous_blank and line[0] == "<"):
                return False
            in_html = True
        previous_blank = blank
    return True
