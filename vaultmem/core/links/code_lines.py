"""The text of a note outside code, line by line, whatever its lists, quotes and HTML blocks.

:func:`text_outside_code_by_line` answers for bodies whose code spans each open and close on one
line, the common shape of notes with lists, block quotes, callouts, tables and HTML: then no
block structure decides where a code span is (a code span never crosses a line, so each line's
spans are those of the paragraph the line belongs to). What block structure still decides, it
checks, and answers ``None`` ("not sure") where it cannot:

- fenced code at column 0 (outside any list item or quote) is left out, and so is fenced code
  indented by spaces (in a list item) whose lines all stay in its item, where the list walk of
  :func:`~vaultmem.core.links.indented_code.may_hold_code` confirms it is a fence; any other fence
  marker, a reference definition, or a link on a line that could be indented code
  (:func:`~vaultmem.core.links.indented_code.links_may_sit_in_indented_code`) answers ``None``;
- a line that may open an HTML block (a ``<`` after nothing but indentation and container
  markers; CommonMark 4.6): kept as text, as markdown-it keeps an HTML block, when no backtick,
  ``~~~`` or fence stands between it and the next blank line (where such a block ends at the
  latest); an HTML block that a blank line does not end (``<pre``, ``<script``, ``<style``,
  ``<textarea``, ``<!``, ``<?``) answers ``None``, except a comment block that opens at column
  0 after a blank line: kept with its comments cut, as markdown-it keeps it; any other HTML
  comment answers ``None``;
- raw HTML and autolinks inside a paragraph are read with its code spans, left to right: a
  ``<`` that may open one holding a backtick answers ``None``
  (:func:`~vaultmem.core.links.code_spans.html_may_take_backticks`), as does a link destination that
  may hold one.

Where it answers, it answers as markdown-it does; the tests check this with hypothesis and
over both real vaults and a generated vault shaped like obsidian-hub's plugin notes. Pure; a
few microseconds per note.
"""

from __future__ import annotations

import re

from vaultmem.core.lazy_patterns import lazy_pattern
from vaultmem.core.links.code_spans import (
    closes_fence,
    code_spans,
    cut_code,
    fence_opening,
    html_may_take_backticks,
    may_take_backticks,
)
from vaultmem.core.links.indented_code import (
    FENCE_MARK,
    links_may_sit_in_indented_code,
    may_hold_indented_code,
)

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
_COMMENT_RE = lazy_pattern(globals(), "_COMMENT_RE", r"<!--.*?(?:-->|\Z)", re.DOTALL)
_FENCE_PLACE = "***"  # a fenced block, as a thematic break: it ends a paragraph as a fence does


def text_outside_code_by_line(body: str) -> tuple[str, list[str]] | None:
    """``(text, code)`` as :func:`~vaultmem.core.links.code_spans.text_outside_code` gives it (each
    code span replaced by ``"\\0<n>\\0"``, its source in ``code[n]``), or ``None`` when not
    sure (see the module text). ``body`` has ``\\n`` line ends and no NUL.
    """
    fences: list[int] = []  # where in kept the fenced blocks (and comment blocks) stand
    comments: set[int] = set()  # which lines of outside are comment blocks, comments cut
    comment = "<!--" in body  # (asked once: most bodies hold none)
    if (
        "```" in body
        or "~~~" in body
        or (comment and ("\n<!--" in body or body.startswith("<!--")))
    ):
        split = _without_fences(body, fences, comments)
        if split is None:
            return None
        kept, outside = split
        text = "\n".join(kept)
        if "```" in text or "~~~" in text:
            return None
    else:
        text, kept = body, body.split("\n")
        outside = kept
    if "]:" in text and _REFERENCE_ANY_RE.search(text):  # (every definition holds "]:")
        return None
    html_at_top_level = False
    if "<" in text:
        if comment and "<!--" in text:  # (text holds only lines of the body)
            return None
        html = _html_lines(text, kept, fences)
        if html is None:
            return None
        html_at_top_level = html
    # each backtick as a letter: a line of code spans alone stays a line of text (as blank it
    # would end the paragraph, and a setext underline below it would not close a heading);
    # "~~~" and "<!--" are settled above; the cheap question first: the walk is asked only
    # when a link sits where code may be
    if links_may_sit_in_indented_code(kept) and may_hold_indented_code(
        text, html_at_top_level=html_at_top_level
    ):
        return None
    code: list[str] = []
    if outside is kept:  # no fence, no comment block: the lines are the body's
        cut = _cut_code_spans(body, code)
        return None if cut is None else (cut, code)
    pieces = list(outside)
    for index in [i for i, line in enumerate(outside) if "`" in line and i not in comments]:
        cut = _cut_line(outside[index], code)
        if cut is None:
            return None
        pieces[index] = cut
    return "\n".join(pieces), code


def _cut_code_spans(text: str, code: list[str]) -> str | None:
    """``text`` with the code spans of each line that holds a backtick cut by :func:`_cut_line`
    (the lines found by searching for backticks, not by splitting ``text``); ``None``: not
    sure."""
    tick = text.find("`")
    if tick == -1:
        return text
    pieces: list[str] = []
    done = 0  # text before this offset is in pieces
    while tick != -1:
        start = text.rfind("\n", 0, tick) + 1
        end = text.find("\n", tick)
        if end == -1:
            end = len(text)
        line = text[start:end]
        cut = _cut_line(line, code)
        if cut is None:
            return None
        if cut is not line:
            pieces.append(text[done:start])
            pieces.append(cut)
            done = end
        tick = text.find("`", end)
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


def _cut_line(line: str, code: list[str]) -> str | None:
    """One line holding a backtick, its code spans cut (see
    :func:`~vaultmem.core.links.code_spans.cut_code`); ``None`` when not sure: a link
    destination may hold a backtick, or a backtick string finds no closer on the line (a span
    may then run over lines).

    A line without ``[`` holds no link (and links never span lines), so its spans are not cut:
    it is returned as it is once its backtick strings pair up."""
    if "[" not in line:
        if "\\" in line or "``" in line:
            return line if code_spans(line, paired=True) is not None else None
        return None if line.count("`") % 2 else line  # single backticks pair up in turn
    if may_take_backticks(line):
        return None
    spans = code_spans(line, paired=True)
    return None if spans is None else cut_code(line, spans, code, ordered=True)


def _without_fences(
    body: str, fences: list[int], comments: set[int]
) -> tuple[list[str], list[str]] | None:
    """(kept, outside): the lines of ``body`` with each fenced block that opens at column 0
    and each comment block as :data:`_FENCE_PLACE` (its index appended to ``fences``), and the
    lines outside fenced blocks, each comment block as one item with its comments cut (its
    index added to ``comments``).

    A comment block (CommonMark 4.6, kind 2) is taken only where it opens at column 0 after a
    blank line (or first): then no list item or quote holds it, and it runs to the first line
    holding ``-->`` (or to the end), whatever stands between; markdown-it keeps its text with
    the comments cut, and after it no paragraph is open, as after a thematic break.

    A fenced block that opens indented by spaces (in a list item, say) is taken when every
    line up to its closing fence is blank or indented at least as much (so it stays in the
    item that holds the fence) and the closing fence is indented exactly as much; it stands in
    ``kept`` as :data:`~vaultmem.core.links.indented_code.FENCE_MARK` after that indentation, which
    the walk of :func:`~vaultmem.core.links.indented_code.may_hold_code` checks is a fence there
    (not paragraph text, not indented code). Such a block that does not close so: ``None``.
    """
    kept: list[str] = []
    outside: list[str] = []
    fence: tuple[str, int] | None = None
    comment: list[str] | None = None
    indented = 0  # the indentation of the open fence that opened indented, else 0
    previous_blank = True
    for line in body.split("\n"):
        if indented:
            stripped = line.lstrip(" ")
            if stripped:
                depth = len(line) - len(stripped)
                if depth < indented or stripped[0] == "\t":
                    return None  # the item (and the fence) may end here: not followed
                if fence is not None and closes_fence(stripped, fence):
                    if depth != indented:
                        return None  # a closing fence, or content: depends on the item
                    fence, indented = None, 0
        elif comment is not None:
            comment.append(line)
            if "-->" in line:
                comments.add(len(outside))
                outside.append(_COMMENT_RE.sub("", "\n".join(comment)))
                comment = None
        elif fence is not None:
            if closes_fence(line, fence):
                fence = None
        elif line.startswith(("```", "~~~")) and (opened := fence_opening(line)) is not None:
            fence = opened  # at column 0 no list item or quote can hold it
            fences.append(len(kept))
            kept.append(_FENCE_PLACE)
        elif (
            line.startswith(" ")
            and (stripped := line.lstrip(" ")).startswith(("```", "~~~"))
            and (opened := fence_opening(stripped)) is not None
        ):
            fence, indented = opened, len(line) - len(stripped)
            fences.append(len(kept))
            kept.append(" " * indented + FENCE_MARK)
        elif previous_blank and line.startswith("<!--"):
            fences.append(len(kept))
            kept.append(_FENCE_PLACE)
            comment = [line]
            if "-->" in line:
                comments.add(len(outside))
                outside.append(_COMMENT_RE.sub("", line))
                comment = None
        else:
            kept.append(line)
            outside.append(line)
        previous_blank = not line.strip(" \t")
    if indented:
        return None  # an unclosed fence that opened indented: where it ends depends on items
    if comment is not None:  # an unclosed comment block runs to the end
        comments.add(len(outside))
        outside.append(_COMMENT_RE.sub("", "\n".join(comment)))
    return kept, outside


def _html_lines(text: str, kept: list[str], fences: list[int]) -> bool | None:
    """How the HTML of ``kept`` (the lines of ``text``, fenced blocks as :data:`_FENCE_PLACE` at
    the indexes ``fences``) bears on the line-by-line reading: ``None`` when it may change what that
    reading takes for code (see the module text), else whether every HTML line stands at top
    level (see below). ``text`` holds no ``<!--`` (the caller answers ``None`` for one).

    At top level: every line that may open an HTML block starts with ``<`` at column 0 and
    opens its run of lines (after a blank line or at the start), and the lines after it up to
    the next blank line start with a character that opens no block (no indentation, list
    marker, quote, heading, break). Such a line ends every list item and quote (it is not
    indented, and a blank line came before it, so it is no lazy continuation), and up to the
    next blank line nothing nests: the walk of
    :func:`vaultmem.core.links.indented_code.may_hold_code`, which reads it as a paragraph, then
    leaves those lines with markdown-it's containers, as an HTML block does.
    """
    fenced = set(fences)
    at_top_level = True
    last = len(kept)
    checked = -1  # runs up to this line are checked
    for index in [i for i, line in enumerate(kept) if "<" in line]:
        if index <= checked:
            continue
        start = index  # the run of lines between blank lines and fences that holds it
        while start > 0 and start - 1 not in fenced and kept[start - 1].strip(" \t"):
            start -= 1
        end = index + 1
        while end < last and end not in fenced and kept[end].strip(" \t"):
            end += 1
        checked = end - 1
        run = kept[start:end]
        joined = "\n".join(run)
        if "`" in joined and html_may_take_backticks(joined):
            return None  # raw HTML or an autolink may hold a backtick
        for offset, line in enumerate(run):
            opened = _HTML_LINE_RE.match(line)
            if opened is None:
                continue
            if _HTML_UNTIL_MARKER_RE.match(line, opened.end() - 1):
                return None  # such a block runs past blank lines: not followed here
            # the block ends at the next blank line at the latest ...
            if end in fenced or ("`" in joined and "`" in "\n".join(run[offset:])):
                return None  # ... and holds a fence marker or backtick that is no code
            if at_top_level and (
                offset > 0
                or line[0] != "<"
                or start - 1 in fenced
                or (len(run) > 1 and any(part[0] in _OPENS_NO_BLOCK_FIRSTS for part in run[1:]))
            ):
                at_top_level = False
            break
    return at_top_level
