"""The properties vaultmem reads and writes: one table of name, Obsidian type and merge rule.

The note model (:mod:`vaultmem.core.notes.fields`), the index's columns, the vault template's
``.obsidian/types.json``, git's merge driver and ``doctor --fix``
(:mod:`vaultmem.core.notes.note_merge`) all follow this table; ``tests/test_properties.py`` fails
when a key vaultmem writes has no row. docs/user-guide.md, "Syncing with git", lists the rules.

A rule says what a key becomes when both sides of a merge changed it differently (a key changed
on one side only always takes that side's value). Keys outside the table — a person's own
properties — follow :data:`LINES`: they merge like text lines and never block a merge.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final, NamedTuple


class Merge(StrEnum):
    """How a property merges when both sides changed it (user guide, "Syncing with git")."""

    IDENTITY = "identity"
    """Two values are two different notes: both are kept, the second under a new name."""
    COUNTER = "counter"
    """Base + both sides' increments (each use only ever adds)."""
    BOUNDED = "bounded"
    """Base + both sides' changes, clamped to the key's range."""
    USE_DAYS = "use days"
    """Distinct use days: the union of both sides' new days, as far as their ``last_used`` days
    tell; never below the larger side, never above base + both increments."""
    LARGER = "larger"
    """The larger number."""
    LATEST = "latest"
    """The latest datetime."""
    EARLIEST = "earliest"
    """The earliest datetime."""
    ANY_TRUE = "any true"
    """True when either side is true."""
    SET = "set"
    """Three-way set merge: both sides' additions kept, a removal on either side honoured."""
    STAGE = "stage"
    """The later lifecycle stage (:data:`STAGES`); two values of one stage: the first by name."""
    FIRST_BY_NAME = "first by name"
    """One link or name where either answer is right: the first by name (every machine agrees)."""
    LAST_USED_SIDE = "last used side"
    """A choice: the value of the side that used the memory last (a tie: the first by name)."""
    LINES = "lines"
    """Like text lines: lists merge as sets; two different values are both kept, as a list."""


class Property(NamedTuple):
    """One property: its key, Obsidian property type (``types.json``) and merge rule."""

    name: str
    obsidian: str
    merge: Merge


def _table(*rows: tuple[str, str, Merge]) -> dict[str, Property]:
    return {name: Property(name, obsidian, merge) for name, obsidian, merge in rows}


PROPERTIES: Final = _table(
    # Obsidian's own
    ("aliases", "aliases", Merge.SET),
    ("cssclasses", "multitext", Merge.SET),
    ("tags", "tags", Merge.SET),
    # every memory ("The memory note")
    ("id", "text", Merge.IDENTITY),
    ("type", "text", Merge.IDENTITY),
    ("status", "text", Merge.STAGE),
    ("layer", "text", Merge.STAGE),
    ("category", "text", Merge.LAST_USED_SIDE),
    ("created", "datetime", Merge.EARLIEST),
    ("last_used", "datetime", Merge.LATEST),
    ("use_count", "number", Merge.COUNTER),
    ("strength", "number", Merge.BOUNDED),
    ("importance", "number", Merge.LARGER),
    ("confidence", "number", Merge.BOUNDED),
    ("source", "text", Merge.LAST_USED_SIDE),
    ("pinned", "checkbox", Merge.ANY_TRUE),
    ("box", "text", Merge.FIRST_BY_NAME),
    ("trace", "text", Merge.FIRST_BY_NAME),
    ("related", "multitext", Merge.SET),
    ("review_count", "number", Merge.COUNTER),
    ("last_review_at", "datetime", Merge.LATEST),
    ("cross_domain_count", "number", Merge.COUNTER),
    ("promoted_at", "datetime", Merge.EARLIEST),
    ("archived_at", "datetime", Merge.EARLIEST),
    ("resolved_at", "datetime", Merge.EARLIEST),
    ("valid_until", "datetime", Merge.LATEST),
    ("use_days", "number", Merge.USE_DAYS),
    ("supersedes", "text", Merge.FIRST_BY_NAME),
    ("superseded_by", "text", Merge.FIRST_BY_NAME),
    ("superseded_at", "datetime", Merge.EARLIEST),
    ("episode", "text", Merge.FIRST_BY_NAME),
    ("previous", "text", Merge.FIRST_BY_NAME),
    ("consolidated_from", "multitext", Merge.SET),
    # boxes and traces
    ("start", "datetime", Merge.EARLIEST),
    ("end", "datetime", Merge.LATEST),
    ("updated", "datetime", Merge.LATEST),
    ("topics", "multitext", Merge.SET),
    ("members", "multitext", Merge.SET),
    ("boxes", "multitext", Merge.SET),
)
"""Every property vaultmem reads or writes, by key."""

LIST_TYPES: Final = frozenset({"aliases", "multitext", "tags"})
"""The Obsidian property types whose value is a list (every other type holds one value)."""

LINES: Final = Merge.LINES
"""The rule of every key not in :data:`PROPERTIES` (a person's own properties)."""

COUNTER_DEFAULTS: Final = {"use_count": 1, "review_count": 0, "cross_domain_count": 0}
"""A counter's value when a side lacks it."""
BOUNDS: Final = {"strength": (0.0, 2.0, 1.0), "confidence": (0.0, 1.0, 1.0)}
"""A bounded number's (low, high, default)."""
STAGES: Final[dict[str, tuple[str | tuple[str, ...], ...]]] = {
    "status": ("active", "promoted", "superseded", "archived"),
    "layer": ("working", "episodic", ("semantic", "procedural")),
}
"""Keys merged by lifecycle stage, earliest first; values in one tuple share a stage."""
ADDITIVE: Final = frozenset(
    name for name, p in PROPERTIES.items() if p.merge in (Merge.COUNTER, Merge.BOUNDED)
)
"""Keys where equal changes on both sides are two sets of uses and both count."""


def rule_of(key: str) -> Merge:
    """The merge rule of ``key``: its row's, or :data:`LINES` for a key outside the table."""
    found = PROPERTIES.get(key)
    return found.merge if found is not None else LINES


def obsidian_types() -> dict[str, str]:
    """Key → Obsidian property type, as the vault template's ``.obsidian/types.json`` holds."""
    return {name: p.obsidian for name, p in PROPERTIES.items()}


__all__ = [
    "ADDITIVE", "BOUNDS", "COUNTER_DEFAULTS", "LINES", "LIST_TYPES", "PROPERTIES", "STAGES",
    "Merge", "Property", "obsidian_types", "rule_of",
]  # fmt: skip
