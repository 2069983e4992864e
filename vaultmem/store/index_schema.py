"""Numbered migrations of the sidecar index ``.vaultmem/index.db`` (user guide "Index and graph").

Each migration is a function ``mNNN_<what>(conn)``; the ones applied are recorded in
``migrations``. New schema changes are new functions appended to :data:`MIGRATIONS`, never edits
of old ones.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from vaultmem.errors import SidecarError


def m001_notes_links_fts(conn: sqlite3.Connection) -> None:
    """Notes with their fields as typed columns, tags, links, and the FTS5 table."""
    conn.executescript(
        """
        CREATE TABLE notes (
            nid INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            name_key TEXT NOT NULL,
            id TEXT,
            mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL,
            hash TEXT NOT NULL,
            title TEXT NOT NULL,
            type TEXT,
            status TEXT NOT NULL,
            layer TEXT NOT NULL,
            category TEXT NOT NULL,
            created REAL,
            last_used REAL,
            use_count INTEGER NOT NULL,
            strength REAL NOT NULL,
            importance REAL NOT NULL,
            confidence REAL NOT NULL,
            source TEXT NOT NULL,
            pinned INTEGER NOT NULL,
            box TEXT,
            trace TEXT,
            review_count INTEGER NOT NULL,
            last_review_at REAL,
            cross_domain_count INTEGER NOT NULL,
            promoted_at REAL,
            archived_at REAL,
            resolved_at REAL,
            valid_until REAL,
            tags TEXT NOT NULL,
            related TEXT NOT NULL,
            problems TEXT NOT NULL,
            warnings TEXT NOT NULL
        );
        CREATE INDEX notes_id ON notes(id);
        CREATE INDEX notes_name_key ON notes(name_key);
        CREATE INDEX notes_type ON notes(type);
        CREATE TABLE tags (
            nid INTEGER NOT NULL REFERENCES notes(nid) ON DELETE CASCADE,
            tag TEXT NOT NULL
        );
        CREATE INDEX tags_nid ON tags(nid);
        CREATE INDEX tags_tag ON tags(tag COLLATE NOCASE);
        CREATE TABLE links (
            lid INTEGER PRIMARY KEY,
            nid INTEGER NOT NULL REFERENCES notes(nid) ON DELETE CASCADE,
            target TEXT NOT NULL,
            target_key TEXT NOT NULL,
            subpath TEXT,
            kind TEXT NOT NULL,
            resolved TEXT
        );
        CREATE INDEX links_nid ON links(nid);
        CREATE INDEX links_target_key ON links(target_key);
        CREATE INDEX links_resolved ON links(resolved);
        CREATE VIRTUAL TABLE notes_fts USING fts5(
            title, body, tags, tokenize = 'porter unicode61 remove_diacritics 2'
        );
        """
    )


def m002_meta(conn: sqlite3.Connection) -> None:
    """Key/value facts about the index itself (e.g. the parser version its rows came from)."""
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


def m003_frontmatter_json(conn: sqlite3.Connection) -> None:
    """The whole frontmatter as JSON, for properties without a column (box and trace fields)."""
    conn.execute("ALTER TABLE notes ADD COLUMN frontmatter TEXT NOT NULL DEFAULT '{}'")


def m004_edges(conn: sqlite3.Connection) -> None:
    """Resolved link targets by nid (stable across moves) and each note's edge count."""
    conn.executescript(
        """
        ALTER TABLE links ADD COLUMN resolved_nid INTEGER;
        CREATE INDEX links_resolved_nid ON links(resolved_nid);
        ALTER TABLE notes ADD COLUMN edges INTEGER NOT NULL DEFAULT 0;
        """
    )


def m005_attachments(conn: sqlite3.Connection) -> None:
    """Attachment files (images, PDFs, canvases, bases …): links to them resolve by name."""
    conn.executescript(
        """
        CREATE TABLE attachments (
            path TEXT PRIMARY KEY,
            name_key TEXT NOT NULL
        );
        CREATE INDEX attachments_name_key ON attachments(name_key);
        """
    )


def m006_corrections_episodes(conn: sqlite3.Connection) -> None:
    """Columns for the promotion rule (``use_days``), corrections and conversation episodes."""
    conn.executescript(
        """
        ALTER TABLE notes ADD COLUMN use_days INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE notes ADD COLUMN supersedes TEXT;
        ALTER TABLE notes ADD COLUMN superseded_by TEXT;
        ALTER TABLE notes ADD COLUMN superseded_at REAL;
        ALTER TABLE notes ADD COLUMN episode TEXT;
        ALTER TABLE notes ADD COLUMN previous TEXT;
        """
    )


def m007_few_row_indexes(conn: sqlite3.Connection) -> None:
    """Partial indexes over the few notes that planning looks up in every pass: notes with
    problems or warnings (left as they are) and superseded notes. Each leads with ``type`` so
    queries that filter on it use them instead of scanning every memory."""
    conn.executescript(
        """
        CREATE INDEX notes_hands_off ON notes(type, path)
            WHERE problems != '[]' OR warnings != '[]';
        CREATE INDEX notes_warned ON notes(type, path) WHERE warnings != '[]';
        CREATE INDEX notes_superseded ON notes(type, path) WHERE status = 'superseded';
        """
    )


def m008_links_into_by_nid(conn: sqlite3.Connection) -> None:
    """Links into a note are looked up by its nid (``links_resolved_nid``), which a move keeps;
    the index on the ``resolved`` path text goes: every move rewrote entries of it, and it was
    the costliest index to build (0.4 s of a 100,000-note cold index)."""
    conn.execute("DROP INDEX IF EXISTS links_resolved")


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    m001_notes_links_fts,
    m002_meta,
    m003_frontmatter_json,
    m004_edges,
    m005_attachments,
    m006_corrections_episodes,
    m007_few_row_indexes,
    m008_links_into_by_nid,
)


SCHEMA_LOCK_FILE = "index.db.lock"
"""In the sidecar: held while an index is created, migrated or replaced (:func:`schema_lock`)."""


def migrations_pending(conn: sqlite3.Connection) -> bool:
    """True when ``conn``'s index lacks a migration (a new file, or one from an older vaultmem)."""
    try:
        done = {row[0] for row in conn.execute("SELECT name FROM migrations")}
    except sqlite3.OperationalError:  # no migrations table yet
        return True
    return any(m.__name__ not in done for m in MIGRATIONS)


@contextmanager
def schema_lock(sidecar: Path, timeout_seconds: float = 60.0) -> Iterator[None]:
    """Hold the sidecar's schema lock: one opener at a time creates, migrates or replaces the
    index, in this process (another thread: the watcher) or another one.

    Migrations run statement by statement (``executescript`` commits as it goes), so two openers
    of a new index would otherwise both apply ``m001``; the loser took the "table exists" error
    for a damaged file and deleted the index the winner had just made and kept using. Raises
    :class:`~vaultmem.errors.SidecarError` when the lock cannot be taken.
    """
    from filelock import FileLock, Timeout  # only when a schema is made: reads never load it

    lock = FileLock(str(sidecar / SCHEMA_LOCK_FILE), timeout=timeout_seconds)
    try:
        lock.acquire()
    except (Timeout, OSError) as err:
        raise SidecarError(
            sidecar / SCHEMA_LOCK_FILE, f"cannot take the index's schema lock: {err}"
        ) from None
    try:
        yield
    finally:
        lock.release()


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply the migrations not yet recorded; returns the names applied (in order)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    done = {row[0] for row in conn.execute("SELECT name FROM migrations")}
    applied: list[str] = []
    for migration in MIGRATIONS:
        name = migration.__name__
        if name in done:
            continue
        with conn:
            migration(conn)
            conn.execute(
                "INSERT INTO migrations (name, applied_at) VALUES (?, datetime('now'))", (name,)
            )
        applied.append(name)
    return applied
