"""The index's SQLite connection: every error names ``index.db`` and says what to do.

A statement that fails raises :class:`~vaultmem.errors.SidecarError` with one line fit to show a
person; a damaged file raises :class:`~vaultmem.errors.IndexDamagedError`, which names ``vaultmem
index --rebuild``. The index is a cache of the notes, so a damaged one is discarded and rebuilt
without loss (docs/user-guide.md, "Index and graph").
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from vaultmem.errors import IndexBusyError, IndexDamagedError, SidecarError

INDEX_FILE = "index.db"

_DAMAGE_SIGNS = ("malformed", "not a database", "corrupt", "vtable constructor failed")
_BUSY_SIGNS = ("database is locked", "database table is locked")
T = TypeVar("T")


def _says_damaged(err: sqlite3.Error) -> bool:
    code = getattr(err, "sqlite_errorname", "")
    message = str(err)
    return code.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or any(
        sign in message for sign in _DAMAGE_SIGNS
    )


def _says_busy(err: sqlite3.Error) -> bool:
    code = getattr(err, "sqlite_errorname", "")
    message = str(err)
    return code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or any(
        sign in message for sign in _BUSY_SIGNS
    )


def index_error(path: Path, err: sqlite3.Error) -> SidecarError:
    """A SQLite error on the index at ``path`` as a one-line :class:`SidecarError`."""
    message = str(err)
    if _says_damaged(err):
        return IndexDamagedError(
            path,
            f"the index is damaged ({message}); run `vaultmem index --rebuild` to rebuild it "
            "from the notes (no note is affected)",
        )
    if _says_busy(err):
        return IndexBusyError(
            path, f"the index is busy ({message}): another vaultmem holds it; try again"
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


class IndexConnection(sqlite3.Connection):
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


def is_busy(err: BaseException) -> bool:
    """True when ``err`` says another connection holds the index's lock (the file is sound).

    Such a file must never be discarded as damaged: another thread or process has it open, and
    deleting it under them loses their writes (and, in one process, SQLite's shared lock
    bookkeeping can then map a stale ``-shm`` file: a bus error).
    """
    if isinstance(err, IndexBusyError):
        return True
    return isinstance(err, sqlite3.Error) and _says_busy(err) and not _says_damaged(err)


def retry_while_busy(attempt: Callable[[], T], path: Path, seconds: float) -> T:
    """``attempt()``, called again with a growing pause (5 ms to 0.25 s) while it fails because
    the file at ``path`` is busy (:func:`is_busy`), for up to ``seconds``.

    Other errors pass through at once; a file still busy then raises
    :class:`~vaultmem.errors.IndexBusyError` naming ``path``.
    """
    deadline = time.monotonic() + seconds
    delay = 0.005
    while True:
        try:
            return attempt()
        except (sqlite3.Error, IndexBusyError) as err:
            if not is_busy(err):
                raise
            if time.monotonic() + delay > deadline:
                if isinstance(err, IndexBusyError):
                    raise
                raise index_error(path, err) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.25)


def discard_index(sidecar: Path) -> None:
    """Delete ``index.db`` and its WAL files (a damaged index; it is rebuilt from the notes)."""
    for name in (INDEX_FILE, INDEX_FILE + "-wal", INDEX_FILE + "-shm"):
        try:
            (sidecar / name).unlink(missing_ok=True)
        except OSError as err:
            raise SidecarError(sidecar / name, f"cannot remove it: {err.strerror}") from None


__all__ = [
    "INDEX_FILE",
    "IndexConnection",
    "discard_index",
    "index_error",
    "is_busy",
    "retry_while_busy",
]
