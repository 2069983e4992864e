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
from typing import TYPE_CHECKING, Any, Protocol

from vaultmem.core.notes.note_parse import parse_note, title_of
from vaultmem.errors import InputError, NoteChangedError, UnsafeNoteError, VaultmemError
from vaultmem.services.memories.remembering import make_draft
from vaultmem.services.vault_context import VaultContext
from vaultmem.store.note_files import delete_note, read_note
from vaultmem.store.vault_lock import vault_lock

if TYPE_CHECKING:
    from vaultmem.services.memories.remembering import MemoryDraft


class CorrectionWriter(VaultContext, Protocol):
    """A vault that looks notes up and writes drafts (``Vault`` satisfies it)."""

    def resolve(self, ref: str) -> str:
        """Vault-relative path of the note ``ref`` (id, title or path) names."""
        ...

    def write_draft(
        self, draft: MemoryDraft, *, now: dt.datetime, link: bool = True, synced: bool = False
    ) -> str:
        """Write a validated draft as a new memory note; returns its vault-relative path."""
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


def remember_correction(
    vault: CorrectionWriter,
    content: str,
    supersedes: str,
    *,
    now: dt.datetime,
    link: bool,
    options: dict[str, Any],
) -> str:
    """Write a new memory that supersedes ``supersedes``; returns the new memory's path.

    ``options`` are :meth:`Vault.remember`'s. The default ``category`` of a correction is
    ``correction``. Raises what :func:`superseded_target` and ``make_draft`` raise.
    """
    with vault_lock(vault.sidecar):
        vault.index.check_writable()
        old = superseded_target(vault, supersedes)
        extra = dict(options.pop("extra", None) or {})
        extra["supersedes"] = f"[[{title_of(old)}]]"
        if options.get("category") is None:
            options["category"] = "correction"
        draft = make_draft(content, extra=extra, **options)
        new = vault.write_draft(draft, now=now, link=link, synced=True)
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
            # the old note changed into something vaultmem must not write in the meantime:
            # take the correction back (we made it a moment ago, under the lock) and report;
            # an owned delete, so an edit someone made to the new note since is never lost
            with contextlib.suppress(NoteChangedError):
                delete_note(vault.root / new, expected_sha256=written)
            vault.refresh([new])
            raise
    return new


__all__ = ["CORRECTABLE_STATUSES", "remember_correction", "superseded_target"]
