"""``vaultmem undo``: list the journal's entries and reverse one exactly (the last by default).

See docs/user-guide.md, "Journal, undo and safety". Every journal entry says who made it
(``who``: ``cli`` from a terminal, ``cron`` without one, ``mcp`` from an MCP server, or what
``VAULTMEM_ACTOR`` names) and, from an MCP server, its ``session``, so that a server's ``undo``
reverts only what that server did.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vaultmem.errors import InputError
from vaultmem.services.index.pass_indexer import PassIndexer
from vaultmem.services.lifecycle.progress import progress_of
from vaultmem.store.durability import batched_dir_syncs
from vaultmem.store.interrupts import finish_step_on_signal
from vaultmem.store.journal import JournalEntry, journals, read_journal, recover
from vaultmem.store.journal_entries import journal_summary
from vaultmem.store.journal_undo import undo, undo_steps_left
from vaultmem.store.vault_lock import vault_lock

if TYPE_CHECKING:
    from vaultmem.services.vault_context import VaultContext

INDEX_AHEAD_FROM = 1000
"""Paths an undo writes (a move counting two) from which a helper process re-indexes them while
the undo goes on, as a pass does (:mod:`~vaultmem.services.index.pass_indexer`)."""
ACTOR_ENV = "VAULTMEM_ACTOR"
"""Environment variable naming who runs a command, for the journal (e.g. ``cron``)."""


def journal_origin(vault: object) -> dict[str, str]:
    """Who writes a journal entry now: ``vault.origin`` if set (the MCP server sets ``who:
    mcp`` and its ``session``), else ``VAULTMEM_ACTOR``, else ``cli`` when a terminal is
    attached and ``cron`` when none is (a scheduler, a script)."""
    origin = dict(getattr(vault, "origin", None) or {})
    if "who" not in origin:
        named = os.environ.get(ACTOR_ENV, "").strip()
        origin["who"] = named or ("cli" if _has_terminal() else "cron")
    return origin


def _has_terminal() -> bool:
    for stream in (sys.stdin, sys.stderr):
        try:
            if stream is not None and stream.isatty():
                return True
        except (ValueError, OSError):  # a closed or detached stream
            continue
    return False


@dataclass(slots=True)
class UndoReport:
    """The journal reverted and each file put back (``kind``, where it was, where it is again)."""

    journal: str
    command: str
    restored: list[dict[str, str | None]] = field(default_factory=list)
    commit: str | None = None
    commit_error: str | None = None
    who: str | None = None
    started: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "journal": self.journal,
            "command": self.command,
            "who": self.who,
            "started": self.started,
            "restored": self.restored,
            "commit": self.commit,
            "commit_error": self.commit_error,
        }


def entry_state(summary: dict[str, Any]) -> str:
    """``undone``, ``undoable``, ``interrupted`` (not complete: the next command finishes it)
    or ``damaged`` (its header does not read)."""
    if summary.get("damaged"):
        return "damaged"
    if summary["undone"]:
        return "undone"
    return "undoable" if summary.get("complete") else "interrupted"


def list_entries(vault: VaultContext) -> list[dict[str, Any]]:
    """The journal's entries, newest first: ``entry`` (the name to pass to :func:`undo_entry`),
    ``command``, ``who``, ``session``, ``started``, ``operations`` and ``state``."""
    rows = []
    for path in reversed(journals(vault.sidecar)):
        summary = journal_summary(path)
        rows.append(
            {
                "entry": entry_name(path.name),
                "command": summary.get("command", "?"),
                "who": summary.get("who"),
                "session": summary.get("session"),
                "started": summary.get("started"),
                "operations": summary.get("operations", 0),
                "state": entry_state(summary),
            }
        )
    return rows


def entry_name(file_name: str) -> str:
    """A journal file's entry name: ``20261203T142500123456-lifecycle``."""
    return file_name.removesuffix(".jsonl").removesuffix(".undone")


def _describe(summary: dict[str, Any]) -> str:
    who = summary.get("who") or "an earlier version"
    return (
        f"{entry_name(summary['name'])} ({summary.get('command', '?')} by {who}"
        f" at {summary.get('started') or '?'})"
    )


def _find(vault: VaultContext, ref: str, session: str | None = None) -> dict[str, Any]:
    # an MCP server (``session``) lists the entries with its `journal` tool
    lists = "the `journal` tool lists them" if session else "`vaultmem undo --list` shows them"
    ref = ref.strip()
    if not ref or "/" in ref or "\\" in ref:
        raise InputError(f"no journal entry {ref!r}; {lists}")
    paths = journals(vault.sidecar)
    exact = [p for p in paths if ref in (entry_name(p.name), p.name)]
    found = [
        journal_summary(path)
        for path in exact or [p for p in paths if entry_name(p.name).startswith(ref)]
    ]
    if not found:
        raise InputError(f"no journal entry {ref!r}; {lists}")
    if len(found) > 1:
        names = ", ".join(entry_name(s["name"]) for s in found[:5])
        raise InputError(f"{ref!r} names {len(found)} journal entries ({names}); give more of it")
    return found[0]


def _choose(vault: VaultContext, ref: str | None, session: str | None) -> dict[str, Any]:
    """The journal entry to revert (its summary); raises :class:`InputError` saying why none."""
    if ref is not None:
        summary = _find(vault, ref, session)
        if summary["undone"]:
            raise InputError(f"{_describe(summary)} is already undone")
        if session is not None and summary.get("session") != session:
            raise InputError(
                f"{_describe(summary)} was not made by this MCP server; it undoes only what it "
                f"did (run `vaultmem undo {entry_name(summary['name'])}` to revert it)"
            )
        return summary
    newest: dict[str, Any] | None = None
    for path in reversed(journals(vault.sidecar)):
        summary = journal_summary(path)
        if summary["undone"]:
            continue
        newest = newest or summary
        if session is None or summary.get("session") == session:
            return summary
    if session is not None and newest is not None:
        raise InputError(
            "nothing this MCP server did is left to undo; the newest change is "
            f"{_describe(newest)}, not this server's: run `vaultmem undo "
            f"{entry_name(newest['name'])}` to revert it"
        )
    raise InputError("nothing to undo: no pass has been applied in this vault")


def undo_entry(
    vault: VaultContext,
    ref: str | None = None,
    *,
    session: str | None = None,
    before: Callable[[JournalEntry], None] | None = None,
) -> UndoReport:
    """Reverse the journal entry ``ref`` (its name or a unique start of it; default: the newest
    not yet undone); an interrupted pass is finished first.

    ``session``: only an entry that MCP session wrote (else :class:`InputError` naming the
    entry it would revert). ``before(entry)`` runs once the entry is read, before any file is
    touched. The reverts are reported as ``("undoing", done, total)`` to a progress listener
    (:mod:`vaultmem.services.lifecycle.progress`).

    Raises :class:`InputError` when there is nothing to undo or ``ref`` names no entry, one
    already undone or several, and :class:`~vaultmem.errors.NoteChangedError` (naming the note,
    changing nothing) when a note changed after the pass. An undo that was killed or stopped
    resumes where it was; Ctrl-C finishes the step in hand and raises
    :class:`~vaultmem.errors.InterruptedRunError`. A journal line that is damaged or reaches
    outside the vault raises :class:`~vaultmem.errors.JournalError` naming it, and nothing is
    changed.
    """
    folders = tuple(vault.folders())
    with (
        vault_lock(vault.sidecar, timeout_seconds=0),
        finish_step_on_signal(),
        batched_dir_syncs(),
    ):
        vault.index.check_writable()
        recover(vault.root, vault.sidecar, folders)
        chosen = _choose(vault, ref, session)
        entry = read_journal(vault.sidecar / "journal" / chosen["name"], vault.root, folders)
        if not entry.operations:
            raise InputError(f"nothing to undo: {_describe(chosen)} changed no file")
        if before is not None:
            before(entry)
        total, done = undo_steps_left(entry), 0
        progress = progress_of("undoing")

        def step(n: int) -> None:
            nonlocal done
            done += n
            if progress is not None:
                progress(done, total)

        indexer = (
            PassIndexer.start(vault.root, vault.sidecar) if 2 * total >= INDEX_AHEAD_FROM else None
        )
        handed: set[str] = set()
        left: list[str] = []

        def batch_done(paths: list[str]) -> None:
            if indexer is not None:  # re-indexed by the helper while the undo goes on
                indexer.submit(paths)
                handed.update(paths)

        try:
            reverted = undo(vault.root, entry, step, batch_done)
            if indexer is not None:
                left = indexer.wait()
        finally:
            if indexer is not None:
                indexer.close()
    report = UndoReport(
        entry.path.name,
        str(entry.header.get("command", "?")),
        who=entry.header.get("who"),
        started=entry.header.get("started"),
    )
    for op in reverted:
        report.restored.append(
            {"operation": op.kind, "from": op.target, "to": op.source or op.target}
        )
    paths = [p for op in reverted for p in (op.target, op.source) if p and p not in handed]
    vault.refresh(list(dict.fromkeys(paths + left)), written=_written(vault, reverted))
    return report


def _written(vault: VaultContext, reverted: list[Any]) -> dict[str, Any]:
    """The texts the undo put back, by path, with their files' size and mtime: re-indexed from
    these instead of being read back (a note changed since is read as usual)."""
    from vaultmem.services.index.index_reads import WrittenNote

    written: dict[str, WrittenNote] = {}
    for op in reverted:
        if op.before is None:
            continue
        rel = op.source or op.target
        try:
            stat = os.stat(vault.root / rel)
        except OSError:
            continue
        written[rel] = WrittenNote(op.before, stat.st_size, stat.st_mtime_ns)
    return written


def undo_last(vault: VaultContext) -> UndoReport:
    """Reverse the newest journal entry not yet undone (:func:`undo_entry`)."""
    return undo_entry(vault)


__all__ = [
    "ACTOR_ENV",
    "UndoReport",
    "entry_name",
    "journal_origin",
    "list_entries",
    "undo_entry",
    "undo_last",
]
