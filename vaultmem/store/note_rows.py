"""A parsed note as its row of the index's ``notes`` table, the same for every way it is written.

:meth:`~vaultmem.store.index_db.IndexDB.upsert` (one note) and
:class:`~vaultmem.store.index_load.BulkLoad` (a whole vault) write these values: the frontmatter
fields as typed columns (datetimes as epoch seconds), tags, related links, problems and
warnings as JSON lists, and the whole frontmatter of box and trace notes only
(docs/user-guide.md, "Index and graph").
"""

from __future__ import annotations

import datetime as dt
import json
import operator
from collections.abc import Sequence
from json.encoder import encode_basestring
from typing import Any

from vaultmem.core.links.link_resolution import note_key
from vaultmem.core.notes.fields import DATETIME_KEYS, MemoryFields
from vaultmem.core.notes.note_parse import ParsedNote
from vaultmem.core.notes.properties import LIST_TYPES, PROPERTIES
from vaultmem.core.notes.timestamps import to_epoch

FIELD_COLUMNS: tuple[str, ...] = tuple(
    key for key in MemoryFields._fields if PROPERTIES[key].obsidian not in LIST_TYPES
)
"""Columns of ``notes`` that hold :class:`~vaultmem.core.notes.fields.MemoryFields` values: every
field of the note model but the lists (tags and related have tables and columns of their own)."""

INSERT_COLUMNS = (
    "path",
    "name_key",
    "mtime_ns",
    "size",
    "hash",
    "title",
    *FIELD_COLUMNS,
    "tags",
    "related",
    "problems",
    "warnings",
    "frontmatter",
)
"""The ``notes`` columns a note's row sets (all but ``nid`` and ``edges``), in the order of
:func:`note_values`."""
INSERT_SQL = (
    f"INSERT INTO notes ({', '.join(INSERT_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(INSERT_COLUMNS))})"
)
SELECT_SQL = f"SELECT nid, {', '.join(INSERT_COLUMNS)} FROM notes WHERE path = ?"
"""A note's nid and stored :data:`INSERT_COLUMNS` values, by path (what :func:`changed_columns`
compares the new values with)."""


def changed_columns(stored: Sequence[object], values: Sequence[object]) -> tuple[int, ...]:
    """Positions in :data:`INSERT_COLUMNS` whose new ``values`` differ from the ``stored`` row.

    A NaN (:data:`SQL_NULL`) equals a stored NULL. Equal values are not written again: SQLite
    rewrites an index entry for every indexed column an ``UPDATE`` names, changed or not, and a
    lifecycle move changes a few fields of a note whose ``id``, ``type`` and file name (each
    indexed) stay the same.
    """
    return tuple(
        i
        for i, (old, new) in enumerate(zip(stored, values, strict=True))
        if not (old == new or (new != new and old is None))  # new != new: a NaN
    )


_UPDATES: dict[tuple[int, ...], str] = {}


def update_sql(columns: tuple[int, ...]) -> str:
    """``UPDATE notes`` of the :data:`INSERT_COLUMNS` at ``columns`` (bound in that order,
    then the ``nid``)."""
    sql = _UPDATES.get(columns)
    if sql is None:
        names = ", ".join(f"{INSERT_COLUMNS[i]} = ?" for i in columns)
        sql = _UPDATES[columns] = f"UPDATE notes SET {names} WHERE nid = ?"
    return sql


def _json_default(value: object) -> str:
    """YAML gives datetimes and dates; JSON stores them as ISO 8601 text."""
    isoformat = getattr(value, "isoformat", None)
    return str(isoformat()) if callable(isoformat) else str(value)


_FIELD_VALUES = operator.itemgetter(*(MemoryFields._fields.index(c) for c in FIELD_COLUMNS))
"""The :data:`FIELD_COLUMNS` of a :class:`MemoryFields`, by position (a third of the cost of
reading them by name)."""
_DATETIME_AT = tuple(i for i, column in enumerate(FIELD_COLUMNS) if column in DATETIME_KEYS)
_PINNED_AT = FIELD_COLUMNS.index("pinned")
TAGS_AT = INSERT_COLUMNS.index("tags")
"""Where the ``tags`` JSON sits in :func:`note_values` (checked against the column list)."""

SQL_NULL = float("nan")
"""What :func:`note_values` gives for a field that is not set: SQLite stores a bound NaN as NULL
(``sqlite3VdbeMemSetDouble`` leaves a NaN as NULL; the test suite pins it), and binding
``None`` costs 0.2 µs a value more than binding a NaN (the ``sqlite3`` module looks for an
adapter for ``None`` every time). An ordinary note leaves 14 of the 28 fields unset: 3 µs of the
6 µs its row took to insert."""


def note_values(note: ParsedNote, size: int, mtime_ns: int, content_hash: str) -> list[object]:
    """The values of :data:`INSERT_COLUMNS` for ``note`` (datetimes as epoch seconds, lists and
    the frontmatter as JSON, a field not set as :data:`SQL_NULL`), as ``upsert`` and the bulk
    load bind them."""
    f = note.fields
    fields: list[Any] = [SQL_NULL if value is None else value for value in _FIELD_VALUES(f)]
    for i in _DATETIME_AT:
        value = fields[i]
        if value is not SQL_NULL:
            aware = type(value) is dt.datetime and value.tzinfo is not None
            fields[i] = value.timestamp() if aware else to_epoch(value)
    fields[_PINNED_AT] = int(fields[_PINNED_AT])
    return [
        note.path,
        note_key(note.path),
        mtime_ns,
        size,
        content_hash,
        note.title,
        *fields,
        _json_list(f.tags),
        _json_list(f.related),
        _json_list(note.problems),
        _json_list([w.describe() for w in note.warnings]) if note.warnings else "[]",
        # box and trace properties (topics, members, boxes) have no column of their own
        json.dumps(note.frontmatter, ensure_ascii=False, default=_json_default)
        if f.type in ("box", "trace")
        else "{}",
    ]


def _json_list(items: Sequence[str]) -> str:
    """``json.dumps(list(items), ensure_ascii=False)`` for a list of strings, written out with
    JSON's own string encoder: 0.25 µs where an encoder's ``encode`` takes 0.9."""
    return "[" + ", ".join(map(encode_basestring, items)) + "]" if items else "[]"


__all__ = [
    "FIELD_COLUMNS", "INSERT_COLUMNS", "INSERT_SQL", "SELECT_SQL", "SQL_NULL", "TAGS_AT",
    "changed_columns", "note_values", "update_sql",
]  # fmt: skip
