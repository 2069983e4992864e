"""Three-way merge of memory notes, for git's merge driver and for ``doctor --fix``.

Pure: the body merge (``git merge-file``) is handed in as a function, so this module does no I/O.
The rules (see "Syncing with git" in ``docs/user-guide.md``):

- frontmatter is merged key by key, three-way, each key by its rule in the property table
  (:mod:`vaultmem.core.notes.properties`, merged by :mod:`vaultmem.core.notes.property_merge`); a
  person's own keys merge like text lines; only a value of a type its rule cannot merge is a
  conflict for that key alone (conflict markers around that one line, the rest merged);
- two sides holding different memory ids are two memories: nothing is merged, and the caller
  keeps theirs apart under a new name (:attr:`MergeResult.apart`);
- the body is merged by the given line merger (``git merge-file``, diff3 style), which never
  drops or reorders a line;
- the result is written surgically onto "ours": only the lines of keys that change differ;
- a frontmatter comment of "theirs" that the result lacks is carried in (:func:`carry_comments`)
  — one theirs added, or any without a common version: a side's comment is never dropped.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from vaultmem.core.notes.frontmatter_comments import BREAKS, ending
from vaultmem.core.notes.note_text import (
    FrontmatterError,
    find_conflict_markers,
    frontmatter_layout,
    parse_frontmatter,
    render_value,
    set_fields,
    split_note,
)
from vaultmem.core.notes.properties import PROPERTIES, Merge
from vaultmem.core.notes.property_merge import MISSING, merge_frontmatter, stage_of

__all__ = [
    "BodyMerger", "MergeResult", "carry_comments", "conflict_sides", "merge_frontmatter",
    "merge_note", "note_identity", "stage_of", "union_lines",
]  # fmt: skip

BodyMerger = Callable[[str, str, str], tuple[str, bool]]
"""``(base, ours, theirs) -> (merged text, clean)``; a conflict leaves markers in the text."""

_MISSING: Final = MISSING
_PLACEHOLDER: Final = "vaultmem-merge-conflict-{}"
_MARKER_LINE: Final = re.compile(r"^(<{7}|\|{7}|={7}|>{7})(?:[ \t].*)?\r?$")
_IDENTITY: Final = tuple(k for k, p in PROPERTIES.items() if p.merge is Merge.IDENTITY)


@dataclass(frozen=True, slots=True)
class MergeResult:
    """The merged note text; ``conflicts`` names what could not be merged (``[]`` = clean).

    Each conflict is ``"key 'status'"`` or ``"body"`` (or ``"note"`` when the note was merged
    as plain lines because a side does not parse). ``apart`` is theirs' text when the two sides
    are different memories (different ids): ``text`` is then ours, unchanged, and the caller
    keeps ``apart`` as a note of its own.
    """

    text: str
    conflicts: tuple[str, ...]
    apart: str | None = None

    @property
    def clean(self) -> bool:
        return not self.conflicts


def union_lines(ours: str, theirs: str) -> str:
    """Both texts' lines without a common version: lines both hold once, the others kept where
    they stand (ours' before theirs' where both differ). Never drops or reorders a line."""
    a = ours.splitlines(keepends=True)
    b = theirs.splitlines(keepends=True)
    if a and not a[-1].endswith("\n"):
        a[-1] += "\n"
    if b and not b[-1].endswith("\n"):
        b[-1] += "\n"
    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            out += a[i1:i2]
        else:
            out += a[i1:i2] + b[j1:j2]
    return "".join(out)


def carry_comments(result: str, theirs: str, base: str | None = None) -> str:
    """``result`` (a merge written onto "ours") with the frontmatter comments of ``theirs`` it
    lacks: those ``base`` does not hold either (a comment ours removed stays removed), all of
    them when there is no ``base``. Each comment counts as its text (``# ...``), as often as it
    appears.

    A carried comment goes on a line of its own, at the indentation of the line it was on,
    just above the line of the property it was in or, between properties, the next one
    (the first of those the result holds; else last, before the closing fence), each line
    ending as the line above it. The values are unchanged; ``result`` itself comes back when
    nothing is carried. Raises :class:`FrontmatterError` when ``result`` or ``theirs`` does not
    parse, or the comments would change the values read (never met: a comment line between
    properties is ignored by YAML).
    """
    their = split_note(theirs)
    if not their.has_frontmatter or "#" not in their.yaml:
        return result
    t_lines, t_entries, t_comments = frontmatter_layout(their.yaml)
    if not t_comments:
        return result
    note = split_note(result)
    lines, entries, comments = frontmatter_layout(note.yaml)  # "": none of each
    held = _comment_texts(lines, comments)
    try:  # a base that does not parse counts as none: more is carried, nothing lost
        b_lines, _, b_comments = frontmatter_layout(split_note(base).yaml) if base else ([], [], {})
    except FrontmatterError:
        b_lines, b_comments = [], {}
    for text, count in _comment_texts(b_lines, b_comments).items():
        held[text] = max(held[text], count)
    firsts = {key: first for key, first, _, _ in entries}
    carried: dict[int, list[str]] = {}  # result line -> comment lines to put above it
    for number, column in sorted(t_comments.items()):
        line = t_lines[number]
        text = line[column:].rstrip(BREAKS)
        if held[text] > 0:
            held[text] -= 1
            continue
        below = [key for key, _, last, _ in t_entries if last >= number]
        at = next((firsts[key] for key in below if key in firsts), len(lines))
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        carried.setdefault(at, []).append(indent + text)
    if not carried:
        return result
    if not note.has_frontmatter:
        raise FrontmatterError("the merged note has no frontmatter to carry theirs' comments into")
    out: list[str] = []
    for number in range(len(lines) + 1):
        for comment in carried.get(number, ()):
            above = out[-1] if out else note.text[: note.yaml_offset]
            out.append(comment + ending(above, note.newline))
        if number < len(lines):
            out.append(lines[number])
    end = note.yaml_offset + len(note.yaml)
    merged = note.text[: note.yaml_offset] + "".join(out) + note.text[end:]
    after = split_note(merged)  # repr: strict (1 is not True) and NaN reads as NaN
    if after.body != note.body or repr(parse_frontmatter(after.yaml)) != repr(
        parse_frontmatter(note.yaml)
    ):
        raise FrontmatterError("carrying theirs' comments would change the merged values")
    return merged


def _comment_texts(lines: list[str], comments: dict[int, int]) -> Counter[str]:
    """How often each comment text (from ``#`` to the end of its line) appears."""
    return Counter(lines[number][column:].rstrip(BREAKS) for number, column in comments.items())


def note_identity(text: str) -> tuple[object, ...] | None:
    """The identity keys' values (``id``, ``type``) of a note, ``None`` when it does not parse."""
    parts = _parts(text)
    if parts is None:
        return None
    return tuple(parts[0].get(key) for key in _IDENTITY)


def _different_notes(base: dict[str, Any] | None, ours: dict[str, Any],
                     theirs: dict[str, Any]) -> bool:  # fmt: skip
    """Whether both sides hold an id, different ones, neither of them the base's."""
    o, t = ours.get("id"), theirs.get("id")
    if not o or not t or o == t:
        return False
    return base is None or base.get("id") not in (o, t)


def conflict_sides(text: str) -> tuple[str, str | None, str]:
    """``text`` holding git conflict markers → (ours side, base side or ``None``, theirs side).

    Lines outside conflict regions go to every side; ``|||||||`` (diff3) sections give the base,
    which is ``None`` when a region has none. Text without markers gives ``(text, text, text)``.
    """
    if not find_conflict_markers(text):
        return text, text, text
    ours: list[str] = []
    base: list[str] = []
    theirs: list[str] = []
    region = ""  # "" outside, "ours", "base", "theirs"
    saw_base, saw_region_base = True, False
    for line in text.splitlines(keepends=True):
        match = _MARKER_LINE.match(line.rstrip("\n"))
        marker = match.group(1)[0] if match else ""
        if marker == "<" and not region:
            region, saw_region_base = "ours", False
            continue
        if region and marker == "|" and region == "ours":
            region, saw_region_base = "base", True
            continue
        if region in ("ours", "base") and marker == "=":
            saw_base = saw_base and saw_region_base
            region = "theirs"
            continue
        if region == "theirs" and marker == ">":
            region = ""
            continue
        if region in ("", "ours"):
            ours.append(line)
        if region in ("", "base"):
            base.append(line)
        if region in ("", "theirs"):
            theirs.append(line)
    return "".join(ours), ("".join(base) if saw_base else None), "".join(theirs)


def _parts(text: str) -> tuple[dict[str, Any], str, int] | None:
    """(frontmatter, body, body offset) or ``None`` when it cannot be merged by keys."""
    if find_conflict_markers(text):
        return None
    note = split_note(text)
    if not note.has_frontmatter:
        if text.lstrip("\ufeff").startswith("---"):
            return None  # an opening fence without a closing one
        return {}, note.body, note.body_offset
    try:
        return parse_frontmatter(note.yaml), note.body, note.body_offset
    except FrontmatterError:
        return None


def _renderable(keys: list[str], sides: list[dict[str, Any]]) -> bool:
    """Whether every side's value of each key can be written on one line (no nested maps)."""
    for key in keys:
        for side in sides:
            if key in side:
                try:
                    render_value(side[key])
                except TypeError:
                    return False
    return True


def _conflict_block(
    key: str, sides: list[tuple[str, object]], newline: str, comment: str = ""
) -> str:
    """Marker lines around one key's value on each side (an absent side is empty); ``comment``
    (the spaces and comment that ended ours' line) ends ours' line."""
    out: list[str] = []
    for marker, value in sides:
        out.append(marker + newline)
        if value is not _MISSING:
            rendered = render_value(value)
            tail = comment if marker == sides[0][0] else ""
            out.append(f"{key}:{' ' + rendered if rendered else ''}{tail}{newline}")
    out.append(">>>>>>> theirs" + newline)
    return "".join(out)


def merge_note(
    base: str | None,
    ours: str,
    theirs: str,
    merge_lines: BodyMerger,
    *,
    keep_ours: bool = False,
    ours_keys: frozenset[str] = frozenset(),
) -> MergeResult:
    """Merge three versions of a note (module docstring rules); never raises on bad content.

    ``base`` is ``""`` when the note was added on both sides (a memory both sides wrote:
    counters are then summed from the defaults), ``None`` when there is no common version to
    compare with (two copies of one memory, ``doctor --fix``: counters take the larger side,
    sets the union). When a side does not parse (bad YAML, conflict markers already inside) the
    whole texts are merged as lines instead. Without a base the bodies are joined by
    :func:`union_lines`. ``keep_ours``: a key that cannot be merged keeps ours' value (no
    markers); ``ours_keys``: keys that keep ours' value whenever ours holds one (``doctor --fix``
    keeps the ``box`` of the path it keeps). Sides with different memory ids are not merged
    (:attr:`MergeResult.apart`).
    """
    if ours == theirs or (base is not None and theirs == base):
        return MergeResult(ours, ())
    if base is not None and ours == base:
        return MergeResult(theirs, ())
    line_base = base or ""
    parts = [_parts(t) for t in (line_base, ours, theirs)]
    p_base, p_ours, p_theirs = parts
    if p_ours is None or p_theirs is None or (p_base is None and line_base):
        text, clean = merge_lines(line_base, ours, theirs)
        return MergeResult(text, () if clean else ("note",))
    base_fm = p_base[0] if p_base is not None and base is not None else None
    if _different_notes(base_fm, p_ours[0], p_theirs[0]):
        return MergeResult(ours, (), apart=theirs)
    changes, conflicting = merge_frontmatter(base_fm, p_ours[0], p_theirs[0])
    for key in ours_keys & p_ours[0].keys():
        changes.pop(key, None)
        conflicting = [k for k in conflicting if k != key]
    body_base = p_base[1] if p_base is not None else ""
    body_ours, body_theirs = p_ours[1], p_theirs[1]
    if body_ours == body_theirs or (base is not None and body_theirs == body_base):
        body, body_clean = body_ours, True
    elif base is not None and body_ours == body_base:
        body, body_clean = body_theirs, True
    elif base is None:
        body, body_clean = union_lines(body_ours, body_theirs), True
    else:
        body, body_clean = merge_lines(body_base, body_ours, body_theirs)
    if keep_ours:
        conflicting = []
    for n, key in enumerate(conflicting):
        changes[key] = _PLACEHOLDER.format(n)
    sides_of = [p_ours[0], p_theirs[0]] + ([base_fm] if base_fm is not None else [])
    if not _renderable(conflicting, sides_of):
        text, clean = merge_lines(line_base, ours, theirs)
        return MergeResult(text, () if clean else ("note",))
    try:
        text = set_fields(ours, changes) if changes else ours
        text = carry_comments(text, theirs, base)
    except (FrontmatterError, TypeError):
        text, clean = merge_lines(line_base, ours, theirs)
        return MergeResult(text, () if clean else ("note",))
    note = split_note(text)
    text = text[: note.body_offset] + body
    for n, key in enumerate(conflicting):
        placeholder = _PLACEHOLDER.format(n)
        line = re.compile(  # the placeholder, then the comment set_fields kept, if any
            r"^[^\r\n]*: " + re.escape(placeholder) + r"((?:[ \t][^\r\n]*)?)(\r?\n)", re.MULTILINE
        )
        found = line.search(text)
        if found is None:  # cannot happen: set_fields wrote it on one line
            continue
        comment, nl = found.group(1), found.group(2)
        sides = [("<<<<<<< ours", p_ours[0].get(key, _MISSING))]
        if base_fm is not None:
            sides.append(("||||||| base", base_fm.get(key, _MISSING)))
        sides.append(("=======", p_theirs[0].get(key, _MISSING)))
        block = _conflict_block(key, sides, nl, comment)
        text = text[: found.start()] + block + text[found.end() :]
    conflicts = tuple(f"key {key!r}" for key in conflicting) + (() if body_clean else ("body",))
    return MergeResult(text, conflicts)
