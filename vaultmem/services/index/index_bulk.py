"""A cold index in bulk: every note of the vault into an empty index (docs/user-guide.md,
"Index and graph").

When the index holds nothing (a first sync, ``index --rebuild``), the walk has already named
every note and attachment, so each note's id and each link's target are known before any note
is read. Worker processes then read, parse and resolve whole batches of notes into plain rows
(:class:`~vaultmem.store.index_load.NoteRows`), and this process only inserts them, many per
statement (:func:`~vaultmem.store.index_load.bulk_load`). The rows are the same ones an
incremental sync writes note by note; a note that vanishes between the walk and its read is
left out and the links that named it are resolved again without it.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultmem.core.links.link_resolution import LinkResolver, note_key
from vaultmem.core.notes.note_parse import as_alias
from vaultmem.services.index.sync_types import (
    NoteParser,
    NoteReader,
    ProgressCallback,
    SyncReport,
    WorkerStart,
)
from vaultmem.store.index_db import IndexDB
from vaultmem.store.index_links import LinkValues
from vaultmem.store.index_load import NoteRows, RowValues, bulk_load
from vaultmem.store.note_rows import SQL_NULL

if TYPE_CHECKING:
    from concurrent.futures import Future

BATCH_NOTES = 256
"""Notes per batch a worker reads, parses and sends back as rows."""
IN_FLIGHT_BATCHES = 6
"""Batches handed to the workers ahead of the writer (bounds the rows held in memory)."""
WORKERS = 2
"""Worker processes: two keep both cores of a 2-core machine busy beside the writer."""


class _LoadState:
    """What every batch needs: the vault, its template folders, and who is where (a plain
    class: a named tuple costs this module's import 0.2 ms, a dataclass half a millisecond)."""

    __slots__ = ("root", "templates", "resolver", "nid_of", "read", "parse", "resolved")

    def __init__(
        self,
        root: Path,
        templates: tuple[str, ...],
        resolver: LinkResolver,
        nid_of: dict[str, int],
        read: NoteReader,
        parse: NoteParser,
    ) -> None:
        self.root = root
        self.templates = templates
        self.resolver = resolver
        self.nid_of = nid_of
        self.read = read
        """Reads one note: ``index_sync._read``, looked up by the sync when it starts the load
        (so a test that stands in for it reaches the bulk load too)."""
        self.parse = parse
        self.resolved: dict[str, tuple[str, Any, Any]] = {}
        """Target → (key, resolved path, its nid) of the targets that resolve alike from every
        note (filled as batches are read; each worker process keeps its own)."""


_NULL: Any = SQL_NULL
"""A value bound as NULL (typed as any column's value)."""

_STATE: _LoadState | None = None
"""The worker's :class:`_LoadState` (set once per worker process by :func:`_start_worker`)."""


def _start_worker(parent_pid: int, state: _LoadState) -> None:
    global _STATE
    from vaultmem.services.index.forked_workers import die_with_parent

    die_with_parent(parent_pid)
    _STATE = state


def _worker_rows(batch: list[tuple[str, int]]) -> NoteRows:
    assert _STATE is not None, "worker started without its state"
    return batch_rows(_STATE, batch)


def batch_rows(state: _LoadState, batch: list[tuple[str, int]]) -> NoteRows:
    """Read, parse and resolve the notes of ``batch`` ((path, nid) pairs) into their rows.

    A link's missing subpath and target are :data:`~vaultmem.store.note_rows.SQL_NULL`, not
    ``None`` (stored as NULL all the same): binding ``None`` makes the ``sqlite3`` module look
    for an adapter, which cost the writer 3 % of a 10,000-note cold index (callgrind)."""
    rows = NoteRows()
    resolver, nid_of, known, null = state.resolver, state.nid_of, state.resolved, _NULL
    for rel, nid in batch:
        read = state.read(state.root, rel)
        if read is None:
            rows.missing.append(rel)
            continue
        note = state.parse(read, state.templates)
        note = as_alias(note, read.alias_of, state.nid_of.__contains__)
        links: list[LinkValues] = []
        for link in note.links:
            target = link.target
            found = known.get(target)
            if found is None:
                key = note_key(target)
                resolved = resolver.resolve(target, note.path)
                found = (
                    (key, null, null)
                    if resolved is None
                    else (key, resolved, nid_of.get(resolved, null))
                )
                # the same from every note (a bare name: when no other note has it)
                if resolver.named(key) <= 1 and (
                    "/" not in target or resolver.resolves_alike(target)
                ):
                    known[target] = found
            subpath = link.subpath
            links.append(
                (
                    nid,
                    target,
                    found[0],
                    null if subpath is None else subpath,
                    link.kind,
                    found[1],
                    found[2],
                )
            )
        rows.add_note(
            nid, note, size=read.size, mtime_ns=read.stamp_ns, content_hash=read.hash, links=links
        )
    return rows


def _ramped(paths: list[str], size: int) -> Iterator[list[str]]:
    """``paths`` in chunks of ``size``, the first ones smaller (an eighth, doubling): the writer
    gets its first rows while the workers are still starting, instead of after a full batch."""
    start, step = 0, max(16, size // 8)
    while start < len(paths):
        yield paths[start : start + step]
        start, step = start + step, min(size, 2 * step)


def _batches(
    state: _LoadState, batches: list[list[tuple[str, int]]], workers: WorkerStart
) -> Iterator[NoteRows]:
    """The rows of each batch, in order: made here (``workers`` None), or by worker processes
    forked or spawned."""
    if workers is None:
        for batch in batches:
            yield batch_rows(state, batch)
        return
    # the parser's modules load here, once, and forked workers inherit them (else each worker
    # imports them before its first batch)
    from vaultmem.core.links import code_spans, links  # noqa: F401
    from vaultmem.core.notes import fields, note_reading  # noqa: F401

    if workers == "fork":
        from vaultmem.services.index.forked_workers import forked_map

        def rows_of(batch: list[tuple[str, int]]) -> RowValues:
            return batch_rows(state, batch).as_values()

        for values in forked_map(rows_of, batches, WORKERS):
            yield NoteRows.from_values(values)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(
        max_workers=WORKERS,
        mp_context=multiprocessing.get_context(workers),
        initializer=_start_worker,
        initargs=(os.getpid(), state),
    ) as pool:
        pending: deque[Future[NoteRows]] = deque()
        for batch in batches:  # a bounded window: rows never pile up in memory
            pending.append(pool.submit(_worker_rows, batch))
            if len(pending) > IN_FLIGHT_BATCHES:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def index_all(
    root: Path,
    db: IndexDB,
    templates: tuple[str, ...],
    notes: Iterable[str],
    attachments: set[str],
    *,
    workers: WorkerStart,
    report: SyncReport,
    progress: ProgressCallback | None = None,
    read: NoteReader,
    parse: NoteParser,
) -> None:
    """Index every note of ``notes`` (vault-relative paths, from the walk; each note's size and
    mtime are those it has when read) and every path of ``attachments`` into ``db``, whose tables
    must be empty, inside the caller's transaction.

    ``workers`` says how worker processes that read and parse the notes start (``None``: the
    notes are read in this process).
    ``read`` reads one note and ``parse`` parses what it read (the sync's own, handed over so
    that this module never imports the sync back). Counts go to ``report`` (``added``,
    ``touched_paths``); edge counts are recomputed.
    """
    paths = sorted(notes)
    nid_of = {rel: nid for nid, rel in enumerate(paths, 1)}
    state = _LoadState(root, templates, LinkResolver([*paths, *attachments]), nid_of, read, parse)
    if workers is None:  # read here: no worker to keep busy, so no small first batches
        chunks = [paths[i : i + BATCH_NOTES] for i in range(0, len(paths), BATCH_NOTES)]
    else:
        size = max(16, min(BATCH_NOTES, len(paths) // (8 * WORKERS)))  # small vaults: all busy
        chunks = list(_ramped(paths, size))
    batches = [[(rel, nid_of[rel]) for rel in chunk] for chunk in chunks]
    missing: list[str] = []
    pairs: list[tuple[int, int]] = []  # (source, target) of every link between two notes
    done = 0
    with bulk_load(db.conn, len(paths)) as load:
        if attachments:
            db.add_attachments(sorted(attachments))
        for rows in _batches(state, batches, workers):
            load.add(rows)
            report.added += len(rows.notes)
            report.touched_paths += [str(values[1]) for values in rows.notes]
            missing += rows.missing
            # (a link to no note holds SQL_NULL, a NaN, which equals nothing)
            linked: list[tuple[int, str, str, Any, str, Any, Any]] = rows.links
            pairs += [(v[0], v[6]) for v in linked if v[6] == v[6] and v[6] != v[0]]
            if progress is not None:  # once a batch: a terminal's bar redraws on each call
                done += len(rows.notes) + len(rows.missing)
                progress(done, len(paths))
    if missing:
        _resolve_without(db, state, missing)  # links changed: count them from the index
        db.recount_edges()
    else:  # every link is known here: counted in Python, only linked notes are written
        db.set_edges(pairs, fresh=True)


def _resolve_without(db: IndexDB, state: _LoadState, missing: list[str]) -> None:
    """Resolve again, without the ``missing`` notes, every link that may have named one."""
    for rel in missing:
        state.resolver.remove(rel)
        del state.nid_of[rel]
    stale = db.links_to_keys({note_key(rel) for rel in missing})
    updates: list[tuple[str | None, int | None, int]] = []
    for lid, _source_nid, source, target, _old_nid in stale:
        resolved = state.resolver.resolve(target, source)
        updates.append(
            (resolved, state.nid_of.get(resolved) if resolved is not None else None, lid)
        )
    db.set_resolved(updates)


__all__ = ["BATCH_NOTES", "WORKERS", "batch_rows", "index_all"]
