"""Folders a pass (or an undo) empties are removed: a promoted box member leaves no empty
``Boxes/YYYY-MM-DD/<box>/`` behind. Only folders strictly inside the memory folders, and only
when empty (``os.rmdir`` refuses otherwise, so a file that appears meanwhile is never lost), and
only where no symbolic link lies on the way: a folder swapped for a link after the pass moved
its notes never leads ``rmdir`` to an empty folder elsewhere, in the vault or outside it."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from vaultmem.core.lifecycle.lifecycle_plan import Move
from vaultmem.store.confinement import is_symlinked


def remove_emptied_folders(
    root: Path, paths: Iterable[str], tops: Iterable[str], kept: Iterable[str] = ()
) -> list[str]:
    """Remove the empty folders holding ``paths`` (vault-relative), walking up to, not including,
    the memory folder ``tops`` they lie in. Returns the folders removed, vault-relative.

    ``kept``: paths the run left a note at (:func:`places_left`); the folders holding them are
    not empty and are not tried (an ``rmdir`` refused by a full folder costs the file system
    about as much as one that removes it: a pass that sealed 1,000 boxes tried each box's).
    """
    top_set = {t.strip("/") for t in tops if t.strip("/")}
    base = Path(os.path.realpath(root))
    full: set[str] = set()
    for path in kept:
        folder = path.rpartition("/")[0]
        while folder and folder not in full:
            full.add(folder)
            folder = folder.rpartition("/")[0]
    removed: list[str] = []
    folders = {p.rsplit("/", 1)[0] for p in paths if "/" in p}
    for folder in sorted(folders, key=lambda f: -f.count("/")):
        parts = folder.split("/")
        if not any(folder.startswith(top + "/") for top in top_set):
            continue
        while len(parts) > 1 and "/".join(parts) not in top_set:
            here = "/".join(parts)
            if here in full:  # a note is there (and so in each folder above)
                break
            if is_symlinked(base, here):  # a link on the way: not this folder
                break
            named = base / here
            try:
                os.rmdir(named)
            except OSError:  # not empty, gone already, or not ours to remove
                if named.exists():
                    break
            else:
                removed.append(here)
            parts.pop()
    return removed


def places_left(applied: Iterable[Move]) -> set[str]:
    """Where ``applied`` (moves in the order they were done) left a note: each one's last
    place, and the notes created; not the places moved from, nor the notes deleted."""
    places: set[str] = set()
    for move in applied:
        if move.action == "delete":
            places.discard(move.path)
            continue
        destination = move.destination or move.path
        if destination != move.path:
            places.discard(move.path)
        places.add(destination)
    return places
