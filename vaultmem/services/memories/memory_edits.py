"""Editing one memory's properties in place: the write behind touch, observe, keep and pin.

Only the changed frontmatter lines are rewritten; the note is re-read just before the write and
owned while it is replaced, so a save that lands in between is never lost (docs/user-guide.md,
"Many writers"). A note vaultmem cannot write safely (unparsable YAML, conflict markers,
non-UTF-8 bytes) or holding a value it cannot read (``use_count: "3"``, ``strength: high``:
whatever key the edit writes) is refused and left as it is, as the passes leave it
(docs/user-guide.md, "The memory note").
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from vaultmem.core.notes.fields import MemoryFields, normalise_tags
from vaultmem.core.notes.note_parse import ParsedNote, parse_note
from vaultmem.core.notes.timestamps import utc_now
from vaultmem.core.scoring.reinforcement import observe_changes
from vaultmem.errors import InputError, NoteChangedError, UnsafeNoteError
from vaultmem.services.memories.memory_lookup import load_memory, memory_path
from vaultmem.services.vault_context import VaultContext
from vaultmem.store.confinement import confined_path
from vaultmem.store.vault_lock import vault_lock
from vaultmem.store.vault_paths import confined

if TYPE_CHECKING:
    from vaultmem.services.memories.memory_view import Memory

ChangeFunction = Callable[[MemoryFields], dict[str, object]]
"""Computes a note's property changes from its current fields (``{key: new value}``)."""


class NoteEditor(VaultContext, Protocol):
    """A vault that edits notes in place (``Vault`` satisfies it)."""

    def sweep_folder(self, folder: Path) -> None:
        """Finish what killed writes left in ``folder`` (once per folder; vault lock held)."""
        ...


def refuse_unwritable(note: ParsedNote, refused: str) -> None:
    """Raise :class:`UnsafeNoteError` when vaultmem must not write ``note``: it has problems
    (unparsable YAML, conflict markers, non-UTF-8 bytes) or a value that could not be read
    (a field warning: ``use_count: "3"``). Whatever key an edit would write, such a note is
    left as it is (a default stands in for the value when scoring; writing from it would
    overwrite or contradict what the person wrote). ``refused`` ends the message ("not
    touched"); the message names the key, the value and what to do.
    """
    if note.problems:
        raise UnsafeNoteError(note.path, f"{note.problems[0]}; {refused}")
    if note.warnings:
        warning = note.warnings[0]
        raise UnsafeNoteError(
            note.path,
            f"{warning.key}: {warning.value!r} {warning.problem}; {refused} (vaultmem writes no "
            f"note with a value it cannot read: correct {warning.key} in the note; "
            "`vaultmem doctor` lists every such value)",
        )


def check_writable(vault: VaultContext, path: str, refused: str) -> None:
    """Read the note at ``path`` now and refuse it as :func:`refuse_unwritable` does (a
    command's check before it changes anything). Raises :class:`UnsafeNoteError` (also for
    bytes that are not UTF-8) or :class:`NoteError` when it cannot be read.
    """
    from vaultmem.store.note_files import read_note

    try:
        snapshot = read_note(confined_path(vault.root, path))
    except UnsafeNoteError as err:  # not UTF-8, too big: named by its vault path
        problem = err.problem.removesuffix("; not written")
        raise UnsafeNoteError(path, f"{problem}; {refused}") from None
    refuse_unwritable(parse_note(path, snapshot.text), refused)


def edit_note(
    vault: NoteEditor, path: str, compute: ChangeFunction, *, now: dt.datetime | None = None
) -> Memory:
    """Apply ``compute(fields)``'s changes to the note at ``path``, surgically and atomically.

    The note is re-read just before writing; if it changed in between, the changes are
    computed again from the fresh text once. Raises :class:`UnsafeNoteError` for notes with
    unparsable YAML, conflict markers or non-UTF-8 bytes, or with a value that could not be
    read (:func:`refuse_unwritable`; they are never written).
    """
    from vaultmem.core.notes.note_text import FrontmatterError, set_fields
    from vaultmem.store.note_files import read_note, write_note

    with vault_lock(vault.sidecar, timeout_seconds=vault.lock_wait_seconds):
        vault.index.check_writable()
        confined(vault.root, path)
        # a linked memory is edited in its target (inside the vault), so the link stays
        target = confined_path(vault.root, path)
        vault.sweep_folder(target.parent)
        for attempt in (1, 2):
            snapshot = read_note(target)
            note = parse_note(path, snapshot.text)
            refuse_unwritable(note, "not written")
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
    vault.refresh([path, target.relative_to(vault.root).as_posix()])
    return load_memory(vault, path, now or utc_now())


def observe_memories(
    vault: NoteEditor, refs: Sequence[str], context_tags: Iterable[str], when: dt.datetime
) -> list[Memory]:
    """:meth:`Vault.observe <vaultmem.services.vault.Vault.observe>`: Mnemex's observed use of
    each memory ``refs`` names in a context (``observe_changes``; user guide "Scores"), each
    memory once however many refs name it (a line in ``vault.warnings`` says so), in the order
    first named.

    Raises :class:`InputError` for no ``refs``, what :func:`memory_path` raises, and
    :class:`UnsafeNoteError` for a note that must not be written: every one is checked before
    any is written, so nothing is written then.
    """
    if isinstance(refs, str) or not refs:
        raise InputError("no memories given to observe; name at least one (id or title)")
    tags = normalise_tags(list(context_tags))
    paths = writable_memories(vault, refs, "nothing observed", "observed once (one use)")
    return [
        edit_note(vault, path, lambda f: observe_changes(f, when, tags), now=when)
        for path in paths
    ]


def writable_memories(
    vault: VaultContext, refs: Sequence[str], refused: str, once: str
) -> list[str]:
    """The paths of the memories ``refs`` name, each once in the order first named, after
    checking every one before anything is written: :func:`memory_path` (a memory, not archived)
    and :func:`check_writable` (``refused`` ends their messages). A memory named more than once
    (its id and its title) gets a line in ``vault.warnings`` ending with ``once`` ("kept once").
    """
    named = [memory_path(vault, ref, refused) for ref in refs]
    paths = list(dict.fromkeys(named))
    for path in paths:
        check_writable(vault, path, refused)
        if named.count(path) > 1:
            vault.warnings.append(f"{path} was named {named.count(path)} times: {once}")
    return paths


__all__ = [
    "ChangeFunction", "NoteEditor", "check_writable", "edit_note", "observe_memories",
    "refuse_unwritable", "writable_memories",
]  # fmt: skip
