"""Three-way merge of memory notes, for git's merge driver and for ``doctor --fix``.

Pure: the body merge (``git merge-file``) is handed in as a function, so this module does no I/O.
The rules (see "Syncing with git" in ``docs/user-guide.md``):

- frontmatter is merged key by key, three-way: a key changed on one side only takes that side
  (deleting included); a key changed the same way on both sides takes it (except a counter,
  ``strength`` and ``confidence``: equal increments on both sides are both added); a key changed
  differently on both sides is merged by meaning when it has a rule, else it is a conflict for
  that key alone (conflict markers around that one line, the rest merged);
- rules (reinforcement, user guide section "Reinforcement"; a use only ever adds):
  ``use_count``, ``review_count``, ``cross_domain_count`` = base + both sides' increments;
  ``strength`` (0–2) and ``confidence`` (0–1) = base + both sides' changes, clamped — each
  reinforcement's +0.1 counts once, as it would had the uses happened one after the other on
  one machine, and a boost that hit the cap stays at the cap; ``last_used``, ``last_review_at``,
  ``updated``, ``end`` = the latest; ``created``, ``promoted_at``, ``archived_at``,
  ``resolved_at``, ``start`` = the earliest; ``tags``, ``related``, ``aliases``, ``topics``,
  ``members``, ``boxes`` = three-way set merges (ours' order, theirs' additions appended,
  removals on either side honoured); ``status`` (active < promoted < superseded < archived) and
  ``layer`` (working < episodic < semantic, procedural) = the later lifecycle stage;
- the body is merged by the given line merger (``git merge-file``, diff3 style), which never
  drops or reorders a line;
- the result is written surgically onto "ours": only the lines of keys that change differ.

Without a base (two sides of a conflict already marked in a note, ``doctor --fix``, a note
both sides added), a key only one side holds is kept, counters take the larger side (a lower
bound of the uses) and sets the union.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from vaultmem.core.note_text import (
    DELETE,
    FrontmatterError,
    find_conflict_markers,
    parse_frontmatter,
    render_value,
    set_fields,
    split_note,
)
from vaultmem.core.timestamps import parse_datetime

__all__ = [
    "BodyMerger", "MergeResult", "conflict_sides", "merge_frontmatter", "merge_note",
]  # fmt: skip

COUNTERS: Final = {"use_count": 1, "review_count": 0, "cross_domain_count": 0}
"""Counters merged as base + both increments; the value is the default when a side lacks it."""
BOUNDED: Final = {"strength": (0.0, 2.0, 1.0), "confidence": (0.0, 1.0, 1.0)}
"""Numbers merged as base + both changes, clamped: (low, high, default)."""
LATEST: Final = frozenset({"last_used", "last_review_at", "updated", "end"})
EARLIEST: Final = frozenset({"created", "promoted_at", "archived_at", "resolved_at", "start"})
SETS: Final = frozenset({"tags", "related", "aliases", "topics", "members", "boxes"})
STAGES: Final[dict[str, tuple[str | tuple[str, ...], ...]]] = {
    "status": ("active", "promoted", "superseded", "archived"),
    "layer": ("working", "episodic", ("semantic", "procedural")),
}
"""Keys merged by lifecycle stage: the later stage wins (one pass promoted what another
archived: archived). Values in one tuple share a stage; two of them are a conflict."""

BodyMerger = Callable[[str, str, str], tuple[str, bool]]
"""``(base, ours, theirs) -> (merged text, clean)``; a conflict leaves markers in the text."""

_MISSING: Final = object()
_PLACEHOLDER: Final = "vaultmem-merge-conflict-{}"
_MARKER_LINE: Final = re.compile(r"^(<{7}|\|{7}|={7}|>{7})(?:[ \t].*)?\r?$")


@dataclass(frozen=True, slots=True)
class MergeResult:
    """The merged note text; ``conflicts`` names what could not be merged (``[]`` = clean).

    Each conflict is ``"key 'status'"`` or ``"body"`` (or ``"note"`` when the note was merged
    as plain lines because a side does not parse).
    """

    text: str
    conflicts: tuple[str, ...]

    @property
    def clean(self) -> bool:
        return not self.conflicts


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and a == b or (_is_number(a) and _is_number(b) and a == b)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _time(value: object) -> float | None:
    if value is _MISSING or value is None:
        return None
    try:
        return parse_datetime(value).timestamp()
    except (ValueError, OverflowError, OSError):
        return None


def _pick_time(ours: object, theirs: object, *, latest: bool) -> object:
    a, b = _time(ours), _time(theirs)
    if a is None or b is None:
        if a is None and b is None:
            return _MISSING
        return ours if b is None else theirs
    if a == b:
        return ours
    return ours if (a > b) == latest else theirs


def _items(value: object) -> list[object] | None:
    if value is _MISSING or value is None:
        return []
    if isinstance(value, list):
        return value
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return [value]
    return None


def _set_merge(base: object, ours: object, theirs: object, *, has_base: bool) -> object:
    b, o, t = _items(base), _items(ours), _items(theirs)
    if b is None or o is None or t is None:
        return _MISSING
    removed = [x for x in b if x not in t] if has_base else []
    merged = [x for x in o if x not in removed]
    merged += [x for x in t if x not in merged and (x not in b or not has_base)]
    return merged


def _counter(base: object, ours: object, theirs: object, default: int, has_base: bool) -> object:
    values = [default if v is _MISSING or v is None else v for v in (base, ours, theirs)]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return _MISSING
    b, o, t = (int(v) for v in values)  # type: ignore[call-overload]
    return o + t - b if has_base else max(o, t)


def _bounded(base: object, ours: object, theirs: object, rule: tuple[float, float, float],
             has_base: bool) -> object:  # fmt: skip
    low, high, default = rule
    values = [default if v is _MISSING or v is None else v for v in (base, ours, theirs)]
    if not all(_is_number(v) and math.isfinite(float(v)) for v in values):  # type: ignore[arg-type]
        return _MISSING
    b, o, t = (float(v) for v in values)  # type: ignore[arg-type]
    if not has_base:
        return max(o, t)
    return round(min(high, max(low, b + (o - b) + (t - b))), 4)


FIRST_BY_NAME: Final = frozenset({"trace"})
"""Keys holding one link where either answer is right: the first by name wins, so that every
machine picks the same (a box woven into two traces at once stays in the first)."""


def _first_by_name(ours: object, theirs: object) -> object:
    present = [v for v in (ours, theirs) if isinstance(v, str)]
    if len(present) != 2:
        return _MISSING
    return min(present)


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


def stage_of(key: str, value: object) -> int | None:
    """Position of ``value`` in :data:`STAGES` ``[key]`` (``None`` when it is not a stage)."""
    for n, names in enumerate(STAGES.get(key, ())):
        if value == names or (isinstance(names, tuple) and value in names):
            return n
    return None


def _later_stage(key: str, ours: object, theirs: object) -> object:
    a, b = stage_of(key, ours), stage_of(key, theirs)
    if a is None or b is None or a == b:
        return _MISSING
    return ours if a > b else theirs


def _merge_key(key: str, base: object, ours: object, theirs: object, has_base: bool) -> object:
    """The merged value of one key changed differently on both sides, or ``_MISSING``."""
    if key in STAGES:
        return _later_stage(key, ours, theirs)
    if key in FIRST_BY_NAME:
        return _first_by_name(ours, theirs)
    if key in COUNTERS:
        return _counter(base, ours, theirs, COUNTERS[key], has_base)
    if key in BOUNDED:
        return _bounded(base, ours, theirs, BOUNDED[key], has_base)
    if key in LATEST or key in EARLIEST:
        return _pick_time(ours, theirs, latest=key in LATEST)
    if key in SETS:
        return _set_merge(base, ours, theirs, has_base=has_base)
    return _MISSING


def merge_frontmatter(
    base: dict[str, Any] | None, ours: dict[str, Any], theirs: dict[str, Any]
) -> tuple[dict[str, object], list[str]]:
    """Key-by-key three-way merge (module docstring rules); ``base=None`` = no common ancestor.

    Returns (changes to apply to ``ours``: key → value or :data:`DELETE`, conflicting keys).
    """
    has_base = base is not None
    old = base or {}
    changes: dict[str, object] = {}
    conflicts: list[str] = []
    for key in list(ours) + [k for k in theirs if k not in ours]:
        o, t, b = ours.get(key, _MISSING), theirs.get(key, _MISSING), old.get(key, _MISSING)
        additive = key in COUNTERS or key in BOUNDED
        if _same(o, t) and not (additive and has_base and not _same(o, b)):
            continue  # the same value; but two equal increments are two sets of uses
        if has_base and _same(o, b):
            changes[key] = DELETE if t is _MISSING else t
            continue
        if has_base and _same(t, b):
            continue
        if not has_base and (o is _MISSING or t is _MISSING):  # known on one side only: keep it
            if o is _MISSING:
                changes[key] = t
            continue
        merged = _merge_key(key, b, o, t, has_base)
        if merged is _MISSING:
            conflicts.append(key)
        elif not _same(merged, o):
            changes[key] = merged
    return changes, conflicts


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


def _conflict_block(key: str, sides: list[tuple[str, object]], newline: str) -> str:
    """Marker lines around one key's value on each side (an absent side is empty)."""
    out: list[str] = []
    for marker, value in sides:
        out.append(marker + newline)
        if value is not _MISSING:
            rendered = render_value(value)
            out.append(f"{key}:{' ' + rendered if rendered else ''}{newline}")
    out.append(">>>>>>> theirs" + newline)
    return "".join(out)


def merge_note(
    base: str | None,
    ours: str,
    theirs: str,
    merge_lines: BodyMerger,
    *,
    keep_ours: bool = False,
) -> MergeResult:
    """Merge three versions of a note (module docstring rules); never raises on bad content.

    ``base`` is ``""`` when the note was added on both sides (a memory both sides wrote:
    counters are then summed from the defaults), ``None`` when there is no common version to
    compare with (two copies of one memory, ``doctor --fix``: counters take the larger side,
    sets the union). When a side does not parse (bad YAML, conflict markers already inside) the
    whole texts are merged as lines instead. Without a base the bodies are joined by
    :func:`union_lines`. ``keep_ours``: a key without a rule keeps ours' value (no markers).
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
    changes, conflicting = merge_frontmatter(base_fm, p_ours[0], p_theirs[0])
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
    except (FrontmatterError, TypeError):
        text, clean = merge_lines(line_base, ours, theirs)
        return MergeResult(text, () if clean else ("note",))
    note = split_note(text)
    text = text[: note.body_offset] + body
    for n, key in enumerate(conflicting):
        placeholder = _PLACEHOLDER.format(n)
        line = re.compile(r"^[^\r\n]*: " + re.escape(placeholder) + r"(\r?\n)", re.MULTILINE)
        found = line.search(text)
        if found is None:  # cannot happen: set_fields wrote it on one line
            continue
        nl = found.group(1)
        sides = [("<<<<<<< ours", p_ours[0].get(key, _MISSING))]
        if base_fm is not None:
            sides.append(("||||||| base", base_fm.get(key, _MISSING)))
        sides.append(("=======", p_theirs[0].get(key, _MISSING)))
        block = _conflict_block(key, sides, nl)
        text = text[: found.start()] + block + text[found.end() :]
    conflicts = tuple(f"key {key!r}" for key in conflicting) + (() if body_clean else ("body",))
    return MergeResult(text, conflicts)
