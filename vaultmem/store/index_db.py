"""The sidecar index: SQLite in WAL mode at ``.vaultmem/index.db`` (user guide "Index and graph").

It holds, per note, the path, id, mtime_ns, size, content hash, title, the frontmatter fields as
typed columns (datetimes as epoch seconds), tags, links (raw and resolved) and problems, plus an
FTS5 table over title, body and tags. It is a cache of the vault: a deleted or corrupt file is
rebuilt from the notes without loss.

Here are opening (creating, migrating or replacing the file) and the writes; the connection and
its errors are in :mod:`vaultmem.store.index_connection`, a note's row values in
:mod:`vaultmem.store.note_rows`, and the read queries in :mod:`vaultmem.store.index_queries`
(notes, attachments) and :mod:`vaultmem.store.index_links` (links, edges).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from vaultmem.core.links.link_resolution import note_key
from vaultmem.core.notes.note_parse import ParsedNote
from vaultmem.errors import SidecarError
from vaultmem.store.index_connection import (
    INDEX_FILE,
    IndexConnection,
    discard_index,
    index_error,
    is_busy,
    retry_while_busy,
)
from vaultmem.store.index_links import LinkIndex
from vaultmem.store.index_queries import NoteQueries, StoredRow
from vaultmem.store.index_schema import migrate, migrations_pending, schema_lock
from vaultmem.store.note_rows import (
    INSERT_SQL,
    SELECT_SQL,
    TAGS_AT,
    changed_columns,
    note_values,
    update_sql,
)
from vaultmem.store.sidecar import ensure_sidecar, is_writable

PARSER_VERSION = 8
"""Bump when parsing changes what is stored for the same bytes; old rows are then re-read."""
BUSY_WAIT_SECONDS = 30.0
"""How long an opener waits for another connection's lock on the index (SQLite's busy timeout,
and the schema lock's retries of a busy file) before raising
:class:`~vaultmem.errors.IndexBusyError`."""
PAGE_SIZE = 8192
"""Bytes per page of a new index file (SQLite's default is 4096; a file keeps the size it was
made with). Twice the pages' size halves the pages a cold index writes, checkpoints and indexes:
about 6% off a 10,000-note cold index and 10% off a 1,000-note one, with recall slightly faster
and a one-note sync unchanged (16 KB pages doubled its 95th percentile)."""


FULL_DISK_BYTES = 1 << 20
"""Free space (bytes) under which a disk counts as full: SQLite then cannot open its WAL."""


def disk_is_full(folder: Path) -> bool:
    """Whether the file system of ``folder`` has less than :data:`FULL_DISK_BYTES` free."""
    try:
        info = os.statvfs(folder)
    except OSError:
        return False
    return info.f_bavail * info.f_frsize < FULL_DISK_BYTES


class IndexDB(NoteQueries, LinkIndex):
    """A connection to one vault's index. Use :meth:`open`; close with :meth:`close`."""

    def __init__(self, conn: sqlite3.Connection, path: Path, *, recreated: bool) -> None:
        self.conn = conn
        self.path = path
        self.recreated = recreated
        """True when the file was missing or corrupt and has just been created empty."""
        self.read_only = False
        """True when the sidecar is read-only (or its disk full): the index is read as it is and
        never synced."""
        self.read_only_reason = "is read-only"
        """Why the index is read-only, after the sidecar's path: ``is read-only`` or ``is on a
        full disk``."""

    @classmethod
    def open(cls, sidecar: Path) -> IndexDB:
        """Open (creating or migrating) ``sidecar/index.db``; a corrupt file is replaced.

        A read-only sidecar is opened read-only (:attr:`read_only`; nothing is synced). Raises
        :class:`SidecarError` when ``index.db`` is a folder or cannot be opened, and — for
        every later query — :class:`IndexDamagedError` when a page is damaged (the message
        names ``vaultmem index --rebuild``).
        """
        ensure_sidecar(sidecar)
        path = sidecar / INDEX_FILE
        if path.is_dir():
            raise SidecarError(
                path,
                "is a folder, not the index file; remove it (the index is rebuilt from the notes)",
            )
        if not is_writable(sidecar) or (path.is_file() and not os.access(path, os.W_OK)):
            return cls._open_read_only(path)
        try:
            return cls._open_writable(sidecar, path)
        except SidecarError:
            if not disk_is_full(sidecar) or not path.is_file():
                raise
        db = cls._open_read_only(path)  # a full disk: reads still answer from the index
        db.read_only_reason = "is on a full disk"
        return db

    @classmethod
    def _open_writable(cls, sidecar: Path, path: Path) -> IndexDB:
        if path.exists():  # the common case: a current index, opened without any lock
            with contextlib.suppress(sqlite3.DatabaseError, SidecarError):
                conn = cls._connect(path)
                try:
                    conn.execute("SELECT count(*) FROM notes").fetchone()
                    if not migrations_pending(conn):
                        db = cls(conn, path, recreated=False)
                        db._check_parser_version()
                        return db
                except BaseException:
                    conn.close()
                    raise
                conn.close()
        with schema_lock(sidecar):  # new, older or damaged: one opener at a time makes it
            return cls._create_or_migrate(sidecar, path)

    @classmethod
    def _create_or_migrate(cls, sidecar: Path, path: Path) -> IndexDB:
        """Under the schema lock: open ``path``, applying pending migrations; a file that is not
        a usable index is replaced by a new one.

        A busy file is tried again for up to :data:`BUSY_WAIT_SECONDS` and never replaced: other
        openers read it outside the lock, and ``PRAGMA journal_mode=WAL`` reports their shared
        locks at once instead of waiting in SQLite's busy handler. Raises
        :class:`~vaultmem.errors.IndexBusyError` when it stays busy.
        """
        return retry_while_busy(
            lambda: cls._open_or_replace(sidecar, path), path, BUSY_WAIT_SECONDS
        )

    @classmethod
    def _open_or_replace(cls, sidecar: Path, path: Path) -> IndexDB:
        existed = path.exists()
        conn: sqlite3.Connection | None = None
        try:
            conn = cls._connect(path)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            migrate(conn)
            conn.execute("SELECT count(*) FROM notes").fetchone()
            db = cls(conn, path, recreated=not existed)
            db._check_parser_version()
            return db
        except (sqlite3.DatabaseError, SidecarError) as err:
            if conn is not None:
                conn.close()
            if is_busy(err) or disk_is_full(sidecar):  # in use, or no room: not damaged
                raise err if isinstance(err, SidecarError) else index_error(path, err) from None
            discard_index(sidecar)
        try:
            conn = cls._connect(path)
        except sqlite3.Error as err:
            raise SidecarError(path, f"cannot create the index: {err}") from None
        try:
            migrate(conn)
        except BaseException as err:
            conn.close()  # busy (tried again by the caller) or not: no connection left open
            if isinstance(err, sqlite3.Error):
                raise SidecarError(path, f"cannot create the index: {err}") from None
            raise
        db = cls(conn, path, recreated=True)
        db._check_parser_version()
        return db

    @classmethod
    def _open_read_only(cls, path: Path) -> IndexDB:
        if not path.is_file():
            raise SidecarError(
                path.parent,
                "is read-only and holds no index; make it writable (vaultmem keeps its index "
                "there)",
            )
        try:
            conn = sqlite3.connect(
                f"{path.resolve().as_uri()}?mode=ro&immutable=1",
                uri=True,
                isolation_level=None,
                check_same_thread=False,
                factory=IndexConnection,
            )
            conn.db_path = path
            conn.execute("SELECT count(*) FROM notes").fetchone()
            row = conn.execute("SELECT value FROM meta WHERE key = 'parser_version'").fetchone()
        except (sqlite3.Error, SidecarError):
            raise SidecarError(
                path, "is read-only and cannot be read; make .vaultmem/ writable"
            ) from None
        if row is None or row[0] != str(PARSER_VERSION):
            raise SidecarError(
                path, "is read-only and was built by another vaultmem version; make it writable"
            )
        db = cls(conn, path, recreated=False)
        db.read_only = True
        return db

    def _check_parser_version(self) -> None:
        """Rows parsed by another version of the note parser are dropped (re-read on next sync)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'parser_version'").fetchone()
        if row is not None and row[0] == str(PARSER_VERSION):
            return
        with self.transaction():
            if self.conn.execute("SELECT count(*) FROM notes").fetchone()[0]:
                self.clear()
                self.recreated = True
            self.conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('parser_version', ?)",
                (str(PARSER_VERSION),),
            )

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        """A configured connection to ``path``; closed again when a pragma fails (busy: raises
        :class:`~vaultmem.errors.IndexBusyError`)."""
        conn = sqlite3.connect(
            path,
            timeout=BUSY_WAIT_SECONDS,
            isolation_level=None,
            check_same_thread=False,
            factory=IndexConnection,
        )
        conn.db_path = path
        try:
            conn.execute(f"PRAGMA page_size={PAGE_SIZE}")  # a new file only: before WAL fixes it
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA temp_store=MEMORY")
            conn.execute("PRAGMA cache_size=-16384")  # 16 MB: peak memory ≤ 300 MB at 100k
        except BaseException:
            conn.close()
            raise
        return conn

    def close(self) -> None:
        self.conn.close()

    def check_writable(self) -> None:
        """Raise :class:`SidecarError` unless the index can be written: a command that writes a
        note calls it first, so it never writes a note it then fails to index (and a caller
        retrying it never counts a use twice)."""
        files = (self.path, self.path.with_name(self.path.name + "-wal"))
        if self.read_only or any(p.exists() and not os.access(p, os.W_OK) for p in files):
            full = disk_is_full(self.path.parent)
            raise SidecarError(
                self.path,
                f"{'is on a full disk' if full else 'is read-only'}: nothing was written "
                "(vaultmem indexes every note it writes); "
                f"{'free some space' if full else 'make .vaultmem/ writable'}",
            )

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (rolled back on error).

        Inside a transaction this connection has open already, the block joins it: what it
        writes is committed or rolled back with that transaction, by whoever opened it (a pass's
        indexing helper syncs batch after batch in one transaction,
        :mod:`~vaultmem.services.index.pass_indexer`; a savepoint per batch would cost each a
        copy of every page it changes).
        """
        if self.conn.in_transaction:
            yield
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            with contextlib.suppress(SidecarError):  # a damaged index may refuse even that
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # ----------------------------------------------------------------- attachments
    def add_attachments(self, paths: Iterable[str]) -> None:
        self.conn.executemany(
            "INSERT OR IGNORE INTO attachments (path, name_key) VALUES (?, ?)",
            [(path, note_key(path)) for path in paths],
        )

    def remove_attachments(self, paths: Iterable[str]) -> None:
        self.conn.executemany("DELETE FROM attachments WHERE path = ?", [(p,) for p in paths])

    # ----------------------------------------------------------------- writes
    def upsert(
        self,
        note: ParsedNote,
        *,
        size: int,
        mtime_ns: int,
        content_hash: str,
        new: bool = False,
        moved_from: str | None = None,
        stored: StoredRow | None = None,
    ) -> int:
        """Insert or replace ``note``'s rows (fields, tags, FTS; links are set separately).

        ``new``: the caller knows the path is not indexed (saves a lookup per note).
        ``moved_from``: the note was indexed at that path and moved to ``note.path``: its rows
        are renamed and refreshed in one update. Its nid stays, so links resolved to it still
        find it (by ``resolved_nid``); their ``resolved`` path is the caller's to re-resolve, as
        the sync does for every link to the old and the new file name.
        ``stored``: the row indexed at that path (``moved_from`` or the note's own), as
        :meth:`~vaultmem.store.index_queries.NoteQueries.stored_rows` gave it in this transaction
        and unchanged since (saves the lookup); without it, the row is looked up.
        """
        values = note_values(note, size, mtime_ns, content_hash)
        tags = note.fields.tags
        searchable = (note.title, note.body, " ".join(tags))
        row = (
            None
            if new
            else stored or self.conn.execute(SELECT_SQL, (moved_from or note.path,)).fetchone()
        )
        if row is None:
            nid = int(self.conn.execute(INSERT_SQL, values).lastrowid or 0)
            same_tags = same_text = False
        else:
            # a lifecycle move changes a few fields: only those columns are written (each
            # indexed column named costs an index update), and the tag and full-text rows,
            # whose rewriting costs most of an update, are kept when what they hold is unchanged
            nid = int(row[0])
            changed = changed_columns(row[1:], values)
            if changed:
                self.conn.execute(update_sql(changed), [*(values[i] for i in changed), nid])
            same_tags = row[1 + TAGS_AT] == values[TAGS_AT]
            if not same_tags:
                self.conn.execute("DELETE FROM tags WHERE nid = ?", (nid,))
            indexed = self.conn.execute(
                "SELECT title, body, tags FROM notes_fts WHERE rowid = ?", (nid,)
            ).fetchone()
            same_text = indexed is not None and tuple(indexed) == searchable
            if indexed is not None and not same_text:
                self.conn.execute("DELETE FROM notes_fts WHERE rowid = ?", (nid,))
        if tags and not same_tags:
            self.conn.executemany(
                "INSERT INTO tags (nid, tag) VALUES (?, ?)", [(nid, t) for t in tags]
            )
        if not same_text:
            self.conn.execute(
                "INSERT INTO notes_fts (rowid, title, body, tags) VALUES (?, ?, ?, ?)",
                (nid, *searchable),
            )
        return nid

    def update_stat(self, path: str, *, size: int, mtime_ns: int) -> None:
        """Same content, new size/mtime (e.g. ``touch`` of the file without an edit)."""
        self.conn.execute(
            "UPDATE notes SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, path)
        )

    def remove(self, path: str) -> set[int]:
        """Forget a note (its tags, links and FTS row go with it).

        Returns the nids of its former neighbours, whose edge counts change.
        """
        row = self.conn.execute("SELECT nid FROM notes WHERE path = ?", (path,)).fetchone()
        if row is None:
            return set()
        nid = int(row[0])
        neighbours = self.neighbours([nid])
        self.conn.execute("DELETE FROM notes_fts WHERE rowid = ?", (nid,))
        self.conn.execute("DELETE FROM notes WHERE nid = ?", (nid,))
        self.conn.execute(
            "UPDATE links SET resolved = NULL, resolved_nid = NULL WHERE resolved_nid = ?", (nid,)
        )
        return neighbours - {nid}

    def paths_sized(self, *, above: int, at_most: int) -> list[str]:
        """Paths of the notes whose size (bytes) is over ``above`` and at most ``at_most``."""
        rows = self.conn.execute(
            "SELECT path FROM notes WHERE size > ? AND size <= ?", (above, at_most)
        )
        return [row[0] for row in rows]

    def meta_value(self, key: str) -> str | None:
        """The value stored under ``key`` in the index's ``meta`` table (``None``: none)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta_value(self, key: str, value: str) -> None:
        """Store ``value`` under ``key`` in ``meta``, in the caller's transaction."""
        self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def clear(self) -> None:
        """Drop every row (``index --rebuild``). The FTS table is made again from its own
        definition: deleting its rows one by one costs as much as indexing them did."""
        for table in ("links", "tags", "notes", "attachments"):
            self.conn.execute(f"DELETE FROM {table}")
        if self.conn.execute("SELECT count(*) FROM notes_fts_data").fetchone()[0] <= 2:
            return  # as created (its averages and structure records): e.g. a first index
        row = self.conn.execute("SELECT sql FROM sqlite_master WHERE name = 'notes_fts'").fetchone()
        self.conn.execute("DROP TABLE notes_fts")
        self.conn.execute(row[0])
