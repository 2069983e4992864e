"""``vaultmem undo``: reverse the last applied pass exactly.

See docs/user-guide.md, "Journal, undo and safety".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vaultmem.errors import InputError
from vaultmem.store.durability import batched_dir_syncs
from vaultmem.store.interrupts import finish_step_on_signal
from vaultmem.store.journal import last_undoable, recover, undo
from vaultmem.store.vault_lock import vault_lock

if TYPE_CHECKING:
    from vaultmem.services.vault_context import VaultContext


@dataclass(slots=True)
class UndoReport:
    """The journal reverted and each file put back (``kind``, where it was, where it is again)."""

    journal: str
    command: str
    restored: list[dict[str, str | None]] = field(default_factory=list)
    commit: str | None = None
    commit_error: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "journal": self.journal,
            "command": self.command,
            "restored": self.restored,
            "commit": self.commit,
            "commit_error": self.commit_error,
        }


def undo_last(vault: VaultContext) -> UndoReport:
    """Reverse the newest journal not yet undone; an interrupted pass is finished first.

    Raises :class:`InputError` when there is nothing to undo, and
    :class:`~vaultmem.errors.NoteChangedError` (naming the note, changing nothing) when a note
    changed after the pass. An undo that was killed or stopped resumes where it was; Ctrl-C
    finishes the step in hand and raises :class:`~vaultmem.errors.InterruptedRunError`.
    A journal line that is damaged or reaches outside the vault raises
    :class:`~vaultmem.errors.JournalError` naming it, and nothing is changed.
    """
    folders = tuple(vault.folders())
    with (
        vault_lock(vault.sidecar, timeout_seconds=0),
        finish_step_on_signal(),
        batched_dir_syncs(),
    ):
        vault.index.check_writable()
        recover(vault.root, vault.sidecar, folders)
        entry = last_undoable(vault.root, vault.sidecar, folders)
        if entry is None or not entry.operations:
            raise InputError("nothing to undo: no pass has been applied in this vault")
        reverted = undo(vault.root, entry)
    report = UndoReport(entry.path.name, str(entry.header.get("command", "?")))
    for op in reverted:
        report.restored.append(
            {"operation": op.kind, "from": op.target, "to": op.source or op.target}
        )
    vault.refresh([p for op in reverted for p in (op.target, op.source) if p])
    return report
