"""Reading one note for the index, and parsing what was read (docs/user-guide.md, "Index and
graph"): the sync, the cold index's workers and the pass's indexing helper all read through
:func:`read_for_index` and parse through :func:`parse_read`, so they store the same rows.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import NamedTuple

from vaultmem.core.notes.content_hash import content_hash
from vaultmem.core.notes.note_parse import ParsedNote, parse_note
from vaultmem.core.notes.timestamps import from_epoch
from vaultmem.errors import NoteError
from vaultmem.services.index import index_stamps
from vaultmem.services.index.index_stamps import is_racy
from vaultmem.services.index.sync_types import NoteRead
from vaultmem.services.index.template_folders import in_templates
from vaultmem.services.index.vault_walk import NOFOLLOW
from vaultmem.store.confinement import confined_path
from vaultmem.store.raw_reads import oversized, stable_read


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


__all__ = ["WrittenNote", "parse_read", "read_for_index"]
