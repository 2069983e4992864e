"""Small index lookups that annotate listed notes: conflict markers and box membership.

Used by ``recall`` (each hit's ``conflicted`` flag and ``episode``), ``list`` and ``status``;
kept apart from :mod:`vaultmem.services.memories.memory_view` so recall starts without its tables.
"""

from __future__ import annotations

from collections.abc import Sequence

from vaultmem.core.links.link_resolution import note_key
from vaultmem.core.notes.note_parse import CONFLICT_PROBLEM
from vaultmem.store.index_db import IndexDB


def conflicted_paths(db: IndexDB, among: Sequence[str] | None = None) -> set[str]:
    """Paths of the indexed notes that hold git conflict markers (read from their "ours" side).

    ``among``: look only at these vault-relative paths (a page of recall hits), not the whole
    index — a full scan costs tens of milliseconds at 100,000 notes.
    """
    if among is None:
        rows = db.conn.execute(
            "SELECT path FROM notes WHERE problems LIKE ?", (f"%{CONFLICT_PROBLEM}%",)
        )
    elif not among:
        return set()
    else:
        marks = ", ".join("?" * len(among))
        rows = db.conn.execute(
            f"SELECT path FROM notes WHERE path IN ({marks}) AND problems LIKE ?",
            (*among, f"%{CONFLICT_PROBLEM}%"),
        )
    return {row[0] for row in rows}


def box_notes_of(db: IndexDB, paths: Sequence[str]) -> dict[str, str]:
    """Path of each memory among ``paths`` → path of the box note it belongs to (if indexed)."""
    if not paths:
        return {}
    marks = ", ".join("?" * len(paths))
    boxes = {
        str(path): note_key(str(box).strip().strip("[]").split("|")[0])
        for path, box in db.conn.execute(
            f"SELECT path, box FROM notes WHERE path IN ({marks}) AND box IS NOT NULL",
            tuple(paths),
        )
    }
    if not boxes:
        return {}
    keys = sorted(set(boxes.values()))
    found = dict(
        db.conn.execute(
            f"SELECT name_key, path FROM notes WHERE type = 'box' "
            f"AND name_key IN ({', '.join('?' * len(keys))})",
            tuple(keys),
        ).fetchall()
    )
    return {path: found[key] for path, key in boxes.items() if key in found}


__all__ = ["box_notes_of", "conflicted_paths"]
