"""Finding and reading one memory: a reference to its note, and the note read as a memory.

A reference is a memory id, a title or a vault-relative path (docs/user-guide.md, "Commands at a
glance"); one that names no note, or several, raises an error that lists the candidates. A
memory is read from its file (never only from the index), with its scores at a given time and
a warning line for each field that could not be read (docs/user-guide.md, "Scores").
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from vaultmem.core.notes.naming import close_titles, safe_title
from vaultmem.core.notes.note_parse import CONFLICT_PROBLEM, parse_note
from vaultmem.errors import AmbiguousNoteError, InputError, NoteNotFoundError, UnsafeNoteError
from vaultmem.store.confinement import confined_path, is_symlinked

if TYPE_CHECKING:
    from vaultmem.services.memories.memory_view import Memory
    from vaultmem.services.vault_context import VaultContext


def _as_saved(ref: str) -> str:
    """``ref`` cleaned as ``remember`` cleans a title into a file name, folders kept:
    ``"Wifi password?"`` → ``"Wifi password"``, ``"Standup is at 09:30"`` → ``"Standup is at
    09 30"``. A reference that looks like a way out of the vault (``..``, ``\\``, ``/``,
    ``~`` at the start) is not cleaned: it stays what it is, a name no note has."""
    parts = ref.split("/")
    if "\\" in ref or ref.startswith(("/", "~")) or any(p in (".", "..") for p in parts):
        return ref
    folder, _, name = ref.rstrip("/").rpartition("/")
    title = safe_title(name.removesuffix(".md"))
    return f"{folder}/{title}" if folder and title else title


def resolve_ref(vault: VaultContext, ref: str) -> str:
    """Vault-relative path of the note with id ``ref``, or title / path ``ref``; a title or path
    that names no note is looked up again cleaned as ``remember`` saves titles (``"Wifi
    password?"`` finds ``Wifi password.md``).

    Raises :class:`NoteNotFoundError`, or :class:`AmbiguousNoteError` listing the candidates.
    """
    vault.catch_up()
    ref = ref.strip()
    paths = vault.index.paths_by_id(ref)
    for candidate in dict.fromkeys((ref, _as_saved(ref))):
        if paths or not candidate:
            break
        as_path = candidate if candidate.lower().endswith(".md") else candidate + ".md"
        if vault.index.note_row(as_path) is not None:
            return as_path
        paths = vault.index.paths_by_title(candidate.removesuffix(".md"))
    if not paths:
        raise NoteNotFoundError(
            ref,
            close_titles(
                ref, [str(t) for (t,) in vault.index.conn.execute("SELECT title FROM notes")]
            ),
        )
    if len(paths) > 1:
        rows = [vault.index.note_row(path) for path in paths]
        raise AmbiguousNoteError(ref, paths, with_ids=all(r is not None and r["id"] for r in rows))
    return paths[0]


def managed_path(vault: VaultContext, ref: str, refused: str = "left as it is") -> str:
    """Path of the note ``ref`` names, which must be one vaultmem manages (memory, box, trace).

    A symbolic link to a memory is one note with it: its target is acted on (a warning says so),
    never the link. Raises what :func:`resolve_ref` raises, :class:`InputError` for a person's
    own note, or :class:`UnsafeNoteError` naming the problem (the YAML error) for a note whose
    frontmatter does not parse, so its type is unknown; ``refused`` ends that message ("not
    touched").
    """
    path = resolve_ref(vault, ref)
    row = vault.index.note_row(path)
    if row is not None and row["type"] is None and is_symlinked(vault.root, path):
        target = os.path.relpath(confined_path(vault.root, path), os.path.realpath(vault.root))
        target_row = vault.index.note_row(Path(target).as_posix())
        if target_row is not None and target_row["type"] in ("memory", "box", "trace"):
            vault.warnings.append(f"{path} is a link to {target}: {target} is the memory")
            return Path(target).as_posix()
    problems = json.loads(str(row["problems"] or "[]")) if row is not None else []
    if row is not None and row["type"] is None and problems:
        # its frontmatter did not parse (or its bytes did not read): whether it says
        # `type: memory` is unknown, so the real problem is named, not "not a memory"
        raise UnsafeNoteError(
            path,
            f"{problems[0]}; {refused} (its properties cannot be read, so vaultmem writes "
            "nothing to it; `vaultmem doctor` lists such notes)",
        )
    if row is None or row["type"] not in ("memory", "box", "trace"):
        raise InputError(
            f"{path} is not a note vaultmem manages (no `type: memory` in its frontmatter)"
        )
    return path


def memory_path(vault: VaultContext, ref: str, refused: str, *, archived: bool = False) -> str:
    """Path of the memory ``ref`` names, for a command that acts on memories only (``touch``,
    ``pin``, ``promote``, ``gc --keep``); ``refused`` ends the message when it refuses ("not
    touched").

    Raises what :func:`managed_path` raises, or :class:`InputError` for a box or trace note
    (vaultmem's own notes, not memories: as ``forget`` refuses them) and, unless ``archived``,
    for an archived memory (no command brings one back but ``vaultmem undo`` of the change that
    archived it). Nothing is written.
    """
    path = managed_path(vault, ref, refused)
    row = vault.index.note_row(path) or {}
    if row.get("type") != "memory":
        raise InputError(f"{path} is a {row.get('type')} note, not a memory; {refused}")
    if not archived and row.get("status") == "archived":
        raise InputError(
            f"{path} is archived; {refused} (`vaultmem undo` of the change that archived it "
            "puts it back: see `vaultmem undo --list`)"
        )
    return path


def load_memory(vault: VaultContext, path: str, now: dt.datetime) -> Memory:
    """The note at ``path`` read from its file, with its fields and scores at ``now``.

    Field warnings and conflict problems (shown from the "ours" side) go to ``vault.warnings``.
    """
    from vaultmem.core.scoring.scoring import MemoryColumns, score_columns
    from vaultmem.services.memories.memory_view import memory_from_note
    from vaultmem.store.note_files import read_note

    snapshot = read_note(confined_path(vault.root, path))
    mtime = dt.datetime.fromtimestamp(snapshot.fingerprint.mtime_ns / 1e9, tz=dt.UTC)
    note = parse_note(path, snapshot.text, fallback_time=mtime)
    vault.warnings.extend(w.message(path) for w in note.warnings)
    vault.warnings.extend(
        f"{path}: {problem} (shown from its 'ours' side)"
        for problem in note.problems
        if problem.startswith(CONFLICT_PROBLEM)
    )
    row = vault.index.note_row(path)
    edges = int(row["edges"]) if row is not None else 0  # type: ignore[call-overload]
    return memory_from_note(
        note,
        score_columns(
            MemoryColumns.from_fields(path, note.fields, edges), now.timestamp(), vault.settings
        ),
        edges,
    )


__all__ = ["load_memory", "managed_path", "memory_path", "resolve_ref"]
