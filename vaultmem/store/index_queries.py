"""Read queries of the sidecar index over notes and attachments (mixed into ``IndexDB``).

What a sync compares without reading a file (:class:`FileState`: size, mtime, content hash),
the attachments the index knows, the memory columns the scores are computed from, one note's
row, and the lookups of a note by id, title or file name (docs/user-guide.md, "Index and
graph"). Link queries are in :mod:`vaultmem.store.index_links`.
"""

from __future__ import annotations

import json
import operator
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from vaultmem.store.note_rows import INSERT_COLUMNS, SELECT_SQL


class FileState(NamedTuple):
    """What the index knows of a file without reading it."""

    nid: int
    path: str
    size: int
    mtime_ns: int
    hash: str
    id: str | None

    @classmethod
    def of_row(cls, row: StoredRow) -> FileState:
        """The state a :meth:`NoteQueries.stored_rows` row holds."""
        return cls(*_STATE_OF_ROW(row))


StoredRow = tuple[Any, ...]
"""A note's stored row: its nid, then its :data:`~vaultmem.store.note_rows.INSERT_COLUMNS`."""
SELECT_MANY_SQL = SELECT_SQL.replace("WHERE path = ?", "WHERE path IN")
PATH_AT = 1 + INSERT_COLUMNS.index("path")
_STATE_OF_ROW = operator.itemgetter(
    0, *(1 + INSERT_COLUMNS.index(c) for c in ("path", "size", "mtime_ns", "hash", "id"))
)


def prefix_bounds(prefix: str) -> tuple[str, str]:
    """``(low, high)``: ``low <= text AND text < high`` holds for exactly the texts that begin
    with ``prefix`` (non-empty) under SQLite's BINARY collation, and lets a query search an
    index by range (``substr(path, 1, n) = ?`` reads every row): ``"STM/"`` → ``("STM/",
    "STM0")``."""
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)


UNDER_GROUP = 100
"""Paths matched by one query of :func:`_under` (three parameters each, within SQLite's limit)."""


def _under(paths: Sequence[str]) -> Iterator[tuple[str, tuple[str, ...]]]:
    """``WHERE`` clauses and their parameters that select each of ``paths`` (vault-relative)
    and every path below it, :data:`UNDER_GROUP` paths a query."""
    for start in range(0, len(paths), UNDER_GROUP):
        group = paths[start : start + UNDER_GROUP]
        # "a/" ≤ path < "a0" selects everything under folder a ('0' follows '/')
        where = " OR ".join(["path = ? OR (path >= ? AND path < ?)"] * len(group))
        yield f"WHERE {where}", tuple(p for rel in group for p in (rel, rel + "/", rel + "0"))


SCAN_ATTACHMENTS_PER_PATH = 8
"""Up to this many indexed attachments per path asked about, :meth:`NoteQueries.attachment_paths`
reads them all and picks those under the paths here: planning a query of 100 ranges costs more
(0.3 ms a query, for an empty table) than reading 800 short paths."""


def _within(path: str, wanted: set[str]) -> bool:
    """Whether ``path`` or a folder it lies in is one of ``wanted``."""
    if path in wanted:
        return True
    slash = path.find("/")
    while slash != -1:
        if path[:slash] in wanted:
            return True
        slash = path.find("/", slash + 1)
    return False


class NoteQueries:
    """Note and attachment queries of :class:`~vaultmem.store.index_db.IndexDB` (mixed in; uses
    ``conn``)."""

    conn: sqlite3.Connection

    # ----------------------------------------------------------------- file states
    def file_states(self, *, under: Sequence[str] | None = None) -> dict[str, FileState]:
        """Indexed path → :class:`FileState`, for every note or only ``under`` the given paths.

        ``under`` holds vault-relative paths; each matches itself and every note below it.
        """
        sql = "SELECT nid, path, size, mtime_ns, hash, id FROM notes"
        if under is None or "" in under:
            return {row[1]: FileState(*row) for row in self.conn.execute(sql)}
        states: dict[str, FileState] = {}
        for where, params in _under(under):
            rows = self.conn.execute(f"{sql} {where}", params)
            states.update((row[1], FileState(*row)) for row in rows)
        return states

    def nids_with_keys(self, keys: Iterable[str]) -> dict[str, int]:
        """Path → nid of the notes whose lower-cased file name is in ``keys``."""
        key_list = list(set(keys))
        out: dict[str, int] = {}
        for start in range(0, len(key_list), 500):
            chunk = key_list[start : start + 500]
            out.update(
                self.conn.execute(
                    "SELECT path, nid FROM notes "
                    f"WHERE name_key IN ({', '.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
            )
        return out

    def file_states_for(self, paths: Iterable[str]) -> dict[str, FileState]:
        """:class:`FileState` of the given indexed paths (others are left out)."""
        wanted = sorted(set(paths))
        states: dict[str, FileState] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            rows = self.conn.execute(
                "SELECT nid, path, size, mtime_ns, hash, id FROM notes "
                f"WHERE path IN ({', '.join('?' * len(chunk))})",
                chunk,
            )
            states.update((row[1], FileState(*row)) for row in rows)
        return states

    def stored_rows(self, paths: Iterable[str]) -> dict[str, StoredRow]:
        """The stored row (:data:`~vaultmem.store.note_rows.SELECT_SQL`'s columns: nid, then
        :data:`~vaultmem.store.note_rows.INSERT_COLUMNS`) of each given indexed path (others are
        left out), 500 paths a query: what :meth:`~vaultmem.store.index_db.IndexDB.upsert`
        compares a note's new values with, fetched for many notes at once."""
        wanted = sorted(set(paths))
        rows: dict[str, StoredRow] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            found = self.conn.execute(
                f"{SELECT_MANY_SQL} ({', '.join('?' * len(chunk))})", chunk
            )
            rows.update((row[PATH_AT], row) for row in found)
        return rows

    def stat_states(self) -> dict[str, tuple[int, int]]:
        """Every indexed path → (size, mtime_ns): all a no-change sync needs to compare."""
        return {
            path: (size, mtime_ns)
            for path, size, mtime_ns in self.conn.execute("SELECT path, size, mtime_ns FROM notes")
        }

    def stat_columns(self) -> tuple[list[str], list[int]]:
        """Every indexed path, and flat each one's size and mtime_ns (``[size0, mtime0, size1,
        …]``): :meth:`stat_states` without a tuple per note, for a walker in another process
        (a third less time than the map at 100,000 notes, and cheaper to send)."""
        paths: list[str] = []
        stats: list[int] = []
        add, extend = paths.append, stats.extend
        for path, size, mtime_ns in self.conn.execute("SELECT path, size, mtime_ns FROM notes"):
            add(path)
            extend((size, mtime_ns))
        return paths, stats

    # ----------------------------------------------------------------- attachments
    def attachment_paths(self, *, under: Sequence[str] | None = None) -> set[str]:
        """Indexed attachment paths, all or only ``under`` the given vault-relative paths."""
        sql = "SELECT path FROM attachments"
        if under is None or "" in under:
            return {row[0] for row in self.conn.execute(sql)}
        held = self.conn.execute("SELECT count(*) FROM attachments").fetchone()[0]
        if held <= SCAN_ATTACHMENTS_PER_PATH * len(under):  # all read: no 100-way OR to plan
            wanted = set(under)
            return {path for (path,) in self.conn.execute(sql) if _within(path, wanted)}
        found: set[str] = set()
        for where, params in _under(under):
            found.update(row[0] for row in self.conn.execute(f"{sql} {where}", params))
        return found

    def attachments_with_keys(self, keys: Iterable[str]) -> list[str]:
        """Paths of the attachments whose lower-cased file name is in ``keys``."""
        key_list = [key for key in set(keys) if not key.endswith(".md")]
        out: list[str] = []
        for start in range(0, len(key_list), 500):
            chunk = key_list[start : start + 500]
            out += [
                row[0]
                for row in self.conn.execute(
                    "SELECT path FROM attachments "
                    f"WHERE name_key IN ({', '.join('?' * len(chunk))})",
                    chunk,
                )
            ]
        return out

    def note_count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM notes").fetchone()[0])

    def all_paths(self) -> list[str]:
        return [row[0] for row in self.conn.execute("SELECT path FROM notes")]

    # ----------------------------------------------------------------- memory columns
    def memory_rows(
        self, where: str = "1", params: Sequence[object] = ()
    ) -> list[tuple[object, ...]]:
        """Rows in :data:`~vaultmem.core.scoring.scoring.COLUMN_ORDER` for notes matching ``where``.

        ``edges`` = distinct other notes linked to or from the note ("Scores", EI), kept up to date
        by :meth:`recount_edges` at every sync. Rows come in index order, not sorted.
        """
        return self.conn.execute(
            f"""
            SELECT n.path, n.id, n.type, n.status, n.layer, n.category, n.source, n.created,
                   n.last_used, n.use_count, n.strength, n.importance, n.confidence, n.pinned,
                   n.resolved_at, n.use_days, n.edges
            FROM notes n WHERE {where}
            """,
            tuple(params),
        ).fetchall()

    def note_row(self, path: str) -> dict[str, object] | None:
        """Every column of the note at ``path`` as a dict (``None`` if not indexed)."""
        cursor = self.conn.execute("SELECT * FROM notes WHERE path = ?", (path,))
        row = cursor.fetchone()
        if row is None:
            return None
        return {d[0]: v for d, v in zip(cursor.description, row, strict=True)}

    def frontmatter_of(
        self, where: str, params: Sequence[object] = ()
    ) -> list[tuple[str, dict[str, Any]]]:
        """(path, frontmatter) of box and trace notes matching ``where`` (SQL over ``notes n``).

        Only box and trace notes keep their whole frontmatter in the index; others give ``{}``.
        """
        rows = self.conn.execute(
            f"SELECT n.path, n.frontmatter FROM notes n WHERE {where} ORDER BY n.path",
            tuple(params),
        )
        return [(path, json.loads(text)) for path, text in rows]

    def paths_by_id(self, note_id: str) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT path FROM notes WHERE id = ?", (note_id,))]

    def paths_by_title(self, title: str) -> list[str]:
        """Paths whose title equals ``title`` case-insensitively (managed notes first)."""
        rows = self.conn.execute(
            "SELECT path FROM notes WHERE title = ? COLLATE NOCASE "
            "ORDER BY (type IN ('memory', 'box', 'trace')) DESC, path",
            (title,),
        )
        return [r[0] for r in rows]

    def paths_with_name(self, key: str) -> list[str]:
        """Paths whose lower-cased file name is ``key`` (e.g. ``"foo.md"``)."""
        return [
            r[0] for r in self.conn.execute("SELECT path FROM notes WHERE name_key = ?", (key,))
        ]


__all__ = ["FileState", "NoteQueries", "prefix_bounds"]
