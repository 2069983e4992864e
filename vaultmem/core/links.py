"""Links out of a note: wikilinks, embeds, markdown ``.md`` links and frontmatter ``"[[...]]"``.

Spec section 6 (Graph). :func:`extract_links` takes a note's body (the text after the
frontmatter) and its parsed frontmatter mapping and returns every link occurrence as a
:class:`Link`, frontmatter first, then the body in document order. Pure: no file I/O.

What counts (spec section 6):

- ``[[Note]]``, ``[[Note|text]]``, ``[[Note#Heading]]``, ``[[Note#^block]]``, ``[[folder/Note]]``
  (kind ``"wikilink"``) and ``![[Note]]`` (kind ``"embed"``). ``[[#Heading]]`` points into the
  same note and is not an edge: skipped. ``[[a\\|b]]`` (a pipe escaped inside a table) is read
  as ``[[a|b]]``.
- ``[text](path.md)``, ``[text](path%20x.md#Heading)``, ``[text](<path x.md>)`` and the image
  form ``![text](path.md)`` (kind ``"markdown"``), only when the path, after removing ``#...``,
  ends in ``.md``; never a URL with a scheme (``https:``, ``obsidian:``, ``mailto:`` ...).
  Paths are URL-decoded. Reference-style links (``[text][ref]``) are not read.
- ``"[[...]]"`` inside any string value of the frontmatter, recursively through lists and
  mappings (kind ``"frontmatter"``).
- Targets that name an attachment (see :data:`NON_NOTE_EXTENSIONS`) are skipped: only ``.md``
  notes are graph nodes. A target with another dot (``[[v1.2 notes]]``) stays.
- Nothing inside inline code, fenced code blocks or indented code blocks counts.

Two paths, one answer. A body for which :func:`may_hold_code` is false (no backtick, no
``~~~``, no line that could open an indented code block) is scanned with one regular
expression (about 5 µs for 1 KB with 3 links). Any other body is parsed with markdown-it-py
(CommonMark), code is cut out, and the same expression runs over what is left. On a body
without code both paths return the same list (the tests check this with hypothesis and over
the real vaults).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Literal
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline, backtick

__all__ = ["NON_NOTE_EXTENSIONS", "Link", "LinkKind", "extract_links", "may_hold_code"]

LinkKind = Literal["wikilink", "embed", "markdown", "frontmatter"]

#: Lower-case extensions (no dot) of files that are never notes; links to them are not edges.
NON_NOTE_EXTENSIONS: frozenset[str] = frozenset(
    {
        "png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "pdf",
        "mp3", "mp4", "webm", "wav", "ogg", "m4a", "mov",
        "canvas", "base",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Link:
    """One link occurrence.

    ``target`` is the link path as written, without ``#subpath`` and ``|display``, stripped of
    surrounding whitespace; for markdown links URL-decoded and ``<...>`` unwrapped. ``subpath``
    is the text after the first ``#`` (``"Heading"``, ``"^block"``), ``None`` when absent or
    empty. ``display`` is the alias after ``|`` or the markdown link text, ``None`` when absent
    or empty. Resolve ``target`` with :class:`vaultmem.core.link_resolution.LinkResolver`.
    """

    target: str
    kind: LinkKind
    subpath: str | None = None
    display: str | None = None


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
_WIKI_RE = re.compile(r"(!?)\[\[([^\[\]\n]+)\]\]")
_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")

# Fast-path guards (see may_hold_code).
_INDENTED_LINE_RE = re.compile(r"^(?: {4}| {0,3}\t)[ \t]*\S", re.MULTILINE)
_MARKER_THEN_WS_RE = re.compile(
    r"^[ \t>*+\-0-9.)]*?(?:>|[-+*]|[0-9][.)])(?: {4}| {0,3}\t)", re.MULTILINE
)
_CONTAINER_PREFIX_RE = re.compile(r"[ \t]*(?:(?:>|(?:[-+*]|[0-9]{1,9}[.)])(?=[ \t]|$))[ \t]*)*")
_PREFIX_PART_RE = re.compile(r"([ \t]*)(>|[-+*](?=[ \t]|$)|[0-9]{1,9}[.)](?=[ \t]|$))?")
# Blocks that can make "the line before" something other than paragraph text: a nested
# blockquote (markdown-it ends a lazy paragraph there early), an HTML block (runs to a blank
# line), a reference definition (can span lines).
_UNSURE_CONTINUATION_RE = re.compile(
    r"^(?:[ \t*+\-0-9.)]*>[ \t*+\-0-9.)]*>|[ \t>*+\-0-9.)]*(?:<|\[[^\]\n]*\]:))", re.MULTILINE
)
_RULE_LINE_RE = re.compile(r"[-*_=\s]+")
_REFERENCE_DEF_RE = re.compile(r"\[[^\]]*\]:")
_CODE_KEY = "vaultmem_code_spans"
_CODE_MARK_RE = re.compile("\0([0-9]+)\0")


def extract_links(body: str, frontmatter: Mapping[str, object] | None = None) -> list[Link]:
    """Return every link of a note: frontmatter links first, then body links in document order.

    ``body`` is the markdown after the frontmatter block; ``frontmatter`` the parsed YAML
    mapping (or ``None``). Every occurrence is kept, duplicates included; callers dedupe.
    Never raises on odd input. Spec section 6.
    """
    links: list[Link] = []
    if frontmatter:
        _frontmatter_links(frontmatter, links, set())
    if "[" in body:
        body = _normalise(body)
        if may_hold_code(body):
            links.extend(_parsed_links(body))
        else:
            links.extend(_scan(body))
    return links


def may_hold_code(body: str) -> bool:
    """False only when ``body`` certainly holds no CommonMark code (span, fence or indented).

    True when the body has a backtick or ``~~~``, when a line indented by 4+ columns follows a
    blank line, a heading, a rule, a reference definition or an HTML-ish line (or opens the
    body), or when a ``>`` or list marker is followed by 5+ columns of whitespace and text.
    An indented line right after paragraph text is a continuation (CommonMark 4.4), so nested
    lists indented with tabs keep the fast path, unless the body also holds a nested
    blockquote, an HTML block or a reference definition, after which the line before may not
    be paragraph text. Conservative: true does not mean code.
    """
    if "`" in body or "~~~" in body:
        return True
    if "    " not in body and "\t" not in body:
        return False
    unsure: bool | None = None
    for match in _INDENTED_LINE_RE.finditer(body):
        if _previous_line_lets_code_start(body, match.start()):
            return True
        if unsure is None:
            unsure = _UNSURE_CONTINUATION_RE.search(body) is not None
        if unsure:
            return True
    for match in _MARKER_THEN_WS_RE.finditer(body):
        end = body.find("\n", match.start())
        line = body[match.start() : end if end != -1 else len(body)]
        if _marker_opens_indented_code(line):
            return True
    return False


def _normalise(body: str) -> str:
    """Line endings and NUL as markdown-it normalises them, so both paths see the same text."""
    if "\r" in body:
        body = body.replace("\r\n", "\n").replace("\r", "\n")
    if "\0" in body:
        body = body.replace("\0", "\ufffd")
    return body


def _previous_line_lets_code_start(body: str, line_start: int) -> bool:
    if line_start == 0:
        return True
    prev_start = body.rfind("\n", 0, line_start - 1) + 1
    prev = body[prev_start : line_start - 1]
    prefix = _CONTAINER_PREFIX_RE.match(prev)
    rest = prev[prefix.end() :] if prefix else prev
    return (
        not rest.strip()
        or rest.startswith("#")
        or "<" in rest
        or ">" in rest
        or _RULE_LINE_RE.fullmatch(rest) is not None
        or _REFERENCE_DEF_RE.match(rest) is not None
    )


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


def _scan(text: str, code: list[str] | None = None) -> Iterator[Link]:
    """Every link in ``text`` by the regular expression alone (no code awareness).

    ``code`` holds the code spans cut out of ``text`` as ``"\\0<index>\\0"`` marks; a mark
    inside markdown link text is put back into ``display``.
    """
    for match in _LINK_RE.finditer(text):
        start = match.start()
        bang = start > 0 and text[start - 1] == "!"
        wiki = match.group("wiki")
        if wiki is not None:
            link = _wiki_link(wiki, "embed" if bang else "wikilink")
        else:
            label = match.group("text")
            if code and "\0" in label:
                label = _CODE_MARK_RE.sub(lambda m: code[int(m.group(1))], label)
            link = _markdown_link(match.group("angle"), match.group("url"), label)
        if link is not None:
            yield link


def _wiki_link(inner: str, kind: LinkKind) -> Link | None:
    if "\\|" in inner:
        inner = inner.replace("\\|", "|")
    path, bar, display = inner.partition("|")
    target, hashmark, subpath = path.partition("#")
    target = target.strip()
    if not target or _is_attachment(target):
        return None
    return Link(
        target=target,
        kind=kind,
        subpath=(subpath.strip() or None) if hashmark else None,
        display=(display.strip() or None) if bar else None,
    )


def _markdown_link(angle: str | None, url: str | None, text: str) -> Link | None:
    raw = angle if angle is not None else (url or "")
    if _SCHEME_RE.match(raw):
        return None
    path, hashmark, subpath = raw.partition("#")
    target = unquote(path).strip()
    if not target.lower().endswith(".md"):
        return None
    return Link(
        target=target,
        kind="markdown",
        subpath=(unquote(subpath).strip() or None) if hashmark else None,
        display=text.strip() or None,
    )


def _is_attachment(target: str) -> bool:
    dot = target.rfind(".")
    if dot == -1 or dot < target.rfind("/"):
        return False
    return target[dot + 1 :].lower() in NON_NOTE_EXTENSIONS


def _frontmatter_links(value: object, out: list[Link], seen: set[int]) -> None:
    """Append ``"[[...]]"`` links found in string values, depth first, in mapping order."""
    if isinstance(value, str):
        if "[[" in value:
            for match in _WIKI_RE.finditer(value):
                link = _wiki_link(match.group(2), "frontmatter")
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


def _recording_backtick(state: StateInline, silent: bool) -> bool:
    """markdown-it's code-span rule, also noting each span's offsets in the inline source.

    Spans are noted in silent mode too (link labels, image alt text are first skipped over
    silently); a run of backticks without a closer is literal text and is not noted.
    """
    start = state.pos
    matched = backtick(state, silent)
    if matched and state.src[start : state.pos].strip("`"):
        spans = state.env.setdefault(_CODE_KEY, {})
        spans.setdefault(state.src, []).append((start, state.pos))
    return matched


@cache
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark")
    md.inline.ruler.at("backticks", _recording_backtick)
    return md


_LEAF_BLOCKS = frozenset(
    {"paragraph_open", "heading_open", "hr", "html_block", "code_block", "fence"}
)


def _parsed_links(body: str) -> list[Link]:
    """Links of ``body`` outside code, using markdown-it's CommonMark block and inline parse.

    The text handed to the expression is, line by line: each paragraph or heading's inline
    source with code spans cut out, each HTML block, and every line no leaf block covers
    (reference definitions, blank lines); fences and indented code are left out.
    """
    env: dict[str, dict[str, list[tuple[int, int]]]] = {}
    tokens = _markdown().parse(body, env)
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
                pieces.append(token.content)
        elif token.type == "inline":
            pieces.append(_cut_code(token.content, spans.get(token.content, []), code))
    pieces.extend(lines[next_line:])
    return list(_scan("\n".join(pieces), code))


def _cut_code(source: str, code_spans: list[tuple[int, int]], code: list[str]) -> str:
    """``source`` with each code span replaced by ``"\\0<n>\\0"``, its text put in ``code[n]``.

    The mark ends any wikilink or link destination that would run through the span, yet
    ``[`f()`](api.md)`` keeps its link text.
    """
    if not code_spans:
        return source
    out: list[str] = []
    pos = 0
    for start, end in sorted(set(code_spans)):
        if start < pos:
            continue
        out.append(source[pos:start])
        out.append(f"\0{len(code)}\0")
        code.append(source[start:end])
        pos = end
    out.append(source[pos:])
    return "".join(out)
