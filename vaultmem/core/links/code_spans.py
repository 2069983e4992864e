"""The text of a note outside code, found by a small CommonMark scanner (no markdown-it).

:func:`text_outside_code` handles the blocks most notes are made of — paragraphs, ATX and setext
headings, thematic breaks, fenced code blocks (```` ``` ```` and ``~~~``) and indented code —
and the inline code spans of paragraphs and headings (CommonMark 0.31, sections 4.1–4.5, 6.1,
2.4). It returns ``None`` ("not sure") for anything else: block quotes, list items, HTML blocks,
a ``<`` that may open raw HTML or an autolink, link reference definitions, a backtick inside
what may be a link destination. The caller then uses the full parser. Where it answers, it
answers as markdown-it does; the tests check this over both real vaults and with hypothesis.

Pure; about 20 µs for a 2 kB note with a fenced block, against about 400 µs for markdown-it.
"""

from __future__ import annotations

import re

from vaultmem.core.lazy_patterns import lazy_pattern

__all__ = [
    "closes_fence",
    "code_spans",
    "cut_code",
    "fence_opening",
    "html_may_take_backticks",
    "may_take_backticks",
    "text_outside_code",
]

# Compiled on first use (core/lazy_patterns): a vault without code never needs them.
_FENCE_OPEN_RE = lazy_pattern(globals(), "_FENCE_OPEN_RE", r" {0,3}(`{3,}|~{3,})(.*)")
_ATX_RE = lazy_pattern(globals(), "_ATX_RE", r" {0,3}#{1,6}(?:[ \t]|$)")
_THEMATIC_RE = lazy_pattern(
    globals(), "_THEMATIC_RE", r" {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})"
)
_SETEXT_RE = lazy_pattern(globals(), "_SETEXT_RE", r" {0,3}(?:=+|-+)[ \t]*")
# Lines that open a block this scanner does not follow: a block quote, a list item, HTML.
_UNSURE_LINE_RE = lazy_pattern(
    globals(), "_UNSURE_LINE_RE", r" {0,3}(?:>|<|[-+*](?:[ \t]|$)|[0-9]{1,9}[.)](?:[ \t]|$))"
)
# The same anywhere in a body: text_outside_code gives up at once (lines in fenced or indented
# code match too; the line-by-line scanner takes those bodies). Run over "\n" + body: a literal
# "\n" first is found by a fast search, where "^" is tried at every offset (a third of the cost).
_UNSURE_ANYWHERE_RE = lazy_pattern(
    globals(),
    "_UNSURE_ANYWHERE_RE",
    r"\n {0,3}(?:>|<|[-+*](?:[ \t]|$)|[0-9]{1,9}[.)](?:[ \t]|$))",
    re.MULTILINE,
)
_REFERENCE_START_RE = lazy_pattern(globals(), "_REFERENCE_START_RE", r" {0,3}\[")
_TICKS_RE = lazy_pattern(globals(), "_TICKS_RE", r"`+")
# After "](" a backtick, quote or parenthesis before the next ")": a link destination or title
# may hold a backtick that markdown-it's link rule takes before a code span could.
_DESTINATION_TICK_RE = lazy_pattern(globals(), "_DESTINATION_TICK_RE", r"\]\([^)]*[`\"'(]")
# What raw HTML or an autolink opened by a "<" may span at most (see html_may_take_backticks):
# an autolink ends at the first ">" with no "<" before it; a tag at the first ">" outside its
# quoted attribute values (its names and unquoted values hold no quote), here on one line.
_AUTOLINK_EXTENT_RE = lazy_pattern(globals(), "_AUTOLINK_EXTENT_RE", r"<[^<>]*>")
_TAG_EXTENT_RE = lazy_pattern(
    globals(), "_TAG_EXTENT_RE", r"""<(?:[^<>"'`\n]|"[^"`\n]*"|'[^'`\n]*')*>"""
)
_TAG_FIRSTS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz/")
_ESCAPABLE = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def text_outside_code(body: str) -> tuple[str, list[str]] | None:
    """``(text, code)`` of ``body`` without its code, or ``None`` when not sure.

    ``text`` holds, line by line, each paragraph and heading with every code span replaced by
    ``"\\0<n>\\0"`` (its source in ``code[n]``) and the blank lines; fenced and indented code
    and setext underlines are left out. ``body`` has ``\\n`` line ends and no NUL.
    """
    if _UNSURE_ANYWHERE_RE.search("\n" + body):
        return None
    pieces: list[str] = []
    code: list[str] = []
    paragraph: list[str] = []
    lines = body.split("\n")
    fence: tuple[str, int] | None = None  # (marker character, length) of the open fence
    for line in lines:
        if fence is not None:
            if closes_fence(line, fence):
                fence = None
            continue
        stripped = line.lstrip(" \t")
        if not stripped:
            if not _flush(paragraph, pieces, code):
                return None
            pieces.append(line)
            continue
        indent = _columns(line[: len(line) - len(stripped)])
        if indent >= 4:
            if paragraph:
                paragraph.append(line)  # a paragraph continuation line
            continue  # indented code
        opened = fence_opening(line)
        if opened is not None:
            if not _flush(paragraph, pieces, code):
                return None
            fence = opened
            continue
        if _UNSURE_LINE_RE.match(line):
            return None
        if paragraph and _SETEXT_RE.fullmatch(line):
            if not _flush(paragraph, pieces, code):  # a setext heading: the underline is not text
                return None
            continue
        if _THEMATIC_RE.fullmatch(line):
            if not _flush(paragraph, pieces, code):
                return None
            continue
        if _ATX_RE.match(line):
            if not _flush(paragraph, pieces, code) or not _flush([line], pieces, code):
                return None
            continue
        if not paragraph and _REFERENCE_START_RE.match(line):
            return None  # may be a link reference definition
        paragraph.append(line)
    if not _flush(paragraph, pieces, code):
        return None
    return "\n".join(pieces), code


def may_take_backticks(source: str) -> bool:
    """True when a link destination or title in ``source`` may hold a backtick (see above)."""
    return "](" in source and _DESTINATION_TICK_RE.search(source) is not None


def html_may_take_backticks(source: str) -> bool:
    """True when a ``<`` in ``source`` may open raw HTML or an autolink holding a backtick.

    Raw HTML and autolinks are read left to right together with code spans (CommonMark 6.1:
    whichever opens first wins), so a backtick inside one is not a code span's. ``False`` means
    that every ``<`` before the last backtick is literal text or opens a tag or autolink that
    ends before any backtick: code spans are then the backtick strings that pair up. A ``<!``
    (comment, declaration, CDATA), a ``<?`` or a tag that does not close on its line answers
    ``True`` (not sure).
    """
    last_tick = source.rfind("`")
    if last_tick == -1:
        return False
    pos = source.find("<", 0, last_tick)
    while pos != -1:
        after = source[pos + 1 : pos + 2]
        if after in ("!", "?"):
            return True
        if after <= " ":  # "<" before a space or control character opens neither
            pos = source.find("<", pos + 1, last_tick)
            continue
        autolink = _AUTOLINK_EXTENT_RE.match(source, pos)
        if autolink is not None and "`" in autolink.group():
            return True
        if after in _TAG_FIRSTS and _TAG_EXTENT_RE.match(source, pos) is None:
            return True
        pos = source.find("<", pos + 1, last_tick)
    return False


def fence_opening(line: str) -> tuple[str, int] | None:
    """(character, length) of the fence ``line`` opens (up to 3 spaces of indent), else None."""
    opened = _FENCE_OPEN_RE.match(line)
    if opened is None or (opened.group(1)[0] == "`" and "`" in opened.group(2)):
        return None
    return opened.group(1)[0], len(opened.group(1))


def closes_fence(line: str, fence: tuple[str, int]) -> bool:
    """Does ``line`` close a fence of ``fence[1]`` ``fence[0]`` characters? (CommonMark 4.5)"""
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3 or not stripped.startswith(fence[0] * fence[1]):
        return False
    return not stripped.lstrip(fence[0]).strip(" \t")


def _columns(whitespace: str) -> int:
    """Columns spanned by leading spaces and tabs (tab stops of 4)."""
    col = 0
    for ch in whitespace:
        col = col + 4 - col % 4 if ch == "\t" else col + 1
    return col


def _flush(paragraph: list[str], pieces: list[str], code: list[str]) -> bool:
    """Append ``paragraph`` (its lines as one inline source) with code spans cut; empties it.

    False when the inline source holds something that may take precedence over a code span
    (raw HTML or an autolink opened by ``<``, a link destination holding a backtick) or an
    HTML comment.
    """
    if not paragraph:
        return True
    source = "\n".join(paragraph)
    paragraph.clear()
    if "<!--" in source:
        return False  # an HTML comment hides links: the full parser finds where it ends
    if "`" not in source:
        pieces.append(source)
        return True
    if ("<" in source and html_may_take_backticks(source)) or (
        "](" in source and _DESTINATION_TICK_RE.search(source)
    ):
        return False
    pieces.append(cut_code(source, code_spans(source) or [], code, ordered=True))
    return True


def cut_code(
    source: str, spans: list[tuple[int, int]], code: list[str], *, ordered: bool = False
) -> str:
    """``source`` with each code span replaced by ``"\\0<n>\\0"``, its text put in
    ``code[n]``; ``spans`` as (start, end) offsets, in any order, overlaps after the first
    dropped. ``ordered``: the spans are already in order, without repeats or overlaps (as
    :func:`code_spans` gives them), so they are not sorted again.

    The mark ends any wikilink or link destination that would run through the span, yet
    ``[`f()`](api.md)`` keeps its link text.
    """
    if not spans:
        return source
    out: list[str] = []
    pos = 0
    for start, end in spans if ordered else sorted(set(spans)):
        if start < pos:
            continue
        out.append(source[pos:start])
        out.append(f"\0{len(code)}\0")
        code.append(source[start:end])
        pos = end
    out.append(source[pos:])
    return "".join(out)


def code_spans(source: str, *, paired: bool = False) -> list[tuple[int, int]] | None:
    """(start, end) of each code span of an inline source (CommonMark 6.1).

    A backtick string opens a span that the next backtick string of the same length closes;
    without a closer it is literal text. A backslash escapes the punctuation after it, a
    backtick included, outside spans only. ``paired``: ``None`` when some backtick string
    finds no closer (only then could spans depend on text beyond ``source``).
    """
    if "\\" not in source and "``" not in source:
        return _single_tick_spans(source, paired)
    return _scanned_spans(source, paired)


def _scanned_spans(source: str, paired: bool) -> list[tuple[int, int]] | None:
    """:func:`code_spans` of any source: backtick strings of any length, escapes."""
    spans: list[tuple[int, int]] = []
    pos, size = 0, len(source)
    while True:
        tick = source.find("`", pos)
        if tick == -1:
            return spans
        # a backslash before it escapes it only when the backslash is not itself escaped
        slash = source.find("\\", pos, tick)
        while slash != -1:
            if slash + 1 < size and source[slash + 1] in _ESCAPABLE:
                if slash + 1 == tick:
                    break
                slash = source.find("\\", slash + 2, tick)
            else:
                slash = source.find("\\", slash + 1, tick)
        if slash != -1 and slash + 1 == tick:  # an escaped backtick: literal
            pos = tick + 1
            continue
        run = _TICKS_RE.match(source, tick)
        assert run is not None
        length = run.end() - tick
        closer = _TICKS_RE.search(source, run.end())
        while closer is not None and closer.end() - closer.start() != length:
            closer = _TICKS_RE.search(source, closer.end())
        if closer is None:
            if paired:
                return None
            pos = run.end()  # no closer: the opening string is literal text
            continue
        spans.append((tick, closer.end()))
        pos = closer.end()


def _single_tick_spans(source: str, paired: bool) -> list[tuple[int, int]] | None:
    """:func:`code_spans` of a source without a backslash or two backticks in a row: each
    backtick is a string of one, escaped by nothing, and closes the span the one before it
    opened (the usual "Plugin ID: `x`" line: 0.9 µs where the general scan takes 1.2; with two
    spans, 1.1 where it takes 2)."""
    spans: list[tuple[int, int]] = []
    find = source.find
    tick = find("`")
    while tick != -1:
        closer = find("`", tick + 1)
        if closer == -1:
            return None if paired else spans
        spans.append((tick, closer + 1))
        tick = find("`", closer + 1)
    return spans
