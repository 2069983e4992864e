"""The Python API: :class:`Vault` — open a vault, remember, reinforce, list, score, run passes.

Every CLI command is a thin layer over one method here. Methods take ``now`` (an aware datetime;
default: the current time) so passes can be simulated; they raise :class:`~vaultmem.errors.
VaultmemError` subclasses with messages fit to show a person.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from vaultmem.core.fields import MemoryFields, normalise_tags
from vaultmem.core.link_resolution import note_key
from vaultmem.core.naming import new_id, numbered, safe_title, title_from_content
from vaultmem.core.note_parse import parse_note
from vaultmem.core.note_text import FrontmatterError, render_note, set_fields
from vaultmem.core.reinforcement import keep_changes, observe_changes, touch_changes
from vaultmem.core.scoring import MemoryColumns, score_columns
from vaultmem.core.settings import Settings
from vaultmem.core.timestamps import utc_now
from vaultmem.errors import (
    AmbiguousNoteError,
    InputError,
    NoteChangedError,
    NoteNotFoundError,
    UnsafeNoteError,
    VaultNotFoundError,
)
from vaultmem.services.auto_links import related_memories
from vaultmem.services.embeddings import close_vectors, embed_new
from vaultmem.services.git_commit import commit_run
from vaultmem.services.index_sync import ProgressCallback, SyncReport, sync_index, sync_paths
from vaultmem.services.lifecycle import (
    PASS_ORDER,
    LifecycleRun,
    PassResult,
    PassSession,
    on_request_promotion,
    plan_pass,
    run_passes,
)
from vaultmem.services.memory_novelty import Novelty, assess, duplicate_of, merge_related
from vaultmem.services.memory_view import (
    Memory,
    MemoryRow,
    MemoryTable,
    VaultStatus,
    memory_from_note,
    memory_table,
    order_rows,
    rows_of,
    vault_status,
)
from vaultmem.services.recall import Hit, recall_notes, review_queue
from vaultmem.services.remembering import ImportReport, MemoryDraft, import_lines, make_draft
from vaultmem.services.undo import UndoReport, undo_last
from vaultmem.store.index_db import IndexDB
from vaultmem.store.note_files import read_note, write_note
from vaultmem.store.settings_file import SETTINGS_FILE, load_settings
from vaultmem.store.sidecar import SIDECAR_DIR
from vaultmem.store.vault_lock import vault_lock

ChangeFunction = Callable[[MemoryFields], dict[str, object]]


def discover_vault(start: Path) -> Path:
    """The vault holding ``start``: nearest folder upward with vaultmem.toml or .obsidian/."""
    here = start.resolve()
    for folder in (here, *here.parents):
        if (folder / SETTINGS_FILE).is_file() or (folder / ".obsidian").is_dir():
            return folder
    raise VaultNotFoundError(
        f"no vault found from {here} upward (no vaultmem.toml or .obsidian/); "
        "pass --vault PATH, set VAULTMEM_VAULT, or run `vaultmem init`"
    )


def template_root() -> Path:
    """The bundled vault template (``vault-template/`` of the repository)."""
    return Path(str(resources.files("vaultmem") / "template"))


class Vault:
    """One vault on disk, its settings and its sidecar index."""

    def __init__(self, root: Path, settings: Settings) -> None:
        self.root = root
        self.settings = settings
        self.sidecar = root / SIDECAR_DIR
        self._index: IndexDB | None = None
        self.warnings: list[str] = []
        """Field warnings met while reading notes (one line each, naming note and key)."""

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
        note, the dashboard); no existing file is changed — the sidecar ignores itself for git.
        """
        root = Path(path)
        root.mkdir(parents=True, exist_ok=True)
        created = _copy_missing(template_root(), root)
        vault = cls.open(root)
        for folder in vault.folders():
            target = root / folder
            if not target.exists():
                target.mkdir(parents=True)
                created.append(folder + "/")
        return vault, created

    def folders(self) -> list[str]:
        f = self.settings.folders
        return [f.stm, f.boxes, f.ltm, f.archive]

    @property
    def index(self) -> IndexDB:
        """The sidecar index, opened (and created or repaired) on first use."""
        if self._index is None:
            self._index = IndexDB.open(self.sidecar)
        return self._index

    def close(self) -> None:
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
        """Incremental index sync (spec 5): unchanged notes are not read; ``rebuild`` restarts."""
        return sync_index(self.root, self.index, self.settings, rebuild=rebuild, progress=progress)

    def refresh(self, paths: Iterable[str]) -> SyncReport:
        """Re-index just ``paths`` (vault-relative), e.g. after vaultmem wrote them."""
        return sync_paths(self.root, self.index, self.settings, paths)

    # ------------------------------------------------------------------ lookup
    def resolve(self, ref: str) -> str:
        """Vault-relative path of the note with id ``ref``, or title / path ``ref``.

        Raises :class:`NoteNotFoundError`, or :class:`AmbiguousNoteError` listing the candidates.
        """
        self.sync()
        ref = ref.strip()
        paths = self.index.paths_by_id(ref)
        if not paths:
            as_path = ref if ref.lower().endswith(".md") else ref + ".md"
            if self.index.note_row(as_path) is not None:
                return as_path
            paths = self.index.paths_by_title(ref.removesuffix(".md"))
        if not paths:
            raise NoteNotFoundError(ref)
        if len(paths) > 1:
            raise AmbiguousNoteError(ref, paths)
        return paths[0]

    def memory(self, ref: str, *, now: dt.datetime | None = None) -> Memory:
        """One note with its fields and derived values (score, factors, EI, review priority)."""
        path = self.resolve(ref)
        return self._load(path, now or utc_now())

    def _load(self, path: str, now: dt.datetime) -> Memory:
        snapshot = read_note(self.root / path)
        mtime = dt.datetime.fromtimestamp(snapshot.fingerprint.mtime_ns / 1e9, tz=dt.UTC)
        note = parse_note(path, snapshot.text, fallback_time=mtime)
        self.warnings.extend(w.message(path) for w in note.warnings)
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
        with vault_lock(self.sidecar):
            for attempt in (1, 2):
                snapshot = read_note(self.root / path)
                note = parse_note(path, snapshot.text)
                if note.problems:
                    raise UnsafeNoteError(path, f"{note.problems[0]}; not written")
                try:
                    text = set_fields(snapshot.text, compute(note.fields))
                except FrontmatterError as err:
                    raise UnsafeNoteError(path, f"{err}; not written") from None
                try:
                    write_note(self.root / path, text, expected=snapshot.fingerprint)
                    break
                except NoteChangedError:
                    if attempt == 2:
                        raise
        self.refresh([path])
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
        """Seed 001's observed use of each memory in a context (spec 3.4)."""
        when = now or utc_now()
        tags = normalise_tags(list(context_tags))
        return [
            self.edit(self._managed(ref), lambda f: observe_changes(f, when, tags), now=when)
            for ref in refs
        ]

    def keep(self, ref: str, *, now: dt.datetime | None = None) -> Memory:
        """``gc --keep`` (seed 000): ``use_count += 3``."""
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
        """Save a new memory in STM (spec 2) and return it.

        ``options``: title, tags, category, importance (0..1) or imp (1..5), confidence,
        source, layer, pinned, strength, extra (other properties). Raises :class:`InputError`.
        With ``dedup=True`` (default), content equal to an active memory's after normalisation
        reinforces that memory instead (returned, with a line in ``warnings``). With embeddings,
        surprise adjusts the importance (unless one was given) and close memories are linked
        (:mod:`vaultmem.services.memory_novelty`).
        """
        when = now or utc_now()
        dedup = bool(options.pop("dedup", True))
        draft = make_draft(content, **options)
        with vault_lock(self.sidecar):
            self.sync()
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

        With ``link``, managed memories similar to it (spec 6, semantic auto-links) are written
        to its ``related:`` property. ``synced`` = the caller holds the vault lock and has just
        synced the index (bulk imports), so it is not synced again.
        """
        with vault_lock(self.sidecar):
            if not synced:
                self.sync()
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
        """Ranked notes for ``query`` (spec 7); see :func:`vaultmem.services.recall.recall`."""
        return recall_notes(self, query, k=k, now=now or utc_now(), **options)

    def review(self, *, k: int | None = None, now: dt.datetime | None = None) -> list[MemoryRow]:
        """Danger-zone memories ranked by review priority (spec 3.3; seed 001)."""
        return review_queue(self, k=k, now=now or utc_now())

    def import_jsonl(
        self,
        lines: Iterable[str],
        *,
        now: dt.datetime | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> ImportReport:
        """Import one memory per JSONL line (see :func:`.remembering.draft_from_json`)."""
        return import_lines(self, lines, now=now or utc_now(), progress=progress)

    # ------------------------------------------------------------------ listing
    def table(
        self,
        *,
        now: dt.datetime | None = None,
        where: str = "n.type = 'memory'",
        params: tuple[object, ...] = (),
    ) -> MemoryTable:
        """Columns and scores of the memories (after a cheap sync), for listing and planning."""
        self.sync()
        return memory_table(self.index, self.settings, now or utc_now(), where=where, params=params)

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
        table = self.table(now=now, where=" AND ".join(clauses), params=tuple(params))
        order = order_rows(table, sort)
        if limit is not None:
            order = order[:limit]
        return rows_of(table, order, self.index)

    def status(self, *, now: dt.datetime | None = None) -> VaultStatus:
        """Counts per folder and status, danger zone, and what a pass would do now."""
        when = now or utc_now()
        table = self.table(now=when)
        would_promote = plan_pass(self, "promote", when, table=table).planned
        would_forget = plan_pass(
            self, "forget", when, table=table, skip=frozenset(m.path for m in would_promote)
        ).planned
        return vault_status(
            table,
            self.settings,
            self.index.note_count(),
            forget=len(would_forget),
            promote=len(would_promote),
        )

    # ------------------------------------------------------------------ passes
    def promote(
        self, ref: str | None = None, *, dry_run: bool = False, now: dt.datetime | None = None
    ) -> PassResult:
        """Spec 4 rule 2: move promotion candidates to LTM/ — or the one memory ``ref``.

        A named memory that is not a candidate is promoted anyway (the person asked), with the
        reason "promoted on request".
        """
        when = now or utc_now()
        if ref is None:
            return self.lifecycle(("promote",), dry_run=dry_run, now=when).results[0]
        path = self._managed(ref)
        with PassSession(self, "promote", when, dry_run=dry_run) as session:
            result = plan_pass(self, "promote", when)
            result.planned = [m for m in result.planned if m.path == path]
            if not result.planned:
                result.planned = [on_request_promotion(self, path, when)]
            return session.run(result)

    def gc(
        self,
        *,
        threshold: float | None = None,
        keep: Sequence[str] = (),
        dry_run: bool = False,
        hard: bool = False,
        now: dt.datetime | None = None,
    ) -> PassResult:
        """Forget (spec 4 rule 4): archive memories scoring below ``threshold``; ``hard`` deletes.

        ``keep`` ids/titles are reinforced first (``use_count += 3``, seed 000) and left alone.
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
        passes: Sequence[str] = PASS_ORDER,
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

        Raises :class:`LockedError` when another pass is running. With ``commit`` in a git
        repository, the pass's changes (and only those) are committed with a message that counts
        what moved and why.
        """
        unknown = [p for p in passes if p not in PASS_ORDER]
        if unknown:
            raise InputError(f"unknown pass {unknown[0]!r}; passes: {', '.join(PASS_ORDER)}")
        self.sync()
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
        if commit and not dry_run and run.applied:
            run.commit = commit_run(self.root, run)
        return run

    def undo(self) -> UndoReport:
        """Reverse the last applied pass exactly (spec 4); refuses, naming it, if a note changed."""
        report = undo_last(self)
        self.sync()
        return report

    def unique_title(self, title: str) -> str:
        """``title``, or ``title 2``, ``title 3``… so the base name is unique (case-insensitive)."""
        n = 1
        while True:
            candidate = numbered(title, n)
            if not self.index.paths_with_name(note_key(candidate + ".md")):
                return candidate
            n += 1

    def create_memory(
        self,
        content: str,
        fields: dict[str, object],
        *,
        title: str | None = None,
        folder: str | None = None,
    ) -> str:
        """Write a new memory note; returns its vault-relative path. ``fields`` in output order.

        The caller holds the vault lock and has synced the index (the name must be unique).
        """
        base = safe_title(title) if title else title_from_content(content)
        if not base:
            base = f"Memory {fields.get('id') or new_id()}"
        with vault_lock(self.sidecar):
            name = self.unique_title(base)
            rel = f"{folder or self.settings.folders.stm}/{name}.md"
            body = content if content.endswith("\n") else content + "\n"
            write_note(self.root / rel, render_note(fields, body), expected=None)
        self.refresh([rel])
        return rel


def _copy_missing(template: Path, root: Path) -> list[str]:
    """Copy the template's files that ``root`` lacks; never touches an existing file."""
    created: list[str] = []
    for source in sorted(template.rglob("*")):
        target = root / source.relative_to(template)
        if source.is_dir() or target.exists() or source.name == "__init__.py":
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        created.append(source.relative_to(template).as_posix())
    return created


__all__ = ["Vault", "discover_vault"]
