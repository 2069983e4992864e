"""The Python API: :class:`Vault` — open a vault, remember, reinforce, list, score, run passes.

Every CLI command is a thin layer over one method here. Methods take ``now`` (a datetime, one
without a time zone read as UTC as ``--now`` reads it: :func:`~vaultmem.core.notes.timestamps.
given_now`; default: the current time) so passes can be simulated; they raise
:class:`~vaultmem.errors.VaultmemError` subclasses with messages fit to show a person.

Opening, closing and the index (sync, catch-up, refresh) are here; the commands live in the
services its methods delegate to: :mod:`~vaultmem.services.memories.memory_lookup` (finding and
reading a memory), :mod:`~vaultmem.services.memories.memory_edits` (editing one in place),
:mod:`~vaultmem.services.memories.memory_saving` (``remember``),
:mod:`~vaultmem.services.memories.memory_listing` (the scored table, ``list``, ``status``) and
:mod:`~vaultmem.services.lifecycle.pass_commands` (passes, ``forget``, ``gc``, ``undo``).
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultmem.core.notes.timestamps import given_now
from vaultmem.core.scoring.reinforcement import keep_changes, touch_changes
from vaultmem.core.settings import Settings
from vaultmem.core.user_paths import expand_user_path
from vaultmem.errors import IndexDamagedError, VaultNotFoundError
from vaultmem.services.index.index_lookups import box_notes_of, conflicted_paths
from vaultmem.services.index.index_reads import WrittenNote
from vaultmem.services.index.index_sync import sync_index, sync_paths
from vaultmem.services.index.live_index import index_is_live
from vaultmem.services.index.sync_types import ProgressCallback, SyncReport
from vaultmem.services.lifecycle.pass_commands import (
    collect_garbage,
    forget_memory,
    promote_memories,
    run_lifecycle,
    undo_last_run,
)
from vaultmem.services.lifecycle.progress import progress_of
from vaultmem.services.memories.memory_edits import ChangeFunction, edit_note, observe_memories
from vaultmem.services.memories.memory_listing import (
    current_status,
    filtered_memories,
    synced_table,
)
from vaultmem.services.memories.memory_lookup import (
    load_memory,
    memory_path,
    resolve_ref,
)
from vaultmem.services.recall.recall import Hit, recall_notes, review_queue
from vaultmem.services.vault_setup import discover_vault, install_template
from vaultmem.store.index_connection import discard_index, is_busy
from vaultmem.store.index_db import IndexDB
from vaultmem.store.raw_reads import set_note_size_limit
from vaultmem.store.settings_file import load_settings
from vaultmem.store.sidecar import SIDECAR_DIR
from vaultmem.store.vault_lock import vault_lock

if TYPE_CHECKING:  # imported where used: recall and listing start without them (numpy, YAML)
    from vaultmem.services.lifecycle.lifecycle import LifecycleRun
    from vaultmem.services.lifecycle.pass_session import PassResult
    from vaultmem.services.lifecycle.undo import UndoReport
    from vaultmem.services.memories.memory_saving import Remembered
    from vaultmem.services.memories.memory_view import Memory, MemoryRow, MemoryTable, VaultStatus
    from vaultmem.services.memories.note_links import NoteLinks
    from vaultmem.services.memories.remembering import ImportReport, MemoryDraft
    from vaultmem.services.sync.doctor import DoctorReport
    from vaultmem.services.sync.shared_ids import FixReport
    from vaultmem.store.note_batch import NewNotes


class Vault:
    """One vault on disk, its settings and its sidecar index."""

    def __init__(self, root: Path, settings: Settings) -> None:
        self.root = root
        self.settings = settings
        self.sidecar = root / SIDECAR_DIR
        self._index: IndexDB | None = None
        self._swept: set[Path] = set()
        self.warnings: list[str] = []
        """Field warnings met while reading notes (one line each, naming note and key)."""
        self.title_clashes: list[dict[str, str]] = []
        """New memories named ``title 2`` because ``title`` was taken: requested, taken_by,
        saved_as."""
        self.origin: dict[str, str] = {}
        """Who writes journal entries through this object (``who``, ``session``); empty: the
        CLI or a script (:func:`~vaultmem.services.lifecycle.undo.journal_origin`)."""
        self.lock_wait_seconds = 10.0
        """How long a write waits for the vault lock (a running pass) before
        :class:`~vaultmem.errors.LockedError` ("a pass is running, try again"); the MCP server
        waits less."""

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None) -> Vault:
        """Open the vault at ``path``, or find it from ``VAULTMEM_VAULT`` / the current folder.

        ``~`` and environment variables in ``path`` and ``VAULTMEM_VAULT`` are expanded
        (``Vault.open("~/Notes")``). Raises :class:`VaultNotFoundError` when the folder does not
        exist or none is found upward.
        """
        if path is None:
            env = os.environ.get("VAULTMEM_VAULT")
            root = Path(expand_user_path(env)) if env else discover_vault(Path.cwd())
        else:
            root = Path(expand_user_path(path))
        if not root.is_dir():
            raise VaultNotFoundError(f"{root}: no such folder")
        root = root.resolve()
        settings = load_settings(root)
        set_note_size_limit(settings.index.max_note_mb)  # no note over it is read whole
        return cls(root, settings)

    @classmethod
    def init(cls, path: str | os.PathLike[str]) -> tuple[Vault, list[str]]:
        """Make ``path`` a vaultmem vault; returns the vault and the files created.

        A new or empty folder gets the whole template. In an existing Obsidian vault only the
        template's files it lacks are added (``vaultmem.toml``, the memory folders, the template
        note, the dashboard) and vaultmem's property types missing from ``.obsidian/types.json``;
        a type the vault declares otherwise is kept, with a line in ``vault.warnings``. No other
        existing file is changed — the sidecar ignores itself for git. ``~`` and environment
        variables in ``path`` are expanded.
        """
        root = Path(expand_user_path(path))
        created, warnings = install_template(root)
        vault = cls.open(root)
        vault.warnings.extend(warnings)
        for folder in vault.folders():
            target = root / folder
            if not target.exists():
                target.mkdir(parents=True)
                created.append(folder + "/")
        return vault, created

    def sweep_folder(self, folder: Path) -> None:
        """Finish what killed writes left in ``folder`` (once per folder; vault lock held)."""
        if folder not in self._swept:
            from vaultmem.store.interrupted_writes import recover_interrupted_writes

            recover_interrupted_writes(folder, search=self.root)
            self._swept.add(folder)

    def folders(self) -> list[str]:
        """The memory folders (vault-relative): STM, boxes, LTM, archive."""
        f = self.settings.folders
        return [f.stm, f.boxes, f.ltm, f.archive]

    @property
    def index(self) -> IndexDB:
        """The sidecar index, opened (and created or repaired) on first use."""
        if self._index is None:
            self._index = IndexDB.open(self.sidecar)
        return self._index

    def close(self) -> None:
        # without the embeddings module loaded, no vector store was opened
        if "vaultmem.services.semantic.embeddings" in sys.modules:
            from vaultmem.services.semantic.embeddings import close_vectors

            close_vectors(self)
        if self._index is not None:
            self._index.close()
            self._index = None

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ index
    def sync(
        self,
        *,
        rebuild: bool = False,
        progress: ProgressCallback | None = None,
        meanwhile: Callable[[], object] | None = None,
    ) -> SyncReport:
        """Incremental index sync: unchanged notes are not read; ``rebuild`` restarts.

        See docs/user-guide.md, "Index and graph". ``meanwhile``: index reads to overlap with
        the walk of a big vault; see :func:`~vaultmem.services.index.index_sync.sync_index`.

        A read-only sidecar is not synced (a warning says so; the index is used as it is).
        ``rebuild`` replaces a damaged ``index.db`` with a new one built from the notes.
        """
        if rebuild:
            return self._rebuild(progress)
        if self.index.read_only:
            self.warnings.append(
                f"{self.sidecar} {self.index.read_only_reason}: the index is used as it is and "
                "may miss recent edits"
            )
            return SyncReport()
        return sync_index(
            self.root, self.index, self.settings, progress=progress, meanwhile=meanwhile
        )

    def _rebuild(self, progress: ProgressCallback | None) -> SyncReport:
        with vault_lock(self.sidecar):
            try:
                return sync_index(
                    self.root, self.index, self.settings, rebuild=True, progress=progress
                )
            except (IndexDamagedError, sqlite3.DatabaseError) as err:
                if is_busy(err):  # sound and in use: replacing it would pull it from under them
                    raise
                self.close()
                discard_index(self.sidecar)
                return sync_index(
                    self.root, self.index, self.settings, rebuild=True, progress=progress
                )

    def catch_up(self, *, meanwhile: Callable[[], object] | None = None) -> SyncReport | None:
        """Sync the index unless a live watcher keeps it fresh (then ``None``, nothing walked).

        A watcher counts when its heartbeat in the sidecar is fresh
        (:func:`~vaultmem.services.index.live_index.index_is_live`): ``vaultmem watch`` or
        ``vaultmem mcp`` running on this machine. Reads (recall, lookups, listing, planning) call
        this instead of :meth:`sync`, so they do not walk 100,000 notes per call.
        ``meanwhile``: as for :meth:`sync` (never called when nothing is walked).
        """
        if index_is_live(self.sidecar):
            return None
        return self.sync(meanwhile=meanwhile, progress=progress_of("indexing"))

    def refresh(
        self, paths: Iterable[str], written: Mapping[str, WrittenNote] | None = None
    ) -> SyncReport:
        """Re-index just ``paths`` (vault-relative), e.g. after vaultmem wrote them; ``written``
        gives the texts of notes just written, indexed without reading them back when their
        size and mtime show nobody changed them since (:func:`sync_paths`)."""
        return sync_paths(self.root, self.index, self.settings, paths, written)

    # ------------------------------------------------------------------ lookup
    def resolve(self, ref: str) -> str:
        """Vault-relative path of the note with id ``ref``, or title / path ``ref``.

        Raises :class:`NoteNotFoundError`, or :class:`AmbiguousNoteError` listing the candidates.
        """
        return resolve_ref(self, ref)

    def memory(self, ref: str, *, now: dt.datetime | None = None) -> Memory:
        """One note with its fields and derived values (score, factors, EI, review priority)."""
        when = given_now(now)
        return load_memory(self, self.resolve(ref), when)

    def links(self, ref: str) -> NoteLinks:
        """The note's outgoing links, backlinks and unresolved links (its graph neighbours)."""
        from vaultmem.services.memories.note_links import note_links

        return note_links(self.index, self.resolve(ref))

    def doctor(self) -> DoctorReport:
        """Check the notes and the index (repairing a stale index); see ``vaultmem doctor``."""
        from vaultmem.services.sync.doctor import check_vault

        return check_vault(self)

    def fix(self, now: dt.datetime | None = None) -> FixReport:
        """Resolve notes sharing a memory id and conflicted properties, journaled (undoable).

        See ``vaultmem doctor --fix``. Raises :class:`~vaultmem.errors.LockedError` when a pass
        is running.
        """
        from vaultmem.services.sync.shared_ids import fix_vault

        return fix_vault(self, given_now(now))

    # ------------------------------------------------------------------ writing
    def edit(self, path: str, compute: ChangeFunction, *, now: dt.datetime | None = None) -> Memory:
        """Apply ``compute(fields)``'s changes to the note at ``path``, surgically and atomically
        (see :func:`~vaultmem.services.memories.memory_edits.edit_note`)."""
        return edit_note(self, path, compute, now=now)

    def touch(self, ref: str, *, boost: bool = False, now: dt.datetime | None = None) -> Memory:
        """Reinforce (3.4): ``last_used = now``, ``use_count += 1``; ``boost`` +0.1 strength.

        Raises :class:`~vaultmem.errors.InputError`, writing nothing, when ``ref`` is not a
        memory (a box or trace note, a person's own note) or is archived (see
        :func:`~vaultmem.services.memories.memory_lookup.memory_path`), or for a ``now`` that is
        not a datetime (:func:`~vaultmem.core.notes.timestamps.given_now`); and
        :class:`~vaultmem.errors.UnsafeNoteError` for a note it must not write (a value it
        cannot read, unparsable YAML, conflict markers: see
        :func:`~vaultmem.services.memories.memory_edits.refuse_unwritable`)."""
        when = given_now(now)
        path = memory_path(self, ref, "not touched")
        return self.edit(path, lambda f: touch_changes(f, when, boost=boost), now=when)

    def observe(
        self, refs: Sequence[str], context_tags: Iterable[str], *, now: dt.datetime | None = None
    ) -> list[Memory]:
        """Mnemex's observed use of each memory in a context ("Scores", reinforcement).

        Each memory is counted once, however many of ``refs`` name it (an id and its title
        alike; a line in :attr:`warnings` says so); the memories come back in the order first
        named. Raises :class:`InputError` for no ``refs``, what
        :func:`~vaultmem.services.memories.memory_lookup.memory_path` raises for one that names
        no memory, a box or trace note or an archived memory, and
        :class:`~vaultmem.errors.UnsafeNoteError` for one whose note must not be written (a
        value it cannot read, unparsable YAML, conflict markers): every one is checked before
        any is written, so nothing is written then.
        """
        return observe_memories(self, refs, context_tags, given_now(now))

    def keep(self, ref: str, *, now: dt.datetime | None = None) -> Memory:
        """``gc --keep`` (Mnemon): ``use_count += 3``. Raises what
        :func:`~vaultmem.services.memories.memory_lookup.memory_path` raises (a box or trace
        note, an archived memory: not kept) or :meth:`edit` raises, writing nothing."""
        when = given_now(now)
        return self.edit(memory_path(self, ref, "not kept"), keep_changes, now=when)

    def pin(self, ref: str, pinned: bool = True, *, now: dt.datetime | None = None) -> Memory:
        """Set ``pinned`` (immune to forgetting and pruning).

        Raises :class:`~vaultmem.errors.InputError`, writing nothing, when ``ref`` is not a
        memory (a box or trace note, a person's own note), or when pinning an archived memory
        (pinning does not bring it back; unpinning one is done)."""
        when = given_now(now)
        refused = "not pinned" if pinned else "not unpinned"
        path = memory_path(self, ref, refused, archived=not pinned)
        return self.edit(path, lambda f: {"pinned": pinned}, now=when)

    # ------------------------------------------------------------------ remembering
    def remember(
        self, content: str, *, now: dt.datetime | None = None, link: bool = True, **options: Any
    ) -> Memory:
        """Save a new memory in STM ("The memory note") and return it; ``options``, dedup and
        errors: see :func:`~vaultmem.services.memories.memory_saving.save_memory` (an unknown
        option or a bad value raises :class:`InputError` naming it)."""
        from vaultmem.services.memories.memory_saving import remember

        return remember(self, content, now=given_now(now), link=link, **options)

    def save(
        self, content: str, *, now: dt.datetime | None = None, link: bool = True, **options: Any
    ) -> Remembered:
        """:meth:`remember`, returning what was done too (written, reinforced instead, or a
        correction that superseded a memory): see
        :func:`~vaultmem.services.memories.memory_saving.save_memory`."""
        from vaultmem.services.memories.memory_saving import save_memory

        return save_memory(self, content, now=given_now(now), link=link, **options)

    def write_draft(
        self,
        draft: MemoryDraft,
        *,
        now: dt.datetime,
        link: bool = True,
        synced: bool = False,
        semantic_links: Sequence[str] = (),
    ) -> str:
        """Write a validated :class:`MemoryDraft` as a new note; returns its path (see
        :func:`~vaultmem.services.memories.memory_saving.write_draft`)."""
        from vaultmem.services.memories.memory_saving import write_draft

        return write_draft(
            self, draft, now=now, link=link, synced=synced, semantic_links=semantic_links
        )

    # ------------------------------------------------------------------ recall
    def recall(
        self, query: str, *, k: int | None = None, now: dt.datetime | None = None, **options: Any
    ) -> list[Hit]:
        """Ranked notes for ``query`` ("Recall"); see
        :func:`vaultmem.services.recall.recall.recall`.

        A hit whose note holds git conflict markers is marked ``conflicted``; a memory sealed in
        a box carries the box note's path as its ``episode``. ``touch``: ``True`` (the first
        memory), a rank from 1, an id, title or path, or a non-empty list of them; ``False`` or
        ``None``: none. Raises :class:`~vaultmem.errors.InputError` for any other ``touch``
        (``0``, ``[]``, ``""``), an empty query and the values ``recall_notes`` refuses, before
        anything is read or written."""
        hits = recall_notes(self, query, k=k, now=given_now(now), **options)
        conflicted = conflicted_paths(self.index, [h.path for h in hits])
        episodes = box_notes_of(self.index, [h.path for h in hits])
        return [
            replace(h, conflicted=h.path in conflicted, episode=episodes.get(h.path)) for h in hits
        ]

    def review(self, *, k: int | None = None, now: dt.datetime | None = None) -> list[MemoryRow]:
        """Danger-zone memories ranked by review priority (Mnemex; "Scores")."""
        return review_queue(self, k=k, now=given_now(now))

    def import_jsonl(
        self,
        lines: Iterable[str | bytes],
        *,
        now: dt.datetime | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> ImportReport:
        """Import one memory per JSONL line, text or raw bytes (see
        :func:`.remembering.import_lines`): bad lines are reported and skipped, lines already
        in the vault are not imported again. With an embedding provider the imported memories
        are then embedded in batches (``[embeddings] batch_size``; a provider failing leaves
        them to ``embed --all``, with a warning).

        When the vault then holds more active memories than ``max_active``, ``over_cap`` of the
        report (and a line in :attr:`warnings`) says how many the next prune archives."""
        from vaultmem.services.memories.remembering import import_lines

        when = given_now(now)
        report = import_lines(self, lines, now=when, progress=progress)
        if report.imported and self.settings.embeddings.enabled:
            from vaultmem.services.semantic.embeddings import embed_imported

            embed_imported(self, report.imported, when)
        cap = self.settings.lifecycle.max_active
        (active,) = self.index.conn.execute(
            "SELECT COUNT(*) FROM notes WHERE type = 'memory' AND status = 'active'"
        ).fetchone()
        if report.imported and active > cap:
            report.over_cap = (
                f"the vault now holds {active} active memories, over max_active {cap}: the next "
                f"`vaultmem lifecycle` prunes (archives) up to {active - cap} of the lowest "
                "effective importance, never pinned or immune ones nor any younger than the "
                "grace period (`vaultmem status` shows the plan; [lifecycle] max_active in "
                "vaultmem.toml sets the cap)"
            )
            self.warnings.append(report.over_cap)
        return report

    # ------------------------------------------------------------------ listing
    def table(
        self,
        *,
        now: dt.datetime | None = None,
        where: str = "n.type = 'memory'",
        params: tuple[object, ...] = (),
        synced: SyncReport | None = None,
        preloaded: MemoryTable | None = None,
    ) -> MemoryTable:
        """Columns and scores of the memories (after a cheap sync), for listing and planning
        (see :func:`~vaultmem.services.memories.memory_listing.synced_table`)."""
        return synced_table(
            self, now=given_now(now), where=where, params=params, synced=synced, preloaded=preloaded
        )

    def memories(
        self,
        *,
        status: str | None = None,
        layer: str | None = None,
        tag: str | None = None,
        folder: str | None = None,
        sort: str = "score",
        limit: int | None = None,
        now: dt.datetime | None = None,
    ) -> list[MemoryRow]:
        """Memories matching every given filter, ordered by ``sort``, at most ``limit`` (see
        :func:`~vaultmem.services.memories.memory_listing.filtered_memories`): ``tag`` also
        finds the tags nested in it, as recall's does. Raises
        :class:`~vaultmem.errors.InputError` for a status, layer or sort not among the choices,
        an empty tag or folder, a folder the vault does not have, or a ``limit`` below 1."""
        return filtered_memories(
            self,
            status=status,
            layer=layer,
            tag=tag,
            folder=folder,
            sort=sort,
            limit=limit,
            now=given_now(now),
        )

    def status(self, *, now: dt.datetime | None = None) -> VaultStatus:
        """Counts per folder and status, danger zone, and what a pass would do now."""
        return current_status(self, now=given_now(now))

    # ------------------------------------------------------------------ passes
    def promote(
        self, ref: str | None = None, *, dry_run: bool = False, now: dt.datetime | None = None
    ) -> PassResult:
        """Promote ("Lifecycle"): move promotion candidates to LTM/ — or the one memory ``ref``
        (see :func:`~vaultmem.services.lifecycle.pass_commands.promote_memories`)."""
        return promote_memories(self, ref, dry_run=dry_run, now=now)

    def forget(
        self, ref: str, *, dry_run: bool = False, now: dt.datetime | None = None
    ) -> PassResult:
        """Archive one memory now, journaled like a pass; waits up to :attr:`lock_wait_seconds`
        for a running pass (errors: see
        :func:`~vaultmem.services.lifecycle.pass_commands.forget_memory`)."""
        return forget_memory(self, ref, dry_run=dry_run, now=now)

    def gc(
        self,
        *,
        threshold: float | None = None,
        keep: Sequence[str] = (),
        dry_run: bool = False,
        hard: bool = False,
        now: dt.datetime | None = None,
    ) -> PassResult:
        """Forget ("Lifecycle"): archive memories scoring below ``threshold``; ``hard`` deletes
        (see :func:`~vaultmem.services.lifecycle.pass_commands.collect_garbage`)."""
        return collect_garbage(
            self, threshold=threshold, keep=keep, dry_run=dry_run, hard=hard, now=now
        )

    def lifecycle(
        self,
        passes: Sequence[str] | None = None,
        *,
        dry_run: bool = False,
        now: dt.datetime | None = None,
        threshold: float | None = None,
        hard: bool = False,
        keep: Sequence[str] = (),
        command: str | None = None,
        commit: bool = False,
    ) -> LifecycleRun:
        """Run lifecycle passes (seal, promote, expire, forget, prune) as one undoable step
        (see :func:`~vaultmem.services.lifecycle.pass_commands.run_lifecycle`)."""
        return run_lifecycle(
            self,
            passes,
            dry_run=dry_run,
            now=now,
            threshold=threshold,
            hard=hard,
            keep=keep,
            command=command,
            commit=commit,
        )

    def undo(
        self,
        entry: str | None = None,
        *,
        commit: bool | None = None,
        session: str | None = None,
    ) -> UndoReport:
        """Reverse the journal ``entry`` (default: the last applied pass) exactly; refuses,
        naming it, if a note changed (see
        :func:`~vaultmem.services.lifecycle.pass_commands.undo_last_run`)."""
        return undo_last_run(self, entry, commit=commit, session=session)

    def journal(self) -> list[dict[str, Any]]:
        """The journal's entries, newest first
        (:func:`~vaultmem.services.lifecycle.undo.list_entries`)."""
        from vaultmem.services.lifecycle.undo import list_entries

        return list_entries(self)

    def create_memory(
        self,
        content: str,
        fields: dict[str, object],
        *,
        title: str | None = None,
        folder: str | None = None,
        taken: set[str] | None = None,
        refresh: bool = True,
        explicit_title: bool | None = None,
        batch: NewNotes | None = None,
    ) -> str:
        """Write a new memory note; returns its vault-relative path (see
        :func:`vaultmem.services.memories.memory_creation.create_memory`)."""
        from vaultmem.services.memories.memory_creation import create_memory

        return create_memory(
            self,
            content,
            fields,
            title=title,
            folder=folder,
            taken=taken,
            refresh=refresh,
            explicit_title=explicit_title,
            batch=batch,
        )


__all__ = ["Vault", "discover_vault"]
