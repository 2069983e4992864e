"""Reading notes for the index, and parsing what was read (docs/user-guide.md, "Index and
graph"): the sync, the cold index's workers and the pass's indexing helper all read through
:func:`read_for_index` and parse through :func:`parse_read`, so they store the same rows. Many
notes to read are read and parsed in worker processes (:func:`worker_start`,
:func:`read_in_workers`) while the sync writes the index.
"""

from __future__ import annotations

import errno
import os
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

from vaultmem.core.notes.content_hash import content_hash
from vaultmem.core.notes.note_parse import ParsedNote, parse_note
from vaultmem.core.notes.timestamps import from_epoch
from vaultmem.errors import NoteError
from vaultmem.services.index import index_stamps
from vaultmem.services.index.index_stamps import is_racy
from vaultmem.services.index.sync_types import NoteRead, WorkerStart
from vaultmem.services.index.template_folders import in_templates
from vaultmem.services.index.vault_walk import NOFOLLOW
from vaultmem.store.confinement import confined_path
from vaultmem.store.raw_reads import oversized, stable_read

if TYPE_CHECKING:  # worker processes are imported only for a cold index (fast start-up)
    from concurrent.futures import Future


class WrittenNote(NamedTuple):
    """A note as vaultmem wrote it: its text and its file's ``size`` (bytes) and ``mtime_ns``;
    ``visible_ns``, when known, the wall clock (ns) just before the note got its name (it was
    written under a temporary name no one else writes to)."""

    text: str
    size: int
    mtime_ns: int
    visible_ns: int | None = None


def read_for_index(root: Path, rel: str) -> NoteRead | None:
    """The note at vault-relative ``rel``, read for the index: its text (UTF-8, bad bytes
    replaced and named as a problem), size, mtime, SHA-256 and whether the read was racily
    clean; ``None`` when it vanished or is a symbolic link whose target lies outside the vault.
    A note over the size limit is not read (its stat stands in for the hash)."""
    read_at = index_stamps.clock_ns()  # before the read: a later write is caught (is_racy)
    alias_of = ""
    try:
        try:
            # (an f-string: 0.1 µs where os.path.join takes 0.4, and an absolute rel stays below)
            fd = os.open(f"{root}/{rel}", os.O_RDONLY | NOFOLLOW)
        except OSError as err:
            if err.errno != errno.ELOOP:
                raise
            # a symbolic link: followed only to a target inside the vault
            target = confined_path(root, rel)
            fd = os.open(target, os.O_RDONLY | NOFOLLOW)
            alias_of = target.relative_to(os.path.realpath(root)).as_posix()
        try:
            data, info = stable_read(fd)
        finally:
            os.close(fd)
    except (OSError, NoteError):
        return None
    mtime = info.st_mtime_ns
    if problem := oversized(info.st_size):
        # no hash without the bytes: the stat stands in; stamped pending (racy), so each sync
        # looks again (one fstat) and reads the note once the limit is raised
        unread = f"unread:{info.st_size}:{mtime}"
        return NoteRead(rel, info.st_size, mtime, unread, "", (problem,), True, alias_of)
    problems: tuple[str, ...] = ()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        text = data.decode("utf-8", errors="replace")
        problems = (f"not UTF-8 (byte {err.start})",)
    return NoteRead(
        rel,
        len(data),
        mtime,
        content_hash(data),
        text,
        problems,
        is_racy(mtime, read_at),
        alias_of,
    )


def parse_read(read: NoteRead, templates: tuple[str, ...]) -> ParsedNote:
    """The note a read holds, parsed; a note under a template folder is never a memory."""
    note = parse_note(
        read.path,
        read.text,
        fallback_time=from_epoch(read.mtime_ns / 1e9),
        extra_problems=read.problems,
    )
    if note.fields.type and in_templates(read.path, templates):
        note = note._replace(fields=note.fields._replace(type=None))
    return note


PARALLEL_MIN_NOTES = 1000
"""From this many notes to read, worker processes read and parse them (cold index).

Measured on 2 cores with the parser loaded before forking (medians of 5 cold indexes, quiet
machine): 502 notes 60 ms serial against 70 ms with workers, 1,003 notes 125 against 119 ms,
1,505 notes 178 against 160 ms."""
SPAWN_MIN_NOTES = 5000
"""The same when new processes must be spawned (they pay ~0.5 s of imports first)."""
PARSE_WORKERS = 1
"""Worker processes. One keeps up: this process, which stores each note, spends about three
times as long per note as a worker needs to read and parse it, and a second worker would only
compete with it for the cores (a lifecycle run of 6,095 moves, re-indexing what it wrote,
/dev/shm, 2 cores: 2.67 s with two workers, 2.61 s with one; means of 4 runs each, alternated).
A cold index of an empty index has its own pool (:mod:`vaultmem.services.index.index_bulk`)."""


CHUNK_NOTES = 64
IN_FLIGHT_CHUNKS = 8


_Parsed = tuple[NoteRead, ParsedNote]


def _read_and_parse_all(
    root: Path, templates: tuple[str, ...], rels: list[str]
) -> list[_Parsed | None]:
    """Worker side of :func:`read_in_workers`: each read (without its text) and parsed note."""
    out: list[_Parsed | None] = []
    for rel in rels:
        read = read_for_index(root, rel)
        out.append(None if read is None else (read._replace(text=""), parse_read(read, templates)))
    return out


def _unpack(
    rels: list[str], future: Future[list[_Parsed | None]]
) -> Iterator[tuple[str, NoteRead | None, ParsedNote | None]]:
    return _paired(rels, future.result())


def _paired(
    rels: list[str], results: list[_Parsed | None]
) -> Iterator[tuple[str, NoteRead | None, ParsedNote | None]]:
    for rel, result in zip(rels, results, strict=True):
        yield (rel, *result) if result is not None else (rel, None, None)


def _start_method() -> Literal["fork", "spawn"]:
    """``fork`` (starts in milliseconds, imports nothing) where forking is safe (see
    :func:`~vaultmem.services.index.forked_workers.can_fork`: no other thread runs); else
    ``spawn``."""
    from vaultmem.services.index.forked_workers import can_fork

    return "fork" if can_fork() else "spawn"


def worker_start(notes: int) -> WorkerStart:
    """How to start worker processes for reading ``notes`` notes; ``None``: read them here.

    Workers pay off from :data:`PARALLEL_MIN_NOTES` notes when they can be forked, from
    :data:`SPAWN_MIN_NOTES` when they must be spawned, and never on a single core.
    """
    if notes < PARALLEL_MIN_NOTES or (os.cpu_count() or 1) < 2:
        return None
    method = _start_method()
    least = PARALLEL_MIN_NOTES if method == "fork" else SPAWN_MIN_NOTES
    return method if notes >= least else None


def read_in_workers(
    root: Path, templates: tuple[str, ...], to_read: list[str], workers: Literal["fork", "spawn"]
) -> Iterator[tuple[str, NoteRead | None, ParsedNote | None]]:
    """(path, read or None if it vanished, parsed note or None) for each of ``to_read``, in
    order, read and parsed by :data:`PARSE_WORKERS` worker processes started as ``workers``
    says (:func:`worker_start`), in chunks of :data:`CHUNK_NOTES`."""
    chunks = [to_read[i : i + CHUNK_NOTES] for i in range(0, len(to_read), CHUNK_NOTES)]
    if workers == "fork":
        from vaultmem.services.index.forked_workers import forked_map

        def parsed(chunk: list[str]) -> list[_Parsed | None]:
            return _read_and_parse_all(root, templates, chunk)

        results = forked_map(parsed, chunks, PARSE_WORKERS, pickled=True)
        for chunk, done in zip(chunks, results, strict=True):
            yield from _paired(chunk, done)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from vaultmem.services.index.forked_workers import die_with_parent

    with ProcessPoolExecutor(
        max_workers=PARSE_WORKERS,
        mp_context=multiprocessing.get_context(workers),
        initializer=die_with_parent,
        initargs=(os.getpid(),),
    ) as pool:
        pending: deque[tuple[list[str], Future[list[_Parsed | None]]]] = deque()
        for chunk in chunks:  # a bounded window: parsed notes never pile up in memory
            future = pool.submit(_read_and_parse_all, root, templates, chunk)
            pending.append((chunk, future))
            if len(pending) > IN_FLIGHT_CHUNKS:
                yield from _unpack(*pending.popleft())
        while pending:
            yield from _unpack(*pending.popleft())


__all__ = [
    "PARALLEL_MIN_NOTES", "PARSE_WORKERS", "SPAWN_MIN_NOTES", "WrittenNote", "parse_read",
    "read_for_index", "read_in_workers", "worker_start",
]  # fmt: skip
