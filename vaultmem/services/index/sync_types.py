"""The types the sync (:mod:`~vaultmem.services.index.index_sync`) and the cold bulk load
(:mod:`~vaultmem.services.index.index_bulk`) share, so neither imports the other: what a sync
reports (:class:`SyncReport`) and how it shows progress, how its worker processes start, a note
as read for the index (:class:`NoteRead`) and the reader and parser the bulk load is handed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

from vaultmem.services.index.index_stamps import racy_stamp

if TYPE_CHECKING:
    from vaultmem.core.notes.note_parse import ParsedNote

__all__ = [
    "NoteParser", "NoteRead", "NoteReader", "ProgressCallback", "SyncReport", "WorkerStart",
]  # fmt: skip

ProgressCallback = Callable[[int, int], None]
"""Called as ``progress(done, total)`` while notes are read: ``done`` notes of ``total`` so far,
after each note or, in a cold index, after each batch of notes (it may jump)."""


@dataclass(slots=True)
class SyncReport:
    """What a sync did; ``seconds`` is wall time. ``--json`` prints :meth:`as_dict`."""

    added: int = 0
    changed: int = 0
    moved: int = 0
    removed: int = 0
    unchanged: int = 0
    seconds: float = 0.0
    rebuilt: bool = False
    touched_paths: list[str] = field(default_factory=list)
    linked: set[str] | None = None
    """The notes that are symbolic links, as a walk of the whole vault found them (``None``:
    no such walk); a lifecycle plan leaves them in place without a ``stat`` each."""

    def as_dict(self) -> dict[str, object]:
        return {
            "added": self.added,
            "changed": self.changed,
            "moved": self.moved,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "seconds": round(self.seconds, 4),
            "rebuilt": self.rebuilt,
        }

    @property
    def any_change(self) -> bool:
        return bool(self.added or self.changed or self.moved or self.removed)


WorkerStart = Literal["fork", "spawn"] | None
"""How worker processes start (:func:`worker_start`); ``None``: no workers, read here."""


class NoteRead(NamedTuple):  # a named tuple: no dataclass to build when recall imports this
    """A note as read for the index: its text, stamp and hash, the problems met reading it."""

    path: str
    size: int
    mtime_ns: int
    hash: str
    text: str
    problems: tuple[str, ...]
    racy: bool = False
    """Read within a clock tick of its mtime: its stamp is stored as pending."""
    alias_of: str = ""
    """For a symbolic link to a note inside the vault, that note's path (:func:`as_alias`)."""

    @property
    def stamp_ns(self) -> int:
        """The mtime to store in the index: the file's, or a pending one if racily clean."""
        return racy_stamp(self.mtime_ns) if self.racy else self.mtime_ns


NoteReader = Callable[[Path, str], "NoteRead | None"]
"""Reads the note at a vault-relative path of a vault root (``None``: it is gone)."""
NoteParser = Callable[[NoteRead, tuple[str, ...]], "ParsedNote"]
"""Parses a :class:`NoteRead` given the vault's template folders."""
