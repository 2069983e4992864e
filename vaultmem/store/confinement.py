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


def linked_notes(root: Path, paths: list[str]) -> set[str]:
    """The vault-relative ``paths`` that are symbolic links themselves (an ``lstat`` each)."""
    return {rel for rel in paths if os.path.islink(root / rel)}


def left_in_place_warning(rel: str) -> str:
    """The warning for a linked memory a pass leaves where it is."""
    return (
        f"{rel}: a symbolic link; left in place (a pass does not move links — "
        "move the note it points to instead)"
    )
