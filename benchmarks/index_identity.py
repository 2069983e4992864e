"""Digest of everything a cold index stores, to prove that a change to the indexer stores the same.

    python -m benchmarks.index_identity VAULT [VAULT ...] [--out FILE] [--in-process]

Each vault is copied to a temporary folder (the original is not written to), indexed cold
(``sync_index(rebuild=True)``), and every table is read back in a fixed order: ``notes`` (every
column, ``edges`` included), ``tags``, ``links``, ``attachments``, ``meta`` (keys that hold a time
left out), the schema (``sqlite_master``), the FTS rows (``notes_fts``) and its terms as
``fts5vocab`` sees them (``row``: term, documents, occurrences; ``instance``: term, document,
column, offset). One line per vault and table prints the row count and a SHA-256 of the rows; run
it before and after a change and compare the outputs (``diff``). ``--in-process`` reads every note
in this process (no worker processes), the path a small vault takes.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

_TIME_KEYS = ("synced_at", "updated_at", "built_at", "indexed_at")

QUERIES = {
    "notes": "SELECT * FROM notes ORDER BY nid",
    "tags": "SELECT nid, tag FROM tags ORDER BY nid, rowid",
    "links": "SELECT * FROM links ORDER BY lid",
    "attachments": "SELECT * FROM attachments ORDER BY path",
    "meta": "SELECT key, value FROM meta ORDER BY key",
    "schema": "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name",
    "fts_rows": "SELECT rowid, title, body, tags FROM notes_fts ORDER BY rowid",
    "fts_vocab_row": "SELECT term, doc, cnt FROM temp.vocab_row ORDER BY term",
    "fts_vocab_instance": (
        "SELECT term, doc, col, offset FROM temp.vocab_instance ORDER BY term, doc, col, offset"
    ),
}


def _digest(rows: Iterable[Sequence[object]]) -> tuple[int, str]:
    sha = hashlib.sha256()
    count = 0
    for row in rows:
        sha.update(repr(tuple(row)).encode("utf-8", "surrogatepass"))
        sha.update(b"\n")
        count += 1
    return count, sha.hexdigest()[:16]


def digests(index: Path) -> dict[str, tuple[int, str]]:
    """Table → (rows, digest) of the index file at ``index``."""
    conn = sqlite3.connect(index)
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.vocab_row USING fts5vocab(main, notes_fts, row)")
        conn.execute(
            "CREATE VIRTUAL TABLE temp.vocab_instance USING fts5vocab(main, notes_fts, instance)"
        )
        out: dict[str, tuple[int, str]] = {}
        for name, sql in QUERIES.items():
            rows: Iterable[Sequence[object]] = conn.execute(sql)
            if name == "meta":
                rows = (r for r in rows if r[0] not in _TIME_KEYS and not str(r[0]).endswith("_at"))
            elif name == "schema":
                rows = (r for r in rows if not str(r[1]).startswith("sqlite_"))
            out[name] = _digest(rows)
        return out
    finally:
        conn.close()


def cold_index(source: Path, *, in_process: bool) -> dict[str, tuple[int, str]]:
    """Copy ``source``, index the copy cold, and return :func:`digests` of its index."""
    from vaultmem.services.index import index_sync
    from vaultmem.store.index_db import IndexDB
    from vaultmem.store.settings_file import load_settings
    from vaultmem.store.sidecar import SIDECAR_DIR

    with tempfile.TemporaryDirectory(prefix="vaultmem-identity-") as tmp:
        root = Path(tmp) / source.name
        shutil.copytree(source, root, symlinks=True, ignore=shutil.ignore_patterns(SIDECAR_DIR))
        db = IndexDB.open(root / SIDECAR_DIR)
        start = index_sync.worker_start
        if in_process:
            index_sync.worker_start = lambda notes: None
        try:
            index_sync.sync_index(root, db, load_settings(root), rebuild=True)
        finally:
            index_sync.worker_start = start
            db.close()
        return digests(root / SIDECAR_DIR / "index.db")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("vaults", nargs="+", type=Path)
    parser.add_argument("--in-process", action="store_true", help="no worker processes")
    args = parser.parse_args(argv)
    for vault in args.vaults:
        for table, (count, digest) in cold_index(vault, in_process=args.in_process).items():
            print(f"{vault.name}\t{table}\t{count}\t{digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
