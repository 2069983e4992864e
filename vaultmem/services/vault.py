"""The Python API: :class:`Vault` — open a vault, remember, reinforce, list, score, run passes.

Every CLI command is a thin layer over one method here. Methods take ``now`` (an aware datetime;
default: the current time) so passes can be simulated; they raise :class:`~vaultmem.errors.
VaultmemError` subclasses with messages fit to show a person.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import sqlite3
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultmem.core.fields import MemoryFields, normalise_tags
from vaultmem.core.naming import close_titles
from vaultmem.core.note_parse import CONFLICT_PROBLEM, parse_note
from vaultmem.core.reinforcement import keep_changes, observe_changes, touch_changes
from vaultmem.core.settings import Settings
from vaultmem.core.timestamps import utc_now
from vaultmem.errors import (
    AmbiguousNoteError,
    IndexDamagedError,
    InputError,
    NoteChangedError,
    NoteNotFoundError,
    UnsafeNoteError,
    VaultmemError,
    VaultNotFoundError,
)
from vaultmem.services.index_lookups import box_notes_of, conflicted_paths
from vaultmem.services.index_sync import (
    ProgressCallback,
    SyncReport,
    WrittenNote,
    sync_index,
    sync_paths,
)
from vaultmem.services.live_index import index_is_live
from vaultmem.services.recall import Hit, recall_notes, review_queue
from vaultmem.services.vault_setup import discover_vault, install_template
from vaultmem.store.confinement import confined_path, left_in_place_warning
from vaultmem.store.index_db import IndexDB, discard_index
from vaultmem.store.settings_file import load_settings
from vaultmem.store.sidecar import SIDECAR_DIR
from vaultmem.store.vault_lock import vault_lock
from vaultmem.store.vault_paths import confined

if TYPE_CHECKING:  # imported where used: recall and listing start without them (numpy, YAML)
    from vaultmem.services.doctor import DoctorReport
    from vaultmem.services.lifecycle import LifecycleRun, PassResult
    from vaultmem.services.memory_view import Memory, MemoryRow, MemoryTable, VaultStatus
    from vaultmem.services.note_links import NoteLinks
    from vaultmem.services.remembering import ImportReport, MemoryDraft
    from vaultmem.services.shared_ids import FixReport
    from vaultmem.services.undo import UndoReport
    from vaultmem.store.note_batch import NewNotes

ChangeFunction = Callable[[MemoryFields], dict[str, object]]


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
        self.lock_wait_seconds = 10.0
        """How long a write waits for the vault lock (a running pass) before
        :class:`~vaultmem.errors.LockedError` ("a pass is running, try again"); the MCP server
        waits less."""

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None) -> Vault:
        """Open the vault at ``path``, or find it from ``VAULTMEM_VAULT`` / the current folder."""
        if path is None:
            env = os.environ.get("VAULTMEM_VAULT")
            root = Path(env) if env else discover_vault(Path.cwd())
        else:
            root = Path(path)
        if not root.is_dir():
            raise VaultNotFoundError(f"{root}: no such folder")
        root = root.resolve()
        return cls(root, load_settings(root))

    @classmethod
    def init(cls, path: str | os.PathLike[str]) -> tuple[Vault, list[str]]:
        """Make ``path`` a vaultmem vault; returns the vault and the files created.

        A new or empty folder gets the whole template. In an existing Obsidian vault only the
        template's files it lacks are added (``vaultmem.toml``, the memory folders, the template
        note, the dashboard) and vaultmem's property types missing from ``.obsidian/types.json``;
        a type the vault declares otherwise is kept, with a line in ``vault.warnings``. No other
        existing file is changed — the sidecar ignores itself for git.
        """
        root = Path(path)
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
            from vaultmem.store.note_files import recover_interrupted_writes

            recover_interrupted_writes(folder)
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
        if "vaultmem.services.embeddings" in sys.modules:  # else no vector store was opened
            from vaultmem.services.embeddings import close_vectors

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
        self, *, rebuild: bool = False, progress: ProgressCallback | None = None
    ) -> SyncReport:
        """Incremental index sync: unchanged notes are not read; ``rebuild`` restarts.

        See docs/user-guide.md, "Index and graph".

        A read-only sidecar is not synced (a warning says so; the index is used as it is).
        ``rebuild`` replaces a damaged ``index.db`` with a new one built from the notes.
        """
        if rebuild:
            return self._rebuild(progress)
        if self.index.read_only:
            self.warnings.append(
                f"{self.sidecar} is read-only: the index is used as it is and may miss recent edits"
            )
            return SyncReport()
        return sync_index(self.root, self.index, self.settings, progress=progress)

    def _rebuild(self, progress: ProgressCallback | None) -> SyncReport:
        with vault_lock(self.sidecar):
            try:
                return sync_index(
                    self.root, self.index, self.settings, rebuild=True, progress=progress
                )
            except (IndexDamagedError, sqlite3.DatabaseError):
                self.close()
                discard_index(self.sidecar)
                return sync_index(
                    self.root, self.index, self.settings, rebuild=True, progress=progress
                )

    def catch_up(self) -> SyncReport | None:
        """Sync the index unless a live watcher keeps it fresh (then ``None``, nothing walked).

        A watcher counts when its heartbeat in the sidecar is fresh
        (:func:`~vaultmem.services.live_index.index_is_live`): ``vaultmem watch`` or
        ``vaultmem mcp`` running on this machine. Reads (recall, lookups, listing, planning) call
        this instead of :meth:`sync`, so they do not walk 100,000 notes per call.
        """
        if index_is_live(self.sidecar):
            return None
        return self.sync()

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
        self.catch_up()
        ref = ref.strip()
        paths = self.index.paths_by_id(ref)
        if not paths:
            as_path = ref if ref.lower().endswith(".md") else ref + ".md"
            if self.index.note_row(as_path) is not None:
                return as_path
            paths = self.index.paths_by_title(ref.removesuffix(".md"))
        if not paths:
            raise NoteNotFoundError(
                ref,
                close_titles(
                    ref, [str(t) for (t,) in self.index.conn.execute("SELECT title FROM notes")]
                ),
            )
        if len(paths) > 1:
            raise AmbiguousNoteError(ref, paths)
        return paths[0]

    def memory(self, ref: str, *, now: dt.datetime | None = None) -> Memory:
        """One note with its fields and derived values (score, factors, EI, review priority)."""
        path = self.resolve(ref)
        return self._load(path, now or utc_now())

    def links(self, ref: str) -> NoteLinks:
        """The note's outgoing links, backlinks and unresolved links (its graph neighbours)."""
        from vaultmem.services.note_links import note_links

        return note_links(self.index, self.resolve(ref))

    def doctor(self) -> DoctorReport:
        """Check the notes and the index (repairing a stale index); see ``vaultmem doctor``."""
        from vaultmem.services.doctor import check_vault

        return check_vault(self)

    def fix(self, now: dt.datetime | None = None) -> FixReport:
        """Resolve notes sharing a memory id and conflicted properties, journaled (undoable).

        See ``vaultmem doctor --fix``. Raises :class:`~vaultmem.errors.LockedError` when a pass
        is running.
        """
        from vaultmem.services.shared_ids import fix_vault

        return fix_vault(self, now or utc_now())

    def _load(self, path: str, now: dt.datetime) -> Memory:
        from vaultmem.core.scoring import MemoryColumns, score_columns
        from vaultmem.services.memory_view import memory_from_note
        from vaultmem.store.note_files import read_note

        snapshot = read_note(confined_path(self.root, path))
        mtime = dt.datetime.fromtimestamp(snapshot.fingerprint.mtime_ns / 1e9, tz=dt.UTC)
        note = parse_note(path, snapshot.text, fallback_time=mtime)
        self.warnings.extend(w.message(path) for w in note.warnings)
        self.warnings.extend(
            f"{path}: {problem} (shown from its 'ours' side)"
            for problem in note.problems
            if problem.startswith(CONFLICT_PROBLEM)
        )
        row = self.index.note_row(path)
        edges = int(row["edges"]) if row is not None else 0  # type: ignore[call-overload]
        return memory_from_note(
            note,
            score_columns(
                MemoryColumns.from_fields(path, note.fields, edges), now.timestamp(), self.settings
            ),
            edges,
        )

    # ------------------------------------------------------------------ writing
    def edit(self, path: str, compute: ChangeFunction, *, now: dt.datetime | None = None) -> Memory:
        """Apply ``compute(fields)``'s changes to the note at ``path``, surgically and atomically.

        The note is re-read just before writing; if it changed in between, the changes are
        computed again from the fresh text once. Raises :class:`UnsafeNoteError` for notes with
        unparsable YAML, conflict markers or non-UTF-8 bytes (they are never written).
        """
        from vaultmem.core.note_text import FrontmatterError, set_fields
        from vaultmem.store.note_files import read_note, write_note

        with vault_lock(self.sidecar, timeout_seconds=self.lock_wait_seconds):
            confined(self.root, path)
            # a linked memory is edited in its target (inside the vault), so the link stays
            target = confined_path(self.root, path)
            self.sweep_folder(target.parent)
            for attempt in (1, 2):
                snapshot = read_note(target)
                note = parse_note(path, snapshot.text)
                if note.problems:
                    raise UnsafeNoteError(path, f"{note.problems[0]}; not written")
                try:
                    text = set_fields(snapshot.text, compute(note.fields))
                except FrontmatterError as err:
                    raise UnsafeNoteError(path, f"{err}; not written") from None
                try:
                    write_note(target, text, expected=snapshot.fingerprint)
                    break
                except NoteChangedError:
                    if attempt == 2:
                        raise
        self.refresh([path, target.relative_to(self.root).as_posix()])
        return self._load(path, now or utc_now())

    def touch(self, ref: str, *, boost: bool = False, now: dt.datetime | None = None) -> Memory:
        """Reinforce (3.4): ``last_used = now``, ``use_count += 1``; ``boost`` +0.1 strength."""
        when = now or utc_now()
        return self.edit(
            self._managed(ref), lambda f: touch_changes(f, when, boost=boost), now=when
        )

    def observe(
        self, refs: Sequence[str], context_tags: Iterable[str], *, now: dt.datetime | None = None
    ) -> list[Memory]:
        """Mnemex's observed use of each memory in a context ("Scores", reinforcement)."""
        when = now or utc_now()
        tags = normalise_tags(list(context_tags))
        return [
            self.edit(self._managed(ref), lambda f: observe_changes(f, when, tags), now=when)
            for ref in refs
        ]

    def keep(self, ref: str, *, now: dt.datetime | None = None) -> Memory:
        """``gc --keep`` (Mnemon): ``use_count += 3``."""
        return self.edit(self._managed(ref), keep_changes, now=now)

    def pin(self, ref: str, pinned: bool = True, *, now: dt.datetime | None = None) -> Memory:
        """Set ``pinned`` (immune to forgetting and pruning)."""
        return self.edit(self._managed(ref), lambda f: {"pinned": pinned}, now=now)

    def _managed(self, ref: str) -> str:
        path = self.resolve(ref)
        row = self.index.note_row(path)
        if row is None or row["type"] not in ("memory", "box", "trace"):
            raise InputError(
                f"{path} is not a note vaultmem manages (no `type: memory` in its frontmatter)"
            )
        return path

    # ------------------------------------------------------------------ remembering
    def remember(
        self, content: str, *, now: dt.datetime | None = None, link: bool = True, **options: Any
    ) -> Memory:
        """Save a new memory in STM ("The memory note") and return it.

        ``options``: title, tags, category, importance (0..1) or imp (1..5), confidence,
        source, layer, pinned, strength, extra (other properties), supersedes (id or title of
        the memory this one corrects: see :mod:`vaultmem.services.corrections`). Raises
        :class:`InputError`. With ``dedup=True`` (default), content equal to an active memory's
        after normalisation reinforces that memory instead (returned, with a line in
        ``warnings``). With embeddings, surprise adjusts the importance (unless one was given)
        and close memories are linked (:mod:`vaultmem.services.memory_novelty`).
        """
        from vaultmem.services.corrections import remember_correction
        from vaultmem.services.embeddings import embed_new
        from vaultmem.services.memory_novelty import Novelty, assess, duplicate_of
        from vaultmem.services.remembering import make_draft

        when = now or utc_now()
        dedup = bool(options.pop("dedup", True))
        supersedes = options.pop("supersedes", None)
        if supersedes is not None:
            path = remember_correction(
                self, content, str(supersedes), now=when, link=link, options=options
            )
            return self._load(path, when)
        draft = make_draft(content, **options)
        with vault_lock(self.sidecar, timeout_seconds=self.lock_wait_seconds):
            self.catch_up()
            if dedup:
                existing = duplicate_of(self, draft.content)
                if existing is not None:
                    self.warnings.append(f"same content as {existing}: reinforced it instead of "
                                         "writing a copy")
                    return self.touch(existing, now=when)
            novelty = assess(self, draft.content, draft.title) if link else Novelty()
            explicit = options.get("importance") is not None or options.get("imp") is not None
            draft = replace(
                draft,
                importance=draft.importance if explicit else min(1.0, max(
                    0.0, round(draft.importance + novelty.importance_delta, 3))),
                extra={**draft.extra, **novelty.fields()},
            )
            path = self.write_draft(draft, now=when, link=link, synced=True,
                                    semantic_links=novelty.related)
        if novelty.surprise is not None:
            embed_new(self, path, when)
        return self._load(path, when)

    def write_draft(
        self, draft: MemoryDraft, *, now: dt.datetime, link: bool = True, synced: bool = False,
        semantic_links: Sequence[str] = (),
    ) -> str:
        """Write a validated :class:`MemoryDraft` as a new note; returns its path.

        With ``link``, managed memories similar to it (semantic auto-links, "Recall") are written
        to its ``related:`` property. ``synced`` = the caller holds the vault lock and has just
        synced the index (bulk imports), so it is not synced again.
        """
        from vaultmem.services.auto_links import related_memories
        from vaultmem.services.memory_novelty import merge_related

        with vault_lock(self.sidecar, timeout_seconds=self.lock_wait_seconds):
            if not synced:
                self.catch_up()
            if draft.id is not None:
                taken = self.index.paths_by_id(draft.id)
                if taken:
                    raise InputError(f"id {draft.id} is already used by {taken[0]}")
            fields = draft.frontmatter(now)
            if link:
                related = merge_related(related_memories(self, draft.content, draft.tags),
                                        semantic_links, self.settings.links.auto_link_max)
                if related:
                    fields["related"] = [f"[[{title}]]" for title in related]
            return self.create_memory(draft.content, fields, title=draft.title)

    # ------------------------------------------------------------------ recall
    def recall(
        self, query: str, *, k: int | None = None, now: dt.datetime | None = None, **options: Any
    ) -> list[Hit]:
        """Ranked notes for ``query`` ("Recall"); see :func:`vaultmem.services.recall.recall`.

        A hit whose note holds git conflict markers is marked ``conflicted``; a memory sealed in
        a box carries the box note's path as its ``episode``."""
        hits = recall_notes(self, query, k=k, now=now or utc_now(), **options)
        conflicted = conflicted_paths(self.index, [h.path for h in hits])
        episodes = box_notes_of(self.index, [h.path for h in hits])
        return [
            replace(h, conflicted=h.path in conflicted, episode=episodes.get(h.path))
            for h in hits
        ]

    def review(self, *, k: int | None = None, now: dt.datetime | None = None) -> list[MemoryRow]:
        """Danger-zone memories ranked by review priority (Mnemex; "Scores")."""
        return review_queue(self, k=k, now=now or utc_now())

    def import_jsonl(
        self,
        lines: Iterable[str | bytes],
        *,
        now: dt.datetime | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> ImportReport:
        """Import one memory per JSONL line, text or raw bytes (see
        :func:`.remembering.import_lines`): bad lines are reported and skipped, lines already
        in the vault are not imported again."""
        from vaultmem.services.remembering import import_lines

        return import_lines(self, lines, now=now or utc_now(), progress=progress)

    # ------------------------------------------------------------------ listing
    def table(
        self,
        *,
        now: dt.datetime | None = None,
        where: str = "n.type = 'memory'",
        params: tuple[object, ...] = (),
        synced: SyncReport | None = None,
    ) -> MemoryTable:
        """Columns and scores of the memories (after a cheap sync), for listing and planning.

        ``synced``: the report of a sync the caller has just made; the index is then not synced
        again. When the sync walked the vault, the table also knows which notes are symbolic
        links (:attr:`MemoryTable.linked`).
        """
        from vaultmem.services.memory_view import memory_table

        if synced is None:
            synced = self.catch_up()
        rows = self.index.conn.execute(
            f"SELECT n.path, n.warnings FROM notes n WHERE ({where}) AND n.warnings != '[]' "
            "ORDER BY n.path",
            params,
        )
        for path, text in rows:  # once per note and key, however often the table is read
            self.warnings.extend(
                line for w in json.loads(text) if (line := f"{path}: {w}") not in self.warnings
            )
        table = memory_table(
            self.index, self.settings, now or utc_now(), where=where, params=params
        )
        if synced is None or synced.linked is None:
            return table
        return replace(table, linked=synced.linked)

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
        """Memories matching every given filter, ordered by ``sort`` (see :data:`SORT_KEYS`)."""
        clauses: list[str] = ["n.type = 'memory'"]
        params: list[object] = []
        if status:
            clauses.append("n.status = ?")
            params.append(status)
        if layer:
            clauses.append("n.layer = ?")
            params.append(layer)
        if tag:
            clauses.append("n.nid IN (SELECT nid FROM tags WHERE tag = ? COLLATE NOCASE)")
            params.append(tag.lstrip("#"))
        if folder:
            prefix = folder.strip("/") + "/"
            clauses.append("substr(n.path, 1, ?) = ?")
            params += [len(prefix), prefix]
        from vaultmem.services.memory_view import order_rows, rows_of

        table = self.table(now=now, where=" AND ".join(clauses), params=tuple(params))
        order = order_rows(table, sort)
        if limit is not None:
            order = order[:limit]
        return rows_of(table, order, self.index)

    def status(self, *, now: dt.datetime | None = None) -> VaultStatus:
        """Counts per folder and status, danger zone, and what a pass would do now."""
        from vaultmem.services.lifecycle import plan_pass
        from vaultmem.services.memory_view import vault_status

        when = now or utc_now()
        table = self.table(now=when)
        would_promote = plan_pass(self, "promote", when, table=table).planned
        would_forget = plan_pass(
            self, "forget", when, table=table, skip=frozenset(m.path for m in would_promote)
        ).planned
        conflicted = conflicted_paths(self.index)
        return vault_status(
            table,
            self.settings,
            self.index.note_count(),
            forget=len(would_forget),
            promote=len(would_promote),
            conflicted=sum(1 for path in table.columns.path if path in conflicted),
        )

    # ------------------------------------------------------------------ passes
    def promote(
        self, ref: str | None = None, *, dry_run: bool = False, now: dt.datetime | None = None
    ) -> PassResult:
        """Promote ("Lifecycle"): move promotion candidates to LTM/ — or the one memory ``ref``.

        A named memory that is not a candidate is promoted anyway (the person asked), with the
        reason "promoted on request".
        """
        from vaultmem.services.lifecycle import PassSession, on_request_promotion, plan_pass
        from vaultmem.services.shared_ids import hold_shared, shared_id_paths

        when = now or utc_now()
        if ref is None:
            return self.lifecycle(("promote",), dry_run=dry_run, now=when).results[0]
        path = self._managed(ref)
        if os.path.islink(self.root / path):
            raise InputError(left_in_place_warning(path))
        row = self.index.note_row(path) or {}
        if row.get("status") == "superseded":
            raise InputError(
                f"{path} is superseded by {row.get('superseded_by') or 'a correction'}"
                "; a superseded memory is never promoted (promote its successor)"
            )
        with PassSession(self, "promote", when, dry_run=dry_run) as session:
            result = plan_pass(self, "promote", when)
            result.planned = [m for m in result.planned if m.path == path]
            if not result.planned:
                result.planned = [on_request_promotion(self, path, when)]
            hold_shared(result.planned, result.skipped, shared_id_paths(self.index))
            return session.run(result)

    def forget(
        self, ref: str, *, dry_run: bool = False, now: dt.datetime | None = None
    ) -> PassResult:
        """Archive one memory now: move it to Archive/, ``status: archived``, ``archived_at``.

        Journaled like a pass, so ``vaultmem undo`` puts it back exactly. Waits up to
        :attr:`lock_wait_seconds` for a running pass. Raises :class:`NoteNotFoundError`,
        :class:`AmbiguousNoteError`, :class:`InputError` (not a memory, already archived,
        pinned), :class:`UnsafeNoteError` (conflict markers, unparsable YAML) or
        :class:`LockedError`; nothing is changed then.
        """
        from vaultmem.services.lifecycle import PassResult, PassSession, on_request_archival

        when = now or utc_now()
        path = self._managed(ref)
        move = on_request_archival(self, path, when)
        waiting = (
            contextlib.nullcontext()
            if dry_run
            else vault_lock(self.sidecar, timeout_seconds=self.lock_wait_seconds)
        )
        with waiting, PassSession(self, "forget", when, dry_run=dry_run) as session:
            result = session.run(PassResult("forget", [move], dry_run=dry_run))
        if result.skipped:
            raise VaultmemError(result.skipped[0][1])  # "<path>: <why>"; nothing was changed
        return result

    def gc(
        self,
        *,
        threshold: float | None = None,
        keep: Sequence[str] = (),
        dry_run: bool = False,
        hard: bool = False,
        now: dt.datetime | None = None,
    ) -> PassResult:
        """Forget ("Lifecycle"): archive memories scoring below ``threshold``; ``hard`` deletes.

        ``keep`` ids/titles are reinforced first (``use_count += 3``, as Mnemon does) and left
        alone.
        """
        kept = tuple(self._managed(ref) for ref in keep)
        run = self.lifecycle(
            ("forget",),
            dry_run=dry_run,
            now=now,
            threshold=threshold,
            hard=hard,
            keep=kept,
            command="gc",
        )
        return run.results[0]

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
        """Run lifecycle passes (seal, promote, expire, forget, prune) as one undoable step.

        ``passes``: which, in order (default: every pass, ``PASS_ORDER``).

        Raises :class:`LockedError` when another pass is running. With ``commit`` in a git
        repository, the pass's changes (and only those) are committed with a message that counts
        what moved and why.
        """
        from vaultmem.core.lifecycle_plan import PASS_ORDER
        from vaultmem.services.emptied_folders import remove_emptied_folders
        from vaultmem.services.git_commit import commit_run
        from vaultmem.services.lifecycle import run_passes

        passes = PASS_ORDER if passes is None else passes
        unknown = [p for p in passes if p not in PASS_ORDER]
        if unknown:
            raise InputError(f"unknown pass {unknown[0]!r}; passes: {', '.join(PASS_ORDER)}")
        run = run_passes(
            self,
            tuple(passes),
            now or utc_now(),
            dry_run=dry_run,
            threshold=threshold,
            hard=hard,
            keep=tuple(keep),
            command=command,
        )
        if not dry_run and run.touched:
            remove_emptied_folders(self.root, run.touched, self.folders())
        if commit and not dry_run and run.touched:
            try:
                run.commit = commit_run(self.root, run)
            except VaultmemError as err:  # the pass stands; say so and what to do
                run.commit_error = (
                    f"{err}. The pass was applied but not committed; commit its files by hand "
                    "(git add -A <folders> && git commit) or run `vaultmem undo`"
                )
        return run

    def undo(self, *, commit: bool = False) -> UndoReport:
        """Reverse the last applied pass exactly; refuses, naming it, if a note changed.

        See docs/user-guide.md, "Journal, undo and safety".

        With ``commit`` in a git repository the reversal (only its files) is committed; a git
        failure is reported in ``report.commit_error`` and the files stay reverted.
        """
        from vaultmem.services.emptied_folders import remove_emptied_folders
        from vaultmem.services.git_commit import commit_paths
        from vaultmem.services.undo import undo_last

        report = undo_last(self)
        self.sync()
        paths = [p for item in report.restored for p in (item["from"], item["to"]) if p]
        remove_emptied_folders(self.root, paths, self.folders())
        if commit:
            try:
                report.commit = commit_paths(
                    self.root,
                    paths,
                    f"vaultmem undo: reverted {report.command} ({report.journal})\n",
                )
            except VaultmemError as err:
                report.commit_error = f"{err}. The undo was done but not committed"
        return report

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
        :func:`vaultmem.services.memory_creation.create_memory`)."""
        from vaultmem.services.memory_creation import create_memory

        return create_memory(
            self, content, fields, title=title, folder=folder, taken=taken, refresh=refresh,
            explicit_title=explicit_title, batch=batch,
        )


__all__ = ["Vault", "discover_vault"]
