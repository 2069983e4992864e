"""Keeping the sidecar index in step with the vault (docs/user-guide.md, "Index and graph").

:func:`sync_index` walks the vault: a note whose size and mtime are unchanged is not read; a
changed one is re-read (and re-parsed only if its bytes changed); a new file whose content hash
or ``id`` matches a vanished one is a move and keeps its rows; a vanished note is removed only
after a second ``stat`` confirms it is gone. :func:`sync_paths` does the same for a few paths
(the watcher's bursts). Indexing never writes into notes.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from stat import S_ISLNK, S_ISREG
from typing import TYPE_CHECKING

from vaultmem.core.collector import collector_paused
from vaultmem.core.links.link_resolution import LinkResolver, note_key
from vaultmem.core.notes.content_hash import content_hash
from vaultmem.core.notes.note_parse import ParsedNote, as_alias
from vaultmem.core.notes.timestamps import from_epoch
from vaultmem.core.settings import Settings
from vaultmem.services.index import index_stamps
from vaultmem.services.index.index_reads import (
    WrittenNote,
    parse_read,
    read_for_index,
    read_in_workers,
    worker_start,
)
from vaultmem.services.index.index_stamps import is_racy
from vaultmem.services.index.sync_types import (
    NoteRead,
    ProgressCallback,
    SyncReport,
)
from vaultmem.services.index.sync_walk import StatMap, differences, forked_walk
from vaultmem.services.index.template_folders import in_templates, template_folders
from vaultmem.services.index.vault_walk import (
    is_ignored,
    is_tracked_attachment,
    is_utf8_name,
    scan_vault,
)
from vaultmem.store.confinement import (
    LinkedFolders,
    is_symlinked,
    resolves_inside,
)
from vaultmem.store.index_db import IndexDB
from vaultmem.store.index_links import LinkValues
from vaultmem.store.index_queries import FileState, StoredRow
from vaultmem.store.raw_reads import (
    note_size_limit,
    set_note_size_limit,
)

if TYPE_CHECKING:  # worker processes are imported only for a cold index (fast start-up)

    from vaultmem.core.links.links import Link

_read = read_for_index
"""Reads one note (:func:`~vaultmem.services.index.index_reads.read_for_index`); looked up here
on every call, so a test can count or hold up the sync's reads by replacing it."""


TEMPLATES_META = "template_folders"
"""The ``meta`` key of the template folders the index's rows were parsed with (JSON list)."""
SIZE_LIMIT_META = "note_size_limit"
"""The ``meta`` key of the note size limit (bytes) the index's rows were read with."""

PREFETCH_ROWS = 4096
"""Up to this many vanished notes, a sync fetches their rows together (see
:meth:`_Syncer.apply_differences`); more (a folder deleted) are looked up one by one as they
turn out to have moved, so a sync never holds that many rows at once."""


class _Syncer:
    """One sync: compares, reads, parses and stores; then links and edge counts."""

    def __init__(self, root: Path, db: IndexDB, settings: Settings) -> None:
        self.root = root
        self.db = db
        self.settings = settings
        self.report = SyncReport()
        self.dirty_keys: set[str] = set()
        self.parsed: list[tuple[int, str, tuple[Link, ...]]] = []
        """(nid, path, links) of every note parsed; not the note itself (memory at 100k)."""
        self.edges_changed: set[int] = set()
        self.templates = template_folders(root)
        set_note_size_limit(settings.index.max_note_mb)
        self.written: Mapping[str, WrittenNote] = {}
        """Notes vaultmem has just written, with their text: not read back (see sync_paths)."""
        self._present: StatMap = {}
        self._asides: dict[Path, frozenset[str]] = {}

    def apply(
        self,
        present: StatMap,
        known: StatMap,
        progress: ProgressCallback | None,
        states: Mapping[str, FileState] | None = None,
    ) -> None:
        """``present`` (on disk) and ``known`` (indexed); ``states``: the indexed notes'
        :class:`FileState` (at least those of ``known``), when the caller has them."""
        self._present = present
        to_read, vanished = differences(present, known)
        reread = [rel for rel in to_read if rel in known]
        self.apply_differences(to_read, vanished, reread, len(present), progress, states)

    def apply_differences(
        self,
        to_read: list[str],
        vanished: list[str],
        reread: list[str],
        present_count: int,
        progress: ProgressCallback | None,
        states: Mapping[str, FileState] | None = None,
    ) -> None:
        """The notes of :func:`differences` (of a walk that found ``present_count`` notes);
        ``reread``: those of ``to_read`` the index holds; ``states``: as for :meth:`apply`.

        The rows of vanished notes (each may turn out to have moved) are fetched together, up to
        :data:`PREFETCH_ROWS` of them: a move then costs no lookup of its own."""
        report = self.report
        report.unchanged = present_count - len(to_read)
        rows = self.db.stored_rows(vanished) if len(vanished) <= PREFETCH_ROWS else {}
        if states is None:
            states = self.db.file_states_for([*(r for r in vanished if r not in rows), *reread])
        states = {**states, **{rel: FileState.of_row(row) for rel, row in rows.items()}}
        gone = {rel: states[rel] for rel in vanished if rel in states}
        by_hash = {state.hash: rel for rel, state in gone.items()}
        by_id = {state.id: rel for rel, state in gone.items() if state.id}
        for done, (rel, read, parsed) in enumerate(self._reads(to_read), 1):
            if progress is not None:
                progress(done, len(to_read))
            state = states.get(rel)
            if read is None:  # vanished between the walk and the read
                if state is not None:
                    gone[rel] = state
                continue
            if state is not None:
                if state.hash == read.hash and self._dated_by_mtime(state, read):
                    # same text, but its created (and last_used) came from the mtime, which moved
                    self._store(parsed or parse_read(read, self.templates), read, new=False)
                    report.unchanged += 1
                elif state.hash == read.hash:
                    self.db.update_stat(rel, size=read.size, mtime_ns=read.stamp_ns)
                    report.unchanged += 1
                else:
                    self._store(parsed or parse_read(read, self.templates), read, new=False)
                    report.changed += 1
                continue
            origin = by_hash.pop(read.hash, None)
            note: ParsedNote | None = parsed
            if origin is None:
                note = note or parse_read(read, self.templates)
                origin = by_id.pop(note.fields.id, None) if note.fields.id else None
            if origin is not None and origin in gone:
                del gone[origin]
                self.dirty_keys.update((note_key(origin), note_key(rel)))
                report.moved += 1
                # re-parsed at its new path: the rows stay (one update renames and refreshes
                # them), but what depends on the path does not (a sync-conflict name, the
                # templates folder, relative links)
                note = note or parse_read(read, self.templates)
                self._store(note, read, new=False, origin=origin, stored=rows.get(origin))
                continue
            self._store(note or parse_read(read, self.templates), read, new=True)
            self.dirty_keys.add(note_key(rel))
            report.added += 1
        if gone:  # (the write path's module: not loaded by a recall that finds nothing gone)
            from vaultmem.store.held_asides import held_aside
        for rel in gone:
            # second stat: a note the walk missed but that is still there (and not excluded
            # since) stays; so does one a write holds aside (a killed write's is put back)
            if held_aside(self.root / rel, self.root, self.db.path.parent, self._asides) or (
                os.path.exists(self.root / rel)
                and not is_ignored(rel, self.settings)
                and resolves_inside(self.root, rel)
                and not is_symlinked(self.root, rel.rpartition("/")[0])
            ):
                continue
            self.edges_changed |= self.db.remove(rel)
            self.dirty_keys.add(note_key(rel))
            report.removed += 1
            report.touched_paths.append(rel)

    def apply_attachments(self, present: set[str], known: set[str]) -> None:
        """Record attachments that appeared or vanished; links to their names re-resolve."""
        added, gone = present - known, known - present
        if added:
            self.db.add_attachments(sorted(added))
        if gone:
            self.db.remove_attachments(sorted(gone))
        self.dirty_keys.update(note_key(path) for path in added | gone)

    def _reads(
        self, to_read: list[str]
    ) -> Iterator[tuple[str, NoteRead | None, ParsedNote | None]]:
        """(path, read or None if it vanished, parsed note or None) for each path, in order.

        Many notes (a cold index) are read and parsed by a second process while this one writes
        the index, so both cores work; a few are read here and parsed only when needed.
        """
        workers = worker_start(len(to_read))
        if workers is None:
            for rel in to_read:
                yield rel, self._as_written(rel) or _read(self.root, rel), None
            return
        yield from read_in_workers(self.root, self.templates, to_read, workers)

    def _as_written(self, rel: str) -> NoteRead | None:
        """The note at ``rel`` as vaultmem wrote it, if the walk found it still with the size and
        mtime it had when written (else ``None``: someone changed it since, so it is read).

        A note that got its name (``visible_ns``) more than a clock tick after it was written
        gets a final stamp: every write to it since has a later mtime
        (:func:`~.index_stamps.is_racy`, as for a note read at that moment). One named within
        that tick is read back instead (``None``): read a tick after its write, its stamp is
        final too, where a stamp from the text would stay pending. Without ``visible_ns`` the
        stamp is pending: a write by someone else in the clock tick of vaultmem's own leaves the
        same size and mtime, so the next sync reads the note once to be sure."""
        written = self.written.get(rel)
        if written is None or self._present.get(rel) != (written.size, written.mtime_ns):
            return None
        visible = written.visible_ns
        if visible is not None and is_racy(written.mtime_ns, visible):
            return None
        data = written.text.encode("utf-8")
        if len(data) != written.size:
            return None
        return NoteRead(
            rel,
            written.size,
            written.mtime_ns,
            content_hash(data),
            written.text,
            (),
            racy=visible is None,
        )

    def _dated_by_mtime(self, state: FileState, read: NoteRead) -> bool:
        """Whether the stored note takes its ``created`` from an mtime it no longer has: a note
        without ``created`` is dated by its file's mtime (:func:`parse_read`), so a touch that
        leaves its text alone still changes its row (as a rebuild would store it)."""
        stored_mtime = index_stamps.real_mtime(state.mtime_ns)
        if stored_mtime == read.mtime_ns:
            return False
        row = self.db.conn.execute(
            "SELECT created FROM notes WHERE nid = ?", (state.nid,)
        ).fetchone()
        return row is not None and row[0] == from_epoch(stored_mtime / 1e9).timestamp()

    def _store(
        self,
        note: ParsedNote,
        read: NoteRead,
        *,
        new: bool,
        origin: str | None = None,
        stored: StoredRow | None = None,
    ) -> None:
        note = as_alias(note, read.alias_of, lambda to: not is_ignored(to, self.settings))
        nid = self.db.upsert(
            note,
            size=read.size,
            mtime_ns=read.stamp_ns,
            content_hash=read.hash,
            new=new,
            moved_from=origin,
            stored=stored,
        )
        self.parsed.append((nid, note.path, note.links))
        self.report.touched_paths.append(note.path)

    def resolve_links(self) -> None:
        """Store the parsed notes' links and re-resolve links whose targets may have changed.

        Resolution only ever depends on notes with the link's file name, so the resolver is
        built from those candidates alone, never from the whole vault.
        """
        key_of = {link.target: "" for _, _, links in self.parsed for link in links}
        for target in key_of:
            key_of[target] = note_key(target)
        keys = set(self.dirty_keys) | set(key_of.values())
        if not keys:  # nothing to resolve, but parsed notes whose last link went lose their rows
            if self.parsed:
                nids = sorted({nid for nid, _, _ in self.parsed})
                self.edges_changed |= self.db.replace_links(nids, iter(()))
            return
        nid_of = self.db.nids_with_keys(keys)
        resolver = LinkResolver([*nid_of, *self.db.attachments_with_keys(keys)])

        def rows() -> Iterator[LinkValues]:  # streamed: 100k notes hold ~300k links
            for nid, path, links in self.parsed:
                for link in links:
                    resolved = resolver.resolve(link.target, path)
                    yield (
                        nid,
                        link.target,
                        key_of[link.target],
                        link.subpath,
                        link.kind,
                        resolved,
                        nid_of.get(resolved) if resolved is not None else None,
                    )

        parsed_nids = {nid for nid, _, _ in self.parsed}
        # links of notes not parsed now whose target's name came or went: re-resolved first,
        # before the parsed notes' rows are replaced (which frees row ids for reuse)
        retargeted = self.db.links_to_keys(self.dirty_keys) if self.dirty_keys else []
        updates: list[tuple[str | None, int | None, int]] = []
        for lid, source_nid, source, target, old_nid in retargeted:
            if source_nid in parsed_nids:  # its links are replaced below
                continue
            resolved = resolver.resolve(target, source)
            new_nid = nid_of.get(resolved) if resolved is not None else None
            if new_nid != old_nid:
                self.edges_changed.update(n for n in (source_nid, old_nid, new_nid) if n)
            updates.append((resolved, new_nid, lid))
        self.db.set_resolved(updates)
        self.edges_changed |= self.db.replace_links(sorted(parsed_nids), rows())

    def follow_parse_settings(self, *, fresh: bool = False) -> None:
        """Re-read and re-parse the indexed notes that a changed setting parses otherwise, though
        their text and stat stay the same, so no walk would read them again:

        - the template folders (Obsidian's Templates plugin folder, ``.obsidian/templates.json``):
          the notes that entered or left them (a ``type: memory`` template is no memory);
        - the note size limit (``[index] max_note_mb``): the notes whose size lies between the
          old and the new limit (read now, or left unread).

        The settings the rows were parsed with are recorded in the index's ``meta``
        (:data:`TEMPLATES_META`, :data:`SIZE_LIMIT_META`); an index that has not recorded one yet
        is taken as parsed with the current value. ``fresh``: every row was just parsed with the
        current settings (a cold index); they are only recorded.
        """
        templates, limit = json.dumps(self.templates), str(note_size_limit())
        stored_templates = self.db.meta_value(TEMPLATES_META)
        stored_limit = self.db.meta_value(SIZE_LIMIT_META)
        if (stored_templates, stored_limit) == (templates, limit):
            return
        again: set[str] = set()
        if stored_templates not in (None, templates) and not fresh:
            old = tuple(json.loads(stored_templates))
            changed = sorted(set(old) ^ set(self.templates))  # a note's status changes only
            again.update(  # under one of these
                rel
                for rel in self.db.file_states(under=changed)
                if in_templates(rel, old) != in_templates(rel, self.templates)
            )
        if stored_limit not in (None, limit) and not fresh:
            low, high = sorted((int(stored_limit), int(limit)))
            again.update(self.db.paths_sized(above=low, at_most=high))
        again -= {path for _, path, _ in self.parsed}  # read by this sync already
        for rel in sorted(again):
            read = _read(self.root, rel)
            if read is not None:  # a note gone meanwhile is the walk's to remove
                self._store(parse_read(read, self.templates), read, new=False)
                self.report.changed += 1
        self.db.set_meta_value(TEMPLATES_META, templates)
        self.db.set_meta_value(SIZE_LIMIT_META, limit)

    def finish(self, *, all_edges: bool = False) -> None:
        """Links, then the edge counts of exactly the notes whose links changed."""
        self.resolve_links()
        if all_edges:
            self.db.recount_edges()
        elif self.edges_changed:
            self.db.recount_edges(self.edges_changed)


def sync_index(
    root: Path,
    db: IndexDB,
    settings: Settings,
    *,
    rebuild: bool = False,
    progress: ProgressCallback | None = None,
    meanwhile: Callable[[], object] | None = None,
) -> SyncReport:
    """Bring the index in step with every note of the vault at ``root``; see :class:`SyncReport`.

    ``meanwhile``: work for this process while the vault is walked, inside the sync's
    transaction (reading the index as the sync found it), called only where the walk runs in
    a forked process, at most once (:func:`~vaultmem.services.index.sync_walk.forked_walk`); what
    it read still holds when the report shows no change (:attr:`SyncReport.any_change`).
    """
    started = time.perf_counter()
    syncer = _Syncer(root, db, settings)
    with collector_paused(), db.transaction():
        if rebuild:
            db.clear()
        attachments: set[str] = set()
        syncer.report.linked = set()
        indexed = db.note_count()
        walked = None
        if meanwhile is not None:
            walked = forked_walk(root, settings, indexed, db.stat_columns, meanwhile)
        bulk = False
        if walked is not None:
            attachments.update(walked.attachments)
            syncer.report.linked.update(walked.linked)
            syncer.apply_differences(
                walked.to_read, walked.vanished, walked.reread, walked.present_count, progress
            )
            found = walked.present_count
        else:
            empty = not indexed and not db.attachment_paths()  # then in bulk: stats as it reads
            present = scan_vault(
                root,
                settings,
                attachments=attachments,
                linked=syncer.report.linked,
                stats=not empty,
            )
            found = len(present)
            bulk = bool(present) and empty
            if bulk:
                from vaultmem.services.index.index_bulk import index_all

                index_all(
                    root,
                    db,
                    syncer.templates,
                    present,
                    attachments,
                    workers=worker_start(found),
                    report=syncer.report,
                    progress=progress,
                    read=_read,
                    parse=parse_read,
                )
            else:
                syncer.apply(present, db.stat_states(), progress)
        syncer.follow_parse_settings(fresh=bulk or rebuild)
        if not bulk:
            syncer.apply_attachments(attachments, db.attachment_paths())
            syncer.finish(all_edges=rebuild or len(syncer.parsed) > found // 2)
    syncer.report.rebuilt = rebuild or db.recreated
    syncer.report.seconds = time.perf_counter() - started
    return syncer.report


def sync_paths(
    root: Path,
    db: IndexDB,
    settings: Settings,
    paths: Iterable[str],
    written: Mapping[str, WrittenNote] | None = None,
) -> SyncReport:
    """Sync only ``paths`` (vault-relative; folders expand to the notes under them).

    For the watcher: each path is stat'ed; new, changed, moved and vanished notes among them are
    handled exactly as :func:`sync_index` handles them. ``written``: notes the caller has just
    written, by path, with the text and the size and mtime the file had when written; a note
    the stat finds unchanged since is indexed from that text instead of being read back.
    """
    started = time.perf_counter()
    syncer = _Syncer(root, db, settings)
    syncer.written = written or {}
    with db.transaction():
        # a name that is not UTF-8 is never indexed (nor can it be looked up: see is_utf8_name),
        # and one holding NUL names no file at all (the system calls refuse it)
        rels = sorted({rel.strip("/") for rel in paths if "\0" not in rel and is_utf8_name(rel)})
        states = db.file_states(under=rels)
        known_all = {rel: (s.size, s.mtime_ns) for rel, s in states.items()}
        present: StatMap = {}
        attachments: set[str] = set()
        linked_folder = LinkedFolders(root)  # a pass's thousands of paths share a few folders
        base = str(root)
        for rel in rels:
            full = os.path.join(base, rel)  # a string: a pass or an import names thousands
            linked = linked_folder(rel.rpartition("/")[0])
            try:
                own = os.lstat(full)
            except OSError:
                own = None
            if own is None or S_ISREG(own.st_mode):  # (a path lstat misses: no folder either)
                is_dir, is_link = False, False
            else:
                is_dir, is_link = Path(full).is_dir(), S_ISLNK(own.st_mode)
            if linked or (is_dir and linked_folder(rel)):
                continue  # a full walk never enters linked folders either
            if is_dir and not any(p.startswith(".") for p in rel.split("/") if p):
                present.update(scan_vault(root, settings, folder=rel, attachments=attachments))
                continue
            if is_tracked_attachment(rel, settings):
                if os.path.isfile(full):
                    attachments.add(rel)
                continue
            if is_ignored(rel, settings) or own is None:
                continue
            if not is_link:  # a plain file in a folder that is no link: inside the vault
                if S_ISREG(own.st_mode):
                    present[rel] = (own.st_size, own.st_mtime_ns)
                continue
            try:
                info = os.stat(full)
            except OSError:
                continue
            if os.path.isfile(full) and resolves_inside(root, rel):
                present[rel] = (info.st_size, info.st_mtime_ns)
        syncer.apply(present, known_all, None, states)
        syncer.follow_parse_settings()
        syncer.apply_attachments(attachments, db.attachment_paths(under=rels))
        syncer.finish()
    syncer.report.seconds = time.perf_counter() - started
    return syncer.report
