"""One applied command: :class:`PassSession` (the vault lock, recovery of interrupted passes,
the journal, writing ahead in batches, re-indexing) and :class:`PassResult`, a pass's moves.

A session takes the vault lock without waiting (a second pass is told one is running), first
finishes any pass that was interrupted, then writes every file operation ahead into the journal
(:mod:`vaultmem.store.journal`). A move renames the note (keeping its base name and ``id``) and
gives it its new fields in one owned, atomic step. A note that changed since the plan was made,
or that a person saves or deletes while it is being moved, is skipped and reported as skipped.
Ctrl-C finishes the step in hand and stops (the journal lets the next command finish or undo).
The passes themselves are planned and run by :mod:`vaultmem.services.lifecycle.lifecycle`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from vaultmem.core.lifecycle.lifecycle_plan import Move
from vaultmem.core.notes.fields import MemoryFields
from vaultmem.core.notes.note_parse import parse_note
from vaultmem.core.notes.note_text import FrontmatterError, set_fields
from vaultmem.errors import InterruptedRunError, NoteChangedError, NoteError, VaultmemError
from vaultmem.services.index.pass_indexer import PassIndexer
from vaultmem.services.lifecycle.progress import report_progress
from vaultmem.services.lifecycle.undo import journal_origin
from vaultmem.store.durability import batched_dir_syncs, settle_closes
from vaultmem.store.interrupts import finish_step_on_signal
from vaultmem.store.journal import JournalWriter, recover
from vaultmem.store.journal_check import MANAGED_TYPES
from vaultmem.store.late_writes import LateSave, check_late_writes, watch_late_writes
from vaultmem.store.note_files import NoteSnapshot, read_note
from vaultmem.store.vault_lock import vault_lock
from vaultmem.store.vault_paths import confined, confined_free

if TYPE_CHECKING:
    from vaultmem.services.vault_context import VaultContext

PREPARE_BATCH = 512
"""Moves checked and written ahead together, one flush to disk each (PassSession.prepare)."""
INDEX_AHEAD_FROM = 1000
"""Paths to write (a move counts its two) from which a pass re-indexes them in a helper process
while it goes on (:meth:`PassSession.expect`); below, it re-indexes them at its end."""
HANDOVER_PATHS = 256
"""Paths written that are handed to the helper together (:meth:`PassSession.index_ahead`)."""


@dataclass(slots=True)
class PassResult:
    """Planned and applied moves of one pass; ``skipped`` pairs a move with why it was not done."""

    name: str
    planned: list[Move]
    dry_run: bool
    applied: list[Move] = field(default_factory=list)
    skipped: list[tuple[Move, str]] = field(default_factory=list)
    late_saves: list[str] = field(default_factory=list)
    """Saves that landed in a note's old file after it was written, and where each is kept
    (:meth:`PassSession.late_save_lines`); set once the session has ended."""

    def as_dict(self) -> dict[str, object]:
        return {
            "pass": self.name,
            "dry_run": self.dry_run,
            "planned": [move_dict(m) for m in self.planned],
            "applied": [move_dict(m) for m in self.applied],
            "skipped": [{**move_dict(m), "error": why} for m, why in self.skipped],
            "late_saves": self.late_saves,
        }


def move_dict(move: Move) -> dict[str, object]:
    return {
        "path": move.path,
        "id": move.id,
        "action": move.action,
        "destination": move.destination,
        "rule": move.rule,
        "reason": move.reason,
    }


class PassSession:
    """One applied command: the lock, recovery of interrupted passes, the journal, re-indexing.

    Use as a context manager. With ``dry_run`` nothing is locked, journaled or written.
    """

    def __init__(
        self, vault: VaultContext, command: str, now: dt.datetime, *, dry_run: bool
    ) -> None:
        self.vault = vault
        self.command = command
        self.now = now
        self.dry_run = dry_run
        self.touched: list[str] = []
        self._refreshed = 0  # touched[:_refreshed] are re-indexed (or handed over) already
        self._indexer: PassIndexer | None = None
        self._indexer_tried = False
        self.reindexed = 0
        """Paths re-indexed (each once per time it was written), here or by the helper."""
        self.reindex_seconds = 0.0
        """Seconds this process spent re-indexing or waiting for the helper to."""
        self.recovered: list[Path] = []
        self.journal: JournalWriter | None = None
        self._prepared: dict[int, tuple[Move, tuple[NoteSnapshot, str] | BaseException]] = {}
        self._kept = 0  # late_saves[:_kept] are in touched already
        self.late_saves: list[LateSave] = []
        """Saves that landed in a note's old file after the session had replaced, moved or
        deleted it, each kept (:mod:`~vaultmem.store.late_writes`): complete once it ends."""
        self._lock = vault_lock(vault.sidecar, timeout_seconds=0)

    def __enter__(self) -> PassSession:
        if self.dry_run:
            return self
        self._lock.__enter__()
        self._signals = finish_step_on_signal()
        self._signals.__enter__()
        self._dir_syncs = batched_dir_syncs()
        self._dir_syncs.__enter__()
        self._late_writes = watch_late_writes()
        self.late_saves = self._late_writes.__enter__()
        try:
            self.vault.index.check_writable()
            folders = tuple(self.vault.folders())
            self.recovered = [
                entry.path for entry in recover(self.vault.root, self.vault.sidecar, folders)
            ]
            if self.recovered:
                self.vault.sync()
            self.journal = JournalWriter(
                self.vault.root,
                self.vault.sidecar,
                self.command,
                self.now,
                journal_origin(self.vault),
            )
        except BaseException:
            self._late_writes.__exit__(None, None, None)
            self._dir_syncs.__exit__(None, None, None)
            self._signals.__exit__(None, None, None)
            self._lock.__exit__(None, None, None)
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.dry_run:
            return
        try:
            if kind is None:  # the last notes, re-indexed while the old files and folders settle
                self.index_ahead(1)
            late_error: OSError | None = None
            try:  # the old files still held are checked once more, the saves found kept
                self._late_writes.__exit__(None, None, None)
            except OSError as err:  # raised once the pass is wound up as usual
                late_error = err
            self._reindex_late_saves()
            self._dir_syncs.__exit__(None, None, None)  # every moved note's folder, once each
            if self.journal is not None:
                if kind is not None:
                    self.journal.abandon()  # the next pass (or undo) finishes what was started
                elif self.journal.applied:
                    self.journal.close()
                else:
                    self.journal.abandon()
                    self.journal.path.unlink()
            self.refresh()
            if late_error is not None:
                raise late_error
        finally:
            if self._indexer is not None:  # ended before the lock goes: nothing outlives it
                self._indexer.close()
            self._signals.__exit__(None, None, None)
            self._lock.__exit__(kind, error, trace)

    def late_save_lines(self) -> list[str]:
        """:attr:`late_saves`, one line each (complete once the session has ended)."""
        return [save.describe(self.vault.root) for save in self.late_saves]

    def check_late_writes(self) -> None:
        """Check the old files of the notes written so far (and stop holding them): a save
        that landed in one is kept (:attr:`late_saves`) and its file re-indexed."""
        if not self.dry_run:
            check_late_writes()
            self._reindex_late_saves()

    def _reindex_late_saves(self) -> None:
        fresh, self._kept = self.late_saves[self._kept :], len(self.late_saves)
        self.touched += [save.kept_at.relative_to(self.vault.root).as_posix() for save in fresh]

    def refresh(self) -> None:
        """Re-index the notes written since the last refresh (and only those), and wait for
        what was handed to the helper (:meth:`index_ahead`): the index is then up to date."""
        fresh = list(dict.fromkeys(self.touched[self._refreshed :]))
        self._refreshed = len(self.touched)
        started = time.perf_counter()
        if self._indexer is not None:
            if fresh:
                self._indexer.submit(fresh)
                self.reindexed += len(fresh)
            fresh = list(dict.fromkeys(self._indexer.wait()))  # what it did not index
        else:
            self.reindexed += len(fresh)
        if fresh:
            settle_closes()  # no helper thread left: the index may fork its parse workers
            if self.journal is not None:
                self.journal.settle_flush()
            self.vault.refresh(fresh)
        self.reindex_seconds += time.perf_counter() - started

    def expect(self, operations: int) -> None:
        """Start the helper process now if ``operations`` writes to come make this pass big
        enough (:data:`INDEX_AHEAD_FROM` paths, a move counting two): it is then ready by the
        time the first notes are written (:meth:`index_ahead`)."""
        pending = len(self.touched) - self._refreshed
        if self.dry_run or self._indexer_tried or pending + 2 * operations < INDEX_AHEAD_FROM:
            return
        self._indexer_tried = True
        self._indexer = PassIndexer.start(self.vault.root, self.vault.sidecar)

    def index_ahead(self, least: int = HANDOVER_PATHS) -> None:
        """Hand the notes written since the last hand-over to the helper process, to be
        re-indexed while the pass goes on (:mod:`~vaultmem.services.index.pass_indexer`), once there
        are ``least`` of them (:data:`HANDOVER_PATHS`; ``1``: the last few, before the pass
        waits for something else). Without a helper (a small pass, or one where it cannot
        start; see :meth:`expect`) they are re-indexed at :meth:`refresh`."""
        if self._indexer is None or len(self.touched) - self._refreshed < max(1, least):
            return
        fresh = list(dict.fromkeys(self.touched[self._refreshed :]))
        self._refreshed = len(self.touched)
        self._indexer.submit(fresh)
        self.reindexed += len(fresh)

    @property
    def journal_path(self) -> Path | None:
        return self.journal.path if self.journal is not None and self.journal.applied else None

    def _writer(self) -> JournalWriter:
        assert self.journal is not None, "a dry-run session writes nothing"
        return self.journal

    def apply(self, move: Move) -> None:
        """Carry out one planned move (rename and/or field edit, or delete) via the journal.

        Raises :class:`NoteError` (nothing written) when the note is not one vaultmem manages,
        cannot be written, or changed since the index the plan came from was synced, and
        :class:`NoteChangedError` when a person saves or deletes it while it is being written.
        """
        prepared = self._prepared.pop(id(move), None)
        if prepared is not None and prepared[0] is move:
            checked = prepared[1]
            if isinstance(checked, BaseException):
                raise checked
            snapshot, after = checked
        else:
            snapshot, after = self._check(move, self._indexed_hashes([move.path]))
        # confined again now (a batch was prepared earlier: a folder may have become a link
        # since), once each, and handed to the journal, which then does not check them again
        source = confined(self.vault.root, move.path)
        known = snapshot.fingerprint.sha256  # of the very bytes snapshot.text was read from
        if move.action == "delete":
            self._writer().delete(move.path, snapshot.text, at=(None, source), before_sha=known)
            self.touched.append(move.path)
            return
        destination = move.destination or move.path
        if destination != move.path:
            target = confined_free(self.vault.root, destination)
            if target is None:  # checked before journaled (no exception raised)
                raise NoteError(destination, f"already exists; {move.path} not moved there")
            self._writer().move(
                move.path, destination, snapshot.text, after, at=(source, target), before_sha=known
            )
        elif after != snapshot.text:
            self._writer().edit(
                move.path, snapshot.text, after, at=(None, source), before_sha=known
            )
        self.touched += [move.path, destination]

    def _indexed_hashes(self, paths: list[str]) -> dict[str, tuple[str, bool, str | None]]:
        """Indexed path → (content hash, whether the index found it clean, its ``id``).

        Clean: of a type vaultmem manages, no problems, no warnings (what :meth:`_check` would
        otherwise parse the note again to learn, for the very same bytes).
        """
        wanted = sorted(set(paths))
        found: dict[str, tuple[str, bool, str | None]] = {}
        types = ", ".join(f"'{t}'" for t in sorted(MANAGED_TYPES))
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            rows = self.vault.index.conn.execute(
                f"SELECT path, hash, type IN ({types}) AND problems = '[]' AND warnings = '[]', "
                f"id FROM notes WHERE path IN ({', '.join('?' * len(chunk))})",
                chunk,
            )
            found.update((path, (sha, bool(clean), note_id)) for path, sha, clean, note_id in rows)
        return found

    def _check(
        self, move: Move, indexed: dict[str, tuple[str, bool, str | None]]
    ) -> tuple[NoteSnapshot, str]:
        """Read ``move``'s note and check it may be written; its snapshot and its new text.

        A note whose bytes are those the index parsed, found clean and with the planned ``id``,
        is not parsed again.
        """
        # confined in full here too: confined() keeps each path's names, so the check right
        # before the note is written (apply) costs half as much once this one has run
        source = confined(self.vault.root, move.path)
        snapshot = read_note(source)
        known, clean, indexed_id = indexed.get(move.path, (None, False, None))
        same = known == snapshot.fingerprint.sha256
        if not (clean and same and move.id is not None and indexed_id == move.id):
            note = parse_note(move.path, snapshot.text)
            if note.problems:
                raise NoteError(move.path, f"{note.problems[0]}; not moved")
            if note.fields.type not in MANAGED_TYPES:
                raise NoteError(move.path, "not a note vaultmem manages; not moved")
            if note.warnings:
                raise NoteError(move.path, f"{note.warnings[0].describe()}; left as it is")
            if note.fields.id != move.id:
                raise NoteError(
                    move.path, "changed since the plan was made (id differs); not moved"
                )
        if known is not None and not same:
            raise NoteChangedError(move.path, "changed since the plan was made; left alone")
        if move.action == "delete":
            return snapshot, snapshot.text
        try:
            after = set_fields(snapshot.text, move.changes) if move.changes else snapshot.text
        except FrontmatterError as err:
            raise NoteError(move.path, f"{err}; not moved") from None
        return snapshot, after

    def prepare(self, moves: Sequence[Move], creates: Sequence[tuple[str, str]] = ()) -> None:
        """Check ``moves`` and write their new texts (and ``creates``: (path, text)) ahead.

        One flush to disk then covers the whole batch, where each note would otherwise fsync its
        own; :meth:`apply` and :meth:`create` use what was prepared (a note is still owned and
        compared with what was read when it is written, so a person's save in between wins).
        The texts are written and flushed on a helper thread
        (:class:`~vaultmem.store.journal.StagingThread`): a batch prepared one ahead of the
        batch being applied is written and flushed meanwhile, and each note waits for its own
        batch only.
        """
        if self.dry_run or not moves and not creates:
            return
        writer = self._writer()
        indexed = self._indexed_hashes([m.path for m in moves])
        for move in moves:
            checked: tuple[NoteSnapshot, str] | BaseException
            try:
                checked = self._check(move, indexed)
                snapshot, after = checked
                if move.action != "delete" and after != snapshot.text:
                    writer.stage(move.path, after, path=snapshot.path, mode=snapshot.mode)
            except (VaultmemError, OSError) as err:
                checked = err
            self._prepared[id(move)] = (move, checked)
        for path, text in creates:
            with contextlib.suppress(VaultmemError, OSError):
                writer.stage(path, text)
        writer.flush_staged(wait=False)

    def edit_fields(self, path: str, compute: Callable[[MemoryFields], dict[str, object]]) -> None:
        """A journaled surgical edit: ``compute(fields)``'s changes to one note (``gc --keep``)."""
        fields = parse_note(path, read_note(confined(self.vault.root, path)).text).fields
        self.apply(Move(path, fields.id, "edit", None, compute(fields), rule="edit"))

    def create(self, path: str, text: str) -> None:
        """A journaled new note (box and trace notes)."""
        self._writer().create(path, text, at=(None, confined(self.vault.root, path)))
        self.touched.append(path)

    def run(self, result: PassResult) -> PassResult:
        """Apply ``result.planned`` (unless dry run); failures are recorded per note."""
        result.dry_run = self.dry_run
        if self.dry_run:
            return result
        planned = result.planned
        self.expect(len(planned))
        for start, move in enumerate(planned):
            report_progress(result.name, start, len(planned))  # before a batch is prepared
            if start % PREPARE_BATCH == 0:  # this batch is ready; the next one is made ready
                if start == 0:  # while this one's flush to disk runs
                    self.prepare(planned[:PREPARE_BATCH])
                else:  # the last batch's old files, a batch's time after they were removed
                    self.check_late_writes()
                self.prepare(planned[start + PREPARE_BATCH : start + 2 * PREPARE_BATCH])
            self.index_ahead()  # what is written so far, re-indexed meanwhile
            try:
                self.apply(move)
            except InterruptedRunError:
                raise
            except (VaultmemError, OSError) as err:
                result.skipped.append((move, str(err)))
                continue
            result.applied.append(move)
        report_progress(result.name, len(planned), len(planned))
        return result
