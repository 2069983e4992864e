"""Loading a whole vault into an empty index at once (a cold index, ``index --rebuild``).

The rows are exactly those :meth:`~vaultmem.store.index_db.IndexDB.upsert` and
:meth:`~vaultmem.store.index_links.LinkIndex.replace_links` write one note at a time; only the
way they get in differs: many rows per statement (``executemany``), note ids chosen by the
caller (so links can name their target's id before it is stored), and the secondary indexes of
``notes``, ``tags``, ``links`` and ``attachments`` dropped for the load and built again after it
(sorting once is much cheaper than keeping a B-tree in order row by row). All of it runs in the
caller's transaction: a load that fails or is killed leaves the index as it was.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from vaultmem.core.notes.note_parse import ParsedNote
from vaultmem.errors import SidecarError
from vaultmem.store.index_links import LinkValues
from vaultmem.store.note_rows import INSERT_COLUMNS, note_values

NoteValues = tuple[object, ...]
"""A ``notes`` row: nid, then the columns :meth:`IndexDB.upsert` writes, in its order."""
TagValues = tuple[int, str]
FtsValues = tuple[int, str, str, str]
"""(nid, title, body, tags joined by spaces) — the ``notes_fts`` row of a note."""
RowValues = tuple[list[NoteValues], list[TagValues], list[FtsValues], list[LinkValues], list[str]]
"""A :class:`NoteRows` as plain lists: notes, tags, FTS rows, links, missing paths."""

_NOTE_SQL = (
    f"INSERT INTO notes (nid, {', '.join(INSERT_COLUMNS)}) "
    f"VALUES ({', '.join('?' * (len(INSERT_COLUMNS) + 1))})"
)
_LOADED_TABLES = ("notes", "tags", "links", "attachments")
FTS_LOAD_HASH_BYTES = 16 << 20
"""FTS5's buffer of pending terms during a load (its default: 1 MB). Each time it fills, FTS5
writes a segment and later merges segments: 16 MB writes a sixteenth as many, which cuts the
FTS share of a cold index by about a fifth; the buffer's memory is freed at the commit."""
_FTS_DEFAULT_HASH_BYTES = 1 << 20
SMALL_LOAD_NOTES = 200
"""Below this many notes a load leaves the secondary indexes and FTS5's buffer as they are:
dropping and making again the thirteen indexes and changing the setting take more time than
keeping the indexes in order row by row saves (about 0.5 ms of a 100-note cold index)."""


class NoteRows:
    """Every row of a batch of notes, ready for :meth:`BulkLoad.add` (plain tuples: cheap to
    send from a worker process). Starts empty; :meth:`add_note` fills it.

    A plain class rather than a dataclass: a cold index imports this module on its way, and
    making a dataclass costs about half a millisecond at import.
    """

    __slots__ = ("notes", "tags", "fts", "links", "missing")

    def __init__(self) -> None:
        self.notes: list[NoteValues] = []
        self.tags: list[TagValues] = []
        self.fts: list[FtsValues] = []
        self.links: list[LinkValues] = []
        self.missing: list[str] = []
        """Paths that vanished (or became links out of the vault) before they could be read."""

    def add_note(
        self,
        nid: int,
        note: ParsedNote,
        *,
        size: int,
        mtime_ns: int,
        content_hash: str,
        links: Sequence[LinkValues],
    ) -> None:
        """The rows of one parsed note (as ``upsert`` stores them) and its resolved links."""
        self.notes.append((nid, *note_values(note, size, mtime_ns, content_hash)))
        tags = note.fields.tags
        self.tags += [(nid, tag) for tag in tags]
        self.fts.append((nid, note.title, note.body, " ".join(tags)))
        self.links += links

    def as_values(self) -> RowValues:
        """The rows as plain lists, which :mod:`marshal` writes (a forked worker sends them)."""
        return self.notes, self.tags, self.fts, self.links, self.missing

    @classmethod
    def from_values(cls, values: RowValues) -> NoteRows:
        """The rows :meth:`as_values` gave, back as a :class:`NoteRows`."""
        rows = cls()
        rows.notes, rows.tags, rows.fts, rows.links, rows.missing = values
        return rows


class BulkLoad:
    """Rows added to an empty index in batches; see :func:`bulk_load`."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def add(self, rows: NoteRows) -> None:
        """Insert one batch (notes first: links and tags refer to them)."""
        conn = self.conn
        conn.executemany(_NOTE_SQL, rows.notes)
        if rows.tags:
            conn.executemany("INSERT INTO tags (nid, tag) VALUES (?, ?)", rows.tags)
        conn.executemany(
            "INSERT INTO notes_fts (rowid, title, body, tags) VALUES (?, ?, ?, ?)", rows.fts
        )
        if rows.links:
            conn.executemany(
                "INSERT INTO links (nid, target, target_key, subpath, kind, resolved, "
                "resolved_nid) VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows.links,
            )


@contextmanager
def bulk_load(conn: sqlite3.Connection, notes: int) -> Iterator[BulkLoad]:
    """Load rows of about ``notes`` notes into an index whose tables are empty, inside the
    caller's transaction.

    From :data:`SMALL_LOAD_NOTES` notes the secondary indexes of the loaded tables are dropped
    first and created again (from their own stored ``CREATE INDEX`` text, so the schema stays
    exactly as migrated) when the block ends, and FTS5 buffers :data:`FTS_LOAD_HASH_BYTES` of
    terms meanwhile. When it raises they are not: the caller's rollback restores them (and
    FTS5's setting) with the rows. The rows stored are the same either way.
    """
    if notes < SMALL_LOAD_NOTES:
        yield BulkLoad(conn)
        return
    placeholders = ", ".join("?" * len(_LOADED_TABLES))
    indexes = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
        f"AND tbl_name IN ({placeholders}) ORDER BY name",
        _LOADED_TABLES,
    ).fetchall()
    for name, _sql in indexes:
        conn.execute(f'DROP INDEX "{name}"')
    _fts_hash_size(conn, FTS_LOAD_HASH_BYTES)
    yield BulkLoad(conn)
    _fts_hash_size(conn, _FTS_DEFAULT_HASH_BYTES)
    # the setting is stored in notes_fts_config; the index is left as migrations made it (a
    # SQLite built "defensive" refuses writes to that table: then it holds the default)
    with contextlib.suppress(SidecarError):
        conn.execute("DELETE FROM notes_fts_config WHERE k = 'hashsize'")
    for _name, sql in indexes:
        conn.execute(sql)


def _fts_hash_size(conn: sqlite3.Connection, size: int) -> None:
    conn.execute("INSERT INTO notes_fts (notes_fts, rank) VALUES ('hashsize', ?)", (size,))


__all__ = [
    "SMALL_LOAD_NOTES", "BulkLoad", "FtsValues", "NoteRows", "NoteValues", "RowValues", "TagValues",
    "bulk_load",
]  # fmt: skip
