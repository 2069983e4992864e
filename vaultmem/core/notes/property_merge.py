"""Three-way merge of a memory note's properties, key by key, by the rules of
:mod:`vaultmem.core.notes.properties` (user guide, "Syncing with git").

Pure. A key changed on one side only takes that side's value (deleting included); a key changed
the same way on both sides takes it, except where equal changes are two sets of uses (counters,
``strength``, ``confidence``, ``use_days``); a key changed differently on both sides takes its
rule's value. Without a common version (``base=None``: two copies of one memory, conflict
markers without a diff3 base) a key only one side holds is kept, counters take the larger side
(a lower bound of the uses) and sets the union.

Sources of the rules: reinforcement (user guide, "Scores"): a use only ever adds, so base + both
sides' increments is what one machine would have written had the uses happened one after the
other; ``use_days`` counts distinct UTC days (``touch`` adds 1 only on a day later than
``last_used``), so each side's new days lie after the base's last day and end on its own
``last_used`` day.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any, Final

from vaultmem.core.notes.note_text import DELETE
from vaultmem.core.notes.properties import (
    ADDITIVE,
    BOUNDS,
    COUNTER_DEFAULTS,
    STAGES,
    Merge,
    rule_of,
)
from vaultmem.core.notes.timestamps import parse_datetime

__all__ = ["MISSING", "merge_frontmatter", "stage_of"]

MISSING: Final = object()
"""A key a side does not hold."""
_REPEATED_CHANGES: Final = ADDITIVE | {"use_days"}
"""Keys where an equal change on both sides is still two changes to merge."""


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and a == b or (_is_number(a) and _is_number(b) and a == b)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _time(value: object) -> dt.datetime | None:
    if value is MISSING or value is None:
        return None
    try:
        return parse_datetime(value)
    except (ValueError, OverflowError, OSError):
        return None


def _pick_time(ours: object, theirs: object, *, latest: bool) -> object:
    a, b = _time(ours), _time(theirs)
    if a is None or b is None:
        if a is None and b is None:
            return MISSING
        return ours if b is None else theirs
    if a == b:
        return ours
    return ours if (a > b) == latest else theirs


def _items(value: object) -> list[object] | None:
    if value is MISSING or value is None:
        return []
    if isinstance(value, list):
        return value
    if isinstance(value, str | int | float | dt.date) and not isinstance(value, bool):
        return [value]
    return None


def _set_merge(base: object, ours: object, theirs: object, *, has_base: bool) -> object:
    b, o, t = _items(base), _items(ours), _items(theirs)
    if b is None or o is None or t is None:
        return MISSING
    removed = [x for x in b if x not in t] if has_base else []
    merged = [x for x in o if x not in removed]
    merged += [x for x in t if x not in merged and (x not in b or not has_base)]
    return merged


def _lines(base: object, ours: object, theirs: object, *, has_base: bool) -> object:
    """A person's key: a side that dropped it keeps the other's value; lists merge as sets;
    two different values are both kept (ours first), as two edited lines would be."""
    if ours is MISSING or theirs is MISSING:
        return theirs if ours is MISSING else ours
    merged = _set_merge(base, ours, theirs, has_base=has_base)
    if isinstance(merged, list) and len(merged) == 1 and not isinstance(ours, list):
        return merged[0]
    return merged


def _counter(base: object, ours: object, theirs: object, default: int, has_base: bool) -> object:
    values = [default if v is MISSING or v is None else v for v in (base, ours, theirs)]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return MISSING
    b, o, t = (int(v) for v in values)  # type: ignore[call-overload]
    return o + t - b if has_base else max(o, t)


def _bounded(base: object, ours: object, theirs: object, rule: tuple[float, float, float],
             has_base: bool) -> object:  # fmt: skip
    low, high, default = rule
    values = [default if v is MISSING or v is None else v for v in (base, ours, theirs)]
    if not all(_is_number(v) and math.isfinite(float(v)) for v in values):  # type: ignore[arg-type]
        return MISSING
    b, o, t = (float(v) for v in values)  # type: ignore[arg-type]
    if not has_base:
        return max(o, t)
    return round(min(high, max(low, b + (o - b) + (t - b))), 4)


def _last_day(fm: dict[str, Any]) -> int | None:
    """The UTC day (ordinal) of a side's latest use: ``max(last_used, created)``."""
    times = [t for t in (_time(fm.get("last_used", MISSING)), _time(fm.get("created", MISSING)))
             if t is not None]  # fmt: skip
    return max(times).date().toordinal() if times else None


def _use_days_of(fm: dict[str, Any]) -> int | None:
    value = fm.get("use_days")
    if value is None:  # not recorded: what its other fields prove (the note model's default)
        from vaultmem.core.notes.fields import default_use_days  # the driver's start-up: only here

        count = fm.get("use_count", 1)
        count = count if isinstance(count, int) and not isinstance(count, bool) else 1
        return default_use_days(
            count, _time(fm.get("created", MISSING)), _time(fm.get("last_used", MISSING))
        )
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _known_days(after: int, last: int, added: int) -> set[int]:
    """The days a side surely added since the base's last day ``after``: none when its own last
    day is not later (its new days came from another merge, days unknown); else its last day,
    and every day of ``after+1 .. last`` when it added that many."""
    if last <= after:
        return set()
    if added == last - after:
        return set(range(after + 1, last + 1))
    return {last}


def _use_days(sides: tuple[dict[str, Any], dict[str, Any], dict[str, Any]],
              has_base: bool) -> object:  # fmt: skip
    """``use_days`` of both sides: base + the distinct days of both sides' new uses.

    A side's new days are not the base's, lie on or before its own last day, and include that
    day when it is later than the base's (``touch`` adds a day only then). Where both sides'
    days are known this way (one new day after the base's last, or every day since) the count
    is exact; otherwise the fewest days the two sides can share (a lower bound: promotion never
    comes early), never below the larger side nor above base + both increments.
    """
    counts = [_use_days_of(fm) for fm in sides]
    if any(c is None for c in counts):
        return MISSING
    b, o, t = (int(c) for c in counts)  # type: ignore[arg-type]
    if not has_base or o < b or t < b:
        return max(o, t)
    added_o, added_t = o - b, t - b
    start, last_o, last_t = (_last_day(fm) for fm in sides)
    if start is None or last_o is None or last_t is None:
        return max(o, t)
    known_o = _known_days(start, last_o, added_o)
    known_t = _known_days(start, last_t, added_t)
    # the days a side added beyond its known ones may fall on the other side's known days (on or
    # before its own last day); the rest are days of their own, which both sides may share
    free_o = len({d for d in known_t - known_o if d <= last_o})
    free_t = len({d for d in known_o - known_t if d <= last_t})
    extra = max(added_o - len(known_o) - free_o, added_t - len(known_t) - free_t, 0)
    return min(b + added_o + added_t, max(o, t, b + len(known_o | known_t) + extra))


def stage_of(key: str, value: object) -> int | None:
    """Position of ``value`` in :data:`STAGES` ``[key]`` (``None`` when it is not a stage)."""
    for n, names in enumerate(STAGES.get(key, ())):
        if value == names or (isinstance(names, tuple) and value in names):
            return n
    return None


def _first_by_name(ours: object, theirs: object) -> object:
    present = [v for v in (ours, theirs) if v is not MISSING and v is not None]
    if len(present) == 1:
        return present[0]
    if not all(isinstance(v, str | int | float) for v in present) or not present:
        return MISSING
    return min(present, key=str)


def _later_stage(key: str, ours: object, theirs: object) -> object:
    a, b = stage_of(key, ours), stage_of(key, theirs)
    if a is None or b is None:
        return MISSING
    if a == b:
        return _first_by_name(ours, theirs)
    return ours if a > b else theirs


def _last_used_side(ours_fm: dict[str, Any], theirs_fm: dict[str, Any], key: str) -> object:
    ours, theirs = ours_fm.get(key, MISSING), theirs_fm.get(key, MISSING)
    a, b = _time(ours_fm.get("last_used", MISSING)), _time(theirs_fm.get("last_used", MISSING))
    if a is None or b is None or a == b:
        return _first_by_name(ours, theirs)
    return ours if a > b else theirs


def _merge_key(key: str, sides: tuple[dict[str, Any], dict[str, Any], dict[str, Any]],
               has_base: bool) -> object:  # fmt: skip
    """The merged value of one key changed differently on both sides, or ``MISSING``."""
    base, ours, theirs = (fm.get(key, MISSING) for fm in sides)
    rule = rule_of(key)
    if rule is Merge.COUNTER:
        return _counter(base, ours, theirs, COUNTER_DEFAULTS[key], has_base)
    if rule is Merge.BOUNDED:
        return _bounded(base, ours, theirs, BOUNDS[key], has_base)
    if rule is Merge.USE_DAYS:
        return _use_days(sides, has_base)
    if rule is Merge.LATEST or rule is Merge.EARLIEST:
        return _pick_time(ours, theirs, latest=rule is Merge.LATEST)
    if rule is Merge.SET:
        return _set_merge(base, ours, theirs, has_base=has_base)
    if rule is Merge.STAGE:
        return _later_stage(key, ours, theirs)
    if rule is Merge.FIRST_BY_NAME:
        return _first_by_name(ours, theirs)
    if rule is Merge.LAST_USED_SIDE:
        return _last_used_side(sides[1], sides[2], key)
    if rule is Merge.LARGER:
        numbers = [v for v in (ours, theirs) if _is_number(v)]
        return max(numbers) if len(numbers) == 2 and all(map(math.isfinite, numbers)) else MISSING
    if rule is Merge.ANY_TRUE:
        flags = [v for v in (ours, theirs) if isinstance(v, bool)]
        return any(flags) if len(flags) == 2 else MISSING
    if rule is Merge.LINES:
        return _lines(base, ours, theirs, has_base=has_base)
    return MISSING  # IDENTITY: two different notes, which merge_note keeps apart


def merge_frontmatter(
    base: dict[str, Any] | None, ours: dict[str, Any], theirs: dict[str, Any]
) -> tuple[dict[str, object], list[str]]:
    """Key-by-key three-way merge (module docstring rules); ``base=None`` = no common ancestor.

    Returns (changes to apply to ``ours``: key → value or ``DELETE``, conflicting keys: an
    identity key, or a value of a type its rule cannot merge).
    """
    has_base = base is not None
    old = base or {}
    sides = (old, ours, theirs)
    changes: dict[str, object] = {}
    conflicts: list[str] = []
    for key in list(ours) + [k for k in theirs if k not in ours]:
        o, t, b = ours.get(key, MISSING), theirs.get(key, MISSING), old.get(key, MISSING)
        repeated = key in _REPEATED_CHANGES
        if _same(o, t) and not (repeated and has_base and not _same(o, b)):
            continue  # the same value; but two equal increments are two sets of uses
        if has_base and _same(o, b):
            changes[key] = DELETE if t is MISSING else t
            continue
        if has_base and _same(t, b):
            continue
        if not has_base and (o is MISSING or t is MISSING):  # known on one side only: keep it
            if o is MISSING:
                changes[key] = t
            continue
        merged = _merge_key(key, sides, has_base)
        if merged is MISSING:
            conflicts.append(key)
        elif not _same(merged, o):
            changes[key] = merged
    return changes, conflicts
