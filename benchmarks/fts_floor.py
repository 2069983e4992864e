"""The floor of a cold index's writer: inserting the full-text rows alone.

    python -m benchmarks.fts_floor VAULT [--tokenize "porter unicode61 remove_diacritics 2"]

Reads the ``notes_fts`` rows (rowid, title, body, tags) of the vault's index (build it first:
``vaultmem index --rebuild``), then inserts them into a new FTS5 table of the index's settings
(8 KB pages, WAL, ``synchronous=NORMAL``, FTS5's 16 MB load buffer) in one transaction, 256 rows
per statement as the cold index does, and prints the CPU seconds of the inserts beside those of a
raw read of the vault's notes (walk, read, decode). Run it under ``valgrind --tool=callgrind`` with
``--no-insert`` for the instructions of everything but the inserts. No note is written.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from vaultmem.store.index_connection import INDEX_FILE
from vaultmem.store.index_load import FTS_LOAD_HASH_BYTES
from vaultmem.store.sidecar import SIDECAR_DIR

TOKENIZE = "porter unicode61 remove_diacritics 2"
"""The index's tokenizer (``store/index_schema.py``)."""


def raw_read_seconds(root: Path) -> float:
    """CPU seconds to walk ``root`` and read and decode every ``.md`` note (not the sidecar)."""
    started = time.process_time()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != SIDECAR_DIR]
        for name in files:
            if name.endswith(".md"):
                with open(os.path.join(folder, name), "rb") as handle:
                    handle.read().decode("utf-8", errors="replace")
    return time.process_time() - started


def insert_seconds(rows: list[tuple[object, ...]], tokenize: str) -> float:
    """CPU seconds to insert ``rows`` into a new FTS5 table, as the cold index does."""
    with tempfile.TemporaryDirectory(prefix="vaultmem-fts-floor-") as tmp:
        conn = sqlite3.connect(Path(tmp) / "fts.db", isolation_level=None)
        try:
            conn.execute("PRAGMA page_size=8192")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(
                f"CREATE VIRTUAL TABLE f USING fts5(title, body, tags, tokenize = '{tokenize}')"
            )
            conn.execute("INSERT INTO f (f, rank) VALUES ('hashsize', ?)", (FTS_LOAD_HASH_BYTES,))
            started = time.process_time()
            conn.execute("BEGIN IMMEDIATE")
            for start in range(0, len(rows), 256):
                conn.executemany(
                    "INSERT INTO f (rowid, title, body, tags) VALUES (?, ?, ?, ?)",
                    rows[start : start + 256],
                )
            conn.execute("COMMIT")
            return time.process_time() - started
        finally:
            conn.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--tokenize", default=TOKENIZE)
    parser.add_argument("--no-insert", action="store_true", help="read the rows only")
    args = parser.parse_args(argv)
    index = args.vault / SIDECAR_DIR / INDEX_FILE
    if not index.is_file():
        print(f"{index}: no index; run `vaultmem index --rebuild` first", file=sys.stderr)
        return 1
    source = sqlite3.connect(f"{index.resolve().as_uri()}?mode=ro", uri=True)
    rows = source.execute(
        "SELECT rowid, title, body, tags FROM notes_fts ORDER BY rowid"
    ).fetchall()
    source.close()
    if args.no_insert:
        return 0
    raw = min(raw_read_seconds(args.vault) for _ in range(3))  # the first may fill the cache
    fts = min(insert_seconds(rows, args.tokenize) for _ in range(3))
    print(
        f"{len(rows)} notes: FTS inserts {fts:.3f} s cpu, raw read {raw:.3f} s cpu "
        f"({fts / raw:.1f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
