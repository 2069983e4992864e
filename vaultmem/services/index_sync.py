"""Keeping the sidecar index in step with the vault (spec section 5).

:func:`sync_index` walks the vault: a note whose size and mtime are unchanged is not read; a
changed one is re-read (and re-parsed only if its bytes changed); a new file whose content hash
or ``id`` matches a vanished one is a move and keeps its rows; a vanished note is removed only
after a second ``stat`` confirms it is gone. :func:`sync_paths` does the same for a few paths
(the watcher's bursts). Indexing never writes into notes.
"""

from __future__ import annotations

import fnmatch
import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from vaultmem.core.link_resolution import LinkResolver, note_key
from vaultmem.core.note_parse import ParsedNote, parse_note
from vaultmem.core.settings import Settings
from vaultmem.core.timestamps import from_epoch
from vaultmem.store.index_db import FileState, IndexDB
from vaultmem.store.note_files import content_hash

ProgressCallback = Callable[[int, int], None]
"""Called as ``progress(done, total)`` while notes are read."""


@dataclass(slots=True)
class SyncReport:
    """What a sync did; ``seconds`` is wall time. ``--json`` prints :meth:`as_dict`."""

    added: int = 0
    changed: int = 0
    moved: int = 0
    removed: int = 0
    unchanged: int = 0
    seconds: float = 0.0
    rebuilt: bool = False
    touched_paths: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "added": self.added,
            "changed": self.changed,
            "moved": self.moved,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "seconds": round(self.seconds, 4),
            "rebuilt": self.rebuilt,
        }

    @property
    def any_change(self) -> bool:
        return bool(self.added or self.changed or self.moved or self.removed)


def is_ignored(relpath: str, settings: Settings) -> bool:
    """Spec section 1: dot path parts, non-``.md`` files and ``[index] exclude`` patterns."""
    parts = relpath.split("/")
    if any(part.startswith(".") for part in parts) or not relpath.lower().endswith(".md"):
        return True
    return any(fnmatch.fnmatchcase(relpath, pattern) for pattern in settings.index.exclude)


def scan_vault(root: Path, settings: Settings) -> dict[str, tuple[int, int]]:
    """Every note of the vault: vault-relative POSIX path → (size, mtime_ns). Never reads files."""
    found: dict[str, tuple[int, int]] = {}
    excludes = settings.index.exclude
    stack = [(str(root), "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue
                rel = prefix + name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, rel + "/"))
                    elif name[-3:].lower() == ".md" and entry.is_file():
                        if excludes and any(fnmatch.fnmatchcase(rel, p) for p in excludes):
                            continue
                        info = entry.stat()
                        found[rel] = (info.st_size, info.st_mtime_ns)
                except OSError:
                    continue
    return found


@dataclass(frozen=True, slots=True)
class _Read:
    path: str
    size: int
    mtime_ns: int
    hash: str
    text: str
    problems: tuple[str, ...]


def _read(root: Path, rel: str) -> _Read | None:
    try:
        with open(root / rel, "rb") as handle:
            data = handle.read()
            info = os.fstat(handle.fileno())
    except OSError:
        return None
    problems: tuple[str, ...] = ()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        text = data.decode("utf-8", errors="replace")
        problems = (f"not UTF-8 (byte {err.start})",)
    return _Read(rel, len(data), info.st_mtime_ns, content_hash(data), text, problems)


def templates_folder(root: Path) -> str | None:
    """The folder of Obsidian's core Templates plugin (``.obsidian/templates.json``), if set.

    Notes there are templates, not memories: they are indexed as ordinary notes even when their
    frontmatter says ``type: memory``, so a template never decays, moves or shows up as a memory.
    """
    try:
        config = json.loads((root / ".obsidian" / "templates.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    folder = config.get("folder") if isinstance(config, dict) else None
    return folder.strip("/") if isinstance(folder, str) and folder.strip("/") else None


def _parse(read: _Read, templates: str | None) -> ParsedNote:
    note = parse_note(
        read.path,
        read.text,
        fallback_time=from_epoch(read.mtime_ns / 1e9),
        extra_problems=read.problems,
    )
    if templates and note.fields.type and read.path.startswith(templates + "/"):
        note = replace(note, fields=replace(note.fields, type=None))
    return note


class _Syncer:
    def __init__(self, root: Path, db: IndexDB, settings: Settings) -> None:
        self.root = root
        self.db = db
        self.settings = settings
        self.report = SyncReport()
        self.dirty_keys: set[str] = set()
        self.parsed: list[tuple[int, ParsedNote]] = []
        self.relink_sources: set[str] = set()
        self.templates = templates_folder(root)

    def apply(
        self,
        present: dict[str, tuple[int, int]],
        known: dict[str, FileState],
        vanished: list[str],
        progress: ProgressCallback | None,
    ) -> None:
        report = self.report
        to_read = [
            rel
            for rel, (size, mtime_ns) in present.items()
            if rel not in known or known[rel].size != size or known[rel].mtime_ns != mtime_ns
        ]
        report.unchanged = len(present) - len(to_read)
        gone = {rel: known[rel] for rel in vanished}
        by_hash = {state.hash: rel for rel, state in gone.items()}
        by_id = {state.id: rel for rel, state in gone.items() if state.id}
        for done, rel in enumerate(to_read, 1):
            if progress is not None:
                progress(done, len(to_read))
            read = _read(self.root, rel)
            if read is None:  # vanished between the walk and the read
                if rel in known:
                    gone[rel] = known[rel]
                continue
            state = known.get(rel)
            if state is not None:
                if state.hash == read.hash:
                    self.db.update_stat(rel, size=read.size, mtime_ns=read.mtime_ns)
                    report.unchanged += 1
                else:
                    self._store(_parse(read, self.templates), read)
                    report.changed += 1
                continue
            origin = by_hash.pop(read.hash, None)
            note: ParsedNote | None = None
            if origin is None:
                note = _parse(read, self.templates)
                origin = by_id.pop(note.fields.id, None) if note.fields.id else None
            if origin is not None and origin in gone:
                del gone[origin]
                self.db.move(origin, rel, size=read.size, mtime_ns=read.mtime_ns)
                self.dirty_keys.update((note_key(origin), note_key(rel)))
                report.moved += 1
                if note is not None:  # same id, new content: moved and edited
                    self._store(note, read)
                else:  # its relative links may now point elsewhere
                    self.relink_sources.add(rel)
                report.touched_paths.append(rel)
                continue
            self._store(note or _parse(read, self.templates), read)
            self.dirty_keys.add(note_key(rel))
            report.added += 1
        for rel in gone:
            if os.path.exists(self.root / rel):  # second stat: not gone after all
                continue
            self.db.remove(rel)
            self.dirty_keys.add(note_key(rel))
            report.removed += 1
            report.touched_paths.append(rel)

    def _store(self, note: ParsedNote, read: _Read) -> None:
        nid = self.db.upsert(note, size=read.size, mtime_ns=read.mtime_ns, content_hash=read.hash)
        self.parsed.append((nid, note))
        self.report.touched_paths.append(note.path)

    def resolve_links(self) -> None:
        """Store the parsed notes' links and re-resolve links whose targets may have changed.

        Resolution only ever depends on notes with the link's file name, so the resolver is
        built from those candidates alone, never from the whole vault.
        """
        relinked = [row for source in self.relink_sources for row in self.db.links_from(source)]
        retargeted = self.db.links_to_keys(self.dirty_keys)
        keys = set(self.dirty_keys)
        keys.update(note_key(link.target) for _, note in self.parsed for link in note.links)
        keys.update(note_key(row.target) for row in relinked)
        if not keys:
            return
        resolver = LinkResolver(self.db.paths_with_keys(keys))
        for nid, note in self.parsed:
            self.db.set_links(
                nid,
                [
                    (
                        link.target,
                        note_key(link.target),
                        link.subpath,
                        link.kind,
                        resolver.resolve(link.target, note.path),
                    )
                    for link in note.links
                ],
            )
        updates = [(resolver.resolve(target, source), lid) for lid, source, target in retargeted]
        updates += [(resolver.resolve(row.target, row.source), row.lid) for row in relinked]
        self.db.set_resolved(updates)


def sync_index(
    root: Path,
    db: IndexDB,
    settings: Settings,
    *,
    rebuild: bool = False,
    progress: ProgressCallback | None = None,
) -> SyncReport:
    """Bring the index in step with every note of the vault at ``root``; see :class:`SyncReport`."""
    started = time.perf_counter()
    syncer = _Syncer(root, db, settings)
    with db.transaction():
        if rebuild:
            db.clear()
        present = scan_vault(root, settings)
        known = db.file_states()
        vanished = [rel for rel in known if rel not in present]
        syncer.apply(present, known, vanished, progress)
        syncer.resolve_links()
    syncer.report.rebuilt = rebuild or db.recreated
    syncer.report.seconds = time.perf_counter() - started
    return syncer.report


def sync_paths(root: Path, db: IndexDB, settings: Settings, paths: Iterable[str]) -> SyncReport:
    """Sync only ``paths`` (vault-relative; folders expand to the notes under them).

    For the watcher: each path is stat'ed; new, changed, moved and vanished notes among them are
    handled exactly as :func:`sync_index` handles them.
    """
    started = time.perf_counter()
    syncer = _Syncer(root, db, settings)
    with db.transaction():
        rels = sorted({rel.strip("/") for rel in paths})
        known_all = db.file_states(under=rels)
        candidates = set(known_all)
        present: dict[str, tuple[int, int]] = {}
        for rel in rels:
            full = root / rel
            if full.is_dir() and not any(p.startswith(".") for p in rel.split("/") if p):
                for sub, stat in scan_vault(full, settings).items():
                    present[f"{rel}/{sub}" if rel else sub] = stat
                continue
            if is_ignored(rel, settings):
                continue
            try:
                info = os.stat(full)
            except OSError:
                continue
            if os.path.isfile(full):
                present[rel] = (info.st_size, info.st_mtime_ns)
        known = {rel: known_all[rel] for rel in candidates | set(present) if rel in known_all}
        vanished = [rel for rel in candidates if rel not in present]
        syncer.apply(present, known, vanished, None)
        syncer.resolve_links()
    syncer.report.seconds = time.perf_counter() - started
    return syncer.report
