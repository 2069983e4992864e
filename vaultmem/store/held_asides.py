"""Notes a write holds aside, seen from a read: put back when their write was killed.

A write renames the note it replaces to a private aside name first
(:mod:`vaultmem.store.note_files`); a kill in between leaves the note only there. A command
that only reads (``list``, ``recall``, ``show``, ``status``) finds it missing from the vault:
before it drops the note from the index it asks :func:`held_aside`, which finishes the killed
write when no vaultmem write is in flight, so the note is back for every command.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from vaultmem.errors import LockedError, SidecarError
from vaultmem.store.interrupted_writes import recover_interrupted_writes
from vaultmem.store.note_files import ASIDE_SUFFIX
from vaultmem.store.vault_lock import held_in_process, vault_lock


def set_aside_names(folder: Path) -> frozenset[str]:
    """The names of the notes in ``folder`` a write holds aside (killed, or still in flight)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return frozenset()
    held = set()
    for name in names:
        if name.startswith(".") and name.endswith(ASIDE_SUFFIX):
            note, _, _token = name[1 : -len(ASIDE_SUFFIX)].rpartition(".")
            if note:
                held.add(note)
    return frozenset(held)


def held_aside(path: Path, root: Path, sidecar: Path, listings: dict[Path, frozenset[str]]) -> bool:
    """Whether a write holds the missing note ``path`` aside; a killed write's is put back.

    A read that finds a note missing calls this before it drops the note: if an aside file of
    it is there and no vaultmem write is in flight (the vault lock is free, and not held by this
    process or the one it was forked from), the killed write is finished
    (``recover_interrupted_writes``, moves found anywhere below
    ``root``), so the next command of any kind puts back a note a kill hid. ``listings`` caches
    :func:`set_aside_names` per folder; ``sidecar`` holds the vault lock.
    """
    folder = path.parent
    names = listings.get(folder)
    if names is None:
        names = listings[folder] = set_aside_names(folder)
    if path.name not in names:
        return False
    if held_in_process(sidecar):  # a write of this process (or its parent) may be in flight
        return True
    with contextlib.suppress(LockedError, SidecarError), vault_lock(sidecar, timeout_seconds=0):
        recover_interrupted_writes(folder, search=root)
    return True
