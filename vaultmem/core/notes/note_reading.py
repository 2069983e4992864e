"""Reading a note's text: where its frontmatter is, what the frontmatter holds, conflict markers.

docs/user-guide.md, "The memory note". Pure (no file I/O). This is the reading half of
:mod:`vaultmem.core.notes.note_text`, which re-exports every public name here and adds the surgical
edits; parsing a note (:func:`vaultmem.core.notes.note_parse.parse_note`, which every sync and cold
index runs) needs only this half, and so never loads the writer's expressions and helpers.

Frontmatter in the fast path's subset (:mod:`~vaultmem.core.notes.frontmatter_fast_path`: what
vaultmem writes and most notes hold) is read without YAML; the rest goes through
:mod:`~vaultmem.core.notes.frontmatter_yaml`, which is imported only then (loading YAML costs a few
milliseconds, as much as indexing a hundred notes).
"""

from __future__ import annotations

import re
from typing import Any

from vaultmem.core.lazy_patterns import lazy_pattern
from vaultmem.core.notes.frontmatter_fast_path import (
    PLACEHOLDER_PROBLEM,
    parse_simple_frontmatter,
    template_placeholder,
)
from vaultmem.errors import FrontmatterError

__all__ = [
    "FrontmatterError", "find_conflict_markers", "frontmatter_bounds", "parse_frontmatter",
    "split_frontmatter",
]  # fmt: skip


def frontmatter_bounds(text: str) -> tuple[int, int, int] | None:
    """Where the frontmatter block of ``text`` lies, as string offsets: ``(yaml_start, yaml_end,
    body_start)``; the YAML is ``text[yaml_start:yaml_end]`` (line endings included), the body
    ``text[body_start:]``. ``None`` when the note has none. Never raises.

    Frontmatter exists only when the very first line (after an optional BOM) is ``---`` and a
    closing ``---`` line follows, trailing spaces and tabs allowed (Obsidian's rule;
    python-frontmatter's too, except that it also takes ``----``).
    """
    start = 1 if text.startswith("\ufeff") else 0
    if not text.startswith("---", start):
        return None
    opening_end = text.find("\n", start + 3)
    if opening_end < 0 or not _fence_rest(text[start + 3 : opening_end]):
        return None
    start = line = opening_end + 1
    while True:  # each line from here that starts with "---"
        if text.startswith("---", line):
            end = text.find("\n", line + 3)
            if _fence_rest(text[line + 3 : end if end >= 0 else len(text)]):
                return start, line, end + 1 if end >= 0 else len(text)
        line = text.find("\n---", line) + 1
        if not line:
            return None


def _fence_rest(rest: str) -> bool:
    """May ``rest`` follow ``---`` on a fence line? Spaces and tabs, then at most one ``\\r``
    (string methods, not a regular expression: compiling two cost every process 0.15 ms)."""
    return not (rest[:-1] if rest[-1:] == "\r" else rest).strip(" \t")


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """``(yaml, body)`` of a note: the raw YAML between the fence lines (``None`` when the note
    has no frontmatter, see :func:`frontmatter_bounds`) and everything after the closing fence
    line, byte for byte; without frontmatter the whole text after an optional BOM (a BOM is
    never part of the body). Never raises. :func:`vaultmem.core.notes.note_text.split_note` gives
    the same parts with their offsets and the note's line ending."""
    bounds = frontmatter_bounds(text)
    if bounds is not None:
        return text[bounds[0] : bounds[1]], text[bounds[2] :]
    return None, text[1:] if text.startswith("\ufeff") else text


def parse_frontmatter(yaml_text: str, *, path: str = "", first_line: int = 2) -> dict[str, Any]:
    """Parse the raw YAML of a frontmatter block into a plain dict, values as YAML reads them.

    Empty or comment-only YAML -> ``{}``. Scalar keys (at every level) are kept as the text
    written: ``1:`` and ``true:`` give the keys ``"1"`` and ``"true"``, as Obsidian shows them.
    ``first_line`` is the note's line number of the first YAML line (2), for messages.
    About 60 µs for a 14-key note outside the fast path (libyaml; see
    :class:`~vaultmem.core.notes.frontmatter_yaml.FastLoader`).

    Raises :class:`FrontmatterError` when the YAML does not parse (with the line and column YAML
    reports), holds an impossible value (``2023-02-30``), or its top level is not a mapping.
    """
    if not yaml_text or yaml_text.isspace():
        return {}
    written = _WRITTEN.get(yaml_text)
    if written is not None:
        return _copy(written)
    simple = parse_simple_frontmatter(yaml_text)
    if simple is not None:  # a new dict: the caller's own
        return simple
    placeholder = template_placeholder(yaml_text)
    if placeholder is not None:  # YAML's own error, without loading YAML for a template
        raise FrontmatterError(
            f"frontmatter is not valid YAML: {PLACEHOLDER_PROBLEM}",
            path=path,
            line=placeholder[0] + first_line,
            column=placeholder[1] + 1,
        )
    from vaultmem.core.notes.frontmatter_yaml import load_frontmatter

    data = load_frontmatter(yaml_text, path=path, first_line=first_line)
    if data is None:
        return {}
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else f"a single value ({type(data).__name__})"
        raise FrontmatterError(
            f"frontmatter is {kind}, not 'key: value' properties", path=path, line=first_line
        )
    if not all(type(key) is str for key in data):  # a !!binary key, say
        return {str(key): value for key, value in data.items()}
    return data


_WRITTEN: dict[str, dict[str, Any]] = {}
"""Fast-path readings of frontmatter vaultmem itself just wrote (the last
:data:`WRITTEN_KEPT`): the write's safety check reads it, and the index, reading it again
(import, passes), finds it here. Only writes add to it; never hand a value out: :func:`_copy`."""
WRITTEN_KEPT = 1024


def remember_written(yaml_text: str, simple: dict[str, Any]) -> None:
    """Keep the fast path's reading ``simple`` of frontmatter vaultmem has just written (the
    writer's safety check made it), so reading the note again needs no parse."""
    try:
        while len(_WRITTEN) >= WRITTEN_KEPT:
            del _WRITTEN[next(iter(_WRITTEN))]  # the oldest
    except (KeyError, RuntimeError, StopIteration):  # another thread emptied it meanwhile
        pass
    _WRITTEN[yaml_text] = simple


def _copy(simple: dict[str, Any]) -> dict[str, Any]:
    """A caller's own copy of a fast-path result (its values are scalars and lists of them)."""
    return {key: list(value) if type(value) is list else value for key, value in simple.items()}


# Conflict marker lines; compiled on first use (few notes hold ``<<<<<<<`` or ``>>>>>>>``).
_CONFLICT_RE = lazy_pattern(
    globals(),
    "_CONFLICT_RE",
    r"^\ufeff?(?:(<{7}|>{7})|(\|{7})|(={7})(?=[ \t]*\r?$))(?=[ \t]|\r?$)",
    re.MULTILINE,
)


def find_conflict_markers(text: str) -> list[int]:
    """1-based line numbers of git conflict markers in ``text``, in order (``[]`` if none).

    Markers are exactly seven characters at the start of a line: ``<<<<<<<`` and ``>>>>>>>``
    (then a space, a tab or the end of the line) anywhere; ``=======`` and diff3's ``|||||||``
    only after an unclosed ``<<<<<<<`` — alone they are markdown (a setext heading underline,
    an empty table row).
    """
    if "<<<<<<<" not in text and ">>>>>>>" not in text:
        return []
    found: list[int] = []
    line, counted_to, open_region = 1, 0, False
    for match in _CONFLICT_RE.finditer(text):
        line += text.count("\n", counted_to, match.start())
        counted_to = match.start()
        if match.group(1) is not None:
            open_region = match.group(1)[0] == "<"
            found.append(line)
        elif open_region:
            found.append(line)
    return found
