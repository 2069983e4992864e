"""The text of a note: frontmatter split, parse, problem detection and surgical edits.

docs/user-guide.md, "The memory note". A note is ``---`` / YAML / ``---`` / body. This module is
pure (no file I/O). It edits frontmatter *surgically*: only the lines of the changed keys change
(new keys go just before the closing fence); every other byte (body, unknown keys, key order,
comments, quoting, CRLF, a missing final newline, a BOM) stays identical, and the comments of the
changed lines are kept (:mod:`~vaultmem.core.notes.frontmatter_comments`). Every edit is re-parsed
and checked before it is returned: a caller gets the new text or a :class:`FrontmatterError`, never
mangled text.

Reading (finding and parsing the frontmatter, conflict markers) lives in
:mod:`~vaultmem.core.notes.note_reading`, whose names this module re-exports: parsing a note needs
only that half, and so never loads the writer's expressions and helpers.

Frontmatter in the fast path's subset (:mod:`~vaultmem.core.notes.frontmatter_fast_path`: what
vaultmem writes and most notes hold) is read and edited without YAML; the rest goes through
:mod:`~vaultmem.core.notes.frontmatter_yaml`, which is imported only then (loading YAML costs a few
milliseconds, as much as indexing a hundred notes).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from vaultmem.core.notes.frontmatter_comments import (
    ending,
    find_comments,
    keep_comments,
    may_comment,
    one_line_comment,
)
from vaultmem.core.notes.frontmatter_fast_path import (
    parse_simple_frontmatter,
)
from vaultmem.core.notes.note_reading import (
    FrontmatterError,
    find_conflict_markers,
    frontmatter_bounds,
    parse_frontmatter,
)
from vaultmem.core.notes.note_reading import remember_written as _remember_written
from vaultmem.core.notes.yaml_scalars import (
    normalised,
    render_key,
    render_value,
    same_value,
)

if TYPE_CHECKING:  # the YAML reader's module: the fast path does not load it
    from vaultmem.core.notes.frontmatter_yaml import FrontmatterEntry

__all__ = [
    "DELETE", "FrontmatterError", "NoteText", "field_changes", "find_conflict_markers",
    "frontmatter_layout", "parse_frontmatter", "render_note", "render_value", "set_fields",
    "split_note",
]  # fmt: skip

# Lines as YAML counts them (libyaml and PyYAML alike), so that YAML marks index our lines.
_YAML_LINE: Final = re.compile(r"[^\r\n\x85\u2028\u2029]*(?:\r\n|[\r\n\x85\u2028\u2029])|.+\Z")


class _Delete:
    """Type of :data:`DELETE`."""

    __repr__ = __str__ = lambda self: "DELETE"  # noqa: E731


DELETE: Final = _Delete()
"""Value for :func:`set_fields` that removes a key (all its lines) from the frontmatter."""


@dataclass(frozen=True, slots=True)
class NoteText:
    """A note split into its parts (``text`` unchanged; ``body == text[body_offset:]``).

    ``newline`` is ``"\\r\\n"`` when the first line ends in CRLF, else ``"\\n"``. ``yaml`` is the
    raw text between the fence lines, line endings included (``""`` if none), starting at
    ``yaml_offset``. ``body`` is everything after the closing fence line, byte for byte; without
    frontmatter the whole text after an optional BOM (a BOM is never part of ``body``).
    """

    text: str
    newline: str
    has_frontmatter: bool
    yaml: str
    body: str
    body_offset: int
    yaml_offset: int = 0


def split_note(text: str) -> NoteText:
    """Split ``text`` into frontmatter and body ("The memory note"). Never raises; about 3 µs.

    Frontmatter exists only when the very first line (after an optional BOM) is ``---`` and a
    closing ``---`` line follows, trailing spaces and tabs allowed (Obsidian's rule;
    python-frontmatter's too, except that it also takes ``----``).
    """
    first_nl = text.find("\n")
    newline = "\r\n" if first_nl > 0 and text[first_nl - 1] == "\r" else "\n"
    bounds = frontmatter_bounds(text)
    if bounds is not None:
        start, stop, end = bounds
        return NoteText(text, newline, True, text[start:stop], text[end:], end, start)
    start = 1 if text.startswith("\ufeff") else 0
    return NoteText(text, newline, False, "", text[start:], start, start)


def render_note(fields: Mapping[str, object], body: str) -> str:
    """Text of a new note: ``---\\n``, one ``key: value`` line per field in order, ``---\\n``, body.

    ``body`` is appended as given. Raises ``TypeError`` for a value :func:`render_value` cannot
    write, :class:`FrontmatterError` if the block would not read back as ``fields``.

    Each ``key: value`` line is a mapping entry of its own (a key at column 0, the value on the
    same line), so a block reads back as its fields when each of its lines does. A line already
    read back in an earlier note (``type: memory``, ``source: import``: most lines of an import
    repeat) is taken from :data:`_CHECKED_LINES`; only the others are written and read back.
    """
    lines: list[str] = []
    fresh: dict[str, object] = {}  # fields whose line is not known to read back yet
    known: dict[str, object] = {}  # the others: key -> the value read back
    remembered: list[tuple[tuple[object, ...], str]] = []
    checked = _CHECKED_LINES.get
    for key, value in fields.items():
        memo = _line_key(key, value)
        hit = checked(memo) if memo is not None else None
        if hit is not None:
            lines.append(hit[0])
            known[key] = hit[1]
            continue
        line = _line(render_key(key), value, "\n")
        lines.append(line)
        fresh[key] = value
        if memo is not None:
            remembered.append((memo, line))
    yaml_text = "".join(lines)
    text = "---\n" + yaml_text + "---\n" + body
    bounds = frontmatter_bounds(text)
    if bounds != (4, 4 + len(yaml_text), 8 + len(yaml_text)):
        raise FrontmatterError("the new note's frontmatter would not read back as written")
    fresh_text = (
        yaml_text
        if not known
        else "".join(line for line, key in zip(lines, fields, strict=True) if key in fresh)
    )
    got = parse_simple_frontmatter(fresh_text)
    if got is None:  # outside the fast path's subset (an escape, a comment): YAML reads it
        try:
            got = parse_frontmatter(fresh_text)
        except FrontmatterError as exc:
            raise FrontmatterError(
                f"the new note's frontmatter would break ({exc.problem})"
            ) from exc
        simple = False
    else:
        simple = "#" not in yaml_text and "\\" not in yaml_text
    expected = {key: normalised(value) for key, value in fresh.items()}
    if not same_value(got, expected):
        wrong = [k for k in expected if not same_value(got.get(k, DELETE), expected[k])]
        raise FrontmatterError(
            "the new note's frontmatter would not read back as its values (keys "
            f"{', '.join(wrong) or 'none'})"
        )
    if simple:
        _remember_lines(remembered, fields)
        read = {key: known[key] if key in known else got[key] for key in fields}
        _remember_written(yaml_text, read)
    return text


_CHECKED_LINES: dict[tuple[object, ...], tuple[str, object]] = {}
"""``(key, type, value)`` → (the ``key: value`` line :func:`render_note` writes for it, the
value the fast path reads back from it), for lines read back already (by the fast path: a line
in its subset is read the same wherever it stands). Kept for the short scalars and lists that
repeat from note to note; emptied when it holds :data:`CHECKED_LINES_KEPT`."""
CHECKED_LINES_KEPT = 4096


def _line_key(key: object, value: object) -> tuple[object, ...] | None:
    """``value``'s key in :data:`_CHECKED_LINES`, ``None`` for one never kept there: ``None``,
    ``0.0`` (equal to ``-0.0``, written differently), NaN, a datetime in another zone (equal
    to one an hour apart, across a change of clocks), long texts, other lists and types. The
    type is part of the key: ``True == 1`` but each is written its own way."""
    kind = value.__class__
    if key.__class__ is not str:
        return None
    if kind is bool or kind is int:
        return (key, kind, value)
    if kind is str:
        return (key, kind, value) if len(value) <= _KEPT_CHARS else None  # type: ignore[arg-type]
    if kind is float:
        return (key, kind, value) if value and value == value else None
    if kind is dt.datetime:  # naive or UTC: equal values are the same instant (no fold)
        zone = value.tzinfo  # type: ignore[attr-defined]
        return (key, kind, value) if zone is None or zone is dt.UTC else None
    if not isinstance(value, list) or kind is not list or len(value) > 16:
        return None
    if all(item.__class__ is str and len(item) <= _KEPT_CHARS for item in value):
        return (key, kind, tuple(value))
    return None


_KEPT_CHARS = 200
"""Longer texts are not kept in :data:`_CHECKED_LINES` (they seldom repeat)."""


def _remember_lines(
    lines: list[tuple[tuple[object, ...], str]], fields: Mapping[str, object]
) -> None:
    """Keep ``lines`` (each ``(line key, line)``, read back as its field) in
    :data:`_CHECKED_LINES`."""
    if len(_CHECKED_LINES) + len(lines) > CHECKED_LINES_KEPT:
        _CHECKED_LINES.clear()
    for memo, line in lines:
        _CHECKED_LINES[memo] = (line, normalised(fields[memo[0]]))  # type: ignore[index]


def set_fields(text: str, changes: Mapping[str, object], *, path: str = "") -> str:
    """Return ``text`` with frontmatter keys set, or removed with :data:`DELETE`, surgically.

    - an existing key's lines (its whole extent: block list, block scalar, multi-line flow)
      become one ``key: value`` line, the key spelt as before (plain or quoted), the line
      ending kept; :data:`DELETE` removes those lines;
    - comments are never removed: a comment at the end of the key's line stays at the end of
      the new line, its spacing kept (``key: <new value>  # comment``); a comment line inside
      the extent (between block-list items, between the key and its value) stays as it is,
      after the new line; a comment at the end of another line of the extent (``  - a  # x``)
      becomes a comment line of its own at that line's indentation. A deleted key leaves its
      comments the same way, its line's comment on a line of its own at the key's indentation;
    - a key whose value already equals the new one (strictly, after normalising) is left alone;
    - new keys are appended just before the closing fence, in the order given, each line
      ending as the line above it does (CRLF or LF; :attr:`NoteText.newline` when that line
      ends in another YAML break);
    - a note without frontmatter gets a new block at the top (after a BOM), body untouched.
    Every other byte stays identical; no change at all returns ``text`` itself. ``path`` is only
    used in messages. Comments are found only when the edited lines hold a ``#`` after a space
    or at a line's start: the common note (no comment) pays nothing for them.

    Raises :class:`FrontmatterError` when the note holds git conflict markers, the frontmatter
    does not parse or is not a block mapping, a changed key appears twice, or the re-parsed
    result differs from the original mapping with the changes applied (the built-in safety
    check); ``TypeError`` for a value :func:`render_value` cannot write.
    """
    markers = find_conflict_markers(text)
    if markers:
        marker_lines = ", ".join(map(str, markers))
        raise FrontmatterError(
            f"the note holds git conflict markers (lines {marker_lines}); resolve the merge first",
            path=path,
        )
    rendered: dict[str, str] = {}  # each new value as written, rendered once
    for key, value in changes.items():
        if not isinstance(key, str):
            raise TypeError(f"frontmatter keys are strings, not {key!r}")
        if value is not DELETE:
            rendered[key] = render_value(value)
    note = split_note(text)
    nl = note.newline
    if not note.has_frontmatter:  # an empty block on top, then the keys appended to it
        if all(value is DELETE for value in changes.values()):
            return text
        note = split_note(text[: note.body_offset] + "---" + nl + "---" + nl + note.body)
        text = note.text
    simple, original, lines, indent, entries = _layout(note.yaml, path)
    edits: list[tuple[int, int, str]] = []  # (first line, last line, replacement or "")
    appended: list[str] = []  # new keys' lines, without their line endings
    hashes = simple is None and "#" in note.yaml  # the fast path's subset holds no "#"
    comments: dict[int, int] | None = None  # line -> its comment's column, found when needed
    targets: list[tuple[int, int, str | None]]  # (first line, last line, new line or None)
    for key, value in changes.items():
        spans = [entry for entry in entries if entry[0] == key]
        if len(spans) > 1:
            where = ", ".join(str(entry[1] + 2) for entry in spans)
            raise FrontmatterError(
                f"property {key!r} appears {len(spans)} times (lines {where}); "
                "keep one before vaultmem edits it",
                path=path,
            )
        if value is DELETE:
            targets = [(first, last, None) for _, first, last, _ in spans]
        elif key in original and same_value(original[key], normalised(value)):
            continue
        elif not spans:
            appended.append(_rendered_line(indent + render_key(key), rendered[key], ""))
            continue
        else:
            _, first, last, prefix = spans[0]
            head = prefix if prefix is not None else indent + render_key(key)
            if not hashes or not may_comment(lines, first, last):  # most edits: one line
                old = lines[last]  # its own line ending kept (CRLF, LF; another YAML break: nl)
                eol = "\r\n" if old.endswith("\r\n") else "\n" if old.endswith("\n") else nl
                edits.append((first, last, _rendered_line(head, rendered[key], eol)))
                continue
            targets = [(first, last, _rendered_line(head, rendered[key], ""))]
        for first, last, line in targets:
            if hashes and may_comment(lines, first, last):  # keep its comments
                column = one_line_comment(lines[first]) if first == last else None
                if column is not None:  # "key: value  # c": no YAML scan needed
                    found = {first: column}
                else:  # found once a call
                    if comments is None:
                        comments = find_comments(note.yaml, lines, path=path)
                    found = comments
                edits.append((first, last, keep_comments(line, lines, first, last, found, nl)))
            else:
                edits.append((first, last, "" if line is None else line + ending(lines[last], nl)))
    if not edits and not appended:
        return text
    pieces: list[str] = []
    done = 0
    for first, last, replacement in sorted(edits):
        pieces += lines[done:first]
        pieces.append(replacement)
        done = last + 1
    pieces += lines[done:]
    yaml_text = "".join(pieces)
    if appended:  # each new line ends as the line before it (the opening fence's, at the top)
        after = ending(yaml_text or text[: note.yaml_offset], nl)
        yaml_text += after.join(appended) + after
    end = note.yaml_offset + len(note.yaml)
    result = text[: note.yaml_offset] + yaml_text + text[end:]
    _check(result, original, changes, note.body, path)
    return result


# --- reading ---------------------------------------------------------------------------------




def frontmatter_layout(
    yaml_text: str, *, path: str = ""
) -> tuple[list[str], list[FrontmatterEntry], dict[int, int]]:
    """A frontmatter block's lines (as YAML counts them, endings kept), its top-level entries
    (key, first and last line, key as written: :func:`~vaultmem.core.notes.frontmatter_yaml.
    yaml_entries`) and its comments (line → column: :func:`~vaultmem.core.notes.
    frontmatter_comments.find_comments`). Raises :class:`FrontmatterError` when it does not
    parse or is not a block mapping."""
    simple, _, lines, _, entries = _layout(yaml_text, path)
    return lines, entries, {} if simple is not None else find_comments(yaml_text, lines, path=path)


def _layout(
    yaml_text: str, path: str
) -> tuple[dict[str, Any] | None, dict[str, Any], list[str], str, list[FrontmatterEntry]]:
    """(the fast path's mapping or ``None``, the mapping, lines, indentation, entries)."""
    simple = parse_simple_frontmatter(yaml_text)
    original = simple if simple is not None else parse_frontmatter(yaml_text, path=path)
    lines = _YAML_LINE.findall(yaml_text)
    if simple is not None:  # flat lines (most notes): found by a line scan, not YAML events
        return simple, original, lines, "", _simple_entries(lines)
    if not original:
        return simple, original, lines, "", []
    from vaultmem.core.notes.frontmatter_yaml import yaml_entries

    indent, entries = yaml_entries(yaml_text, lines, path)
    return simple, original, lines, indent, entries


def field_changes(before: str, after: str) -> dict[str, object]:
    """The changes :func:`set_fields` takes to give a note ``after``'s properties where it has
    ``before``'s: each key new or of another value in ``after`` with that value, and
    :data:`DELETE` for each key ``after`` no longer has (the same comparison as set_fields's).

    Raises :class:`FrontmatterError` when either text's frontmatter does not parse.
    """
    old = parse_frontmatter(split_note(before).yaml)
    new = parse_frontmatter(split_note(after).yaml)
    changes: dict[str, object] = {
        key: value
        for key, value in new.items()
        if key not in old or not same_value(old[key], value)
    }
    changes.update((key, DELETE) for key in old if key not in new)
    return changes


def _simple_entries(lines: list[str]) -> list[FrontmatterEntry]:
    """:func:`~vaultmem.core.notes.frontmatter_yaml.yaml_entries` of frontmatter
    :func:`parse_simple_frontmatter` reads (not ``None``).

    In that subset every top-level key starts a line at column 0 (``key: value``, ``key:``) and
    only block-list items (``- a``, ``  - a``) and blank lines follow it, with ``\n`` endings:
    an entry spans its key's line to its last item line, the key as written is its prefix.
    The same spans as the YAML events give (a test compares both), without a YAML parse.
    """
    entries: list[FrontmatterEntry] = []
    key: str | None = None
    first = last = 0
    for number, line in enumerate(lines):
        if not line.strip(" \n"):
            continue
        if line[0] in " -":
            last = number
            continue
        if key is not None:
            entries.append((key, first, last, key))
        key, first, last = line.partition(":")[0], number, number
    if key is not None:
        entries.append((key, first, last, key))
    return entries


# --- writing ---------------------------------------------------------------------------------


def _line(head: str, value: object, newline: str) -> str:
    """One ``key: value`` line: ``head`` is the key as written (with indentation)."""
    return _rendered_line(head, render_value(value), newline)


def _rendered_line(head: str, rendered: str, newline: str) -> str:
    """One ``key: value`` line from the value as :func:`render_value` wrote it."""
    return head + ":" + (" " + rendered if rendered else "") + newline


def _check(
    result: str, original: dict[str, Any], changes: Mapping[str, object], body: str, path: str
) -> None:
    """The safety check: ``result`` re-parses to ``original`` with ``changes`` applied."""
    expected = dict(original)
    for key, value in changes.items():
        if value is DELETE:
            expected.pop(key, None)
        else:
            expected[key] = normalised(value)
    after = split_note(result)
    simple = parse_simple_frontmatter(after.yaml) if after.has_frontmatter else None
    try:
        if simple is not None:
            got = simple
        else:
            got = parse_frontmatter(after.yaml, path=path) if after.has_frontmatter else {}
    except FrontmatterError as exc:
        raise FrontmatterError(
            f"editing the frontmatter would break it ({exc.problem}); the note was left as it is",
            path=path,
        ) from exc
    if not after.has_frontmatter or after.body != body or not same_value(got, expected):
        wrong = [  # DELETE stands for a missing key
            k
            for k in {**got, **expected}
            if not same_value(got.get(k, DELETE), expected.get(k, DELETE))
        ]
        raise FrontmatterError(
            "editing the frontmatter would not give the intended values (keys "
            f"{', '.join(wrong) or 'none: the body would change'}); the note was left as it is",
            path=path,
        )
    if simple is not None:
        _remember_written(after.yaml, simple)
