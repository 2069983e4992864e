"""Nothing outside the vault is read or written: paths checked after resolving symbolic links.

A vault may hold symbolic links (a note or folder linked from elsewhere). A link whose target
lies inside the vault is followed; one whose target lies outside it (``/etc/passwd``,
``/proc/self/environ``, another person's files) is never read, indexed or returned.
"""

from __future__ import annotations

import os
from pathlib import Path

from vaultmem.errors import NoteError


def is_inside(root: Path, real: str) -> bool:
    """True when the resolved path ``real`` is ``root`` (already resolved) or lies below it."""
    base = str(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def resolves_inside(root: Path, rel: str) -> bool:
    """True when ``root / rel``, with every symbolic link resolved, lies inside ``root``.

    A path that does not exist resolves as far as it exists (``os.path.realpath``).
    """
    return is_inside(root, os.path.realpath(root / rel))


def confined_path(root: Path, rel: str) -> Path:
    """The real path of the note ``rel`` (links resolved) when it lies inside the vault.

    Raises :class:`NoteError` naming ``rel`` when a symbolic link leads outside the vault.
    """
    real = os.path.realpath(root / rel)
    if not is_inside(root, real):
        raise NoteError(rel, "a symbolic link to a file outside the vault; not read or written")
    return Path(real)


def is_symlinked(root: Path, rel: str) -> bool:
    """True when ``rel`` itself or one of its folders is a symbolic link."""
    return os.path.realpath(root / rel) != os.path.normpath(root / rel)


class LinkedFolders:
    """:func:`is_symlinked` for the folders of one vault, each folder looked at once.

    ``root`` must be resolved (no link in its own path). A folder is linked when it, or a folder
    above it, is a symbolic link: one ``lstat`` per folder asked about, the answers for its
    parents reused (a pass's thousands of paths share a few folders, where
    :func:`is_symlinked` resolves every path from ``/``). Answers are kept for the object's
    life: make one per sync, so a folder that becomes a link later is seen by the next.
    """

    __slots__ = ("_base", "_known")

    def __init__(self, root: Path) -> None:
        self._base = os.fspath(root) + os.sep
        self._known: dict[str, bool] = {"": False}

    def __call__(self, folder: str) -> bool:
        """Whether the vault-relative ``folder`` (``""``: the vault) is or lies under a link.

        Up the path to the nearest folder already known, then down again (a loop, not
        recursion: a path may hold thousands of parts)."""
        known = self._known
        below: list[str] = []
        while folder not in known:
            below.append(folder)
            folder = folder.rpartition("/")[0]
        linked = known[folder]
        for name in reversed(below):
            linked = linked or os.path.islink(self._base + name)
            known[name] = linked
        return linked


LIST_FOLDER_FROM = 8
"""From this many paths in one folder, :func:`linked_notes` lists the folder once instead of
calling ``lstat`` per path."""


def linked_notes(root: Path, paths: list[str]) -> set[str]:
    """The vault-relative ``paths`` that are symbolic links themselves.

    Paths are grouped by folder: a folder holding :data:`LIST_FOLDER_FROM` of them or more is
    listed once (``os.scandir`` tells links apart without a ``stat`` per file); the others get
    an ``lstat`` each. A folder that cannot be listed falls back to ``lstat`` too.
    """
    by_folder: dict[str, list[str]] = {}
    for rel in paths:
        by_folder.setdefault(rel[: rel.rfind("/") + 1], []).append(rel)
    base = os.fspath(root) + os.sep
    found: set[str] = set()
    for folder, members in by_folder.items():
        if len(members) >= LIST_FOLDER_FROM:
            try:
                with os.scandir(base + folder) as entries:
                    links = {folder + e.name for e in entries if e.is_symlink()}
            except OSError:
                pass
            else:
                found.update(rel for rel in members if rel in links)
                continue
        found.update(rel for rel in members if os.path.islink(base + rel))
    return found


def left_in_place_warning(rel: str) -> str:
    """The warning for a linked memory a pass leaves where it is."""
    return (
        f"{rel}: a symbolic link; left in place (a pass does not move links — "
        "move the note it points to instead)"
    )
