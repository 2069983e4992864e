"""Links out of a note: wikilinks, embeds, markdown ``.md`` links and frontmatter ``"[[...]]"``.

docs/user-guide.md, "Index and graph". :func:`extract_links` takes a note's body (the text after the
frontmatter) and its parsed frontmatter mapping and returns every link occurrence as a
:class:`Link`, frontmatter first, then the body in document order. Pure: no file I/O.

What counts ("Index and graph"):

- ``[[Note]]``, ``[[Note|text]]``, ``[[Note#Heading]]``, ``[[Note#^block]]``, ``[[folder/Note]]``
  (kind ``"wikilink"``) and ``![[Note]]`` (kind ``"embed"``). ``[[#Heading]]`` points into the
  same note and is not an edge: skipped. ``[[a\\|b]]`` (a pipe escaped inside a table) is read
  as ``[[a|b]]``.
- ``[text](path.md)``, ``[text](path%20x.md#Heading)``, ``[text](<path x.md>)`` and the image
  form ``![text](img.png)`` (kind ``"markdown"``), only when the path, after removing ``#...``,
  ends in ``.md`` or names an attachment (see below); never a URL with a scheme (``https:``,
  ``obsidian:``, ``mailto:`` ...). Paths are URL-decoded. Reference-style links
  (``[text][ref]``) are not read.
- ``"[[...]]"`` inside any string value of the frontmatter, recursively through lists and
  mappings (kind ``"frontmatter"``).
- Targets that name an attachment of a format Obsidian opens (images including ``.avif``,
  audio, video, PDF, ``.canvas``, ``.base``: :data:`ATTACHMENT_EXTENSIONS`) are links to that
  file, kept like links to notes. A target with another dot (``[[v1.2 notes]]``) names a note.
- Nothing inside inline code, fenced code blocks, indented code blocks or HTML comments
  (``<!-- … -->``) counts; Obsidian's own ``%% … %%`` comments are ordinary text and keep
  their links.

Three paths, one answer. A body for which :func:`may_hold_code` is false (no backtick, no
``~~~``, no ``<!--``, no line that could open an indented code block) is scanned with one
regular expression: about 8 µs for a 740-byte note with 3 links, 18 µs when it also holds a
list nested with tabs. A body with code made only of paragraphs, headings and fenced or
indented code goes through a small CommonMark scanner of our own
(:func:`vaultmem.core.links.code_spans.text_outside_code`), which cuts the code out. Any other body
is parsed with markdown-it-py (CommonMark; about 250 µs): code spans and HTML comments are cut
out of each paragraph, fenced and indented code and comments in HTML blocks are left out, and
the same expression runs over what is left. The paths return the same list wherever more than
one applies (the tests check this with hypothesis and over the real vaults).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Literal, Self
from urllib.parse import unquote

from vaultmem.core.lazy_patterns import lazy_pattern
from vaultmem.core.links.indented_code import may_hold_code
from vaultmem.core.links.link_resolution import ATTACHMENT_EXTENSIONS, is_attachment

if TYPE_CHECKING:  # markdown-it is imported when a note first needs it (fast start-up), the
    # code-span scanner when a note first may hold code (_load_code_scanner)
    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import StateInline

    from vaultmem.core.links.code_lines import text_outside_code_by_line
    from vaultmem.core.links.code_spans import (
        code_spans,
        cut_code,
        html_may_take_backticks,
        may_take_backticks,
        text_outside_code,
    )

__all__ = [
    "ATTACHMENT_EXTENSIONS",
    "NON_NOTE_EXTENSIONS",
    "Link",
    "LinkKind",
    "extract_links",
    "has_scheme",
    "may_hold_code",
    "wikilink_insides",
]

LinkKind = Literal["wikilink", "embed", "markdown", "frontmatter"]

#: The former name of :data:`ATTACHMENT_EXTENSIONS` (files that are not notes).
NON_NOTE_EXTENSIONS = ATTACHMENT_EXTENSIONS


class Link(tuple[str, LinkKind, str | None, str | None]):
    """One link occurrence (an immutable value): the tuple ``(target, kind, subpath, display)``
    with those names, as a named tuple has them.

    ``target`` is the link path as written, without ``#subpath`` and ``|display``, stripped of
    surrounding whitespace; for markdown links URL-decoded and ``<...>`` unwrapped. ``subpath``
    is the text after the first ``#`` (``"Heading"``, ``"^block"``), ``None`` when absent or
    empty. ``display`` is the alias after ``|`` or the markdown link text, ``None`` when absent
    or empty. Resolve ``target`` with :class:`vaultmem.core.links.link_resolution.LinkResolver`.

    Written out rather than made by ``typing.NamedTuple``, which builds its class from source
    text: 0.1 ms of a cold index, which imports this module on its way, where this class takes
    0.04 ms (a frozen dataclass takes half a millisecond).
    """

    __slots__ = ()

    def __new__(
        cls, target: str, kind: LinkKind, subpath: str | None = None, display: str | None = None
    ) -> Self:
        return tuple.__new__(cls, (target, kind, subpath, display))

    def __getnewargs__(self) -> tuple[str, LinkKind, str | None, str | None]:
        return (self[0], self[1], self[2], self[3])  # pickled (a forked sync sends links back)

    def __repr__(self) -> str:
        return (
            f"Link(target={self[0]!r}, kind={self[1]!r}, subpath={self[2]!r}, display={self[3]!r})"
        )

    if TYPE_CHECKING:  # what the getters below give

        @property
        def target(self) -> str: ...
        @property
        def kind(self) -> LinkKind: ...
        @property
        def subpath(self) -> str | None: ...
        @property
        def display(self) -> str | None: ...

    else:  # C getters: 21 ns a read, against 36 ns for a property written in Python
        target = property(itemgetter(0), doc="The link path as written (see the class text).")
        kind = property(itemgetter(1), doc="wikilink, embed, markdown or frontmatter.")
        subpath = property(itemgetter(2), doc="The text after ``#``, or None.")
        display = property(itemgetter(3), doc="The alias or the markdown link text, or None.")


# One expression for both link syntaxes; a match starts at "[" (a fast literal search) and the
# caller looks one character back for the "!" of an embed. Links never span lines. NUL marks
# a cut-out code span (markdown-it path only): it may sit in link text, nowhere else.
_LINK_RE = re.compile(
    r"\[(?:"
    r"\[(?P<wiki>[^\[\]\n\0]+)\]\]"
    r"|(?P<text>[^\[\]\n]*)\]\([ \t]*(?:<(?P<angle>[^<>\n\0]*)>|(?P<url>[^\s()<>\0]+))"
    r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*\)"
    r")"
)
# The other expressions compile on first use (core/lazy_patterns): many vaults never need those
# for code, lists or frontmatter links, and compiling them all costs a cold index ~0.5 ms. URL
# schemes and frontmatter wikilinks, which most vaults have, are found with string methods
# (compiling their two expressions cost a 100-note cold index 0.12 ms).
_SCHEME_FIRSTS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_SCHEME_CHARS = _SCHEME_FIRSTS | frozenset("0123456789+.-")
_NOT_IN_WIKILINK = frozenset("[]\n")


def has_scheme(raw: str) -> bool:
    """Whether ``raw`` starts with a URL scheme and its colon (``https:``, ``obsidian:``,
    ``mailto:``): ``[A-Za-z][A-Za-z0-9+.-]*:``, as RFC 3986 spells a scheme."""
    colon = raw.find(":")
    return colon > 0 and raw[0] in _SCHEME_FIRSTS and _SCHEME_CHARS.issuperset(raw[1:colon])


def wikilink_insides(text: str) -> Iterator[str]:
    """What stands between ``[[`` and ``]]`` in each wikilink of ``text``, left to right (the
    matches of ``\\[\\[([^\\[\\]\\n]+)\\]\\]``): one line, no bracket inside, not empty.

    Linear in the length of ``text``: after a ``[[`` that opens no link, the search goes on
    from the last ``[`` or line break before the ``]`` it reached (a link starting earlier
    would hold it), so ``[[[[…]]`` is not read once per bracket."""
    start = text.find("[[")
    while start != -1:
        inside = start + 2
        close = text.find("]", inside)
        if close == -1:  # no link can close any more
            return
        if not text.startswith("]]", close):  # a link starting before close would end here
            start = text.find("[[", close + 1)
            continue
        found = text[inside:close]
        bracket, newline = found.rfind("["), found.rfind("\n")
        if bracket == newline == -1 and found:
            yield found
            start = text.find("[[", close + 2)
        elif bracket > newline:  # a link may open with this "[" as its second bracket
            start = text.find("[[", inside + bracket - 1)
        elif newline != -1:
            start = text.find("[[", inside + newline + 1)
        else:  # "[[]]"
            start = text.find("[[", start + 1)


_CODE_KEY = "vaultmem_code_spans"
_CODE_MARK_RE = lazy_pattern(globals(), "_CODE_MARK_RE", "\0([0-9]+)\0")


_code_scanner_loaded = False


def _load_code_scanner() -> None:
    """Bind :mod:`vaultmem.core.links.code_spans`' functions as names of this module, once, when a
    note first may hold code: a vault without code never imports it (0.1 ms of a cold index).
    Typed by the imports above."""
    global _code_scanner_loaded
    from vaultmem.core.links.code_lines import text_outside_code_by_line
    from vaultmem.core.links.code_spans import (
        code_spans,
        cut_code,
        html_may_take_backticks,
        may_take_backticks,
        text_outside_code,
    )

    globals().update(
        code_spans=code_spans, cut_code=cut_code, html_may_take_backticks=html_may_take_backticks,
        may_take_backticks=may_take_backticks, text_outside_code=text_outside_code,
        text_outside_code_by_line=text_outside_code_by_line,
    )  # fmt: skip
    _code_scanner_loaded = True


def extract_links(body: str, frontmatter: Mapping[str, object] | None = None) -> list[Link]:
    """Return every link of a note: frontmatter links first, then body links in document order.

    ``body`` is the markdown after the frontmatter block; ``frontmatter`` the parsed YAML
    mapping (or ``None``). Every occurrence is kept, duplicates included; callers dedupe.
    Never raises on odd input. docs/user-guide.md, "Index and graph".
    """
    links: list[Link] = []
    if frontmatter:
        _frontmatter_links(frontmatter, links, set())
    # every link holds "[[" or "](" (a comment cut out of an HTML block may join one up)
    if "[[" in body or "](" in body or "<!--" in body:
        body = _normalise(body)
        if may_hold_code(body):
            if not _code_scanner_loaded:
                _load_code_scanner()
            outside = text_outside_code(body) or text_outside_code_by_line(body)
            if outside is not None:
                links.extend(_scan(*outside))
            else:
                links.extend(_parsed_links(body, fast_inline=True))
        else:
            links.extend(_scan(body))
    return links


def _normalise(body: str) -> str:
    """Line endings and NUL as markdown-it normalises them, so both paths see the same text."""
    if "\r" in body:
        body = body.replace("\r\n", "\n").replace("\r", "\n")
    if "\0" in body:
        body = body.replace("\0", "\ufffd")
    return body


def _scan(text: str, code: list[str] | None = None) -> Iterator[Link]:
    """Every link in ``text`` by the regular expression alone (no code awareness).

    ``code`` holds the code spans cut out of ``text`` as ``"\\0<index>\\0"`` marks; a mark
    inside markdown link text is put back into ``display``.
    """
    for match in _LINK_RE.finditer(text):
        wiki, label, angle, url = match.groups()  # (one call: a third of four group() calls)
        if wiki is not None:
            start = match.start()
            bang = start > 0 and text[start - 1] == "!"
            link = _wiki_link(wiki, "embed" if bang else "wikilink")
        else:
            raw = angle if angle is not None else url  # (url matched when angle did not)
            if has_scheme(raw):  # a URL (asked here: most markdown links in notes are URLs)
                continue
            if code and "\0" in label:
                label = _CODE_MARK_RE.sub(lambda m: code[int(m.group(1))], label)
            link = _markdown_link(raw, label)
        if link is not None:
            yield link


_new_tuple = tuple.__new__


def _wiki_link(inner: str, kind: LinkKind) -> Link | None:
    if "\\|" in inner:
        inner = inner.replace("\\|", "|")
    path, bar, display = inner.partition("|")
    target, hashmark, subpath = path.partition("#")
    target = target.strip()
    if not target:
        return None
    subpath_or_none = (subpath.strip() or None) if hashmark else None
    display_or_none = (display.strip() or None) if bar else None
    # (made without Link's __new__, whose call with keywords costs each link 0.25 µs more)
    return _new_tuple(Link, (target, kind, subpath_or_none, display_or_none))


def _markdown_link(raw: str, text: str) -> Link | None:
    """The link a markdown link's destination ``raw`` (no URL scheme) and ``text`` make, or
    None when the destination names neither a note nor an attachment."""
    path, hashmark, subpath = raw.partition("#")
    target = unquote(path).strip()
    if not target.lower().endswith(".md") and not is_attachment(target):
        return None
    subpath_or_none = (unquote(subpath).strip() or None) if hashmark else None
    return _new_tuple(Link, (target, "markdown", subpath_or_none, text.strip() or None))


def _frontmatter_links(value: object, out: list[Link], seen: set[int]) -> None:
    """Append ``"[[...]]"`` links found in string values, depth first, in mapping order."""
    if isinstance(value, str):
        if "[[" in value:
            for inside in wikilink_insides(value):
                link = _wiki_link(inside, "frontmatter")
                if link is not None:
                    out.append(link)
        return
    if isinstance(value, Mapping | list | tuple):
        if id(value) in seen:  # YAML anchors can build cycles
            return
        seen.add(id(value))
        items = value.values() if isinstance(value, Mapping) else value
        for item in items:
            _frontmatter_links(item, out, seen)


# --- the markdown-it path -----------------------------------------------------------------


class _QuietLogger:
    """Stands in for a ``logging.Logger`` that logs no DEBUG: ``debug`` takes any arguments and
    does nothing, in C (``"".format`` ignores arguments its empty template does not name)."""

    __slots__ = ()
    debug = staticmethod("".format)


@cache
def _quiet_debug_logging() -> None:
    """Replace the ``LOGGER`` of each markdown-it block rule by :class:`_QuietLogger` when it
    does not log DEBUG (the usual case): each rule calls ``LOGGER.debug(...)`` on entry, and
    those calls (two Python frames each) cost 6 % of a parse although nothing is logged. A
    logger set to DEBUG before the first parse keeps its messages."""
    import logging
    import sys

    import markdown_it  # noqa: F401  (loads its rule modules)

    for name, module in list(sys.modules.items()):
        if not name.startswith("markdown_it.rules_block."):
            continue
        logger = getattr(module, "LOGGER", None)
        if isinstance(logger, logging.Logger) and not logger.isEnabledFor(logging.DEBUG):
            setattr(module, "LOGGER", _QuietLogger())  # noqa: B010 (a module global)


@cache
def _markdown() -> MarkdownIt:
    """markdown-it (CommonMark) whose code-span and inline HTML rules also note where they
    matched: each code span, and each ``<!-- … -->`` comment (cut out like code; Obsidian
    indexes no link inside a comment), by offsets in the inline source.

    Spans are noted in silent mode too (link labels, image alt text are first skipped over
    silently); a run of backticks without a closer is literal text and is not noted.
    """
    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import backtick, html_inline

    def recording_backtick(state: StateInline, silent: bool) -> bool:
        start = state.pos
        matched = backtick(state, silent)
        if matched and state.src[start : state.pos].strip("`"):
            spans = state.env.setdefault(_CODE_KEY, {})
            spans.setdefault(state.src, []).append((start, state.pos))
        return matched

    def recording_html_inline(state: StateInline, silent: bool) -> bool:
        start = state.pos
        matched = html_inline(state, silent)
        if matched and state.src.startswith("<!--", start):
            spans = state.env.setdefault(_CODE_KEY, {})
            spans.setdefault(state.src, []).append((start, state.pos))
        return matched

    _quiet_debug_logging()
    md = MarkdownIt("commonmark")
    md.inline.ruler.at("backticks", recording_backtick)
    md.inline.ruler.at("html_inline", recording_html_inline)
    return md


@cache
def _block_markdown() -> MarkdownIt:
    """markdown-it's CommonMark block parse alone: inline sources are left unparsed."""
    from markdown_it import MarkdownIt

    _quiet_debug_logging()
    md = MarkdownIt("commonmark")
    md.disable(["inline", "text_join"])
    return md


_COMMENT_RE = lazy_pattern(globals(), "_COMMENT_RE", r"<!--.*?(?:-->|\Z)", re.DOTALL)


def _without_comments(html: str) -> str:
    """An HTML block's text with each ``<!-- … -->`` (or an unclosed ``<!--`` to the end) cut."""
    return _COMMENT_RE.sub("", html) if "<!--" in html else html


_LEAF_BLOCKS = frozenset(
    {"paragraph_open", "heading_open", "hr", "html_block", "code_block", "fence"}
)


def _parsed_links(body: str, *, fast_inline: bool = False) -> list[Link]:
    """Links of ``body`` outside code, using markdown-it's CommonMark block and inline parse.

    The text handed to the expression is, line by line: each paragraph or heading's inline
    source with code spans cut out, each HTML block, and every line no leaf block covers
    (reference definitions, blank lines); fences and indented code are left out.

    ``fast_inline``: markdown-it parses the blocks only; code spans are found by
    :func:`vaultmem.core.links.code_spans.code_spans`, and markdown-it parses only the inline
    sources where something may take precedence over a code span (see :func:`_inline_source`).
    """
    if not _code_scanner_loaded:
        _load_code_scanner()
    if not body.endswith("\n"):
        body += "\n"  # markdown-it-py 4.3 raises IndexError on "> 1. <pre>\n> " without it
    env: dict[str, Any] = {}
    try:
        tokens = (_block_markdown() if fast_inline else _markdown()).parse(body, env)
    except Exception:  # a parser bug must not stop indexing; code may count
        return list(_scan(body))
    spans = env.get(_CODE_KEY, {})
    lines = body.split("\n")
    pieces: list[str] = []
    code: list[str] = []
    next_line = 0
    for token in tokens:
        if token.type in _LEAF_BLOCKS and token.map is not None:
            start, end = token.map
            pieces.extend(lines[next_line:start])
            next_line = max(next_line, end)
            if token.type == "html_block":
                pieces.append(_without_comments(token.content))
        elif token.type == "inline" and fast_inline:
            pieces.append(_inline_source(token.content, env, code))
        elif token.type == "inline":
            pieces.append(cut_code(token.content, spans.get(token.content, []), code))
    pieces.extend(lines[next_line:])
    return list(_scan("\n".join(pieces), code))


def _inline_source(source: str, env: dict[str, Any], code: list[str]) -> str:
    """One inline source with its code spans and HTML comments cut out (see
    :func:`~vaultmem.core.links.code_spans.cut_code`).

    markdown-it's inline parse runs only for an HTML comment, a ``<`` that may open raw HTML
    or an autolink holding a backtick
    (:func:`~vaultmem.core.links.code_spans.html_may_take_backticks`), a link destination that may
    hold one (``](``) or, with reference definitions in the note, a ``[`` beside a backtick;
    otherwise code spans are exactly the backtick strings that pair up.
    """
    if "`" not in source and "<!--" not in source:
        return source
    if (
        "<!--" in source
        or ("<" in source and html_may_take_backticks(source))
        or may_take_backticks(source)
        or (env.get("references") and "[" in source)
    ):
        md = _markdown()
        inline_env: dict[str, Any] = {"references": env.get("references", {})}
        md.inline.parse(source, md, inline_env, [])
        return cut_code(source, inline_env.get(_CODE_KEY, {}).get(source, []), code)
    return cut_code(source, code_spans(source) or [], code, ordered=True)
