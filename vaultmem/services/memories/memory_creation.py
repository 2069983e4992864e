"""Creating a memory note: its name, never silently changed, and the atomic write.

A new memory is named from its title (or its first words); when that name is taken the note
is saved as ``title 2``, ``title 3``… and the clash is said (a warning line and a
``title_clashes`` entry) whenever the title was asked for or the name belongs to a person's own
note (docs/user-guide.md, "Hostile vaults: confinement, titles, damaged state, import").
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from vaultmem.core.links.link_resolution import note_key
from vaultmem.core.notes.naming import new_id, numbered, safe_title, title_from_content
from vaultmem.core.notes.note_text import render_note
from vaultmem.errors import NoteError
from vaultmem.services.vault_context import VaultContext
from vaultmem.store.index_db import IndexDB
from vaultmem.store.note_batch import NewNotes
from vaultmem.store.note_files import write_note
from vaultmem.store.vault_lock import vault_lock
from vaultmem.store.vault_paths import confined, confined_in


class NoteCreator(VaultContext, Protocol):
    """A vault that writes new notes (``Vault`` satisfies it)."""

    title_clashes: list[dict[str, str]]
    """New memories named ``title 2`` because ``title`` was taken: requested, taken_by,
    saved_as."""

    def sweep_folder(self, folder: Path) -> None:
        """Finish what killed writes left in ``folder`` (once per folder; vault lock held)."""
        ...


def unique_title(
    index: IndexDB, title: str, taken: set[str] | None = None, *, indexed: set[str] | None = None
) -> str:
    """``title``, or ``title 2``, ``title 3``… so the base name is unique (case-insensitive).

    ``taken``: lower-cased file names written but not indexed yet (a batch of imports);
    ``indexed``: every lower-cased file name of the index, read once (:class:`BatchNames`), so
    no name is asked of the index.
    """
    n = 1
    while True:
        candidate = numbered(title, n)
        key = note_key(candidate + ".md")
        if not (taken and key in taken) and not (
            key in indexed if indexed is not None else index.paths_with_name(key)
        ):
            return candidate
        n += 1


@dataclass(slots=True)
class BatchNames:
    """What a batch writer (``import``) knows of the names in use and the folders it writes to,
    so that naming and placing a new note asks neither the index nor the file system.

    ``indexed``: every lower-cased file name in the index when the batch writer started
    (:meth:`read`; ``None``: ask the index per name); ``taken``: names written since (indexed or
    not); ``folders``: folders confined since :meth:`forget_folders` (vault-relative → absolute).
    """

    indexed: set[str] | None = None
    taken: set[str] = field(default_factory=set)
    folders: dict[str, Path] = field(default_factory=dict)

    @classmethod
    def read(cls, index: IndexDB) -> BatchNames:
        """Every file name of ``index`` read in one query (0.1 CPU-second for 110,000 notes,
        as much as 6 µs name queries for a sixth of them)."""
        return cls({key for (key,) in index.conn.execute("SELECT name_key FROM notes")})

    def place(self, root: Path, relative: str) -> Path:
        """:func:`~vaultmem.store.vault_paths.confined` for a new note: its folder is checked
        for links once (its first note since :meth:`forget_folders`), the name of each note as
        ``confined`` checks it. The note itself does not exist (a batch refuses to write over a
        file), so it is no link."""
        folder, _, _ = relative.rpartition("/")
        known = self.folders.get(folder)
        if known is None:
            full = confined(root, relative)
            self.folders[folder] = full.parent
            return full
        return confined_in(known, relative)

    def forget_folders(self) -> None:
        """Have the next note of each folder check it again (once per batch)."""
        self.folders.clear()


def report_title_clash(
    vault: NoteCreator, base: str, name: str, *, explicit: bool, batch: set[str] | None = None
) -> None:
    """Say why a new memory is named ``name`` and not ``base`` (never silently).

    Reported when the title was asked for, or when the note holding it is a person's own
    (not a memory): a warning line and a :attr:`NoteCreator.title_clashes` entry.
    """
    taken = vault.index.paths_with_name(note_key(base + ".md"))
    owner = taken[0] if taken else base + ".md"
    row = vault.index.note_row(owner) if taken else None
    managed = row is not None and row["type"] in ("memory", "box", "trace")
    if not taken and batch and note_key(base + ".md") in batch:
        managed = True  # written by this batch, not indexed yet
    if explicit or not managed:
        whose = "a memory" if managed else "a note of yours, not a memory"
        vault.title_clashes.append({"requested": base, "taken_by": owner, "saved_as": name})
        vault.warnings.append(
            f"the title {base!r} is taken by {owner} ({whose}); saved as {name!r} "
            "— give another --title to choose the name"
        )


def create_memory(
    vault: NoteCreator,
    content: str,
    fields: dict[str, object],
    *,
    title: str | None = None,
    folder: str | None = None,
    taken: set[str] | None = None,
    refresh: bool = True,
    explicit_title: bool | None = None,
    batch: NewNotes | None = None,
    names: BatchNames | None = None,
) -> str:
    """Write a new memory note; returns its vault-relative path. ``fields`` in output order.

    The caller holds the vault lock and has synced the index (the name must be unique).
    A batch writer passes ``taken`` (names it wrote, updated here) or ``names`` (all it knows of
    the names in use, updated here) and ``refresh=False``, and refreshes the index itself once
    per batch. A clash of the name with a person's note is always reported
    (:attr:`NoteCreator.title_clashes`); one with a memory only when ``title`` was asked for
    (``explicit_title``, default: whenever ``title`` is given). With ``batch`` the note is added
    to it and appears when the caller commits the batch (the caller calls ``check_writable``
    before it commits: nothing is written before then).
    """
    base = safe_title(title) if title else title_from_content(content)
    if not base:
        base = f"Memory {fields.get('id') or new_id()}"
    if names is not None:
        taken = names.taken
    # a batch's writer holds the lock from before its first note until its last commit
    with nullcontext() if batch is not None else vault_lock(vault.sidecar):
        if batch is None:  # a batch's writer checks once before it commits the batch
            vault.index.check_writable()
        name = unique_title(vault.index, base, taken, indexed=names.indexed if names else None)
        if name != base:
            report_title_clash(
                vault,
                base,
                name,
                explicit=bool(title) if explicit_title is None else explicit_title,
                batch=taken,
            )
        rel = f"{folder or vault.settings.folders.stm}/{name}.md"
        body = content if content.endswith("\n") else content + "\n"
        new_folder = names is None or rel.rpartition("/")[0] not in names.folders
        full = confined(vault.root, rel) if names is None else names.place(vault.root, rel)
        if new_folder:  # (a batch's folders are swept once, with their first note)
            vault.sweep_folder(full.parent)
        text = render_note(fields, body)
        if batch is None:
            write_note(full, text, expected=None)
        else:
            try:
                batch.add(full, text, rel)
            except FileExistsError:
                raise NoteError(rel, "already exists; not overwritten") from None
    if taken is not None:
        taken.add(note_key(rel))
    if refresh:
        vault.refresh([rel])
    return rel


__all__ = ["BatchNames", "NoteCreator", "create_memory", "report_title_clash", "unique_title"]
