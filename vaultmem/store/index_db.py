"""The sidecar index: SQLite in WAL mode at ``.vaultmem/index.db`` (user guide "Index and graph").

It holds, per note, the path, id, mtime_ns, size, content hash, title, the frontmatter fields as
typed columns (datetimes as epoch seconds), tags, links (raw and resolved) and problems, plus an
FTS5 table over title, body and tags. It is a cache of the vault: a deleted or corrupt file is
rebuilt from the notes without loss.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import operator
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultmem.core.fields import DATETIME_KEYS
from vaultmem.core.link_resolution import note_key
from vaultmem.core.note_parse import ParsedNote
from vaultmem.core.timestamps import to_epoch
from vaultmem.errors import IndexDamagedError, SidecarError
from vaultmem.store.index_links import LinkIndex
from vaultmem.store.index_schema import migrate, migrations_pending, schema_lock
from vaultmem.store.sidecar import ensure_sidecar, is_writable

INDEX_FILE = "index.db"
PARSER_VERSION = 7
"""Bump when parsing changes what is stored for the same bytes; old rows are then re-read."""

FIELD_COLUMNS = (
    "id",
    "type",
    "status",
    "layer",
    "category",
    "created",
    "last_used",
    "use_count",
    "strength",
    "importance",
    "confidence",
    "source",
    "pinned",
    "box",
    "trace",
    "review_count",
    "last_review_at",
    "cross_domain_count",
    "promoted_at",
    "archived_at",
    "resolved_at",
    "valid_until",
    "use_days",
    "supersedes",
    "superseded_by",
    "superseded_at",
    "episode",
    "previous",
)
"""Columns of ``notes`` that hold :class:`~vaultmem.core.fields.MemoryFields` values."""

_INSERT_COLUMNS = (
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
_INSERT_SQL = (
    f"INSERT INTO notes ({', '.join(_INSERT_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(_INSERT_COLUMNS))})"
)
_UPDATE_SQL = f"UPDATE notes SET {', '.join(f'{c} = ?' for c in _INSERT_COLUMNS)} WHERE nid = ?"


_DAMAGE_SIGNS = ("malformed", "not a database", "corrupt", "vtable constructor failed")


def index_error(path: Path, err: sqlite3.Error) -> SidecarError:
    """A SQLite error on the index at ``path`` as a one-line :class:`SidecarError`."""
    message = str(err)
    code = getattr(err, "sqlite_errorname", "")
    if code.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or any(
        sign in message for sign in _DAMAGE_SIGNS
    ):
        return IndexDamagedError(
            path,
            f"the index is damaged ({message}); run `vaultmem index --rebuild` to rebuild it "
            "from the notes (no note is affected)",
        )
    if "readonly" in message or "read-only" in message:
        return SidecarError(path, f"{message}; make .vaultmem/ writable")
    return SidecarError(path, f"the index cannot be used: {message}")


class _Cursor(sqlite3.Cursor):
    r"""A cursor whose SQLite errors are :class:`SidecarError`\ s naming the index file."""

    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        try:
            return super().execute(sql, parameters)
        except sqlite3.Error as err:
            raise index_error(_db_path(self), err) from None

    def executemany(self, sql: str, parameters: Any, /) -> _Cursor:
        try:
            return super().executemany(sql, parameters)
        except sqlite3.Error as err:
            raise index_error(_db_path(self), err) from None

    def executescript(self, script: str, /) -> _Cursor:
        try:
            super().executescript(script)
            return self
        except sqlite3.Error as err:
            raise index_error(_db_path(self), err) from None

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except sqlite3.Error as err:
            raise index_error(_db_path(self), err) from None

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.Error as err:
            raise index_error(_db_path(self), err) from None

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        try:
            return super().fetchmany(size)
        except sqlite3.Error as err:
            raise index_error(_db_path(self), err) from None


class _Connection(sqlite3.Connection):
    """The index's connection: statements run through :class:`_Cursor` (errors mapped).

    Iterating a cursor is left at C speed; a damaged page met only there surfaces as
    ``sqlite3.DatabaseError``, which :func:`index_error` describes for the CLI's last resort.
    """

    db_path: Path = Path(INDEX_FILE)

    def cursor(self, factory: Any = _Cursor) -> _Cursor:  # type: ignore[override]
        cursor: _Cursor = super().cursor(factory)
        return cursor

    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> _Cursor:
        return self.cursor().executemany(sql, parameters)

    def executescript(self, script: str, /) -> _Cursor:
        return self.cursor().executescript(script)


def _db_path(cursor: sqlite3.Cursor) -> Path:
    return getattr(cursor.connection, "db_path", Path(INDEX_FILE))


def discard_index(sidecar: Path) -> None:
    """Delete ``index.db`` and its WAL files (a damaged index; it is rebuilt from the notes)."""
    for name in (INDEX_FILE, INDEX_FILE + "-wal", INDEX_FILE + "-shm"):
        try:
            (sidecar / name).unlink(missing_ok=True)
        except OSError as err:
            raise SidecarError(sidecar / name, f"cannot remove it: {err.strerror}") from None


@dataclass(frozen=True, slots=True)
class FileState:
    """What the index knows of a file without reading it."""

    nid: int
    path: str
    size: int
    mtime_ns: int
    hash: str
    id: str | None


def _json_default(value: object) -> str:
    """YAML gives datetimes and dates; JSON stores them as ISO 8601 text."""
    isoformat = getattr(value, "isoformat", None)
    return str(isoformat()) if callable(isoformat) else str(value)


_FIELD_VALUES = operator.attrgetter(*FIELD_COLUMNS)
_DATETIME_AT = tuple(i for i, column in enumerate(FIELD_COLUMNS) if column in DATETIME_KEYS)
_PINNED_AT = FIELD_COLUMNS.index("pinned")
_TAGS_AT = _INSERT_COLUMNS.index("tags")
"""Where the ``tags`` JSON sits in :func:`_note_values` (checked against the column list)."""


def _note_values(note: ParsedNote, size: int, mtime_ns: int, content_hash: str) -> list[object]:
    f = note.fields
    fields = list(_FIELD_VALUES(f))
    for i in _DATETIME_AT:
        value = fields[i]
        if value is not None:
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


_JSON = json.JSONEncoder(ensure_ascii=False)
"""``json.dumps(value, ensure_ascii=False)`` without making an encoder for each call."""


def _json_list(items: Sequence[str]) -> str:
    return _JSON.encode(list(items)) if items else "[]"


class IndexDB(LinkIndex):
    """A connection to one vault's index. Use :meth:`open`; close with :meth:`close`."""

    def __init__(self, conn: sqlite3.Connection, path: Path, *, recreated: bool) -> None:
        self.conn = conn
        self.path = path
        self.recreated = recreated
        """True when the file was missing or corrupt and has just been created empty."""
        self.read_only = False
        """True when the sidecar is read-only: the index is read as it is and never synced."""

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
        if not is_writable(sidecar):
            return cls._open_read_only(path)
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
        a usable index is replaced by a new one."""
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
        except (sqlite3.DatabaseError, SidecarError):
            if conn is not None:
                conn.close()
            discard_index(sidecar)
            try:
                conn = cls._connect(path)
                migrate(conn)
            except sqlite3.Error as err:
                raise SidecarError(path, f"cannot create the index: {err}") from None
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
                factory=_Connection,
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
        conn = sqlite3.connect(
            path, timeout=30.0, isolation_level=None, check_same_thread=False, factory=_Connection
        )
        conn.db_path = path
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA temp_store=MEMORY")
        conn.execute("PRAGMA cache_size=-16384")  # 16 MB: peak memory ≤ 300 MB at 100k
        return conn

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (rolled back on error)."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            with contextlib.suppress(SidecarError):  # a damaged index may refuse even that
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # ----------------------------------------------------------------- file states
    def file_states(self, *, under: Sequence[str] | None = None) -> dict[str, FileState]:
        """Indexed path → :class:`FileState`, for every note or only ``under`` the given paths.

        ``under`` holds vault-relative paths; each matches itself and every note below it.
        """
        sql = "SELECT nid, path, size, mtime_ns, hash, id FROM notes"
        if under is None:
            return {row[1]: FileState(*row) for row in self.conn.execute(sql)}
        states: dict[str, FileState] = {}
        for rel in under:
            if not rel:
                return self.file_states()
            # "a/" ≤ path < "a0" selects everything under folder a ('0' follows '/')
            rows = self.conn.execute(
                f"{sql} WHERE path = ? OR (path >= ? AND path < ?)", (rel, rel + "/", rel + "0")
            )
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

    def stat_states(self) -> dict[str, tuple[int, int]]:
        """Every indexed path → (size, mtime_ns): all a no-change sync needs to compare."""
        return {
            path: (size, mtime_ns)
            for path, size, mtime_ns in self.conn.execute("SELECT path, size, mtime_ns FROM notes")
        }

    # ----------------------------------------------------------------- attachments
    def attachment_paths(self, *, under: Sequence[str] | None = None) -> set[str]:
        """Indexed attachment paths, all or only ``under`` the given vault-relative paths."""
        sql = "SELECT path FROM attachments"
        if under is None or "" in under:
            return {row[0] for row in self.conn.execute(sql)}
        found: set[str] = set()
        for rel in under:
            rows = self.conn.execute(
                f"{sql} WHERE path = ? OR (path >= ? AND path < ?)", (rel, rel + "/", rel + "0")
            )
            found.update(row[0] for row in rows)
        return found

    def add_attachments(self, paths: Iterable[str]) -> None:
        self.conn.executemany(
            "INSERT OR IGNORE INTO attachments (path, name_key) VALUES (?, ?)",
            [(path, note_key(path)) for path in paths],
        )

    def remove_attachments(self, paths: Iterable[str]) -> None:
        self.conn.executemany("DELETE FROM attachments WHERE path = ?", [(p,) for p in paths])

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
    ) -> int:
        """Insert or replace ``note``'s rows (fields, tags, FTS; links are set separately).

        ``new``: the caller knows the path is not indexed (saves a lookup per note).
        ``moved_from``: the note was indexed at that path and moved to ``note.path``: its rows
        are renamed and refreshed in one update (the nid, so every link to it, stays), and
        links resolved to the old path follow it.
        """
        values = _note_values(note, size, mtime_ns, content_hash)
        tags = note.fields.tags
        searchable = (note.title, note.body, " ".join(tags))
        row = (
            None
            if new
            else (
                self.conn.execute(
                    "SELECT nid, tags FROM notes WHERE path = ?", (moved_from or note.path,)
                ).fetchone()
            )
        )
        if row is not None and moved_from is not None and moved_from != note.path:
            self.conn.execute(
                "UPDATE links SET resolved = ? WHERE resolved = ?", (note.path, moved_from)
            )
        if row is None:
            nid = int(self.conn.execute(_INSERT_SQL, values).lastrowid or 0)
            same_tags = same_text = False
        else:
            # a lifecycle move changes a few fields: the tag and full-text rows, whose
            # rewriting costs most of an update, are kept when what they hold is unchanged
            nid = int(row[0])
            self.conn.execute(_UPDATE_SQL, [*values, nid])
            same_tags = row[1] == values[_TAGS_AT]
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

    def clear(self) -> None:
        """Drop every row (``index --rebuild``). The FTS table is made again from its own
        definition: deleting its rows one by one costs as much as indexing them did."""
        for table in ("links", "tags", "notes", "attachments"):
            self.conn.execute(f"DELETE FROM {table}")
        row = self.conn.execute("SELECT sql FROM sqlite_master WHERE name = 'notes_fts'").fetchone()
        self.conn.execute("DROP TABLE notes_fts")
        self.conn.execute(row[0])

    # ----------------------------------------------------------------- memory columns
    def memory_rows(
        self, where: str = "1", params: Sequence[object] = ()
    ) -> list[tuple[object, ...]]:
        """Rows in :data:`~vaultmem.core.scoring.COLUMN_ORDER` for notes matching ``where``.

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
