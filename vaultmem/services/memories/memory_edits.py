"""Editing one memory's properties in place: the write behind touch, observe, keep and pin.

Only the changed frontmatter lines are rewritten; the note is re-read just before the write and
owned while it is replaced, so a save that lands in between is never lost (docs/user-guide.md,
"Many writers"). A note vaultmem cannot write safely (unparsable YAML, conflict markers,
non-UTF-8 bytes) is refused and left as it is.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from vaultmem.core.notes.fields import MemoryFields
from vaultmem.core.notes.note_parse import parse_note
from vaultmem.core.notes.timestamps import utc_now
from vaultmem.errors import NoteChangedError, UnsafeNoteError
from vaultmem.services.memories.memory_lookup import load_memory
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


def edit_note(
    vault: NoteEditor, path: str, compute: ChangeFunction, *, now: dt.datetime | None = None
) -> Memory:
    """Apply ``compute(fields)``'s changes to the note at ``path``, surgically and atomically.

    The note is re-read just before writing; if it changed in between, the changes are
    computed again from the fresh text once. Raises :class:`UnsafeNoteError` for notes with
    unparsable YAML, conflict markers or non-UTF-8 bytes (they are never written).
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
    vault.refresh([path, target.relative_to(vault.root).as_posix()])
    return load_memory(vault, path, now or utc_now())


__all__ = ["ChangeFunction", "NoteEditor", "edit_note"]
