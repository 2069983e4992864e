"""Corrections: a new memory that supersedes an old one (``remember --supersedes``).

The new memory gets ``supersedes: "[[old]]"``; the old one ``status: superseded``,
``superseded_by: "[[new]]"`` and ``superseded_at`` (a surgical edit of three lines, written only
if the note has not changed since it was checked). A superseded memory is never promoted, is left
out of recall unless asked for, ranks below its successor when shown, and the expire pass
archives it after ``[lifecycle] superseded_grace_days`` (docs/user-guide.md, "Corrections").
"""

from __future__ import annotations

import contextlib
import datetime as dt
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from vaultmem.core.notes.note_parse import parse_note, title_of
from vaultmem.errors import InputError, NoteChangedError, UnsafeNoteError, VaultmemError
from vaultmem.services.vault_context import VaultContext
from vaultmem.store.note_files import delete_note, read_note

if TYPE_CHECKING:
    from vaultmem.services.memories.memory_edits import ChangeFunction
    from vaultmem.services.memories.remembering import MemoryDraft


class CorrectionWriter(VaultContext, Protocol):
    """A vault that looks notes up and edits them in place (``Vault`` satisfies it)."""

    def resolve(self, ref: str) -> str:
        """Vault-relative path of the note ``ref`` (id, title or path) names."""
        ...

    def edit(self, path: str, compute: ChangeFunction, *, now: dt.datetime | None = None) -> Any:
        """Apply ``compute(fields)``'s changes to the note at ``path``, surgically."""
        ...


CORRECTABLE_STATUSES = ("active", "promoted")
"""A memory with one of these statuses can be superseded (not an archived or superseded one)."""


def superseded_target(vault: CorrectionWriter, ref: str) -> str:
    """Path of the memory ``ref`` (id, title or path) that a correction may supersede.

    Raises :class:`NoteNotFoundError`/:class:`AmbiguousNoteError` from the lookup,
    :class:`InputError` for a note that is not a memory or is archived/already superseded, and
    :class:`UnsafeNoteError` for a note vaultmem must not write (checked before anything is
    written, so a refused correction changes nothing).
    """
    path = vault.resolve(ref)
    note = parse_note(path, read_note(vault.root / path).text)
    if note.problems:
        raise UnsafeNoteError(path, f"{note.problems[0]}; nothing written")
    fields = note.fields
    if fields.type != "memory":
        raise InputError(f"{path} is not a memory (no `type: memory`); only a memory is superseded")
    if fields.status not in CORRECTABLE_STATUSES:
        by = f" by {fields.superseded_by}" if fields.superseded_by else ""
        raise InputError(f"{path} is {fields.status}{by}; supersede an active or promoted memory")
    return path


def as_correction(draft: MemoryDraft, old: str, *, category_given: bool) -> MemoryDraft:
    """``draft`` as the correction of the memory at ``old``: ``supersedes: "[[old]]"``, and the
    category ``correction`` unless one was given."""
    extra = {**draft.extra, "supersedes": f"[[{title_of(old)}]]"}
    if category_given:
        return replace(draft, extra=extra)
    return replace(draft, extra=extra, category="correction")


def mark_superseded(vault: CorrectionWriter, old: str, new: str, *, now: dt.datetime) -> None:
    """Mark the memory at ``old`` superseded by the one just written at ``new`` (a surgical edit
    of three properties, under the caller's vault lock).

    If ``old`` changed meanwhile into something vaultmem must not write, the correction is taken
    back — an owned delete, so an edit someone made to the new note since is never lost — and
    the error is raised again.
    """
    written = read_note(vault.root / new).fingerprint.sha256
    try:
        vault.edit(
            old,
            lambda fields: {
                "status": "superseded",
                "superseded_by": f"[[{title_of(new)}]]",
                "superseded_at": now,
            },
            now=now,
        )
    except (VaultmemError, OSError):
        with contextlib.suppress(NoteChangedError):
            delete_note(vault.root / new, expected_sha256=written)
        vault.refresh([new])
        raise


__all__ = [
    "CORRECTABLE_STATUSES", "CorrectionWriter", "as_correction", "mark_superseded",
    "superseded_target",
]  # fmt: skip
