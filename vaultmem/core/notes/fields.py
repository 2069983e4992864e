"""The memory fields of a note's frontmatter, normalised once at the parse boundary.

docs/user-guide.md, "The memory note", lists the keys, their Obsidian property types and defaults.
Raw frontmatter is a plain dict (whatever YAML gave); :func:`read_fields` turns it into
:class:`MemoryFields` with aware UTC datetimes, numbers in range and tuples of strings, and reports
every value of the wrong type as a :class:`FieldWarning` (the default is used for scoring; the note
is left alone).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Mapping
from typing import NamedTuple

from vaultmem.core.notes.properties import LIST_TYPES, PROPERTIES
from vaultmem.core.notes.timestamps import parse_datetime

MANAGED_TYPES = ("memory", "box", "trace")
STATUSES = ("active", "promoted", "archived", "superseded")
LAYERS = ("working", "episodic", "semantic", "procedural")
SOURCES = ("human", "agent", "import", "consolidation")
CATEGORIES = (
    "fact",
    "preference",
    "correction",
    "entity",
    "decision",
    "relationship",
    "principle",
    "commitment",
    "moment",
    "skill",
)

DATETIME_KEYS = (
    "created",
    "last_used",
    "last_review_at",
    "promoted_at",
    "archived_at",
    "resolved_at",
    "valid_until",
    "superseded_at",
)
"""Keys whose values are datetimes (Obsidian property type ``datetime``)."""


class FieldWarning(NamedTuple):
    """A frontmatter value of the wrong type; the default was used in its place."""

    key: str
    value: object
    problem: str

    def describe(self) -> str:
        """The key and the problem, e.g. ``strength: 'high' is not a number; using the default``."""
        return f"{self.key}: {self.value!r} {self.problem}; using the default"

    def message(self, path: str) -> str:
        """One line naming the note and the key: ``STM/x.md: strength: 'high' is not a number…``."""
        return f"{path}: {self.describe()}"


class MemoryFields(NamedTuple):
    """Typed view of the memory note's keys. Datetimes are aware UTC; ``None`` = absent.

    The keys: docs/user-guide.md, "The memory note". Immutable; ``fields._replace(key=value)``
    gives a changed copy. A named tuple: every note read makes one, in 0.4 µs where a frozen
    dataclass took 2.3 µs; and making the class costs start-up 0.3 ms instead of 1.9.
    """

    id: str | None = None
    type: str | None = None
    status: str = "active"
    layer: str = "working"
    category: str = "fact"
    created: dt.datetime | None = None
    last_used: dt.datetime | None = None
    use_count: int = 1
    strength: float = 1.0
    importance: float = 0.5
    confidence: float = 1.0
    source: str = "human"
    pinned: bool = False
    tags: tuple[str, ...] = ()
    box: str | None = None
    trace: str | None = None
    related: tuple[str, ...] = ()
    review_count: int = 0
    last_review_at: dt.datetime | None = None
    cross_domain_count: int = 0
    promoted_at: dt.datetime | None = None
    archived_at: dt.datetime | None = None
    resolved_at: dt.datetime | None = None
    valid_until: dt.datetime | None = None
    use_days: int = 1
    """Distinct UTC days the memory was used on, its creation day included (promotion rule)."""
    supersedes: str | None = None
    superseded_by: str | None = None
    superseded_at: dt.datetime | None = None
    episode: str | None = None
    previous: str | None = None

    @property
    def managed(self) -> bool:
        """True for notes vaultmem manages: ``type`` memory, box or trace ("The vault")."""
        return self.type in MANAGED_TYPES

    @property
    def access_count(self) -> int:
        """Mnemon's and engram's ``access_count`` = ``use_count - 1`` ("The memory note")."""
        return max(0, self.use_count - 1)


_TAG_SPLIT = re.compile(r"[,\s]+")


def normalise_tags(value: object) -> tuple[str, ...]:
    """Obsidian tags from a list or a ``"a, b"`` / ``"#a #b"`` string; no ``#``, blanks, repeats."""
    items: list[object]
    if value is None:
        return ()
    if isinstance(value, str):
        items = list(_TAG_SPLIT.split(value))
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        raise ValueError("is not a list of tags")
    tags: list[str] = []
    for item in items:
        if item is None:
            continue
        if not isinstance(item, str | int | float) or isinstance(item, bool):
            raise ValueError("is not a list of tags")
        tag = str(item).strip().lstrip("#").strip()
        if tag and tag not in tags:
            tags.append(tag)
    return tuple(tags)


def _link_list(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(str(v) for v in value)
    raise ValueError("is not a list of links")


def _number(value: object, low: float, high: float) -> float:
    if (type(value) is float or type(value) is int) and low <= value <= high:
        return float(value)  # the common case (NaN fails the range)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError("is not a number")
    if not low <= float(value) <= high:
        raise ValueError(f"is outside {low:g}..{high:g}")
    return float(value)


MAX_COUNT = 2**53
"""The largest count read (``use_count``, ``use_days``, ``review_count``, …): the largest whole
number Obsidian (JavaScript) keeps exactly, far inside SQLite's 64-bit integers. A larger value
is a wrong-typed value, so no count overflows the index or a sum."""


def _count(value: object, low: int) -> int:
    if type(value) is int and low <= value <= MAX_COUNT:
        return value  # the common case
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError("is not a whole number")
    if float(value) != int(value) or not low <= int(value) <= MAX_COUNT:
        raise ValueError(f"is not a whole number in {low}..2^53")
    return int(value)


def _text(value: object) -> str:
    if type(value) is str:  # the common case
        if text := value.strip():
            return text
        raise ValueError("is empty")
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise ValueError("is not text")
    text = str(value).strip()
    if not text:
        raise ValueError("is empty")
    return text


def _checkbox(value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError("is not true or false")
    return value


def _optional_text(value: object) -> str | None:
    """A key whose default is ``None``: ``[null]`` (a one-item list of nothing) is that too."""
    return None if value is None else _text(value)


def _count_from_1(value: object) -> int:
    if type(value) is int and 1 <= value <= MAX_COUNT:
        return value  # the common case, without a second call
    return _count(value, 1)


def _count_from_0(value: object) -> int:
    if type(value) is int and 0 <= value <= MAX_COUNT:
        return value
    return _count(value, 0)


def _fraction(value: object) -> float:
    if type(value) is float and 0.0 <= value <= 1.0:
        return value  # the common case (NaN fails the range)
    return _number(value, 0.0, 1.0)


def _strength(value: object) -> float:
    if type(value) is float and 0.0 <= value <= 2.0:
        return value
    return _number(value, 0.0, 2.0)


def _datetime(value: object) -> dt.datetime:
    try:
        return parse_datetime(value)
    except ValueError:
        raise ValueError("is not a datetime") from None


_CONVERTERS: dict[str, Callable[[object], object]] = {
    "id": _optional_text,
    "type": _optional_text,
    "status": _text,
    "layer": _text,
    "category": _text,
    "use_count": _count_from_1,
    "strength": _strength,
    "importance": _fraction,
    "confidence": _fraction,
    "source": _text,
    "pinned": _checkbox,
    "tags": normalise_tags,
    "box": _optional_text,
    "trace": _optional_text,
    "related": _link_list,
    "review_count": _count_from_0,
    "cross_domain_count": _count_from_0,
    "use_days": _count_from_1,
    "supersedes": _optional_text,
    "superseded_by": _optional_text,
    "episode": _optional_text,
    "previous": _optional_text,
    **dict.fromkeys(DATETIME_KEYS, _datetime),
}
"""The converter of each key read, in the order its warnings are listed (a value ``None`` is
never converted: the key keeps its default)."""

_LIST_KEYS = frozenset(
    key for key in _CONVERTERS if PROPERTIES[key].obsidian in LIST_TYPES
)
"""Keys whose Obsidian type is a list (the property table); every other key reads a one-item
list as its item."""

_READERS: dict[str, tuple[int, Callable[[object], object], bool]] = {
    key: (MemoryFields._fields.index(key), convert, key not in _LIST_KEYS)
    for key, convert in _CONVERTERS.items()
}
"""Key → (its place in :class:`MemoryFields`, its converter, whether a one-item list is read as
its item)."""
_WARNING_ORDER = {key: i for i, key in enumerate(_CONVERTERS)}
_DEFAULTS = tuple(
    None if name == "use_days" else MemoryFields._field_defaults[name]
    for name in MemoryFields._fields
)
"""Each field's default, ``use_days`` ``None`` (worked out from the others when not read)."""
_CREATED = MemoryFields._fields.index("created")
_LAST_USED = MemoryFields._fields.index("last_used")
_USE_COUNT = MemoryFields._fields.index("use_count")
_USE_DAYS = MemoryFields._fields.index("use_days")


def _unwrapped(key: str, value: object) -> object:
    """A one-item list (``status: [archived]``, written by Obsidian where a vault declares the
    property a list) read as its item for keys that hold one value; other values as they are."""
    if key not in _LIST_KEYS and isinstance(value, list) and len(value) == 1:
        return value[0]
    return value


def default_use_days(use_count: int, created: dt.datetime | None,
                     last_used: dt.datetime | None) -> int:
    """``use_days`` of a note that does not record it: 1, or 2 when it was used again on a later
    UTC day than its creation (the most its fields can prove)."""
    if use_count <= 1 or created is None or last_used is None:
        return 1
    return 2 if last_used.date() > created.date() else 1


def read_fields(
    raw: Mapping[str, object], *, fallback_time: dt.datetime | None = None
) -> tuple[MemoryFields, list[FieldWarning]]:
    """Normalise raw frontmatter into :class:`MemoryFields`.

    ``fallback_time`` stands in for a missing ``created`` (the store passes the file's mtime);
    a missing ``last_used`` is ``created``. Never raises on bad values: each one becomes a
    :class:`FieldWarning` (listed in the order of the keys in :class:`MemoryFields`, datetimes
    last) and its default is used (docs/user-guide.md, "The memory note", wrong-typed values).
    ``layer`` values outside :data:`LAYERS` are kept as written (they decay like ``working``).
    """
    # one pass over the note's own keys (most notes have fewer than the 30 read), each value
    # put in its place of the named tuple, made at the end without keyword arguments
    values = list(_DEFAULTS)
    warnings: list[FieldWarning] = []
    readers = _READERS
    for key, value in raw.items():
        reader = readers.get(key)
        if reader is None or value is None:  # absent or empty: the default
            continue
        at, convert, unwrap = reader
        try:
            if unwrap and isinstance(value, list) and len(value) == 1:
                converted = convert(value[0])
            else:
                converted = convert(value)
        except ValueError as err:
            warnings.append(FieldWarning(key, value, str(err)))
            continue
        values[at] = converted
    if len(warnings) > 1:
        warnings.sort(key=lambda warning: _WARNING_ORDER[warning.key])
    created = values[_CREATED]
    if created is None and fallback_time is not None:
        created = values[_CREATED] = parse_datetime(fallback_time)
    last_used = values[_LAST_USED]
    if last_used is None:
        last_used = values[_LAST_USED] = created
    if values[_USE_DAYS] is None:
        values[_USE_DAYS] = default_use_days(values[_USE_COUNT], created, last_used)  # type: ignore[arg-type]
    return MemoryFields._make(values), warnings
