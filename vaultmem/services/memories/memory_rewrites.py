"""Correcting what a memory says: append to its body, replace one line, link it to another.

Unlike ``touch`` or ``pin`` (bookkeeping fields), these change a memory's content, so each is
one journaled step (command ``edit`` or ``link``) that ``vaultmem undo`` reverts byte for byte
(docs/user-guide.md, "Journal, undo and safety"). Only the lines that change differ: an append
adds lines at the end of the body, a replacement rewrites one body line (keeping its line
ending), a link rewrites the ``related`` property's lines. The note is re-read under the vault
lock and written only if it still holds what was read; a note with conflict markers or
unparsable YAML is refused and left as it is.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vaultmem.core.notes.note_parse import parse_note, title_of
from vaultmem.core.notes.note_reading import frontmatter_bounds
from vaultmem.core.notes.note_text import FrontmatterError, set_fields
from vaultmem.core.notes.timestamps import utc_now
from vaultmem.errors import InputError, UnsafeNoteError
from vaultmem.services.lifecycle.undo import journal_origin
from vaultmem.services.memories.memory_lookup import load_memory, managed_path
from vaultmem.store.confinement import is_symlinked
from vaultmem.store.journal import JournalWriter, recover
from vaultmem.store.note_files import read_note
from vaultmem.store.vault_lock import vault_lock
from vaultmem.store.vault_paths import confined

if TYPE_CHECKING:
    from vaultmem.services.memories.memory_view import Memory
    from vaultmem.services.vault_context import VaultContext

MAX_EDIT_CHARS = 20_000
"""Longest text an edit appends or puts in place of a line."""


@dataclass(frozen=True, slots=True)
class Rewrite:
    """A journaled change of one memory: what was done (``appended``, ``replaced``,
    ``linked``), the memory as it is now and the journal entry that ``undo`` reverts."""

    action: str
    memory: Memory
    journal: str
    detail: dict[str, object]

    def as_dict(self) -> dict[str, object]:
        return {
            "action": self.action,
            "path": self.memory.path,
            "journal": self.journal.removesuffix(".jsonl"),
            **self.detail,
            "memory": self.memory.as_dict(),
        }


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _body_start(text: str) -> int:
    bounds = frontmatter_bounds(text)
    return bounds[2] if bounds is not None else 0


def appended(text: str, addition: str) -> str:
    """``text`` with ``addition`` as a new paragraph at the end of the body (every byte before
    it kept but trailing line breaks, which become one blank line)."""
    nl = _newline(text)
    added = nl.join(addition.strip("\r\n").replace("\r\n", "\n").split("\n")) + nl
    if text[_body_start(text) :].strip():
        return text.rstrip("\r\n") + nl + nl + added
    return text + ("" if not text or text.endswith("\n") else nl) + added


def replaced_line(text: str, old: str, new: str) -> str:
    """``text`` with the one body line reading ``old`` (spaces around it ignored) replaced by
    ``new`` (an empty ``new`` removes the line). Raises :class:`InputError` when no body line
    or several read ``old``."""
    if "\n" in new or "\r" in new:
        raise InputError("the new line must be one line (no line breaks); append adds several")
    start = _body_start(text)
    lines = text[start:].splitlines(keepends=True)
    wanted = old.strip()
    found = [i for i, line in enumerate(lines) if line.strip() == wanted]
    if not found:
        raise InputError(f"no line of the memory's text reads {old.strip()!r}")
    if len(found) > 1:
        raise InputError(f"{len(found)} lines read {old.strip()!r}; give a line that is unique")
    line = lines[found[0]]
    ending = line[len(line.rstrip("\r\n")) :]
    indent = line[: len(line) - len(line.lstrip())]
    lines[found[0]] = indent + new.strip() + ending if new.strip() else ""
    return text[:start] + "".join(lines)


def _rewrite(
    vault: VaultContext, path: str, command: str, change: Callable[[str], str], now: dt.datetime
) -> str:
    """Apply ``change(text)`` to the note ``path`` as one journaled edit; returns the journal's
    file name. Raises :class:`UnsafeNoteError` (conflict markers, YAML), :class:`InputError`
    (nothing would change), :class:`~vaultmem.errors.NoteChangedError` (a save meanwhile)."""
    with vault_lock(vault.sidecar, timeout_seconds=vault.lock_wait_seconds):
        recover(vault.root, vault.sidecar, tuple(vault.folders()))
        target = confined(vault.root, path)
        if is_symlinked(vault.root, path):  # journaled writes replace files, never links
            raise InputError(f"{path}: a symbolic link; not edited (edit the note it points to)")
        text = read_note(target).text
        note = parse_note(path, text)
        if note.problems:
            raise UnsafeNoteError(path, f"{note.problems[0]}; not written")
        after = change(text)
        if after == text:
            raise InputError(f"{path} already says that; nothing changed")
        writer = JournalWriter(vault.root, vault.sidecar, command, now, journal_origin(vault))
        try:
            writer.edit(path, text, after, at=(None, target))
        except BaseException:
            writer.abandon()
            writer.path.unlink()  # nothing was written: no entry to undo
            raise
        writer.close()
    vault.refresh([path])
    return writer.path.name


def _text(value: str, name: str) -> str:
    if not value.strip():
        raise InputError(f"{name}: give some text")
    if len(value) > MAX_EDIT_CHARS:
        raise InputError(f"{name}: at most {MAX_EDIT_CHARS} characters, not {len(value)}")
    return value


def edit_memory(
    vault: VaultContext,
    ref: str,
    *,
    append: str | None = None,
    replace: str | None = None,
    with_text: str | None = None,
    now: dt.datetime | None = None,
) -> Rewrite:
    """Append ``append`` to the memory ``ref``'s body, or replace its line ``replace`` by
    ``with_text``; journaled (undone by ``undo``). Give ``append``, or ``replace`` with
    ``with_text``. Raises :class:`InputError` for other combinations, a line not found or
    found twice, a note that is not a memory; and what :func:`_rewrite` raises."""
    when = now or utc_now()
    if (append is None) == (replace is None):
        raise InputError("give append, or replace with the line to put in its place (not both)")
    if replace is not None and with_text is None:
        raise InputError("replace needs the line to put in its place ('' removes it)")
    if append is None and with_text is not None and len(with_text) > MAX_EDIT_CHARS:
        raise InputError(f"the new line: at most {MAX_EDIT_CHARS} characters")
    path = managed_path(vault, ref)
    if append is not None:
        addition = _text(append, "append")
        journal = _rewrite(vault, path, "edit", lambda t: appended(t, addition), when)
        detail: dict[str, object] = {"appended": addition.strip()}
        action = "appended"
    else:
        old = _text(replace or "", "replace")
        new = with_text or ""
        journal = _rewrite(vault, path, "edit", lambda t: replaced_line(t, old, new), when)
        detail = {"replaced": old.strip(), "by": new.strip()}
        action = "replaced"
    return Rewrite(action, load_memory(vault, path, when), journal, detail)


def link_memories(
    vault: VaultContext, ref: str, other: str, *, now: dt.datetime | None = None
) -> Rewrite:
    """Add ``[[other]]`` to the ``related`` property of the memory ``ref``; journaled.

    Raises :class:`InputError` when either is not a memory, both are the same note, or the
    link is there already; :class:`UnsafeNoteError` for a note that must not be written.
    """
    when = now or utc_now()
    path, target = managed_path(vault, ref), managed_path(vault, other)
    if path == target:
        raise InputError(f"{path}: a memory is not linked to itself")
    link = f"[[{title_of(target)}]]"

    def change(text: str) -> str:
        related = list(parse_note(path, text).fields.related)
        if any(r.strip("[]").split("|")[0].strip() == title_of(target) for r in related):
            raise InputError(f"{path} already links to {target} in related")
        try:
            return set_fields(text, {"related": [*related, link]}, path=path)
        except FrontmatterError as err:
            raise UnsafeNoteError(path, f"{err}; not written") from None

    journal = _rewrite(vault, path, "link", change, when)
    return Rewrite("linked", load_memory(vault, path, when), journal, {"linked_to": target})


__all__ = [
    "MAX_EDIT_CHARS",
    "Rewrite",
    "appended",
    "edit_memory",
    "link_memories",
    "replaced_line",
]
