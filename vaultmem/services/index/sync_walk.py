"""The walk half of a sync: which notes differ from the index, and a walk in a forked process.

:func:`differences` compares what a walk found with what the index holds. :func:`forked_walk`
makes that walk, and that comparison, in a forked process while this one does other work on
the index (the memories a plan needs; docs/user-guide.md, "A cold index and planning at
scale"). The walker starts before the index's sizes and times are read: this process reads
them while it walks (0.12 s at 100,000 notes, which no longer precede the fork) and sends
them through a pipe, then does its own work.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from vaultmem.core.settings import Settings
from vaultmem.services.index.vault_walk import scan_vault

StatMap = dict[str, tuple[int, int]]
"""Vault-relative path → (size, mtime_ns)."""


def differences(present: StatMap, known: StatMap) -> tuple[list[str], list[str]]:
    """The notes a sync must read (new, or another size or mtime) and those it must look for
    (indexed, not found), from ``present`` (walked) and ``known`` (indexed)."""
    if present == known:  # the common case, compared in C: nothing to read or drop
        return [], []
    to_read = [rel for rel, stat in present.items() if known.get(rel) != stat]
    vanished = [rel for rel in known if rel not in present]
    return to_read, vanished


StatColumns = tuple[list[str], list[int]]
"""Indexed paths and, flat, each one's size and mtime_ns: what a forked walker is sent
(:meth:`~vaultmem.store.index_queries.NoteQueries.stat_columns`)."""


def column_differences(
    present: StatMap, indexed: StatColumns
) -> tuple[list[str], list[str], list[str]]:
    """:func:`differences` of ``present`` against ``indexed``, and those of the notes to read
    the index holds.

    The common case, nothing changed, is found in C without a map of the index: every indexed
    path looked up in ``present``, in index order, gives the indexed stats (0.04 s at 100,000
    notes; the paths are distinct, so equal counts and equal stats mean the same notes).
    """
    paths, stats = indexed
    if len(paths) == len(present):
        pairs = iter(stats)
        expected = list(zip(pairs, pairs, strict=True))
        if list(map(present.get, paths)) == expected:
            return [], [], []
        known = dict(zip(paths, expected, strict=True))
    else:
        pairs = iter(stats)
        known = dict(zip(paths, zip(pairs, pairs, strict=True), strict=True))
    to_read, vanished = differences(present, known)
    return to_read, vanished, [rel for rel in to_read if rel in known]


FORKED_WALK_FROM = 10_000
"""Indexed notes from which a sync given work to do meanwhile walks in a forked process."""


class Walked(NamedTuple):
    """What a walk in a forked process sends back: :func:`differences` and what it found."""

    to_read: list[str]
    vanished: list[str]
    reread: list[str]
    """Those of ``to_read`` the index holds."""
    present_count: int
    attachments: list[str]
    linked: list[str]


def forked_walk(
    root: Path,
    settings: Settings,
    indexed: int,
    known: Callable[[], StatColumns],
    meanwhile: Callable[[], object],
) -> Walked | None:
    """Walk the vault in a forked process, compared there with ``known()``, while this process
    calls ``known`` and then ``meanwhile`` (each once).

    The walker starts at once; ``known()`` (the index's stats, 0.12 s at 100,000 notes) is
    read here meanwhile and sent to it through a pipe, which a thread of the walker drains
    while it walks, so neither process waits for the other until the walker compares.

    ``None`` — ``known`` and ``meanwhile`` then maybe not called, and the caller walks the
    vault itself — below :data:`FORKED_WALK_FROM` ``indexed`` notes, where no process can be
    forked (not Linux, or another thread runs:
    :func:`~vaultmem.services.index.forked_workers.can_fork`), when the fork fails, or when the
    walker dies before it answers. An error raised by ``known``, by ``meanwhile`` or by the walk
    itself is raised here.
    """
    from vaultmem.services.index.forked_workers import (
        PIPE_BYTES,
        WorkerLostError,
        can_fork,
        forked_map,
    )

    if indexed < FORKED_WALK_FROM or not can_fork():
        return None
    receive_end, send_end = os.pipe()
    with contextlib.suppress(OSError, AttributeError):  # Linux only; fewer wake-ups of the reader
        import fcntl

        fcntl.fcntl(send_end, fcntl.F_SETPIPE_SZ, PIPE_BYTES)

    kept: list[object] = []

    def walk(_: None) -> tuple[list[str], list[str], list[str], int, list[str], list[str]]:
        os.close(send_end)  # this process only reads: the pipe ends when the parent closes it
        sent: list[bytes] = []
        reader = threading.Thread(target=_drain, args=(receive_end, sent), daemon=True)
        reader.start()
        attachments: set[str] = set()
        linked: set[str] = set()
        present = scan_vault(root, settings, attachments=attachments, linked=linked)
        reader.join()
        indexed = marshal.loads(sent[0])
        # kept to the walker's exit, which frees them at once: freeing 330,000 objects one by
        # one (0.02 s at 100,000 notes) would come before the answer the parent waits for
        kept.extend((present, indexed))
        to_read, vanished, reread = column_differences(present, indexed)
        return to_read, vanished, reread, len(present), sorted(attachments), sorted(linked)

    forked = False
    open_ends = [receive_end, send_end]

    def close(end: int) -> None:
        open_ends.remove(end)
        os.close(end)

    def overlapped() -> None:
        nonlocal forked
        forked = True
        close(receive_end)
        states = marshal.dumps(known())
        with contextlib.suppress(BrokenPipeError):  # the walker died: it answers nothing either
            _send(send_end, states)
        del states  # 8.7 MB at 100,000 notes: not held through ``meanwhile``
        close(send_end)
        meanwhile()

    try:
        for walked in forked_map(walk, [None], 1, meanwhile=overlapped):
            return Walked(*walked)
    except WorkerLostError:  # killed (out of memory, say) before it answered
        pass
    except OSError:
        if forked:  # raised by ``meanwhile`` or by the walk itself, not by the fork
            raise
    finally:
        for end in open_ends:
            os.close(end)
    return None


def _send(fd: int, data: bytes) -> None:
    """All of ``data`` to the pipe ``fd`` (a write may take only part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _drain(fd: int, into: list[bytes]) -> None:
    """Everything written to the pipe ``fd`` until its writer closes it, into ``into``."""
    with open(fd, "rb") as pipe:
        into.append(pipe.read())


__all__ = [
    "FORKED_WALK_FROM",
    "StatColumns",
    "StatMap",
    "Walked",
    "column_differences",
    "differences",
    "forked_walk",
]
