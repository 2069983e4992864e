"""Might a note's body hold CommonMark code? The guard of the link extractor's fast path.

:func:`may_hold_code` is false only when a body certainly holds no code span, fenced block or
indented code block; then :mod:`vaultmem.core.links.links` scans it with one regular expression. To
say so for bodies with nested lists, block quotes and callouts, it follows their block
structure line by line (a small walk of CommonMark sections 4.4, 5.1–5.3) instead of parsing
them. :func:`links_may_sit_in_indented_code` answers the narrower question the line-by-line code
span path needs. Both are conservative: true does not mean code. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from vaultmem.core.lazy_patterns import lazy_pattern

__all__ = ["links_may_sit_in_indented_code", "may_hold_code", "may_hold_indented_code"]

# Fast-path guards (see may_hold_code).
# These run over "\n" + body and start with a literal "\n" (much faster than "^" + MULTILINE).
_INDENTED_LINE_RE = lazy_pattern(globals(), "_INDENTED_LINE_RE", r"\n(?: {4}| {0,3}\t)[ \t]*\S")
_PREFIX_PART_RE = lazy_pattern(
    globals(), "_PREFIX_PART_RE", r"([ \t]*)(>|[-+*](?=[ \t]|$)|[0-9]{1,9}[.)](?=[ \t]|$))?"
)
# An HTML line or a reference definition (in a quote or not): the list walk does not follow these.
_UNSURE_RE = lazy_pattern(globals(), "_UNSURE_RE", r"\n[ \t>*+\-0-9.)]*(?:<|\[[^\]\n]*\]:)")
_REFERENCE_LINE_RE = lazy_pattern(
    globals(), "_REFERENCE_LINE_RE", r"\n[ \t>*+\-0-9.)]*\[[^\]\n]*\]:"
)
_LIST_ITEM_RE = lazy_pattern(globals(), "_LIST_ITEM_RE", r"([-+*]|[0-9]{1,9}[.)])([ \t]+|$)")
FENCE_MARK = "***[[\0"
"""Stands, after its indentation, for a fenced block that opens indented by spaces (see
:func:`vaultmem.core.links.code_lines.text_outside_code_by_line`): the walk takes it for a fence,
which ends a paragraph and open items less indented, and answers True where it would be
paragraph text or indented code instead. Its ``[[`` makes
:func:`links_may_sit_in_indented_code` take it for a line that may hide a link, so that the
walk's answer is asked for. A body holds no NUL, so no line of its own is one."""
_BLOCK_START_CHARS = frozenset("#-+*_=0123456789>")
_NOT_TEXT_START = _BLOCK_START_CHARS | {"", " ", "\t"}
"""What the text of a bullet item does not start with when it opens a paragraph (see the walk)."""
_ATX_RE = lazy_pattern(globals(), "_ATX_RE", r"#{1,6}(?:[ \t]|$)")
_THEMATIC_RE = lazy_pattern(
    globals(), "_THEMATIC_RE", r"(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,}"
)
_SETEXT_RE = lazy_pattern(globals(), "_SETEXT_RE", r"(?:=+|-+)[ \t]*")


def may_hold_code(body: str, *, html_at_top_level: bool = False) -> bool:
    """False only when ``body`` certainly holds no CommonMark code (span, fence or indented).

    True when the body has a backtick, ``~~~`` or ``<!--``; when a ``>`` or list marker is
    followed by 5+ columns of whitespace and text; when a line starts with 4+ columns of
    whitespace and the body also holds an HTML line or a reference definition; or when such a
    line, followed through the open list items and block quotes
    (:func:`_list_walk_finds_code`), would be indented code. Nested lists indented with tabs,
    callouts, and paragraph continuations keep the fast path. Conservative: true does not mean
    code.

    ``html_at_top_level``: the caller has checked that every line that may open an HTML block
    stands at column 0 after a blank line and is followed, up to the next blank line, only by
    lines that open no block (:func:`vaultmem.core.links.code_lines.text_outside_code_by_line`);
    then such lines end every open list item and quote in markdown-it and in the walk alike, and
    HTML lines no longer send the body to the parser. Reference definitions still do.
    """
    if "`" in body or "~~~" in body or "<!--" in body:
        return True
    return may_hold_indented_code(body, html_at_top_level=html_at_top_level)


def may_hold_indented_code(body: str, *, html_at_top_level: bool = False) -> bool:
    """:func:`may_hold_code` without its first question (a backtick, ``~~~`` or ``<!--``
    anywhere): a backtick is then read as any other letter (so a line of code spans alone
    stays a line of text). For a caller that has settled those itself
    (:func:`vaultmem.core.links.code_lines.text_outside_code_by_line`), which saves a copy of
    the body with its backticks replaced and three searches through it."""
    if "    " not in body and "\t" not in body:
        return False
    if _wide_marker_gap(body):
        return True
    text = "\n" + body
    if _INDENTED_LINE_RE.search(text) is None:
        return False
    # (every reference definition holds "]:", every HTML line "<": a body without them is
    # not searched for them)
    if "]:" in body and _REFERENCE_LINE_RE.search(text) is not None:
        return True
    if not html_at_top_level and "<" in body and _UNSURE_RE.search(text) is not None:
        return True
    return _list_walk_finds_code(body)


def _wide_marker_gap(body: str) -> bool:
    """Does a line of ``body`` open indented code after a ``>`` or list marker
    (:func:`_marker_opens_indented_code`)? Only lines holding a tab or five spaces in a row are
    asked (5+ columns need one or the other), found by searching, not by splitting: in most
    bodies there are none, or a few lines of a list nested with spaces."""
    for gap in ("\t", "     "):
        at = body.find(gap)
        while at != -1:
            start = body.rfind("\n", 0, at) + 1
            end = body.find("\n", at)
            if _marker_opens_indented_code(body[start:end] if end != -1 else body[start:]):
                return True
            at = body.find(gap, end) if end != -1 else -1
    return False


def links_may_sit_in_indented_code(lines: Iterable[str]) -> bool:
    """Might a line holding ``[[`` or ``](`` be a line of an indented code block?

    ``lines``: the lines of a text (split at ``\\n``; the caller has them already). For text
    without fences, HTML or reference definitions, where code spans are handled line by line:
    a line of indented code starts with 4+ columns of whitespace, with ``>`` (inside a quote)
    or with list markers followed by 5+ columns (CommonMark 4.4, 5.1, 5.2); any other line
    never is one. When no link sits on such a line, the indented code (wherever it is) hides
    no link, and no link spans two lines.
    """
    for line in lines:
        if "[[" not in line and "](" not in line:
            continue
        stripped = line.lstrip(" \t")
        ws = len(line) - len(stripped)  # (4+ characters are 4+ columns; fewer: count them)
        if (
            ws >= 4
            or (ws and _columns(line[:ws], 0) >= 4)
            or stripped[:1] == ">"
            or _may_open_indented_code(line)
        ):
            return True
    return False


def _list_walk_finds_code(body: str) -> bool:
    """Follow paragraphs, list items and block quotes line by line; True when a line may be
    indented code (:func:`_walk_finds_code`), walking only the stretches that may hold one.

    After a blank line, a line at column 0 starts the walk afresh: no paragraph is open
    (so the line is no lazy continuation), and it closes every open list item (each item's
    content starts at column 1 or later). The walk answers True only on a line indented 4+
    columns, after a list marker followed by 5+ columns, or in a block quote (see
    :func:`_walk_finds_code`), which needs four spaces in a row, a tab or a ``>``; a stretch
    without any of them is not walked. In a hub-shaped note only its nested feature list is.
    """
    if "\n\n" not in body:
        return _walk_finds_code(body)
    for stretch in _STRETCH_RE.split(body):
        if ("    " in stretch or "\t" in stretch or ">" in stretch) and _walk_finds_code(stretch):
            return True
    return False


_STRETCH_RE = lazy_pattern(globals(), "_STRETCH_RE", r"\n\n(?=[^ \t\n])")
"""Where the walk may start afresh: an empty line, then a line that starts at column 0."""


def _walk_finds_code(body: str) -> bool:
    """Follow paragraphs, list items and block quotes line by line; True when a line may be
    indented code.

    A small CommonMark block walk (sections 4.4, 5.1–5.3) for bodies without fences, HTML or
    reference definitions: ``offsets`` holds the content column of each open list item
    (:data:`FENCE_MARK` lines stand for fenced blocks). A line
    that opens a block 4+ columns past the innermost item it stays in is indented code; a line
    that continues an open paragraph (lazily or not) never is. A block quote is followed only
    when each of its lines holds one paragraph line, heading or break (see
    :func:`_quote_opens_paragraph`); anything else in it answers True. As in markdown-it, a
    quote's paragraph ends at any list item, even one that could not interrupt a paragraph.
    """
    offsets: list[int] = []
    in_paragraph = False
    quoted = False  # the open paragraph is a block quote's: any list item or block ends it
    empty_item_open = False
    for line in body.split("\n"):
        stripped = line.lstrip(" \t")
        if not stripped:
            if empty_item_open:  # an item may start with at most one blank line
                offsets.pop()
            in_paragraph = empty_item_open = False
            continue
        empty_item_open = False
        if stripped == FENCE_MARK:  # a fenced block indented by spaces (core/code_lines)
            indent = len(line) - len(stripped)
            if in_paragraph and indent >= (offsets[-1] if offsets else 0) + 4:
                return True  # paragraph text, not a fence: not followed
            while offsets and indent < offsets[-1]:  # a fence is no lazy continuation
                offsets.pop()
            if indent - (offsets[-1] if offsets else 0) >= 4:
                return True
            in_paragraph = quoted = False
            continue
        first = stripped[0]
        # (a line starting with a character that opens no block is text: asked here, not of
        # _block_start, which costs each such line a call)
        if first not in _BLOCK_START_CHARS:
            if in_paragraph:
                continue  # paragraph continuation text
            kind, item = _TEXT, None
        elif first in "-*+" and stripped[1:2] == " " and stripped[2:3] not in _NOT_TEXT_START:
            # "- text", the common line of a nested list: a bullet item whose text opens a
            # paragraph; what _block_start and the steps below find for it, without asking
            ws_len = len(line) - len(stripped)
            indent = (
                ws_len if not ws_len or "\t" not in line[:ws_len] else _columns(line[:ws_len], 0)
            )
            if in_paragraph and indent >= (offsets[-1] if offsets else 0) + 4:
                continue  # too deep to open a block: continues the paragraph
            while offsets and indent < offsets[-1]:
                offsets.pop()
            if indent - (offsets[-1] if offsets else 0) >= 4:
                return True
            offsets.append(indent + 2)
            in_paragraph, quoted = True, False
            continue
        else:
            kind, item = _block_start(stripped)
        ws_len = len(line) - len(stripped)
        indent = ws_len if not ws_len or "\t" not in line[:ws_len] else _columns(line[:ws_len], 0)
        if in_paragraph:
            inner = offsets[-1] if offsets else 0
            if indent >= inner + 4:
                continue  # too deep to open a block: continues the paragraph
            if indent >= inner:  # the line stays in the paragraph's item
                if first in "=-" and _SETEXT_RE.fullmatch(stripped):
                    in_paragraph = False
                    continue
                if kind == _TEXT or not (quoted or _interrupts_paragraph(kind, item, stripped)):
                    continue
            elif kind == _TEXT:
                continue  # lazy continuation
        while offsets and indent < offsets[-1]:
            offsets.pop()
        if indent - (offsets[-1] if offsets else 0) >= 4:
            return True
        col = indent
        while item is not None:
            marker, gap = item.groups()
            rest = stripped[item.end() :]
            col += len(marker)
            # (one space, the common gap, is one column: not counted)
            width = _columns(gap, col) if rest and gap != " " else 1
            if width >= 5:  # the item opens with indented code
                return True
            col += width
            offsets.append(col)
            empty_item_open = not rest
            stripped = rest
            if not rest:
                kind, item = _LEAF, None
            elif rest[0] not in _BLOCK_START_CHARS:
                kind, item = _TEXT, None
            else:
                kind, item = _block_start(rest)
        if kind == _QUOTE:
            opened = _quote_opens_paragraph(stripped)
            if opened is None:
                return True
            in_paragraph = quoted = opened
        else:
            in_paragraph, quoted = kind == _TEXT, False
    return False


_TEXT, _LEAF, _ITEM, _QUOTE = 0, 1, 2, 3


def _quote_opens_paragraph(line: str) -> bool | None:
    """For a line that opens or continues a block quote (``line`` starts with ``>``): True when
    the quote then holds an open paragraph (lazy continuation lines may follow), False for a
    blank quote line, a heading or a break; ``None`` when the walk does not follow it: a tab,
    a nested quote, a list item or indented code inside the quote (CommonMark 5.1)."""
    content = line[1:]
    bare = content.lstrip(" ")
    if bare[:1] == "\t" or len(content) - len(bare) >= 5:
        return None
    if not bare or _SETEXT_RE.fullmatch(bare):  # "> ===" may close the quote's paragraph
        return False
    kind, _item = _block_start(bare)
    if kind in (_ITEM, _QUOTE):
        return None
    return kind == _TEXT


def _block_start(stripped: str) -> tuple[int, re.Match[str] | None]:
    """What a line (leading whitespace removed, not blank) opens: text, a leaf block, an item,
    a block quote."""
    first = stripped[0]
    if first == ">":
        return _QUOTE, None
    if first == "#":
        return (_LEAF if _ATX_RE.match(stripped) else _TEXT), None
    if first in "-*_" and stripped.count(first) >= 3 and _THEMATIC_RE.fullmatch(stripped):
        return _LEAF, None
    if first in "-*+0123456789":
        item = _LIST_ITEM_RE.match(stripped)
        if item is not None:
            return _ITEM, item
    return _TEXT, None


def _interrupts_paragraph(kind: int, item: re.Match[str] | None, stripped: str) -> bool:
    """Can this block start end an open paragraph in its own item? CommonMark 4.8, 5.2."""
    if kind != _ITEM or item is None:
        return kind != _TEXT  # a leaf block or a block quote
    marker = item.group(1)
    has_content = item.end() < len(stripped)
    return has_content and (not marker[0].isdigit() or int(marker[:-1]) == 1)


def _may_open_indented_code(line: str) -> bool:
    """:func:`_marker_opens_indented_code`, answered at once for a line without a tab or five
    spaces in a row (5+ columns of whitespace need one or the other)."""
    return ("\t" in line or "     " in line) and _marker_opens_indented_code(line)


def _marker_opens_indented_code(line: str) -> bool:
    """True when a ``>`` or list marker on ``line`` is followed by 5+ columns and then text."""
    pos = col = 0
    after_marker = False
    while True:
        part = _PREFIX_PART_RE.match(line, pos)
        if part is None:  # pragma: no cover - the pattern matches the empty string
            return False
        width = _columns(part.group(1), col)
        if after_marker and width >= 5 and line[part.end(1) :].strip():
            return True
        mark = part.group(2)
        if mark is None:
            return False
        col += width + len(mark)
        pos = part.end()
        after_marker = True


def _columns(spaces: str, col: int) -> int:
    """Columns spanned by spaces and tabs starting at column ``col`` (tab stops of 4)."""
    start = col
    for ch in spaces:
        col = col + 4 - col % 4 if ch == "\t" else col + 1
    return col - start
