"""One writer at a time: the vault lock in ``.vaultmem/lock`` (the filelock library)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from vaultmem.errors import LockedError, SidecarError
from vaultmem.store.sidecar import ensure_sidecar

if TYPE_CHECKING:  # filelock (and logging) load with the first write, not for reads
    from filelock import FileLock

_LOCKS: dict[str, FileLock] = {}
"""One lock object per lock file: nested ``with vault_lock(...)`` in one process re-enter it."""
_HELD: dict[Path, str] = {}
"""Sidecar → its resolved lock path, so re-entering a held lock costs no file-system calls."""
_DEPTH = threading.local()
"""Per thread: lock path → how many ``with vault_lock`` blocks hold it (re-entry is a count)."""


@contextmanager
def vault_lock(sidecar: Path, *, timeout_seconds: float = 10.0) -> Iterator[None]:
    """Hold the vault's write lock for the ``with`` block.

    Raises :class:`LockedError` when another vaultmem process keeps it longer than
    ``timeout_seconds`` (typically a lifecycle pass; ``0`` = do not wait), and
    :class:`SidecarError` when the lock file cannot be made (a read-only sidecar, a folder in
    its place). Re-entrant within one process.
    """
    from filelock import FileLock, Timeout

    path = _HELD.get(sidecar)
    depth: dict[str, int] = _DEPTH.__dict__.setdefault("held", {})
    if path is not None and depth.get(path, 0) > 0:  # this thread holds it: a count, no calls
        depth[path] += 1
        try:
            yield
        finally:
            depth[path] -= 1
        return
    lock = _LOCKS.get(path) if path is not None else None
    if lock is None or not lock.is_locked:  # not re-entering: find (and check) the lock file
        ensure_sidecar(sidecar)
        path = str((sidecar / "lock").resolve())
        lock = _LOCKS.setdefault(path, FileLock(path))
        _HELD[sidecar] = path
    try:
        lock.acquire(timeout=timeout_seconds)
    except Timeout:
        raise LockedError(
            f"another vaultmem process is writing to this vault (a pass is running), try again "
            f"in a moment; lock: {sidecar / 'lock'}"
        ) from None
    except OSError as err:
        problem = (
            "is a folder, not vaultmem's lock file; remove it"
            if os.path.isdir(sidecar / "lock")
            else f"cannot take the vault lock: {err.strerror} (vaultmem writes only with it)"
        )
        raise SidecarError(sidecar / "lock", problem) from None
    held = str(path)
    depth[held] = depth.get(held, 0) + 1
    try:
        yield
    finally:
        depth[held] -= 1
        lock.release()


def held_in_process(sidecar: Path) -> bool:
    """Whether this process holds the vault lock (or was forked from one that did): a write of
    its own may be in flight, so nothing it leaves may be taken for a killed write's."""
    path = _HELD.get(sidecar)
    lock = _LOCKS.get(path) if path is not None else None
    return lock is not None and lock.is_locked
