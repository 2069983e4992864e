"""Embedding vectors in the sidecar: ``.vaultmem/vectors.db`` (SQLite, WAL).

A file of its own beside ``index.db``: rebuilding the index never throws embeddings away, and a
corrupt or deleted ``vectors.db`` only costs re-embedding (it is a cache; the vault stays the
source of truth). Two tables, created by numbered migrations (:data:`MIGRATIONS`):

- ``vectors(key, model, dim, tier, data)`` — one vector per
  :func:`~vaultmem.core.notes.content_hash.embedding_key` (SHA-256 of model + embedded text),
  stored at its tier's precision (:mod:`vaultmem.core.recall.quantisation`). A note whose text did
  not change is never embedded again, even after a move, a rename or a ``touch``; two notes with the
  same text share one vector.
- ``assigned(path, note_hash, key, model)`` — which vector a note has, and the index's content
  hash of the note when it was assigned (a note whose ``notes.hash`` still equals ``note_hash``
  needs no look at all).

:meth:`VectorStore.matrix` loads every assigned vector of one model into memory once (unit
length, float32, shape ``(n, d)``) and keeps it until any connection writes the file.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from vaultmem.core.recall.quantisation import decode, encode, unit
from vaultmem.core.recall.vector_fusion import projection
from vaultmem.store.index_connection import is_busy, retry_while_busy
from vaultmem.store.sidecar import ensure_sidecar

VECTORS_FILE = "vectors.db"
SCREEN_FROM = 20_000
"""Vaults with more vectors than this search a projection first (see :class:`VectorMatrix`)."""


def m001_vectors(conn: sqlite3.Connection) -> None:
    """Vectors by content key and the note → vector assignment."""
    for statement in (
        "CREATE TABLE vectors (key TEXT PRIMARY KEY, model TEXT NOT NULL, dim INTEGER NOT NULL,"
        " tier TEXT NOT NULL, data BLOB NOT NULL)",
        "CREATE TABLE assigned (path TEXT PRIMARY KEY, note_hash TEXT NOT NULL,"
        " key TEXT NOT NULL, model TEXT NOT NULL)",
        "CREATE INDEX assigned_key ON assigned(key)",
        "CREATE INDEX assigned_model ON assigned(model)",
    ):
        conn.execute(statement)


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (m001_vectors,)


def _migrate(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    done = {row[0] for row in conn.execute("SELECT name FROM migrations")}
    for migration in MIGRATIONS:
        if migration.__name__ in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            recorded = conn.execute(  # asked again under the write lock: another opener
                "SELECT 1 FROM migrations WHERE name = ?", (migration.__name__,)
            ).fetchone()  # may have applied it since (it would fail as "table exists")
            if recorded:
                conn.execute("COMMIT")
                continue
            migration(conn)
            conn.execute(
                "INSERT INTO migrations (name, applied_at) VALUES (?, datetime('now'))",
                (migration.__name__,),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


@dataclass(frozen=True, slots=True)
class VectorMatrix:
    """Every assigned vector of one model: ``paths[i]`` has unit vector ``vectors[i]``.

    Above :data:`SCREEN_FROM` vectors, ``basis`` (d × 96) and ``reduced`` (n × 96) hold a
    principal-component projection that screens candidates before exact cosines.
    """

    paths: list[str]
    vectors: npt.NDArray[np.float32]
    row: dict[str, int]
    basis: npt.NDArray[np.float32] | None = None
    reduced: npt.NDArray[np.float32] | None = None

    def __len__(self) -> int:
        return len(self.paths)


@dataclass(frozen=True, slots=True)
class Assignment:
    """One note's vector: its key, the note hash it was made from, and the model."""

    path: str
    note_hash: str
    key: str
    model: str


class VectorStore:
    """``.vaultmem/vectors.db``: see the module docstring. Thread-safe (one lock)."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self._lock = threading.RLock()
        self._cache: dict[str, tuple[int, VectorMatrix]] = {}

    @classmethod
    def open(cls, sidecar: Path) -> VectorStore:
        """Open (creating or migrating) ``sidecar/vectors.db``; a corrupt file is replaced.

        A file another connection holds is busy, not corrupt: it is waited for (up to
        :data:`~vaultmem.store.index_db.BUSY_WAIT_SECONDS`) and never replaced; raises
        :class:`~vaultmem.errors.IndexBusyError` when it stays busy.
        """
        from vaultmem.store import index_db

        ensure_sidecar(sidecar)
        path = sidecar / VECTORS_FILE
        conn = retry_while_busy(
            lambda: cls._open_or_replace(path), path, index_db.BUSY_WAIT_SECONDS
        )
        return cls(conn, path)

    @classmethod
    def _open_or_replace(cls, path: Path) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = None
        try:
            conn = cls._connect(path)
            _migrate(conn)
            conn.execute("SELECT count(*) FROM vectors").fetchone()
            return conn
        except sqlite3.DatabaseError as err:
            if conn is not None:
                conn.close()
            if is_busy(err):  # in use, not damaged: deleting it would pull it from under them
                raise
        for suffix in ("", "-wal", "-shm"):
            path.with_name(VECTORS_FILE + suffix).unlink(missing_ok=True)
        conn = cls._connect(path)
        try:
            _migrate(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        from vaultmem.store import index_db

        conn = sqlite3.connect(
            path, timeout=index_db.BUSY_WAIT_SECONDS, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
        except BaseException:
            conn.close()
            raise
        return conn

    def close(self) -> None:
        with self._lock:
            self.conn.close()

    # ------------------------------------------------------------------ reading
    def assignments(self, model: str | None = None) -> dict[str, Assignment]:
        """Every assignment (of ``model`` when given), by path."""
        sql = "SELECT path, note_hash, key, model FROM assigned"
        params: tuple[str, ...] = ()
        if model is not None:
            sql += " WHERE model = ?"
            params = (model,)
        with self._lock:
            rows = self.conn.execute(sql, params).fetchall()
        return {str(r[0]): Assignment(str(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows}

    def known_keys(self, keys: Iterable[str]) -> set[str]:
        """The subset of ``keys`` that have a stored vector."""
        wanted = list(dict.fromkeys(keys))
        found: set[str] = set()
        with self._lock:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ", ".join("?" * len(chunk))
                found.update(
                    str(r[0])
                    for r in self.conn.execute(
                        f"SELECT key FROM vectors WHERE key IN ({marks})", chunk
                    )
                )
        return found

    def vector(self, key: str) -> npt.NDArray[np.float32] | None:
        """The stored vector of ``key`` (dequantised, unit length), or ``None``."""
        with self._lock:
            row = self.conn.execute(
                "SELECT tier, dim, data FROM vectors WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        return unit(decode(bytes(row[2]), str(row[0]), int(row[1])))

    def tier_counts(self, model: str) -> dict[str, tuple[int, int]]:
        """Per tier: (vectors, bytes of their blobs) for ``model``."""
        with self._lock:
            rows = self.conn.execute(
                "SELECT tier, count(*), sum(length(data)) FROM vectors WHERE model = ? "
                "GROUP BY tier",
                (model,),
            ).fetchall()
        return {str(t): (int(n), int(b or 0)) for t, n, b in rows}

    def _version(self) -> int:
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def matrix(self, model: str) -> VectorMatrix:
        """Every assigned vector of ``model`` in memory (cached until the file changes)."""
        with self._lock:
            version = self._version()
            cached = self._cache.get(model)
            if cached is not None and cached[0] == version:
                return cached[1]
            rows = self.conn.execute(
                "SELECT a.path, v.tier, v.dim, v.data FROM assigned a "
                "JOIN vectors v ON v.key = a.key WHERE a.model = ? ORDER BY a.path",
                (model,),
            ).fetchall()
            paths = [str(r[0]) for r in rows]
            if rows:
                dim = int(rows[0][2])
                vectors = np.empty((len(rows), dim), dtype=np.float32)
                for i, (_path, tier, d, data) in enumerate(rows):
                    vectors[i] = decode(bytes(data), str(tier), int(d))[:dim]
                vectors = unit(vectors)
            else:
                vectors = np.zeros((0, 0), dtype=np.float32)
            basis = reduced = None
            if len(paths) > SCREEN_FROM:
                basis = projection(vectors)
                reduced = np.ascontiguousarray(vectors @ basis)
            matrix = VectorMatrix(
                paths, vectors, {p: i for i, p in enumerate(paths)}, basis, reduced
            )
            self._cache[model] = (version, matrix)
            return matrix

    # ------------------------------------------------------------------ writing
    def _changed(self) -> None:
        self._cache.clear()

    def put(
        self,
        model: str,
        items: Sequence[tuple[str, npt.ArrayLike]],
        *,
        tier: str = "active",
    ) -> None:
        """Store vectors ``(key, vector)`` of ``model`` (existing keys are left as they are)."""
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                for key, vector in items:
                    x = np.asarray(vector, dtype=np.float32).ravel()
                    self.conn.execute(
                        "INSERT OR IGNORE INTO vectors (key, model, dim, tier, data) "
                        "VALUES (?, ?, ?, ?, ?)",
                        (key, model, int(x.size), tier, encode(x, tier)),
                    )
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self._changed()

    def assign(self, assignments: Sequence[Assignment]) -> None:
        """Record which vector each note has (replacing earlier assignments of those paths)."""
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                self.conn.executemany(
                    "INSERT OR REPLACE INTO assigned (path, note_hash, key, model) "
                    "VALUES (?, ?, ?, ?)",
                    [(a.path, a.note_hash, a.key, a.model) for a in assignments],
                )
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self._changed()

    def forget_paths(self, paths: Iterable[str]) -> int:
        """Drop the assignments of ``paths`` (notes that left the index); returns how many."""
        gone = list(paths)
        if not gone:
            return 0
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                self.conn.executemany("DELETE FROM assigned WHERE path = ?", [(p,) for p in gone])
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self._changed()
        return len(gone)

    def retier(self, model: str, tiers: dict[str, str]) -> int:
        """Re-encode vectors whose tier differs from ``tiers[key]``; returns how many changed.

        Requantising from a lower precision never regains precision: a vector only moves to a
        *coarser* tier (active → warm → cold → archive), never back.
        """
        order = {"active": 0, "warm": 1, "cold": 2, "archive": 3}
        changed = 0
        with self._lock:
            rows = self.conn.execute(
                "SELECT key, tier, dim, data FROM vectors WHERE model = ?", (model,)
            ).fetchall()
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                for key, tier, dim, data in rows:
                    wanted = tiers.get(str(key))
                    if wanted is None or order[wanted] <= order[str(tier)]:
                        continue
                    vector = decode(bytes(data), str(tier), int(dim))
                    self.conn.execute(
                        "UPDATE vectors SET tier = ?, data = ? WHERE key = ?",
                        (wanted, encode(vector, wanted), key),
                    )
                    changed += 1
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self._changed()
        return changed
