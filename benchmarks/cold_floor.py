"""How fast a cold index could be on this machine: its parts measured one by one, in one run.

    python -m benchmarks.cold_floor VAULT [VAULT ...] [--repeat 3] [--json]

For each vault, in this one process, the CPU seconds of (the least of ``--repeat`` runs each):

- **raw read**: walk the vault and read and decode every ``.md`` note (the benchmark's baseline);
- **parse**: what the cold index's worker processes do, all of it here: read each note, parse its
  frontmatter, title, tags and links, resolve the links, and make its rows
  (:func:`vaultmem.services.index.index_bulk.batch_rows`);
- **writer**: what the cold index's one SQLite connection does with those rows, into an empty
  index in a temporary folder: the bulk load (notes, tags, links, FTS5), the secondary indexes
  made again, the edge counts, the commit and the checkpoint at close
  (:func:`vaultmem.store.index_load.bulk_load`); of which **FTS5** alone.

From them it prints the least wall-clock time any schedule of that work could take on
``--cores`` cores: the writer is one connection, so never under the writer alone; and all of it
shares the cores, so never under (parse + writer) / cores. Both are divided by the raw read: a
cold index cannot come closer to the raw read than that floor without doing less work or doing
it faster. No note is read twice into the index, and no note is written: the vault is only read.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.fts_floor import raw_read_seconds

_FTS_SQL = "INSERT INTO notes_fts (rowid, title, body, tags) VALUES (?, ?, ?, ?)"


def _least(repeat: int, run: Callable[[], float]) -> float:
    return min(run() for _ in range(repeat))


def floor(root: Path, *, repeat: int = 3, cores: int = 2) -> dict[str, Any]:
    """The parts of a cold index of ``root`` in CPU seconds, and the floor they set (see the
    module text). Raises ``ValueError`` when the vault holds no note."""
    from vaultmem.core.links.link_resolution import LinkResolver
    from vaultmem.services.index.index_bulk import BATCH_NOTES, _LoadState, batch_rows
    from vaultmem.services.index.index_reads import parse_read
    from vaultmem.services.index.index_sync import _read
    from vaultmem.services.index.template_folders import template_folders
    from vaultmem.services.index.vault_walk import scan_vault
    from vaultmem.store.index_db import IndexDB
    from vaultmem.store.index_load import NoteRows, bulk_load
    from vaultmem.store.settings_file import load_settings

    settings = load_settings(root)
    attachments: set[str] = set()
    paths = sorted(scan_vault(root, settings, attachments=attachments, stats=False))
    if not paths:
        raise ValueError(f"{root}: no notes")
    nid_of = {rel: nid for nid, rel in enumerate(paths, 1)}
    templates = template_folders(root)
    batches = [
        [(rel, nid_of[rel]) for rel in paths[i : i + BATCH_NOTES]]
        for i in range(0, len(paths), BATCH_NOTES)
    ]
    rows: list[NoteRows] = []

    def parse() -> float:
        state = _LoadState(
            root, templates, LinkResolver([*paths, *attachments]), dict(nid_of), _read, parse_read
        )
        started = time.process_time()
        made = [batch_rows(state, batch) for batch in batches]
        spent = time.process_time() - started
        rows[:] = made
        return spent

    def write(fts_only: bool) -> float:
        with tempfile.TemporaryDirectory(prefix="vaultmem-cold-floor-") as tmp:
            db = IndexDB.open(Path(tmp))
            started = time.process_time()
            try:
                with db.transaction():
                    pairs: list[tuple[int, int]] = []
                    with bulk_load(db.conn, len(paths)) as load:
                        if not fts_only:
                            db.add_attachments(sorted(attachments))
                        for batch in rows:
                            if fts_only:
                                db.conn.executemany(_FTS_SQL, batch.fts)
                                continue
                            load.add(batch)
                            pairs += [
                                (v[0], v[6]) for v in batch.links if v[6] == v[6] and v[6] != v[0]
                            ]
                    if not fts_only:
                        db.set_edges(pairs, fresh=True)
            finally:
                db.close()  # the checkpoint: part of the writer's work
            return time.process_time() - started

    raw = _least(repeat, lambda: raw_read_seconds(root))
    parsed = _least(repeat, parse)
    writer = _least(repeat, lambda: write(False))
    fts = _least(repeat, lambda: write(True))
    least_wall = max(writer, (parsed + writer) / cores)
    return {
        "vault": str(root),
        "notes": len(paths),
        "raw_read_s": raw,
        "parse_s": parsed,
        "writer_s": writer,
        "fts_s": fts,
        "cores": cores,
        "floor_s": least_wall,
        "floor_ratio": least_wall / raw,
    }


def _line(result: dict[str, Any]) -> str:
    raw = result["raw_read_s"]
    return (
        f"{Path(result['vault']).name}: {result['notes']:,} notes | raw read {raw:.3f} s cpu | "
        f"parse {result['parse_s']:.3f} s ({result['parse_s'] / raw:.1f}x) | "
        f"writer {result['writer_s']:.3f} s ({result['writer_s'] / raw:.1f}x; "
        f"FTS5 alone {result['fts_s']:.3f} s, {result['fts_s'] / raw:.1f}x) | "
        f"floor on {result['cores']} cores {result['floor_s']:.3f} s = "
        f"{result['floor_ratio']:.1f}x the raw read"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.cold_floor", description=__doc__.split("\n")[0]
    )
    parser.add_argument("vaults", type=Path, nargs="+", metavar="VAULT")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each part (least kept)")
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", action="store_true", help="print JSON lines")
    args = parser.parse_args(argv)
    for vault in args.vaults:
        try:
            result = floor(vault.resolve(), repeat=args.repeat, cores=args.cores)
        except (ValueError, OSError, sqlite3.Error) as err:
            print(f"{vault}: {err}", file=sys.stderr)
            return 1
        print(json.dumps(result) if args.json else _line(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
