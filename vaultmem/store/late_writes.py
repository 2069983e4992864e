"""Saves that land in a note's old file after vaultmem replaced, moved or deleted it.

An editor or script that opened a note before vaultmem took it over can still write through
that open file afterwards: its bytes go to the old file, which no longer has a name, and would
be lost with it. vaultmem checks the old file through a descriptor of its own just after
removing it (:func:`~vaultmem.store.note_files.move_note`), which catches a write landing until
then. Inside :func:`watch_late_writes` (a lifecycle pass) that descriptor is kept and the file
checked again by :func:`check_late_writes`, which the pass calls after each batch of moves and
at its end: a save landing in that much longer window is handed to its rescue (merged into the
note's new version, or kept beside it as a conflicted copy: :func:`note_files._rescue_late
<vaultmem.store.note_files>`), never lost. A write that lands after that last check cannot be
seen by anyone: the file has no name and, once closed, no reader.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from vaultmem.store.durability import defer_closes
from vaultmem.store.raw_reads import read_to_end

MAX_HELD = 256
"""Removed files held open at most; one more checks them all at once (a descriptor each).
Fewer where the process may open few files (:func:`held_at_most`)."""


FINAL_ROUNDS = 3
"""Checks as a watch ends: a late save's rescue writes the note, whose old file is then held and
checked in the next round (a second late save into that one is rescued too)."""


@functools.cache
def held_at_most() -> int:
    """:data:`MAX_HELD`, or an eighth of the process's open-file limit if that is less (macOS
    allows 256 by default), never below 8: the pass itself must still open its notes."""
    try:
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):  # no such limit to read (Windows)
        return 64
    if soft == resource.RLIM_INFINITY:
        return MAX_HELD
    return max(8, min(MAX_HELD, soft // 8))


@dataclass(frozen=True, slots=True)
class LateSave:
    """A save that landed in a note's old file after vaultmem had removed it, and where it is.

    ``note``: the note's path when vaultmem wrote it; ``kept_at``: the file now holding the save;
    ``merged``: the save was merged into the note's new version at ``kept_at`` (else
    ``kept_at`` is a conflicted copy holding the save's bytes as they landed).
    """

    note: Path
    kept_at: Path
    merged: bool

    def describe(self, root: Path) -> str:
        """One line naming both files relative to the vault ``root``."""
        note, kept = (p.relative_to(root).as_posix() for p in (self.note, self.kept_at))
        if self.merged:
            return f"{note}: a save that landed while vaultmem wrote it was merged into {kept}"
        return f"{note}: a save that landed while vaultmem wrote it is kept in {kept}"


Rescue = Callable[[bytes], LateSave]
"""What keeps a late save (given the old file's bytes as they are now)."""


@dataclass(slots=True)
class _Held:
    fd: int
    size: int
    mtime_ns: int
    rescue: Rescue


@dataclass(slots=True)
class _Watch:
    held: list[_Held] = field(default_factory=list)
    saves: list[LateSave] = field(default_factory=list)


_WATCH: ContextVar[_Watch | None] = ContextVar("late_writes", default=None)


@contextmanager
def watch_late_writes() -> Iterator[list[LateSave]]:
    """Within the block, old files are held open and checked by :func:`check_late_writes`
    (and once more as the block ends). Yields the list of :class:`LateSave` found so far."""
    if _WATCH.get() is not None:  # nested: the outer block checks
        yield []
        return
    watch = _Watch()
    token = _WATCH.set(watch)
    try:
        yield watch.saves
    finally:
        try:  # a rescue's own write holds its old file: checked too, a few rounds at most
            for _round in range(FINAL_ROUNDS):
                if not watch.held:
                    break
                check_late_writes()
        finally:
            _WATCH.reset(token)
            _close_all([old.fd for old in watch.held])  # still held after the last round


def _close_all(fds: list[int]) -> None:
    """Close ``fds`` (on the closing thread, in one hand-over, where there is one)."""
    if fds and not defer_closes(fds):
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def hold(fd: int, checked: os.stat_result, rescue: Rescue) -> bool:
    """Inside :func:`watch_late_writes`: keep ``fd`` (the descriptor of a removed old file,
    ``checked`` its last ``fstat``) to be checked later and closed then; True. Outside: False
    (the caller closes it). Holding :func:`held_at_most` checks them all first (a rescue
    writes a note, whose own old file is then held: at most twice that many are open)."""
    watch = _WATCH.get()
    if watch is None:
        return False
    if len(watch.held) >= held_at_most():
        check_late_writes()
    watch.held.append(_Held(fd, checked.st_size, checked.st_mtime_ns, rescue))
    return True


def check_late_writes() -> list[LateSave]:
    """Check every held old file: one written to since it was removed is rescued. Each
    descriptor is closed (on the closing thread where there is one). Returns the saves rescued
    now (also added to the list :func:`watch_late_writes` yielded).

    Raises the first error of a rescue (``OSError``; every other file is checked first): its
    bytes could then be kept nowhere, which the caller must not pass over in silence.
    """
    watch = _WATCH.get()
    if watch is None or not watch.held:
        return []
    held, watch.held = watch.held, []
    found: list[LateSave] = []
    failure: BaseException | None = None
    try:
        for old in held:
            try:
                now = os.fstat(old.fd)
                if (now.st_size, now.st_mtime_ns) != (old.size, old.mtime_ns):
                    os.lseek(old.fd, 0, os.SEEK_SET)
                    found.append(old.rescue(read_to_end(old.fd)))
            except OSError as err:
                failure = failure or err
    finally:  # every one closed, checked or not (a rescue may raise what is not an OSError)
        _close_all([old.fd for old in held])
    watch.saves += found
    if failure is not None:
        raise failure
    return found
